import * as http from 'node:http';
import * as net from 'node:net';
import { log } from '../log';
import { FORWARDER_CSP, isProxyPath } from '../proctor';
import { errorMessage } from '../util/errors';

const logger = log('campaigns');

/** What the session proxy needs of a running proctored session (flows/proctoredBaseline.ts `ProctoredWork`). */
export interface ProxiedSession {
  /** The editor's unix socket on the host (`<session>/channel/code-server.sock`). */
  socketPath: string;
  /** Why the socket must not be served now (EditorSocket.breach), or undefined. */
  guard(): Promise<string | undefined>;
  paused(): boolean;
  resume(): Promise<void>;
  restart(): Promise<void>;
}

/** The forwarder's own paths under a session's prefix (answered here, never passed to the editor). */
export const SESSION_PATHS = { restart: '/__expbench/restart', resume: '/__expbench/resume' } as const;

const PAGE_CSP = "default-src 'none'; style-src 'unsafe-inline'; form-action 'self'; base-uri 'none'; frame-ancestors 'none'";

function page(res: http.ServerResponse, status: number, title: string, body: string): void {
  res.writeHead(status, { 'content-type': 'text/html; charset=utf-8', 'cache-control': 'no-store', 'content-security-policy': PAGE_CSP, 'x-content-type-options': 'nosniff' });
  res.end(`<!doctype html><html lang="en"><meta charset="utf-8"><title>${title}</title><body style="font:15px system-ui,sans-serif;max-width:40em;margin:4em auto"><h1>${title}</h1>${body}</body></html>`);
}

/**
 * The Cookie header without `drop` (the campaign's own cookie: the person's token never reaches
 * the editor in the container). Undefined when nothing is left.
 */
export function cookieWithout(header: string | string[] | undefined, drop: string): string | undefined {
  const parts = [header ?? []].flat().join(';').split(';').map((p) => p.trim()).filter((p) => p && p.slice(0, Math.max(0, p.indexOf('='))).trim() !== drop);
  return parts.length ? parts.join('; ') : undefined;
}

/**
 * Forwards one person's requests and WebSocket upgrades on `/s/<session>/…` to that session's
 * editor (code-server on its unix socket), the prefix taken off: code-server builds every link
 * relative to the path it is asked for (`relativeRoot`), so the editor works under the prefix with
 * no base-path setting of its own; an absolute `Location` it sends is put back under the prefix.
 * The rules of the proctored forwarder hold per session (src/core/proctor/forwarder.ts): the port
 * proxy (`/proxy/`, `/absproxy/`) refused, `guard` asked before each request and upgrade, every
 * response carrying FORWARDER_CSP besides code-server's own policy, a paused clock answered by a
 * page with a resume button (no upgrade passed on), a stopped container by a page with a restart
 * button. The campaign's cookie is taken out of what is passed on, and out of what the editor
 * sends back (`Set-Cookie`).
 */
export class SessionProxy {
  private readonly sockets = new Set<net.Socket>();
  private restarting: Promise<void> | undefined;

  /**
   * @param base the session's prefix, `/s/<session>` (no trailing slash)
   * @param s the running session
   * @param cookie the campaign cookie's name (never passed on)
   * @param onActivity called on every request and when a connection closes (the idle clock)
   */
  constructor(readonly base: string, private readonly s: ProxiedSession, private readonly cookie: string, private readonly onActivity: () => void) {}

  /** Open WebSocket connections of the window (a session with none is idle). */
  get connections(): number { return this.sockets.size; }

  /** Ends the window's WebSocket connections (the clock paused; the session stops). */
  dropConnections(): void { for (const s of this.sockets) s.destroy(); }

