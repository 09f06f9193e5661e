import { randomBytes, randomUUID, timingSafeEqual } from 'node:crypto';
import { promises as fsp } from 'node:fs';
import * as http from 'node:http';
import type { AddressInfo } from 'node:net';
import type { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import { isInitializeRequest } from '@modelcontextprotocol/sdk/types.js';
import { ExpBenchError } from '../errors';
import { log, registerSecret } from '../log';
import { errorMessage } from '../util/errors';
import { LIMITS } from '../untrusted';

const logger = log('mcp');

/** Where the HTTP server listens: a loopback host and a TCP port (0: any free one). */
export interface LoopbackAddress {
  host: string;
  port: number;
}

const LOOPBACK_NAMES = new Set(['localhost', '::1', '0:0:0:0:0:0:0:1']);
const isLoopbackHost = (h: string): boolean => LOOPBACK_NAMES.has(h.toLowerCase()) || /^127(\.\d{1,3}){3}$/.test(h);

/**
 * Parses `--http ADDR`: `PORT`, `HOST:PORT` or `[V6]:PORT`, the host a loopback address
 * (127.0.0.0/8, ::1, localhost; default 127.0.0.1). `localhost` binds 127.0.0.1.
 * @throws ExpBenchError `BAD_INPUT` naming `addr` for a non-loopback host (the server would be
 *   reachable from other machines) or a port outside 0–65535
 */
export function parseLoopbackAddress(addr: string): LoopbackAddress {
  const m = /^(?:\[([^\]]+)\]|([^:]*)):(\d+)$/.exec(addr.trim()) ?? (/^\d+$/.test(addr.trim()) ? [addr, undefined, '127.0.0.1', addr.trim()] : null);
  if (!m) throw new ExpBenchError('BAD_INPUT', addr, 'expected PORT, HOST:PORT or [V6]:PORT (a loopback host)');
  const host = (m[1] ?? m[2] ?? '127.0.0.1') || '127.0.0.1';
  const port = Number(m[3]);
  if (!Number.isInteger(port) || port < 0 || port > 65535) throw new ExpBenchError('BAD_INPUT', addr, 'the port must be a whole number from 0 to 65535');
  if (!isLoopbackHost(host)) {
    throw new ExpBenchError('BAD_INPUT', addr, `refusing to listen on ${host}: the MCP server binds loopback only (127.0.0.1, ::1, localhost), since whoever reaches it works the session`);
  }
  return { host: host.toLowerCase() === 'localhost' ? '127.0.0.1' : host, port };
}

/** A fresh per-session token: 32 random bytes, base64url (43 characters). Registered with the logger for redaction. */
export function newToken(): string {
  const t = randomBytes(32).toString('base64url');
  registerSecret(t);
  return t;
}

/** Writes `token` to `file` with mode 0600 (owner only), replacing any older one. */
export async function writeTokenFile(file: string, token: string): Promise<void> {
  await fsp.rm(file, { force: true });
  await fsp.writeFile(file, `${token}\n`, { mode: 0o600, flag: 'wx' });
}

function tokenMatches(header: string | undefined, token: string): boolean {
  const m = /^Bearer\s+(\S+)\s*$/i.exec(header ?? '');
  if (!m) return false;
  const a = Buffer.from(m[1]);
  const b = Buffer.from(token);
  return a.length === b.length && timingSafeEqual(a, b);
}

/** Options of {@link serveMcpHttp}. */
export interface McpHttpOptions {
  address: LoopbackAddress;
  /** The bearer token every request must carry (`Authorization: Bearer TOKEN`). */
  token: string;
  /** A new MCP server for each client session (one per initialize). */
  newServer: () => McpServer;
}

/** A listening MCP HTTP server. */
export interface McpHttpServer {
  /** `http://HOST:PORT/mcp`. */
  url: string;
  /** Client sessions open now. */
  sessions(): number;
  /** Closes every client session and the listener. */
  close(): Promise<void>;
}

function reply(res: http.ServerResponse, status: number, message: string, headers: Record<string, string> = {}): void {
  res.writeHead(status, { 'Content-Type': 'application/json', ...headers });
  res.end(JSON.stringify({ jsonrpc: '2.0', error: { code: -32000, message }, id: null }));
}

