// The session proxy of a campaign's front door (src/core/campaigns/proxy.ts) over a real HTTP
// server on a unix socket standing where code-server listens (an editor's socket), and the
// capacity rule (serve.ts). The real containers and code-server: test/e2e/campaign.e2e.test.ts.
import * as assert from 'node:assert/strict';
import { promises as fsp } from 'node:fs';
import * as http from 'node:http';
import * as net from 'node:net';
import * as os from 'node:os';
import * as path from 'node:path';
import { CAMPAIGN_COOKIE, cookieWithout, sessionCapacity, SessionProxy } from '../../src/core/campaigns';
import { FORWARDER_CSP } from '../../src/core/proctor';

function request(port: number, p: string, o: { method?: string; headers?: Record<string, string> } = {}): Promise<{ status: number; headers: http.IncomingHttpHeaders; body: string }> {
  return new Promise((resolve, reject) => {
    http.request({ host: '127.0.0.1', port, path: p, method: o.method ?? 'GET', headers: o.headers }, (res) => {
      let body = '';
      res.setEncoding('utf8').on('data', (c: string) => { body += c; }).on('end', () => resolve({ status: res.statusCode ?? 0, headers: res.headers, body }));
    }).on('error', reject).end();
  });
}

describe('campaign serve: the session proxy and the capacity', function () {
  this.timeout(30_000);
  let tmp: string;
  let editor: http.Server;
  let front: http.Server;
  let port = 0;
  let paused = false;
  let breach: string | undefined;
  const seen: Array<{ url: string; cookie?: string }> = [];
  let activity = 0;
  let proxy: SessionProxy;
  const upgraded = new Set<net.Socket>();

  before(async () => {
    tmp = await fsp.mkdtemp(path.join(os.tmpdir(), 'expbench-camp-proxy-'));
    const sock = path.join(tmp, 'code-server.sock');
    editor = http.createServer((req, res) => {
      seen.push({ url: req.url ?? '', ...(req.headers.cookie ? { cookie: req.headers.cookie } : {}) });
      if (req.url === '/') { res.writeHead(302, { location: './?folder=/workspace' }); res.end(); return; }
      if (req.url === '/abs') { res.writeHead(302, { location: '/login' }); res.end(); return; }
      if (req.url === '/cookie') { res.writeHead(200, { 'set-cookie': [`${CAMPAIGN_COOKIE}=${'E'.repeat(43)}; Path=/`, 'editor=1; Path=/'] }); res.end(); return; }
      res.writeHead(200, { 'content-type': 'text/plain', 'content-security-policy': "default-src 'self'" });
      res.end(`editor saw ${req.url}`);
    });
    editor.on('upgrade', (req: http.IncomingMessage, socket: net.Socket) => {
      seen.push({ url: `ws ${req.url}`, ...(req.headers.cookie ? { cookie: req.headers.cookie } : {}) });
      upgraded.add(socket);
      socket.write('HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n\r\n');
      socket.on('data', (d) => socket.write(`echo:${d.toString()}`));
    });
    await new Promise<void>((r) => editor.listen(sock, r));
    proxy = new SessionProxy('/s/t.ana.a1', {
      socketPath: sock, guard: async () => breach, paused: () => paused, resume: async () => { paused = false; }, restart: async () => undefined,
    }, CAMPAIGN_COOKIE, () => { activity++; });
    front = http.createServer((req, res) => proxy.request(req, res, (req.url ?? '/').slice('/s/t.ana.a1'.length) || '/'));
    front.on('upgrade', (req: http.IncomingMessage, socket: net.Socket, head: Buffer) => proxy.upgrade(req, socket, head, (req.url ?? '/').slice('/s/t.ana.a1'.length) || '/'));
    await new Promise<void>((r) => front.listen(0, '127.0.0.1', r));
    port = (front.address() as net.AddressInfo).port;
  });
  after(async () => {
    front.closeAllConnections();
    await new Promise((r) => front.close(r));
    for (const u of upgraded) u.destroy();
    editor.closeAllConnections();
    await new Promise((r) => editor.close(r));
    await fsp.rm(tmp, { recursive: true, force: true });
  });

  it('takes the prefix off, keeps the editor\'s relative redirects, puts absolute ones under the prefix, adds the forwarder\'s policy, never passes the campaign cookie either way', async () => {
    const cookie = `${CAMPAIGN_COOKIE}=${'T'.repeat(43)}; other=1`;
    const root = await request(port, '/s/t.ana.a1/', { headers: { cookie } });
    assert.equal(root.status, 302);
    assert.equal(root.headers.location, './?folder=/workspace');
    const abs = await request(port, '/s/t.ana.a1/abs', { headers: { cookie } });
    assert.equal(abs.headers.location, '/s/t.ana.a1/login');
    const page = await request(port, '/s/t.ana.a1/static/x.js?v=1', { headers: { cookie } });
    assert.equal(page.body, 'editor saw /static/x.js?v=1');
    assert.deepEqual(page.headers['content-security-policy'], `default-src 'self', ${FORWARDER_CSP}`);
    assert.deepEqual(seen.slice(-1), [{ url: '/static/x.js?v=1', cookie: 'other=1' }]);
    assert.ok(!seen.some((s) => s.cookie?.includes(CAMPAIGN_COOKIE)), 'the campaign cookie reached the editor');
    assert.ok(activity >= 3, 'each request counts as activity');
    assert.deepEqual((await request(port, '/s/t.ana.a1/cookie')).headers['set-cookie'], ['editor=1; Path=/'], 'the editor cannot set the campaign cookie');
  });

  it('refuses the port proxy, answers a paused clock with its page (no upgrade) and a breach with 503; passes WebSocket upgrades without the cookie', async () => {
    assert.equal((await request(port, '/s/t.ana.a1/proxy/8080/')).status, 403);
    assert.equal((await request(port, '/s/t.ana.a1/ABSPROXY/8080/')).status, 403);
    paused = true;
    const p = await request(port, '/s/t.ana.a1/');
    assert.equal(p.status, 503);
    assert.match(p.body, /The clock is paused/);
    assert.match(p.body, /action="\/s\/t\.ana\.a1\/__expbench\/resume"/);
    assert.equal((await request(port, '/s/t.ana.a1/__expbench/resume')).status, 405, 'resume is a POST');
    const r = await request(port, '/s/t.ana.a1/__expbench/resume', { method: 'POST' });
    assert.equal(r.status, 303);
    assert.equal(r.headers.location, '/s/t.ana.a1/');
    assert.equal(paused, false);
    breach = 'the socket is not the editor\'s';
    assert.equal((await request(port, '/s/t.ana.a1/')).status, 503);
    breach = undefined;

    const s = net.connect(port, '127.0.0.1');
    const got = await new Promise<string>((resolve, reject) => {
      let text = '';
      s.on('connect', () => s.write(`GET /s/t.ana.a1/stable?reconnectionToken=x HTTP/1.1\r\nHost: 127.0.0.1\r\nUpgrade: websocket\r\nConnection: Upgrade\r\nCookie: ${CAMPAIGN_COOKIE}=${'T'.repeat(43)}\r\n\r\n`));
      s.on('data', (d) => {
        text += d.toString();
        if (text.includes('\r\n\r\n') && !text.includes('echo:')) s.write('ping');
        if (text.includes('echo:ping')) resolve(text);
      });
      s.on('error', reject);
    });
    assert.match(got, /^HTTP\/1\.1 101/);
    assert.equal(proxy.connections, 1);
    assert.deepEqual(seen.filter((x) => x.url.startsWith('ws ')), [{ url: 'ws /stable?reconnectionToken=x' }], 'the upgrade reached the editor with the prefix taken off and no cookie');
    proxy.dropConnections();
    await new Promise((r) => s.on('close', r));
    assert.equal(proxy.connections, 0);
  });

  it('cookieWithout drops only the named cookie', () => {
    assert.equal(cookieWithout(`a=1; ${CAMPAIGN_COOKIE}=x; b=2`, CAMPAIGN_COOKIE), 'a=1; b=2');
    assert.equal(cookieWithout(`${CAMPAIGN_COOKIE}=x`, CAMPAIGN_COOKIE), undefined);
    assert.equal(cookieWithout(undefined, CAMPAIGN_COOKIE), undefined);
    assert.equal(cookieWithout(`${CAMPAIGN_COOKIE}x=1`, CAMPAIGN_COOKIE), `${CAMPAIGN_COOKIE}x=1`);
  });

  it('capacity: the least of the machine\'s CPUs, memory and GPUs over a session\'s needs; 0 when one does not fit', () => {
    const cap = (cpus: number, memoryMiB: number, gpus = 0) => ({ where: 'here', perUnit: { cpus, memoryMiB, gpus }, total: { cpus, memoryMiB, gpus } });
    assert.equal(sessionCapacity(cap(2, 24_000), { cpus: 1, memoryMiB: 2048, gpus: 0 }), 2);
    assert.equal(sessionCapacity(cap(16, 8192), { cpus: 1, memoryMiB: 2048, gpus: 0 }), 4);
    assert.equal(sessionCapacity(cap(16, 65_536, 2), { cpus: 2, memoryMiB: 4096, gpus: 1 }), 2);
    assert.equal(sessionCapacity(cap(2, 1024), { cpus: 1, memoryMiB: 2048, gpus: 0 }), 0);
  });
});
