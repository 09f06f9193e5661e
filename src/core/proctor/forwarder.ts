import * as path from 'node:path';
import { createHash, randomBytes, timingSafeEqual } from 'node:crypto';
import * as http from 'node:http';
import * as net from 'node:net';
import { ExpBenchError } from '../errors';
import { log } from '../log';
import { errorMessage } from '../util/errors';

const logger = log('proctor');

/** Paths the forwarder answers itself (never forwarded to the editor). */
export const FORWARDER_PATHS = { restart: '/__expbench/restart', status: '/__expbench/status', resume: '/__expbench/resume' } as const;

/**
 * Where a webview's own files appear to come from (`asWebviewUri`: `https://file+.vscode-resource.vscode-cdn.net/…`):
 * the webview's service worker answers these from the editor; nothing is fetched from that host.
 */
const WEBVIEW_RESOURCES = 'https://*.vscode-cdn.net';

/**
 * The forwarder's own Content-Security-Policy, sent with every response it passes on (a second
 * policy: the browser enforces both, so it only narrows code-server's own, whose `connect-src`
 * allows `https:` and `ws:` anywhere and whose `img-src` allows any `https:` image). Everything
 * comes from the forwarder's origin: a web extension, a webview or a page of the workspace cannot
 * reach the browser's network (no fetch, WebSocket, image, frame or form elsewhere). Scripts keep
 * what the workbench needs (`unsafe-eval`, inline and blob: scripts; code-server's own policy
 * still pins inline ones by hash); webviews keep their resources (WEBVIEW_RESOURCES).
 */
export const FORWARDER_CSP = [
  "default-src 'self'", `script-src 'self' 'unsafe-eval' 'unsafe-inline' blob: ${WEBVIEW_RESOURCES}`, `style-src 'self' 'unsafe-inline' ${WEBVIEW_RESOURCES}`,
  `img-src 'self' data: blob: ${WEBVIEW_RESOURCES}`, `media-src 'self' blob: ${WEBVIEW_RESOURCES}`, `font-src 'self' data: blob: ${WEBVIEW_RESOURCES}`,
  `connect-src 'self' ${WEBVIEW_RESOURCES}`, "frame-src 'self' data: blob:", "child-src 'self' data: blob:", "worker-src 'self' data: blob:",
  "manifest-src 'self'", "form-action 'self'", "base-uri 'self'", "object-src 'none'",
].join('; ');

/**
 * Whether a request path is code-server's port proxy (`/proxy/<port>/…`, `/absproxy/<port>/…`):
 * refused by the forwarder whatever code-server would do (it runs with --disable-proxy), so a
 * second server started in the terminal is never reachable from the browser. Checked on the
 * decoded path, any case, repeated slashes folded and dot segments resolved.
 */
