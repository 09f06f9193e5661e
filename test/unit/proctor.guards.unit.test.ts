// Issue 26 item 6: the proctored window's guards that need no Docker — the editor's folders made
// without following links (folders.ts), bind sources through no link and never the host's uid
// (sandbox/binds.ts), the channel's seal and the socket identity (editorSocket.ts), the
// forwarder's CSP, proxy refusal, guard and paused page (forwarder.ts), the AI read-back of the
// host's copies (aiReadBack.ts). The Docker side (read-only mounts, docker pause) is in
// test/e2e/proctor.e2e.test.ts.
import * as assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { promises as fsp } from 'node:fs';
import * as http from 'node:http';
import * as net from 'node:net';
import * as os from 'node:os';
import * as path from 'node:path';
import { ExpBenchError } from '../../src/core/errors';
import { AI_OFF_SETTINGS } from '../../src/core/channel/aiSettings';
import { SessionLayout } from '../../src/core/layout';
import {
  EditorSocket, FORWARDER_CSP, codeServerCommand, editorFolders, isProxyPath, prepareEditorFolders, proctoredSettings, readAiSettingsOnHost, startForwarder,
  type Forwarder,
} from '../../src/core/proctor';
import { SOLVER_UID, assertBindSources, assertNotHostUid, uidOfUser } from '../../src/core/sandbox';

function request(url: string, o: { method?: string; cookie?: string } = {}): Promise<{ status: number; headers: http.IncomingHttpHeaders; body: string }> {
  return new Promise((resolve, reject) => {
    const req = http.request(url, { method: o.method ?? 'GET', headers: o.cookie ? { cookie: o.cookie } : {} }, (res) => {
      let body = '';
      res.setEncoding('utf8').on('data', (c: string) => { body += c; }).on('end', () => resolve({ status: res.statusCode ?? 0, headers: res.headers, body }));
    });
    req.on('error', reject).end();
  });
}

/** The status line an upgrade request gets back (or `closed`). */
function upgradeStatus(origin: string, pathname: string, cookie: string): Promise<string> {
  const u = new URL(origin);
  return new Promise((resolve) => {
    const s = net.connect(Number(u.port), u.hostname, () => {
      s.write(`GET ${pathname} HTTP/1.1\r\nHost: ${u.host}\r\nConnection: Upgrade\r\nUpgrade: websocket\r\nCookie: ${cookie}\r\n\r\n`);
    });
    let got = '';
    s.on('data', (d) => { got += d.toString('latin1'); if (got.includes('\r\n')) { resolve(got.split('\r\n')[0]); s.destroy(); } });
    s.on('close', () => resolve(got.split('\r\n')[0] || 'closed'));
    s.on('error', () => resolve('closed'));
  });
}

