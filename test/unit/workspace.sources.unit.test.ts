import * as assert from 'node:assert/strict';
import { promises as fsp } from 'node:fs';
import * as net from 'node:net';
import * as path from 'node:path';
import { isExpBenchError } from '../../src/core/errors';
import { git } from '../../src/core/git';
import { applyMask, maskRules } from '../../src/core/workspace/mask';
import { prepareSession } from '../../src/core/workspace/prepare';
import { cacheName, classifySource, normaliseSource, probeSource, resolveSubmoduleUrl } from '../../src/core/workspace/source';
import { binaryBytes, commit, initRepo, sh, tmpDir } from '../fixtures/repos/build';

describe('workspace: sources, cache keys, faults', function () {
  let root: string;
  before(async () => { root = await tmpDir(); });
  after(async () => { await fsp.rm(root, { recursive: true, force: true }); });

  it('normalises URLs for the cache key and resolves relative submodule URLs as git does', () => {
    const a = normaliseSource({ kind: 'url', location: 'https://GitHub.com/apple/ml-calibration.git/' });
    const b = normaliseSource({ kind: 'url', location: 'https://github.com/apple/ml-calibration' });
    assert.equal(a, b);
    assert.match(cacheName({ kind: 'url', location: 'https://github.com/apple/ml-calibration' }), /^ml-calibration-[0-9a-f]{16}\.git$/);
    assert.notEqual(cacheName({ kind: 'url', location: 'https://github.com/a/x' }), cacheName({ kind: 'url', location: 'https://github.com/b/x' }));
    assert.equal(resolveSubmoduleUrl('../lib.git', 'https://github.com/o/r'), 'https://github.com/o/lib.git');
    assert.equal(resolveSubmoduleUrl('./sub', 'https://github.com/o/r'), 'https://github.com/o/r/sub');
    assert.equal(resolveSubmoduleUrl('../lib', 'git@github.com:o/r.git'), 'git@github.com:o/lib');
    assert.equal(resolveSubmoduleUrl('../lib', '/src/r'), '/src/lib');
    assert.equal(resolveSubmoduleUrl('https://x/y', '/src/r'), 'https://x/y');
  });

  it('classifies URL, clone, folder; a subfolder of a repository is a folder; a missing path is an error', async () => {
    const repo = path.join(root, 'cls');
    await initRepo(repo);
    await commit(repo, 'c', { 'sub/a.txt': 'a' });
    assert.equal((await classifySource('file:///x/y.git')).kind, 'url');
    assert.equal((await classifySource('git@github.com:o/r.git')).kind, 'url');
    assert.equal((await classifySource(repo)).kind, 'clone');
    assert.equal((await classifySource(path.join(repo, 'sub'))).kind, 'folder');
    const bare = path.join(root, 'cls.git');
    await sh(root, 'clone', '--quiet', '--bare', repo, bare);
    assert.equal((await classifySource(bare)).kind, 'clone');
    await assert.rejects(classifySource(path.join(root, 'nope')), (e: any) => e.code === 'SOURCE_UNAVAILABLE' && e.message.includes(path.join(root, 'nope')));
  });

  it('probing a source reads a clone\'s HEAD in the same call: clone and bare yes; subfolder, empty repository, URL no', async () => {
    const repo = path.join(root, 'probe');
    await initRepo(repo);
    const c = await commit(repo, 'c', { 'sub/a.txt': 'a' });
    assert.deepEqual(await probeSource(repo), { source: { kind: 'clone', location: await fsp.realpath(repo) }, head: c });
    const bare = path.join(root, 'probe.git');
    await sh(root, 'clone', '--quiet', '--bare', repo, bare);
    assert.deepEqual(await probeSource(bare), { source: { kind: 'clone', location: await fsp.realpath(bare) }, head: c });
    assert.deepEqual(await probeSource(path.join(repo, 'sub')), { source: { kind: 'folder', location: await fsp.realpath(path.join(repo, 'sub')) } });
    const empty = path.join(root, 'probe-empty');
    await initRepo(empty);
    assert.deepEqual(await probeSource(empty), { source: { kind: 'clone', location: await fsp.realpath(empty) } });
    assert.deepEqual(await probeSource('https://example.com/o/r.git'), { source: { kind: 'url', location: 'https://example.com/o/r.git' } });
  });

  it('probing reads HEAD as git rev-parse does: packed refs, a loose ref over a packed one, detached, linked worktree, bare, bare without config, core.worktree', async () => {
    const repo = path.join(root, 'heads');
    await initRepo(repo);
    const c1 = await commit(repo, 'one', { 'a.txt': '1\n' });
    const real = await fsp.realpath(repo);
    assert.deepEqual(await probeSource(repo), { source: { kind: 'clone', location: real }, head: c1 });
    await sh(repo, 'pack-refs', '--all');
    assert.equal((await probeSource(repo)).head, c1);
    const c2 = await commit(repo, 'two', { 'a.txt': '2\n' });
    assert.equal((await probeSource(repo)).head, c2, 'a loose ref wins over the packed one');
    await sh(repo, 'checkout', '--quiet', '--detach', c1);
    assert.equal((await probeSource(repo)).head, c1, 'detached HEAD');
    await sh(repo, 'checkout', '--quiet', 'main');
    const linked = path.join(root, 'heads-linked');
    await sh(repo, 'worktree', 'add', '--quiet', '--detach', linked, c1);
    assert.deepEqual(await probeSource(linked), { source: { kind: 'clone', location: await fsp.realpath(linked) }, head: c1 });
    const bare = path.join(root, 'heads.git');
    await sh(root, 'clone', '--quiet', '--bare', repo, bare);
    assert.deepEqual(await probeSource(bare), { source: { kind: 'clone', location: await fsp.realpath(bare) }, head: c2 });
    await fsp.rm(path.join(bare, 'config'));
    assert.equal(await sh(bare, 'rev-parse', '--is-bare-repository'), 'true', 'git still takes it as a bare repository');
    assert.deepEqual(await probeSource(bare), { source: { kind: 'clone', location: await fsp.realpath(bare) }, head: c2 }, 'bare, no config');
    const elsewhere = path.join(root, 'heads-worktree');
    await fsp.mkdir(elsewhere);
    await sh(repo, 'config', 'core.worktree', elsewhere);
    assert.deepEqual(await probeSource(repo), { source: { kind: 'folder', location: real } }, 'git says the work tree is elsewhere: not the top');
  });

  it('masks every root README* (any case), never a README below the root', () => {
    const files = ['README.md', 'readme.rst', 'README_zh.md', 'docs/README.md', 'src/a.py'].map((p) => ({ mode: '100644', sha: 'a'.repeat(40), path: p, repo: '/r' }));
    const r = applyMask('t', 'c', files, maskRules({ id: 't', type: 3, source: ['x'], maskedSource: [] }));
    assert.deepEqual(r.masked.map((m) => m.path), ['README.md', 'readme.rst', 'README_zh.md']);
    assert.throws(() => maskRules({ id: 't/1', type: 1, source: [], maskedSource: ['/workspace/'] }), /not a path inside/);
    assert.throws(() => maskRules({ id: 't/1', type: 1, source: [], maskedSource: ['../etc/passwd'] }), /t\/1/);
  });

  it('prepares from a file:// URL (kind url)', async () => {
    const repo = path.join(root, 'viaurl');
    await initRepo(repo);
    const c = await commit(repo, 'c', { 'README.md': 'x', 'a.py': 'a = 1\n', 'secret.py': 's\n' });
    const m = await prepareSession({
      task: { id: 'u/1/0', type: 1, source: [], maskedSource: ['secret.py'] },
      source: `file://${repo}`, outDir: path.join(root, 's-url'), cacheDir: path.join(root, 'cache'),
    });
    assert.equal(m.source.kind, 'url');
    assert.equal(m.commit, c);
    assert.deepEqual(await fsp.readdir(path.join(root, 's-url/workspace')).then((l) => l.sort()), ['.devcontainer', '.git', 'a.py']);
  });

  it('a failed clone names the URL and carries git\'s own error', async () => {
    const url = `file://${root}/does-not-exist.git`;
    const err = await prepareSession({
      task: { id: 'u/1/0', type: 3, source: [], maskedSource: [] }, source: url,
      outDir: path.join(root, 's-fail'), cacheDir: path.join(root, 'cache'),
    }).catch((e) => e);
    assert.ok(isExpBenchError(err, 'SOURCE_UNAVAILABLE'), String(err));
    assert.equal(err.input, url);
    assert.match(err.message, /does not appear to be a git repository|does not exist/);
    assert.equal(await fsp.stat(path.join(root, 's-fail')).catch(() => undefined), undefined);
    assert.deepEqual((await fsp.readdir(path.join(root, 'cache'))).filter((n) => n.includes('.tmp-')), [], 'no half-made cache entry');
  });

  it('an object missing from the snapshot gives an error naming the object and its path', async () => {
    const repo = path.join(root, 'holes');
    await initRepo(repo);
    await commit(repo, 'c', { 'big data.bin': binaryBytes(9, 8192), 'a.py': 'a\n' });
    const blob = await sh(repo, 'rev-parse', 'HEAD:big data.bin');
    await fsp.rm(path.join(repo, '.git/objects', blob.slice(0, 2), blob.slice(2)));
    const err = await prepareSession({
      task: { id: 'h/1/0', type: 3, source: [], maskedSource: [] }, source: repo,
      outDir: path.join(root, 's-holes'), cacheDir: path.join(root, 'cache'),
    }).catch((e) => e);
    assert.ok(isExpBenchError(err, 'SOURCE_UNAVAILABLE'), String(err));
    assert.ok(err.message.includes(blob), err.message);
    assert.ok(err.message.includes('big data.bin'), err.message);
  });

  it('an AbortSignal kills a running git process', async () => {
    // A loopback server that accepts and never answers: git waits until it is killed.
    const sockets: net.Socket[] = [];
    const server = net.createServer((s) => { sockets.push(s); });
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    const port = (server.address() as net.AddressInfo).port;
    try {
      const ac = new AbortController();
      const started = Date.now();
      const pending = git(['ls-remote', `git://127.0.0.1:${port}/x`], { repo: 'none', signal: ac.signal });
      setTimeout(() => ac.abort(), 300);
      const err = await pending.catch((e) => e);
      assert.ok(isExpBenchError(err, 'CANCELLED'), String(err));
      assert.ok(sockets.length >= 1, 'git really connected');
      assert.ok(Date.now() - started < 5000);
    } finally {
      for (const s of sockets) s.destroy();
      server.close();
    }
  });
});