export function isProxyPath(rawPath: string): boolean {
  let p = rawPath.split(/[?#]/, 1)[0] ?? '';
  try { p = decodeURIComponent(p); } catch { return true; }
  // dot segments resolved as a server resolves them (`/./proxy/`, `/a/../proxy/`, `/%2e/proxy/`)
  p = path.posix.normalize(`/${p.replace(/\\/g, '/')}`).toLowerCase();
  return p === '/proxy' || p === '/absproxy' || p.startsWith('/proxy/') || p.startsWith('/absproxy/');
}

/** Options of {@link startForwarder}. */
export interface ForwarderOptions {
  /** The editor's unix socket on the host (`<session>/channel/code-server.sock`). */
  socketPath: string;
  /** Address to listen on; default 127.0.0.1. */
  host?: string;
  /** Port; default 0 (a free one). */
  port?: number;
  /** The session token (default: 32 random bytes, base64url). */
  token?: string;
  /** Starts the stopped container again; resolves when it runs. Called by POST {@link FORWARDER_PATHS}.restart. */
  restart: () => Promise<void>;
  /** How long a restart waits for the editor to answer on its socket (ms, default 60 000). */
  readyTimeoutMs?: number;
  /**
   * Checked before each request and upgrade passed on: a reason not to (EditorSocket.breach: the
   * socket is not the one the session's editor made), or undefined. Default: always pass.
   */
  guard?: () => Promise<string | undefined>;
  /** Whether the session's clock is paused (the work container is then frozen): a page says so and offers {@link ForwarderOptions.resume}. */
  paused?: () => boolean;
  /** Resumes the clock (and thaws the container). Called by POST {@link FORWARDER_PATHS}.resume. */
  resume?: () => Promise<void>;
}

/** A running forwarder. */
export interface Forwarder {
  /** `http://host:port/?tkn=TOKEN`: the link to open once; it sets the cookie and redirects. */
  url: string;
  /** The origin without the token. */
  origin: string;
  token: string;
  port: number;
  /** Resolves when the editor answers `/healthz` on its socket; rejects after `timeoutMs`. */
  waitForEditor(timeoutMs?: number): Promise<void>;
  /** Ends the open WebSocket connections (the window reconnects, and then sees the paused page while the clock is paused). */
  dropConnections(): void;
  close(): Promise<void>;
}

/** Parses `--bind`: `HOST:PORT`, `PORT`, `HOST` or `[v6]:PORT`. @throws ExpBenchError BAD_INPUT naming the address */
export function parseBind(addr: string | undefined): { host: string; port: number } {
  if (!addr) return { host: '127.0.0.1', port: 0 };
  const m = /^(?:\[([^\]]+)\]|([^:]*))(?::(\d+))?$/.exec(addr.trim());
  const onlyPort = /^\d+$/.test(addr.trim());
  const host = onlyPort ? '127.0.0.1' : (m?.[1] ?? m?.[2] ?? '');
  const port = Number(onlyPort ? addr.trim() : (m?.[3] ?? '0'));
  if (!m || !host || !Number.isInteger(port) || port < 0 || port > 65535) {
    throw new ExpBenchError('BAD_INPUT', addr, 'not a bind address: give HOST:PORT, PORT or HOST (e.g. 0.0.0.0:8443)');
  }
  return { host, port };
}

/**
 * The host-side forwarder of a proctored window: an HTTP server on `host:port` that passes
 * requests and WebSocket upgrades to the editor's unix socket, only for a browser that holds the
 * session token. The token arrives once as `?tkn=` (compared in constant time), is turned into an
 * HttpOnly, SameSite=Strict cookie and removed from the URL by a redirect; a request without the
 * cookie gets 401, a wrong token 403. When the editor's socket does not answer (the container
 * stopped), a page says so and offers a restart button (POST {@link FORWARDER_PATHS}.restart with
 * the cookie), which calls `restart` and waits for the editor before sending the browser back.
 * It passes on only to the session's own editor: `/proxy/` and `/absproxy/` are refused
 * ({@link isProxyPath}), `guard` is asked before each request, and every response carries
 * {@link FORWARDER_CSP}. While `paused()` says so, a page says the clock is paused and offers to
 * resume it (POST {@link FORWARDER_PATHS}.resume), and no upgrade is passed on.
 * @throws the listen error (EADDRINUSE…) as ExpBenchError BAD_INPUT naming the address
 */
export async function startForwarder(o: ForwarderOptions): Promise<Forwarder> {
  const token = o.token ?? randomBytes(32).toString('base64url');
  const cookieName = `expbench_proctor_${createHash('sha256').update(token).digest('hex').slice(0, 10)}`;
  const wanted = Buffer.from(token);
  const sameToken = (t: string | undefined | null): boolean => !!t && Buffer.byteLength(t) === wanted.length && timingSafeEqual(Buffer.from(t), wanted);
  const hasCookie = (req: http.IncomingMessage): boolean => sameToken(cookieValue(req.headers.cookie, cookieName));
  const readyTimeoutMs = o.readyTimeoutMs ?? 60_000;
  let restarting: Promise<void> | undefined;

  const server = http.createServer((req, res) => {
    const url = new URL(req.url ?? '/', 'http://forwarder');
    const tkn = url.searchParams.get('tkn');
    if (tkn !== null) {
      if (!sameToken(tkn)) return page(res, 403, 'Wrong token', 'This link\'s token is not the session\'s. Ask the researcher for the link.');
      url.searchParams.delete('tkn');
      res.writeHead(302, {
        'Set-Cookie': `${cookieName}=${token}; HttpOnly; SameSite=Strict; Path=/`,
        Location: url.pathname + url.search, 'Cache-Control': 'no-store',
      });
      return res.end();
    }
    if (!hasCookie(req)) return page(res, 401, 'Not signed in', 'This proctored window opens only from the link with its session token (printed by <code>expbench baseline serve</code>).');
    if (url.pathname === FORWARDER_PATHS.status) {
      void editorAnswers(o.socketPath).then((up) => { res.writeHead(200, { 'Content-Type': 'application/json' }); res.end(JSON.stringify({ editor: up })); });
      return;
    }
    if (url.pathname === FORWARDER_PATHS.restart) {
      if (req.method !== 'POST') return page(res, 405, 'Use the button', 'Restart is a POST from the page\'s button.');
      restarting ??= o.restart().then(() => waitForEditor(o.socketPath, readyTimeoutMs)).finally(() => { restarting = undefined; });
      restarting.then(() => { res.writeHead(303, { Location: '/' }); res.end(); }, (e: unknown) => {
        logger.warn(`restart failed: ${errorMessage(e)}`);
        stoppedPage(res, `The restart failed: ${escapeHtml(errorMessage(e))}`);
      });
      return;
    }
    if (url.pathname === FORWARDER_PATHS.resume) {
      if (req.method !== 'POST' || !o.resume) return page(res, 405, 'Use the button', 'Resume is a POST from the page\'s button.');
      o.resume().then(() => { res.writeHead(303, { Location: '/' }); res.end(); }, (e: unknown) => {
        logger.warn(`resume failed: ${errorMessage(e)}`);
        pausedPage(res, `The clock could not be resumed: ${escapeHtml(errorMessage(e))}`);
      });
      return;
    }
    if (isProxyPath(req.url ?? '/')) return page(res, 403, 'Not served', 'This window serves only the task\'s editor: code-server\'s port proxy (<code>/proxy/</code>, <code>/absproxy/</code>) is off.');
    if (o.paused?.()) return pausedPage(res);
    void (o.guard?.() ?? Promise.resolve(undefined)).then((breach) => {
      if (breach) {
        logger.warn(`not passed on: ${breach}`);
        return page(res, 503, 'The editor is not the session\'s', `${escapeHtml(breach)}. Nothing was passed on; ask the researcher to restart the window.`);
      }
      const upstream = http.request({ socketPath: o.socketPath, method: req.method, path: req.url, headers: req.headers }, (up) => {
        // both policies: code-server's own and the forwarder's (the browser enforces each)
        const own = up.headers['content-security-policy'];
        const headers: Record<string, string | string[] | number | undefined> = { ...up.headers };
        headers['content-security-policy'] = [...(own === undefined ? [] : [own].flat()), FORWARDER_CSP];
        res.writeHead(up.statusCode ?? 502, headers);
        up.pipe(res);
      });
      upstream.on('error', (e) => {
        logger.debug(`editor socket: ${errorMessage(e)}`);
        if (!res.headersSent) stoppedPage(res);
        else res.destroy();
      });
      req.pipe(upstream);
    }, (e: unknown) => page(res, 500, 'Check failed', escapeHtml(errorMessage(e))));
  });

  // Upgraded (WebSocket) sockets leave the server's own bookkeeping, so closeAllConnections() does
  // not end them: kept here so that close() does not wait for the baseliner's browser to go away.
  const upgraded = new Set<net.Socket>();
  server.on('upgrade', (req: http.IncomingMessage, socket: net.Socket, head: Buffer) => {
    upgraded.add(socket);
    socket.on('close', () => upgraded.delete(socket));
    socket.on('error', () => socket.destroy());
    if (!hasCookie(req)) {
      socket.end('HTTP/1.1 401 Unauthorized\r\nConnection: close\r\nContent-Length: 0\r\n\r\n');
      return;
    }
    if (isProxyPath(req.url ?? '/')) {
      socket.end('HTTP/1.1 403 Forbidden\r\nConnection: close\r\nContent-Length: 0\r\n\r\n');
      return;
    }
    if (o.paused?.()) {
      socket.end('HTTP/1.1 503 Service Unavailable\r\nConnection: close\r\nContent-Length: 0\r\n\r\n');
      return;
    }
    // the socket stays paused (no reader) until pipeUpgrade pipes it: nothing the browser sends is lost meanwhile
    void (o.guard?.() ?? Promise.resolve(undefined)).then((breach) => {
      if (breach) {
        logger.warn(`upgrade not passed on: ${breach}`);
        socket.end('HTTP/1.1 503 Service Unavailable\r\nConnection: close\r\nContent-Length: 0\r\n\r\n');
        return;
      }
      pipeUpgrade(req, socket, head);
    }, () => socket.destroy());
  });

  const pipeUpgrade = (req: http.IncomingMessage, socket: net.Socket, head: Buffer): void => {
    const up = net.connect(o.socketPath);
    up.on('connect', () => {
      const lines = [`${req.method} ${req.url} HTTP/1.1`];
      for (let i = 0; i < req.rawHeaders.length; i += 2) lines.push(`${req.rawHeaders[i]}: ${req.rawHeaders[i + 1]}`);
      up.write(`${lines.join('\r\n')}\r\n\r\n`);
      if (head.length) up.write(head);
      up.pipe(socket);
      socket.pipe(up);
    });
    up.on('error', () => {
      if (socket.writable && up.bytesRead === 0) socket.end('HTTP/1.1 503 Service Unavailable\r\nConnection: close\r\nContent-Length: 0\r\n\r\n');
      else socket.destroy();
    });
    socket.on('close', () => up.destroy());
    up.on('close', () => socket.destroy());
  };

  const host = o.host ?? '127.0.0.1';
  await new Promise<void>((resolve, reject) => {
    server.once('error', (e) => reject(new ExpBenchError('BAD_INPUT', `${host}:${o.port ?? 0}`, `cannot listen: ${errorMessage(e)}`, { cause: e })));
    server.listen(o.port ?? 0, host, () => resolve());
  });
  const port = (server.address() as net.AddressInfo).port;
  const shown = host === '0.0.0.0' || host === '::' ? '127.0.0.1' : host.includes(':') ? `[${host}]` : host;
  const origin = `http://${shown}:${port}`;
  logger.info(`forwarder on ${host}:${port} → ${o.socketPath}`);
  return {
    url: `${origin}/?tkn=${token}`, origin, token, port,
    waitForEditor: (ms = readyTimeoutMs) => waitForEditor(o.socketPath, ms),
    dropConnections: () => { for (const s of upgraded) s.destroy(); },
    close: () => new Promise<void>((resolve) => {
      server.close(() => resolve());
      server.closeAllConnections();
      for (const s of upgraded) s.destroy();
    }),
  };
}

/** Whether the editor answers `GET /healthz` on its socket within one second. */
export function editorAnswers(socketPath: string): Promise<boolean> {
  return new Promise((resolve) => {
    const req = http.get({ socketPath, path: '/healthz', timeout: 1000 }, (res) => { res.resume(); resolve(res.statusCode === 200); });
    req.on('timeout', () => req.destroy());
    req.on('error', () => resolve(false));
  });
}

/** Resolves when the editor answers `GET /healthz` on its socket (every 200 ms); rejects after `timeoutMs` (default 60 s) naming the socket. */
export async function waitForEditor(socketPath: string, timeoutMs = 60_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    if (await editorAnswers(socketPath)) return;
    await new Promise((r) => setTimeout(r, 200));
  }
  throw new ExpBenchError('CONTAINER_FAILED', socketPath, `the editor in the work container did not answer within ${timeoutMs} ms (see docker logs of the container)`);
}