describe('proctored window guards (issue 26 item 6)', function () {
  this.timeout(60_000);
  let tmp = '';
  beforeEach(async () => { tmp = await fsp.mkdtemp(path.join(os.tmpdir(), 'expbench-guards-')); });
  afterEach(async () => { await fsp.rm(tmp, { recursive: true, force: true }); });

  describe('the editor folders (folders.ts)', () => {
    it('makes User/ and Machine/ real folders, the channel the host\'s, the settings the host\'s read-only copies', async () => {
      const layout = new SessionLayout(path.join(tmp, 's'));
      await fsp.mkdir(layout.root);
      const f = await prepareEditorFolders(layout);
      const ch = await fsp.lstat(layout.channel);
      assert.equal(ch.mode & 0o777, 0o755);
      assert.equal(ch.uid, process.getuid!());
      for (const d of [f.userData, f.user, f.machine]) {
        const st = await fsp.lstat(d);
        assert.ok(st.isDirectory(), d);
        if (process.getuid!() === 0) assert.equal(st.uid, SOLVER_UID, `${d} is the container user's`);
      }
      for (const file of [f.userSettings, f.machineSettings]) {
        assert.deepEqual(JSON.parse(await fsp.readFile(file, 'utf8')), proctoredSettings(false));
        const st = await fsp.lstat(file);
        assert.equal(st.uid, process.getuid!());
        assert.equal(st.mode & 0o022, 0, 'nobody else may write it');
      }
      // the only extension allowed is the solver build (its manifest's publisher.name)
      const m = JSON.parse(await fsp.readFile(path.resolve(__dirname, '..', '..', '..', 'src', 'solver', 'package.json'), 'utf8')) as { publisher: string; name: string };
      assert.deepEqual(proctoredSettings(false)['extensions.allowed'], { [`${m.publisher}.${m.name}`]: true });
      for (const mp of [f.userMountPoint, f.machineMountPoint]) assert.ok((await fsp.lstat(mp)).isFile(), `${mp}: the read-only mount lands on a file`);
      // a second call changes nothing of the solver's and keeps the copies
      await fsp.writeFile(path.join(f.user, 'keybindings.json'), '[]');
      await prepareEditorFolders(layout, true);
      assert.equal(await fsp.readFile(path.join(f.user, 'keybindings.json'), 'utf8'), '[]');
      assert.deepEqual(JSON.parse(await fsp.readFile(f.userSettings, 'utf8')), proctoredSettings(true));
    });

    it('follows no link the solver planted (User/, Machine/, settings.json, the user data folder): each is moved aside, the targets untouched', async () => {
      const layout = new SessionLayout(path.join(tmp, 's'));
      const outside = path.join(tmp, 'outside');
      await fsp.mkdir(outside);
      await fsp.writeFile(path.join(outside, 'settings.json'), 'host file');
      const f = editorFolders(layout);
      // the shapes a solver could leave behind while the channel folder was theirs (before this change)
      await fsp.mkdir(f.userData, { recursive: true });
      await fsp.symlink(outside, f.user);
      await fsp.writeFile(f.machine, 'a file where a folder goes');
      await prepareEditorFolders(layout);
      assert.equal(await fsp.readFile(path.join(outside, 'settings.json'), 'utf8'), 'host file', 'nothing written through the link');
      assert.deepEqual((await fsp.readdir(outside)).sort(), ['settings.json']);
      assert.equal((await fsp.stat(outside)).uid, process.getuid!(), 'the link\'s target was not chowned');
      assert.ok((await fsp.lstat(f.user)).isDirectory());
      assert.ok((await fsp.lstat(f.machine)).isDirectory());
      const aside = (await fsp.readdir(f.userData)).filter((n) => n.includes('.moved-')).sort();
      assert.equal(aside.length, 2, `moved aside, not deleted: ${aside.join(', ')}`);
      assert.ok((await fsp.lstat(path.join(f.userData, aside.find((n) => n.startsWith('User'))!))).isSymbolicLink());

      // settings.json a link (to a host file): moved aside, the mount point made anew
      await fsp.rm(f.userMountPoint);
      await fsp.symlink(path.join(outside, 'settings.json'), f.userMountPoint);
      await prepareEditorFolders(layout);
      assert.ok((await fsp.lstat(f.userMountPoint)).isFile());
      assert.equal(await fsp.readFile(path.join(outside, 'settings.json'), 'utf8'), 'host file');
      // the user data folder itself a link
      await fsp.rename(f.userData, `${f.userData}.old`);
      await fsp.symlink(outside, f.userData);
      await prepareEditorFolders(layout);
      assert.ok((await fsp.lstat(f.userData)).isDirectory());
      assert.deepEqual((await fsp.readdir(outside)).sort(), ['settings.json']);
    });
  });

  describe('bind sources and the container user (sandbox/binds.ts)', () => {
    it('refuses a bind source that is or passes through a link below its folder, and one that is missing', async () => {
      const root = path.join(tmp, 's');
      await fsp.mkdir(path.join(root, 'channel', 'editor', 'User'), { recursive: true });
      await assertBindSources([{ hostPath: path.join(root, 'channel', 'editor', 'User'), containerPath: '/u', within: root }]);
      await fsp.rm(path.join(root, 'channel', 'editor'), { recursive: true });
      await fsp.symlink('/', path.join(root, 'channel', 'editor'));
      await assert.rejects(assertBindSources([{ hostPath: path.join(root, 'channel', 'editor', 'User'), containerPath: '/u', within: root }]),
        /channel\/editor is a symbolic link \(to \/\): Docker would mount what it points at into \/u/);
      await fsp.symlink('/var/run', path.join(root, 'run'));
      await assert.rejects(assertBindSources([{ hostPath: path.join(root, 'run'), containerPath: '/r' }]), /is a symbolic link/);
      await assert.rejects(assertBindSources([{ hostPath: path.join(root, 'nope'), containerPath: '/n' }]), /does not exist/);
      await assert.rejects(assertBindSources([{ hostPath: '/etc', containerPath: '/e', within: root }]), /must be inside/);
    });

    it('refuses a confined container that would run as this process\'s own uid', () => {
      assert.equal(uidOfUser('solver'), SOLVER_UID);
      assert.equal(uidOfUser('root'), 0);
      assert.equal(uidOfUser('1234:5'), 1234);
      assert.equal(uidOfUser('someone'), undefined);
      assert.throws(() => assertNotHostUid('solver', 'the proctored window', SOLVER_UID), /the proctored window would run in a container as uid 1000, which is this host process's own uid/);
      assert.throws(() => assertNotHostUid('1234:1234', 'the agent', 1234), /the agent would run .* uid 1234/);
      assertNotHostUid('solver', 'the agent', 0);
      assertNotHostUid('1234:1234', 'the agent', 1000);
    });

    it('a host process running as the container user\'s uid is refused a proctored window before anything is made', async function () {
      if (process.getuid?.() !== 0) this.skip();
      // the same code, run as uid 1000 (the image's solver): the workspace is 1000's, so the window would run as 1000
      const root = path.join(tmp, 'as-1000');
      await fsp.mkdir(path.join(root, 'workspace'), { recursive: true });
      await fsp.chown(tmp, SOLVER_UID, SOLVER_UID);
      for (const p of [root, path.join(root, 'workspace')]) await fsp.chown(p, SOLVER_UID, SOLVER_UID);
      const mod = path.resolve(__dirname, '..', '..', 'src', 'core', 'proctor', 'index.js');
      const script = `require(${JSON.stringify(mod)}).ensureProctoredContainer({}, { sessionDir: ${JSON.stringify(root)}, task: 't', image: 'i', solverExtension: '/nonexistent', editor: {} })
        .then(() => { console.log('started'); }, (e) => { console.log(e.code + ': ' + e.message); })`;
      const out = execFileSync(process.execPath, ['-e', script], { uid: SOLVER_UID, gid: SOLVER_UID, encoding: 'utf8' });
      assert.match(out, /^SESSION_INVALID: .*the proctored window would run in a container as uid 1000/m);
      assert.deepEqual(await fsp.readdir(root), ['workspace'], 'nothing made (no channel/, no editor-settings/)');
    });
  });

  describe('the channel\'s seal (editorSocket.ts)', () => {
    it('a folder named code-server.sock: re-serve refuses it with a clear error naming the path, and removes nothing', async () => {
      const channel = path.join(tmp, 'channel-dir-sock');
      await fsp.mkdir(path.join(channel, 'code-server.sock', 'inner'), { recursive: true });
      const sock = new EditorSocket(channel);
      await assert.rejects(sock.openForEditor(), (e: unknown) => {
        assert.ok(e instanceof ExpBenchError && e.code === 'BAD_INPUT', String(e));
        assert.equal(e.input, sock.path);
        assert.match(e.message, /code-server\.sock: is a folder, not the editor's socket/);
        assert.doesNotMatch(e.message, /EISDIR|SystemError/);
        return true;
      });
      assert.ok((await fsp.lstat(path.join(sock.path, 'inner'))).isDirectory(), 'nothing removed');
    });
    it('serves only the socket the editor made, in a folder only the host can change', async () => {
      const channel = path.join(tmp, 'channel');
      await fsp.mkdir(channel);
      const sock = new EditorSocket(channel);
      await sock.openForEditor();
      assert.match(await sock.breach() ?? '', /not been sealed/);
      const editor = net.createServer().listen(sock.path);
      await new Promise((r) => editor.once('listening', r));
      await sock.seal();
      assert.equal((await fsp.lstat(channel)).mode & 0o777, 0o755);
      assert.equal(await sock.breach(), undefined);
      // the folder opened to others again
      await fsp.chmod(channel, 0o777);
      assert.match(await sock.breach() ?? '', /no longer the host's alone/);
      await fsp.chmod(channel, 0o755);
      // a second server in place of the first (what a solver would do with the folder writable: bind beside, rename over)
      const second = net.createServer().listen(`${sock.path}.2`);
      await new Promise((r) => second.once('listening', r));
      await fsp.rename(`${sock.path}.2`, sock.path);
      assert.match(await sock.breach() ?? '', /is not the socket the session's editor made/);
      await fsp.rm(sock.path);
      assert.match(await sock.breach() ?? '', /is not the socket the session's editor made/, 'a missing socket');
      await new Promise((r) => second.close(r));
      await new Promise((r) => editor.close(r));
    });
  });

  describe('the forwarder (forwarder.ts)', () => {
    let editor: http.Server;
    let fwd: Forwarder | undefined;
    const seen: string[] = [];
    beforeEach(async () => {
      seen.length = 0;
      editor = http.createServer((req, res) => {
        seen.push(req.url ?? '');
        res.writeHead(200, { 'Content-Type': 'text/html', 'Content-Security-Policy': "default-src 'self'; connect-src 'self' ws: wss: https:" });
        res.end('<html>editor</html>');
      });
      editor.on('upgrade', (_req, s: net.Socket) => { seen.push('upgrade'); s.end('HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n\r\n'); });
      await new Promise<void>((r) => editor.listen(path.join(tmp, 'code-server.sock'), r));
    });
    afterEach(async () => { await fwd?.close(); fwd = undefined; await new Promise((r) => editor.close(r)); });
    async function signedIn(o: Partial<Parameters<typeof startForwarder>[0]> = {}): Promise<{ f: Forwarder; cookie: string }> {
      fwd = await startForwarder({ socketPath: path.join(tmp, 'code-server.sock'), restart: async () => undefined, ...o });
      const first = await request(fwd.url);
      return { f: fwd, cookie: String(first.headers['set-cookie']?.[0]).split(';')[0] };
    }

    it('adds its own CSP to every response it passes on (code-server\'s is kept: the browser enforces both)', async () => {
      const { f, cookie } = await signedIn();
      const r = await request(`${f.origin}/?folder=/workspace`, { cookie });
      assert.equal(r.status, 200);
      const csp = r.headers['content-security-policy'];
      assert.ok(csp, 'a policy');
      // node joins repeated headers with ", "; each policy is whole
      const text = String(csp);
      assert.ok(text.includes("connect-src 'self' ws: wss: https:"), 'code-server\'s own policy is passed on');
      assert.ok(text.includes(FORWARDER_CSP), 'and the forwarder\'s');
      assert.match(FORWARDER_CSP, /connect-src 'self' https:\/\/\*\.vscode-cdn\.net(;|$)/);
      assert.doesNotMatch(FORWARDER_CSP, /\b(ws|wss|https|http):(?!\/\/\*\.vscode-cdn\.net)/, 'no scheme-wide source');
      const own = await request(`${f.origin}/`);
      assert.match(String(own.headers['content-security-policy']), /default-src 'none'/, 'the forwarder\'s own pages run no script');
    });

    it('refuses /proxy/ and /absproxy/ in every spelling, for requests and upgrades; other paths go through', async () => {
      const { f, cookie } = await signedIn();
      for (const p of ['/proxy/8081/', '/absproxy/8081/x', '/proxy', '//proxy/8081/', '/PROXY/8081/', '/%70roxy/8081/', '/abs%70roxy/1/', '/proxy%2F8081', '/%E0%A4%A', '/./proxy/8081/', '/a/../proxy/8081/', '/%2e/proxy/8081/', '/x/%2E%2E/absproxy/1/', '/../proxy/1']) {
        const r = await request(`${f.origin}${p}`, { cookie });
        assert.equal(r.status, 403, p);
        assert.match(r.body, /port proxy/);
        assert.equal(await upgradeStatus(f.origin, p, cookie), 'HTTP/1.1 403 Forbidden', `upgrade ${p}`);
      }
      assert.deepEqual(seen, [], 'none reached the editor');
      assert.equal(isProxyPath('/stable-abc/static/proxy/x'), false);
      assert.equal(isProxyPath('/proxyish'), false);
      assert.equal((await request(`${f.origin}/proxyish`, { cookie })).status, 200);
      assert.equal(await upgradeStatus(f.origin, '/stable-abc?reconnectionToken=1', cookie), 'HTTP/1.1 101 Switching Protocols');
      // code-server itself runs with its proxy off and no configuration file of the solver's
      const cmd = codeServerCommand('/workspace');
      assert.ok(cmd.includes('--disable-proxy'));
      assert.deepEqual(cmd.slice(cmd.indexOf('--config'), cmd.indexOf('--config') + 2), ['--config', '/dev/null']);
    });

    it('passes nothing on while the guard names a breach', async () => {
      let breach: string | undefined = 'the socket is not the editor\'s';
      const { f, cookie } = await signedIn({ guard: async () => breach });
      const r = await request(`${f.origin}/`, { cookie });
      assert.equal(r.status, 503);
      assert.match(r.body, /the socket is not the editor&#39;s/);
      assert.equal(await upgradeStatus(f.origin, '/', cookie), 'HTTP/1.1 503 Service Unavailable');
      assert.deepEqual(seen, []);
      breach = undefined;
      assert.equal((await request(`${f.origin}/`, { cookie })).status, 200);
      assert.equal(await upgradeStatus(f.origin, '/', cookie), 'HTTP/1.1 101 Switching Protocols');
    });

    it('while the clock is paused: a page says so, no upgrade passes, and its button resumes', async () => {
      let paused = true;
      let resumed = 0;
      const { f, cookie } = await signedIn({ paused: () => paused, resume: async () => { resumed++; paused = false; } });
      const r = await request(`${f.origin}/?folder=/workspace`, { cookie });
      assert.equal(r.status, 503);
      assert.match(r.body, /The clock is paused/);
      assert.match(r.body, /action="\/__expbench\/resume"/);
      assert.equal(await upgradeStatus(f.origin, '/', cookie), 'HTTP/1.1 503 Service Unavailable');
      assert.equal((await request(`${f.origin}/__expbench/resume`, { cookie })).status, 405, 'a GET does not resume');
      assert.equal((await request(`${f.origin}/__expbench/resume`, { method: 'POST' })).status, 401, 'nor a POST without the cookie');
      assert.equal(resumed, 0);
      const post = await request(`${f.origin}/__expbench/resume`, { method: 'POST', cookie });
      assert.equal(post.status, 303);
      assert.equal(resumed, 1);
      assert.equal((await request(`${f.origin}/`, { cookie })).status, 200);
      assert.deepEqual(seen, ['/']);
    });
  });

  describe('the AI read-back (aiReadBack.ts)', () => {
    it('reads what the window reads: the host\'s copies, the solver\'s profiles and the workspace settings, not the mount point', async () => {
      const layout = new SessionLayout(path.join(tmp, 's'));
      await fsp.mkdir(layout.workspace, { recursive: true });
      const f = await prepareEditorFolders(layout);
      const off = await readAiSettingsOnHost(layout);
      assert.equal(off.off, true, off.on.join('; '));
      assert.deepEqual(off.checked, ['editor-settings/User.settings.json', 'editor-settings/Machine.settings.json']);
      // the host-side mount point (covered in the container) does not count; a profile of the solver's does
      const key = Object.keys(AI_OFF_SETTINGS)[0];
      await fsp.writeFile(f.userMountPoint, JSON.stringify({ [key]: 'anything' }));
      assert.equal((await readAiSettingsOnHost(layout)).off, true);
      await fsp.mkdir(path.join(f.user, 'profiles', 'p1'), { recursive: true });
      await fsp.writeFile(path.join(f.user, 'profiles', 'p1', 'settings.json'), JSON.stringify({ [key]: 'on, whatever the off value is' }));
      const on = await readAiSettingsOnHost(layout);
      assert.equal(on.off, false);
      assert.deepEqual(on.on, [`channel/editor/User/profiles/p1/settings.json: ${key}`]);
    });

    it('lists nothing through a link the solver made of profiles/ (into private/, say) and reads no file out of its folder', async () => {
      const layout = new SessionLayout(path.join(tmp, 's-link'));
      await fsp.mkdir(layout.workspace, { recursive: true });
      const f = await prepareEditorFolders(layout);
      const key = Object.keys(AI_OFF_SETTINGS)[0];
      // what a link would reach: a folder of private/ holding a settings file
      await fsp.mkdir(path.join(layout.private, 'harness'), { recursive: true });
      await fsp.writeFile(path.join(layout.private, 'harness', 'settings.json'), JSON.stringify({ [key]: 'read through the link' }));
      await fsp.symlink(layout.private, path.join(f.user, 'profiles'));
      const r = await readAiSettingsOnHost(layout);
      assert.ok(!r.checked.some((c) => c.includes('harness')), `nothing of private/ was read: ${r.checked.join(', ')}`);
      assert.ok(!r.on.some((o) => o.includes('harness')), r.on.join('; '));
      assert.deepEqual(r.on, ['channel/editor/User/profiles: not a folder (a symbolic link); not read, counted as on']);
      assert.equal(r.off, false, 'a profiles/ the host cannot read counts as on');
      // a profile's folder that is itself a link is not read through either; the window follows it
      // (its settings.json, AI on, is read by the editor), so it counts as on, as profiles/ does
      await fsp.rm(path.join(f.user, 'profiles'));
      await fsp.mkdir(path.join(f.user, 'profiles'));
      await fsp.symlink(path.join(layout.private, 'harness'), path.join(f.user, 'profiles', 'p2'));
      const r2 = await readAiSettingsOnHost(layout);
      assert.ok(!r2.checked.some((c) => c.includes('p2')), r2.checked.join(', '));
      assert.ok(!r2.on.some((o) => o.includes('harness')), r2.on.join('; '));
      assert.deepEqual(r2.on, ['channel/editor/User/profiles/p2: not a folder (a symbolic link); not read, counted as on']);
      assert.equal(r2.off, false, 'a linked profile the window reads and the host does not counts as on');
    });
  });
});
