import * as assert from 'node:assert/strict';
import { promises as fsp } from 'node:fs';
import * as http from 'node:http';
import * as net from 'node:net';
import * as os from 'node:os';
import * as path from 'node:path';
import { startForwarder } from '../../src/core/proctor/forwarder';

/** Opens an upgraded (WebSocket-style) connection through the forwarder; resolves once the editor side answered 101. */
function upgrade(port: number, cookie: string): Promise<net.Socket> {
  return new Promise((resolve, reject) => {
    const req = http.request({ host: '127.0.0.1', port, path: '/ws', headers: { Connection: 'Upgrade', Upgrade: 'websocket', Cookie: cookie } });
    req.on('upgrade', (_res, socket) => resolve(socket));
    req.on('response', (res) => reject(new Error(`no upgrade: HTTP ${res.statusCode}`)));
    req.on('error', reject);
    req.end();
  });
}

describe('proctor forwarder: token, cookie and close', () => {
  let dir: string;
  let editor: net.Server;
  const editorSockets = new Set<net.Socket>();
  beforeEach(async () => {
    dir = await fsp.mkdtemp(path.join(os.tmpdir(), 'fwd-'));
    // A stand-in for code-server's socket: answers every upgrade with 101 and keeps the connection open.
    editor = net.createServer((s) => {
      editorSockets.add(s);
      s.once('data', () => s.write('HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n\r\n'));
      s.on('error', () => undefined);
    });
    await new Promise<void>((r) => editor.listen(path.join(dir, 'code-server.sock'), r));
  });
  afterEach(async () => {
    for (const s of editorSockets) s.destroy();
    await new Promise<void>((r) => editor.close(() => r()));
    await fsp.rm(dir, { recursive: true, force: true });
  });

  it('refuses an upgrade without the cookie, and close() ends an open upgraded connection instead of waiting for the browser', async () => {
    const fwd = await startForwarder({ socketPath: path.join(dir, 'code-server.sock'), restart: async () => undefined });
    // the token link gives the cookie
    const set = await new Promise<string>((resolve, reject) => {
      http.get(fwd.url, (res) => { res.resume(); assert.equal(res.statusCode, 302); resolve(String(res.headers['set-cookie']?.[0] ?? '')); }).on('error', reject);
    });
    const cookie = set.split(';')[0];
    assert.match(cookie, /^expbench_proctor_[0-9a-f]+=/);
    await assert.rejects(upgrade(fwd.port, 'expbench_proctor_x=wrong'), /socket hang up|no upgrade|ECONNRESET/);
    const browser = await upgrade(fwd.port, cookie);
    const ended = new Promise<void>((r) => browser.on('close', () => r()));
    // Without destroying upgraded sockets, close() resolves only when the browser goes away (never, here).
    await fwd.close();
    await ended;
    assert.equal(browser.destroyed, true);
  });
});
