import * as http from 'node:http';
import type * as net from 'node:net';
import { log } from '../log';
import { foldRunSet, type RunSetView } from '../runs/fold';
import { RunSetLayout } from '../runs/layout';
import { readRunSet } from '../runs/state';
import { formatWorking } from '../session/clock';
import { errorMessage } from '../util/errors';
import { CampaignLog, linkStates } from './log';
import { personOfToken } from './tokens';
import { personTasks, personUnits, type PersonTaskRow } from './views';

const logger = log('campaigns');

/** The cookie that holds a person's token after their link was opened once. */
export const CAMPAIGN_COOKIE = 'expbench_campaign';

/** Where a ready session's requests and upgrades go (proxy.ts `SessionProxy`); `rest` is the path after `/s/<session>`, with its query. */
export interface SessionEntry {
  request(req: http.IncomingMessage, res: http.ServerResponse, rest: string): void;
  upgrade(req: http.IncomingMessage, socket: net.Socket, head: Buffer, rest: string): void;
}

/** The gate's answer for one request of a person's own session. */
export type GateAnswer = { state: 'preparing'; position?: number } | { state: 'unavailable'; reason: string } | { state: 'ready'; serve: SessionEntry };

/** What the front answers for a person's own session (serve.ts `CampaignSessions.gate` starts and forwards sessions). */
export type SessionGate = (session: string, person: string) => Promise<GateAnswer>;

/** Options of {@link startCampaignFront}. */
export interface CampaignFrontOptions {
  /** The campaign's folder (a run set's folder with campaign.jsonl). */
  dir: string;
  /** The organiser's link key (tokens.ts `campaignKey`). */
  key: string;
  host?: string;
  port?: number;
  /** Called for `/s/<session>/` of the person's own session. Default: "being prepared". */
  gate?: SessionGate;
}

/** A running campaign front. */
export interface CampaignFront { origin: string; port: number; close(): Promise<void> }