function cookieValue(header: string | undefined, name: string): string | undefined {
  for (const part of (header ?? '').split(';')) {
    const i = part.indexOf('=');
    if (i > 0 && part.slice(0, i).trim() === name) return part.slice(i + 1).trim();
  }
  return undefined;
}

function escapeHtml(s: string): string {
  return s.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);
}

/** The policy of the forwarder's own pages: no script, nothing loaded, forms only to itself. */
const PAGE_CSP = "default-src 'none'; style-src 'unsafe-inline'; form-action 'self'; base-uri 'none'";

function page(res: http.ServerResponse, status: number, title: string, body: string): void {
  res.writeHead(status, { 'Content-Type': 'text/html; charset=utf-8', 'Cache-Control': 'no-store', 'Content-Security-Policy': PAGE_CSP });
  res.end(`<!doctype html><meta charset="utf-8"><title>${title}</title><body style="font-family:sans-serif;max-width:40em;margin:4em auto"><h1>${title}</h1><p>${body}</p></body>`);
}

function stoppedPage(res: http.ServerResponse, extra = ''): void {
  page(res, 503, 'The task container has stopped',
    `The editor of this proctored window runs inside the task's container, and that container is not running now. `
    + `Everything you saved is in the workspace; unsaved editors come back from the editor's backups. ${extra}</p>`
    + `<form method="post" action="${FORWARDER_PATHS.restart}"><button type="submit" id="expbench-restart" style="font-size:1.2em">Restart the container</button></form><p>`);
}

function pausedPage(res: http.ServerResponse, extra = ''): void {
  page(res, 503, 'The clock is paused',
    'The task\'s container is paused with the clock: nothing runs in it (editor, terminal, scripts) until you resume. '
    + `Everything you saved is kept. ${extra}</p>`
    + `<form method="post" action="${FORWARDER_PATHS.resume}"><button type="submit" id="expbench-resume" style="font-size:1.2em">Resume the clock</button></form><p>`);
}