  /** Answers `rest` (the path after the prefix, with its query) of a request. */
  request(req: http.IncomingMessage, res: http.ServerResponse, rest: string): void {
    this.onActivity();
    const pathOnly = rest.split('?', 1)[0];
    if (pathOnly === SESSION_PATHS.restart || pathOnly === SESSION_PATHS.resume) {
      if (req.method !== 'POST') { page(res, 405, 'Use the button', '<p>This is a POST from the page\'s button.</p>'); return; }
      const op = pathOnly === SESSION_PATHS.restart
        ? (this.restarting ??= this.s.restart().finally(() => { this.restarting = undefined; }))
        : this.s.resume();
      op.then(() => { res.writeHead(303, { location: `${this.base}/`, 'cache-control': 'no-store' }); res.end(); }, (e: unknown) => {
        logger.warn(`${this.base}: ${pathOnly} failed: ${errorMessage(e)}`);
        page(res, 500, 'That did not work', `<p>${esc(errorMessage(e))}</p><p><a href="${this.base}/">Back</a></p>`);
      });
      return;
    }
    if (isProxyPath(rest)) { page(res, 403, 'Not served', '<p>This window serves only the task\'s editor: code-server\'s port proxy is off.</p>'); return; }
    if (this.s.paused()) { this.pausedPage(res); return; }
    void this.s.guard().then((breach) => {
      if (breach) {
        logger.warn(`${this.base}: not passed on: ${breach}`);
        page(res, 503, 'The editor is not the session\'s', `<p>${esc(breach)}. Nothing was passed on; ask the organiser.</p>`);
        return;
      }
      const headers: http.OutgoingHttpHeaders = { ...req.headers };
      const c = cookieWithout(req.headers.cookie, this.cookie);
      if (c === undefined) delete headers.cookie; else headers.cookie = c;
      const upstream = http.request({ socketPath: this.s.socketPath, method: req.method, path: rest, headers }, (up) => {
        const out: Record<string, string | string[] | number | undefined> = { ...up.headers };
        const own = up.headers['content-security-policy'];
        out['content-security-policy'] = [...(own === undefined ? [] : [own].flat()), FORWARDER_CSP];
        // the editor may set its own cookies, never the campaign's (it would sign the person out, or in as someone else)
        const sc = up.headers['set-cookie']?.filter((c) => c.slice(0, Math.max(0, c.indexOf('='))).trim() !== this.cookie);
        if (sc) out['set-cookie'] = sc;
        const loc = up.headers.location;
        if (typeof loc === 'string' && loc.startsWith('/') && !loc.startsWith('//')) out.location = `${this.base}${loc}`;
        res.writeHead(up.statusCode ?? 502, out);
        up.pipe(res);
      });
      upstream.on('error', (e) => {
        logger.debug(`${this.base}: editor socket: ${errorMessage(e)}`);
        if (!res.headersSent) this.stoppedPage(res);
        else res.destroy();
      });
      req.pipe(upstream);
    }, (e: unknown) => page(res, 500, 'Check failed', `<p>${esc(errorMessage(e))}</p>`));
  }

  /** Passes a WebSocket upgrade of `rest` to the editor (the request line rewritten, the campaign cookie taken out). */
  upgrade(req: http.IncomingMessage, socket: net.Socket, head: Buffer, rest: string): void {
    this.onActivity();
    const refuse = (status: string) => socket.end(`HTTP/1.1 ${status}\r\nConnection: close\r\nContent-Length: 0\r\n\r\n`);
    if (isProxyPath(rest)) { refuse('403 Forbidden'); return; }
    if (this.s.paused()) { refuse('503 Service Unavailable'); return; }
    this.sockets.add(socket);
    socket.on('close', () => { this.sockets.delete(socket); this.onActivity(); });
    void this.s.guard().then((breach) => {
      if (breach) { logger.warn(`${this.base}: upgrade not passed on: ${breach}`); refuse('503 Service Unavailable'); return; }
      const up = net.connect(this.s.socketPath);
      up.on('connect', () => {
        const lines = [`${req.method} ${rest} HTTP/1.1`];
        for (let i = 0; i < req.rawHeaders.length; i += 2) {
          const name = req.rawHeaders[i];
          if (name.toLowerCase() === 'cookie') {
            const c = cookieWithout(req.rawHeaders[i + 1], this.cookie);
            if (c !== undefined) lines.push(`${name}: ${c}`);
          } else {
            lines.push(`${name}: ${req.rawHeaders[i + 1]}`);
          }
        }
        up.write(`${lines.join('\r\n')}\r\n\r\n`);
        if (head.length) up.write(head);
        up.pipe(socket);
        socket.pipe(up);
      });
      up.on('error', () => {
        if (socket.writable && up.bytesRead === 0) refuse('503 Service Unavailable');
        else socket.destroy();
      });
      socket.on('close', () => up.destroy());
      up.on('close', () => socket.destroy());
    }, () => socket.destroy());
  }

  private stoppedPage(res: http.ServerResponse): void {
    page(res, 503, 'The task container has stopped',
      '<p>The editor of this task runs inside the task\'s container, and that container is not running now. Everything you saved is in the workspace; unsaved editors come back from the editor\'s backups.</p>'
      + `<form method="post" action="${this.base}${SESSION_PATHS.restart}"><button type="submit" id="expbench-restart" style="font-size:1.2em">Restart the container</button></form>`);
  }

  private pausedPage(res: http.ServerResponse): void {
    page(res, 503, 'The clock is paused',
      '<p>The task\'s container is paused with the clock: nothing runs in it (editor, terminal, scripts) until you resume. Everything you saved is kept.</p>'
      + `<form method="post" action="${this.base}${SESSION_PATHS.resume}"><button type="submit" id="expbench-resume" style="font-size:1.2em">Resume the clock</button></form>`
      + '<p><a href="/">Your tasks</a></p>');
  }
}

function esc(s: string): string {
  return s.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);
}