async function readJson(req: http.IncomingMessage, maxBytes: number = LIMITS.mcpMessageBytes): Promise<unknown> {
  const chunks: Buffer[] = [];
  let n = 0;
  for await (const c of req) {
    n += (c as Buffer).length;
    if (n > maxBytes) throw new ExpBenchError('BAD_INPUT', 'request body', `over ${maxBytes} bytes`);
    chunks.push(c as Buffer);
  }
  return JSON.parse(Buffer.concat(chunks).toString('utf8'));
}

/**
 * The MCP Streamable HTTP transport (@modelcontextprotocol/sdk `StreamableHTTPServerTransport`,
 * stateful: one `Mcp-Session-Id` per client) at `/mcp` on a loopback address. Every request needs
 * the bearer token, else 401 with `WWW-Authenticate: Bearer` (compared in constant time); a Host
 * header that is not the loopback address is refused with 403 (DNS rebinding); other paths 404.
 * @throws the listen error (port in use, …)
 */
export async function serveMcpHttp(o: McpHttpOptions): Promise<McpHttpServer> {
  const transports = new Map<string, StreamableHTTPServerTransport>();
  const servers = new Set<McpServer>();
  let port = o.address.port;
  const hostOk = (h: string | undefined): boolean => {
    const m = /^(?:\[([^\]]+)\]|([^:]+))(?::(\d+))?$/.exec(h ?? '');
    return Boolean(m && isLoopbackHost(m[1] ?? m[2]) && Number(m[3]) === port);
  };
  const server = http.createServer((req, res) => {
    void (async () => {
      const url = new URL(req.url ?? '/', 'http://localhost');
      if (url.pathname !== '/mcp') return reply(res, 404, 'not found: the MCP endpoint is /mcp');
      if (!hostOk(req.headers.host)) return reply(res, 403, `refused: Host ${req.headers.host ?? '(none)'} is not this loopback server`);
      if (!tokenMatches(req.headers.authorization, o.token)) {
        return reply(res, 401, 'unauthorized: send Authorization: Bearer <the session token printed by expbench agent mcp --http, also in private/mcp-token>', { 'WWW-Authenticate': 'Bearer realm="expbench"' });
      }
      const sid = req.headers['mcp-session-id'];
      const id = Array.isArray(sid) ? sid[0] : sid;
      if (id) {
        const t = transports.get(id);
        if (!t) return reply(res, 404, 'unknown MCP session: initialize again');
        return t.handleRequest(req, res);
      }
      if (req.method !== 'POST') return reply(res, 400, 'no Mcp-Session-Id: initialize with a POST first');
      const body = await readJson(req);
      if (!isInitializeRequest(body)) return reply(res, 400, 'no Mcp-Session-Id: the first request must be initialize');
      const t: StreamableHTTPServerTransport = new StreamableHTTPServerTransport({
        sessionIdGenerator: () => randomUUID(),
        onsessioninitialized: (sessionId) => { transports.set(sessionId, t); },
      });
      const mcp = o.newServer();
      servers.add(mcp);
      t.onclose = () => {
        if (t.sessionId) transports.delete(t.sessionId);
        servers.delete(mcp);
      };
      await mcp.connect(t);
      await t.handleRequest(req, res, body);
    })().catch((e: unknown) => {
      logger.warn(`MCP HTTP request failed: ${errorMessage(e)}`);
      if (!res.headersSent) reply(res, e instanceof SyntaxError ? 400 : 500, e instanceof SyntaxError ? 'the body is not JSON' : 'internal error');
      else res.end();
    });
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(o.address.port, o.address.host, () => { server.off('error', reject); resolve(); });
  });
  port = (server.address() as AddressInfo).port;
  const host = o.address.host.includes(':') ? `[${o.address.host}]` : o.address.host;
  return {
    url: `http://${host}:${port}/mcp`,
    sessions: () => transports.size,
    close: async () => {
      for (const m of [...servers]) await m.close().catch(() => undefined);
      await new Promise<void>((resolve) => { server.close(() => resolve()); server.closeAllConnections(); });
    },
  };
}