const esc = (s: string) => s.replace(/[&<>"']/g, (c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', '\'': '&#39;' })[c]!);

/** The person's landing page: their assigned tasks with status (nothing else: views.ts `PersonTaskRow`). */
export function landingPage(person: string, rows: readonly PersonTaskRow[]): string {
  const items = rows.map((r) => `<tr><td><a href="/s/${encodeURIComponent(r.session)}/">${esc(r.task)}</a></td><td>${esc(r.status)}</td><td>${esc(r.phase ?? '')}</td><td>${esc(formatWorking(r.workingMs))}</td></tr>`).join('');
  return page(`Your tasks, ${person}`, `<table><thead><tr><th>task</th><th>status</th><th>phase</th><th>working time</th></tr></thead><tbody>${items}</tbody></table>
<p>Open a task to work on it. Your working time is counted by the host's clock while a task's clock runs.</p>`);
}

function page(title: string, body: string): string {
  return `<!doctype html><html lang="en"><head><meta charset="utf-8"><title>${esc(title)}</title>
<style>body{font:15px system-ui,sans-serif;margin:2em;max-width:48em}table{border-collapse:collapse}td,th{padding:.3em .8em;border-bottom:1px solid #ccc;text-align:left}</style>
</head><body><h1>${esc(title)}</h1>${body}</body></html>`;
}

function send(res: http.ServerResponse, code: number, html: string, headers: http.OutgoingHttpHeaders = {}): void {
  res.writeHead(code, {
    'content-type': 'text/html; charset=utf-8', 'cache-control': 'no-store', 'x-content-type-options': 'nosniff', 'referrer-policy': 'no-referrer',
    'content-security-policy': "default-src 'none'; style-src 'unsafe-inline'; frame-ancestors 'none'", ...headers,
  });
  res.end(html);
}

function cookieToken(req: http.IncomingMessage): string | undefined {
  const raw = req.headers.cookie;
  if (typeof raw !== 'string' || raw.length > 8192) return undefined;
  for (const part of raw.split(';')) {
    const i = part.indexOf('=');
    if (i > 0 && part.slice(0, i).trim() === CAMPAIGN_COOKIE) return part.slice(i + 1).trim();
  }
  return undefined;
}

/**
 * The campaign's front door (docs/campaigns.md "Serving"): an HTTP server on `host:port`
 * (default 127.0.0.1, a free port). `/?tkn=TOKEN` checks the token against each person's current
 * link (constant time, revocation at once), sets it as an HttpOnly, SameSite=Strict cookie and
 * redirects to `/` (so the token leaves the address bar); `/` is the person's landing page;
 * `/s/<session>/…` is refused (403) unless the session is one of the person's own, then handed to
 * `gate` (requests of any method and WebSocket upgrades, checked the same way): "being prepared"
 * (with the queue position), "not available", or the session's entry, which forwards to its editor
 * (serve.ts, proxy.ts). No cookie: 401; a token that names nobody (wrong, re-issued, revoked): 403.
 */
export async function startCampaignFront(o: CampaignFrontOptions): Promise<CampaignFront> {
  const layout = new RunSetLayout(o.dir);
  const clog = new CampaignLog(o.dir);
  const gate: SessionGate = o.gate ?? (async () => ({ state: 'preparing' }));
  /** The person a request's cookie names, or the refusal to send. */
  const whoIs = async (req: http.IncomingMessage): Promise<{ person: string; view: RunSetView } | { code: 401 | 403 | 503 }> => {
    const read = await readRunSet(layout.state);
    const view = read ? foldRunSet(read.records) : undefined;
    if (!view) return { code: 503 };
    const tok = cookieToken(req);
    if (!tok) return { code: 401 };
    const person = personOfToken(o.key, view.id, linkStates((await clog.read()).records), tok);
    return person ? { person, view } : { code: 403 };
  };
  /**
   * The person's own session a raw request path names (`/s/<session>` and what follows, query
   * left out), or undefined. Read on the path as sent, not a normalised one, so that the session
   * checked is the prefix taken off (`/s/a/../b/` names no session: `..` is no unit's name).
   */
  const ownSession = (view: RunSetView, person: string, rawUrl: string): { name: string; rest?: string } | undefined => {
    const m = /^\/s\/([\w.+-]{1,200})(\/[^?#]*)?(?:[?#]|$)/.exec(rawUrl);
    const unit = m ? personUnits(view).find((u) => u.name === m[1]) : undefined;
    return unit && unit.actor.baseliner === person ? { name: unit.name, rest: m![2] } : undefined;
  };
  const server = http.createServer((req, res) => {
    void (async () => {
      const url = new URL(req.url ?? '/', 'http://front');
      const presented = url.searchParams.get('tkn');
      if (presented !== null) {
        const read = await readRunSet(layout.state);
        const view = read ? foldRunSet(read.records) : undefined;
        const who = view && personOfToken(o.key, view.id, linkStates((await clog.read()).records), presented);
        if (!who) { send(res, 403, page('This link is not valid', '<p>Ask the organiser for your current link.</p>')); return; }
        res.writeHead(303, { location: '/', 'set-cookie': `${CAMPAIGN_COOKIE}=${presented}; HttpOnly; SameSite=Strict; Path=/`, 'cache-control': 'no-store', 'referrer-policy': 'no-referrer' });
        res.end();
        return;
      }
      const w = await whoIs(req);
      if ('code' in w) {
        if (w.code === 503) send(res, 503, page('Not ready', '<p>The campaign is not set up.</p>'));
        else if (w.code === 401) send(res, 401, page('Open your link', '<p>Open the link the organiser gave you.</p>'));
        else send(res, 403, page('This link is not valid', '<p>Ask the organiser for your current link.</p>'));
        return;
      }
      const { person, view } = w;
      if (url.pathname === '/') {
        if (req.method !== 'GET') { send(res, 405, page('Not allowed', '<p>Only GET.</p>')); return; }
        send(res, 200, landingPage(person, await personTasks(o.dir, view, person)));
        return;
      }
      const own = ownSession(view, person, req.url ?? '/');
      if (!own) { send(res, 403, page('Not your task', '<p>This task is not among yours. <a href="/">Your tasks</a></p>')); return; }
      if (!own.rest) { res.writeHead(308, { location: `/s/${own.name}/${url.search}`, 'cache-control': 'no-store' }); res.end(); return; }
      const g = await gate(own.name, person);
      if (g.state === 'ready') {
        const raw = req.url ?? '/';
        g.serve.request(req, res, raw.slice(`/s/${own.name}`.length) || '/');
      } else if (g.state === 'preparing') {
        send(res, 503, page('Your task is being prepared', `<p>${g.position ? `You are number ${g.position} in the queue. ` : ''}This page reloads by itself.</p><p><a href="/">Your tasks</a></p>`), { refresh: '5', 'retry-after': '5' });
      } else {
        send(res, 503, page('Your task is not available', `<p>${esc(g.reason)}</p><p><a href="/">Your tasks</a></p>`));
      }
    })().catch((e: unknown) => {
      logger.warn(`request failed: ${errorMessage(e)}`);
      if (!res.headersSent) send(res, 500, page('Error', '<p>The host could not answer; try again.</p>'));
      else res.end();
    });
  });
  // WebSocket upgrades (the editor's connections): the same checks, then the session's proxy
  const upgraded = new Set<net.Socket>();
  server.on('upgrade', (req: http.IncomingMessage, socket: net.Socket, head: Buffer) => {
    upgraded.add(socket);
    socket.on('close', () => upgraded.delete(socket));
    socket.on('error', () => socket.destroy());
    const refuse = (status: string) => socket.end(`HTTP/1.1 ${status}\r\nConnection: close\r\nContent-Length: 0\r\n\r\n`);
    void (async () => {
      const w = await whoIs(req);
      if ('code' in w) { refuse(w.code === 401 ? '401 Unauthorized' : w.code === 403 ? '403 Forbidden' : '503 Service Unavailable'); return; }
      const raw = req.url ?? '/';
      const own = ownSession(w.view, w.person, raw);
      if (!own?.rest) { refuse('403 Forbidden'); return; }
      const g = await gate(own.name, w.person);
      if (g.state !== 'ready') { refuse('503 Service Unavailable'); return; }
      g.serve.upgrade(req, socket, head, raw.slice(`/s/${own.name}`.length) || '/');
    })().catch((e: unknown) => { logger.warn(`upgrade failed: ${errorMessage(e)}`); socket.destroy(); });
  });
  await new Promise<void>((resolve, reject) => { server.once('error', reject); server.listen(o.port ?? 0, o.host ?? '127.0.0.1', () => resolve()); });
  const addr = server.address() as net.AddressInfo;
  const host = addr.family === 'IPv6' ? `[${addr.address}]` : addr.address;
  return {
    origin: `http://${host}:${addr.port}`, port: addr.port,
    close: () => new Promise<void>((resolve) => { server.close(() => resolve()); server.closeAllConnections(); for (const u of upgraded) u.destroy(); }),
  };
}
