import * as assert from 'node:assert/strict';
import { promises as fsp } from 'node:fs';
import * as path from 'node:path';
import { INIT_TEMPLATE, initWorkspaceRepo } from '../../src/core/workspace/init';
import { buildTrees, commitBody, gitObject, listObjectStore, writeLoose, writeRef } from '../../src/core/workspace/objects';
import { probeSource } from '../../src/core/workspace/source';
import { commit, initRepo, sh, tmpDir } from '../fixtures/repos/build';

/**
 * The git objects the workspace builder writes itself, checked against git: tree ids against
 * `git write-tree`, objects through `git cat-file` and `git fsck --strict`, the object store
 * listing against `git cat-file --batch-all-objects`, the HEAD read from files against
 * `git rev-parse`, the init template against `git init`.
 */
describe('workspace: git objects written in-process, checked by git', function () {
  let root: string;
  before(async () => { root = await tmpDir(); });
  after(async () => { await fsp.rm(root, { recursive: true, force: true }); });

  // Names whose order differs between byte order and folder-as-"name/" order, and non-ASCII ones.
  const tricky = {
    'a': 'file a\n', 'a.b': 'x\n', 'a-b': 'y\n', 'a0': 'z\n', 'ab/inner.py': 'i\n', 'a_/q': 'q\n',
    'b/c/d e.txt': 'spaces\n', 'b/c.txt': 'c\n', 'b/c-d/x': 'x\n', 'naïve/日本.md': 'u\n', 'Z': 'upper\n',
    'run.sh': { exec: '#!/bin/sh\necho hi\n' },
  };

  it('builds the same tree ids as git write-tree (sort order, modes, symbolic links, reused folders)', async () => {
    const repo = path.join(root, 'trees');
    await initRepo(repo);
    await commit(repo, 'c', tricky);
    await fsp.symlink('a', path.join(repo, 'link'));
    await sh(repo, 'add', '-A');
    await sh(repo, 'commit', '--quiet', '-m', 'link');
    const listing = (await sh(repo, 'ls-tree', '-r', '-t', '-z', 'HEAD')).split('\0').filter(Boolean).map((rec) => {
      const tab = rec.indexOf('\t');
      const [mode, type, sha] = rec.slice(0, tab).split(' ');
      return { mode, type, sha, path: rec.slice(tab + 1) };
    });
    const files = listing.filter((e) => e.type === 'blob');
    const folders = listing.filter((e) => e.type === 'tree');
    assert.ok(files.some((f) => f.mode === '120000') && files.some((f) => f.mode === '100755'));
    const expectedRoot = await sh(repo, 'rev-parse', 'HEAD^{tree}');
    // Every folder rebuilt from files …
    const all = buildTrees(files, []);
    assert.equal(all.root, expectedRoot);
    assert.equal(all.trees.length, folders.length + 1);
    for (const f of folders) assert.ok(all.trees.some((t) => t.id === f.sha), `tree of ${f.path}`);
    // … or some reused as they are (an inner reused folder inside a reused one is covered by it).
    const reused = folders.filter((f) => f.path === 'b' || f.path === 'b/c' || f.path === 'naïve');
    const some = buildTrees(files, reused);
    assert.equal(some.root, expectedRoot);
    assert.equal(some.trees.length, folders.length + 1 - 4, 'b, b/c, b/c-d and naïve are not written again');
    // A file left out changes the tree as git would (checked by writing the same index in git).
    const kept = files.filter((f) => f.path !== 'a.b' && f.path !== 'b/c-d/x');
    const idx = path.join(root, 'idx');
    const info = kept.map((f) => `${f.mode} ${f.sha}\t${f.path}\0`).join('');
    const { execFileSync } = await import('node:child_process');
    execFileSync('git', ['update-index', '--add', '-z', '--index-info'], { cwd: repo, input: info, env: { ...process.env, GIT_INDEX_FILE: idx } });
    const gitTree = execFileSync('git', ['write-tree'], { cwd: repo, env: { ...process.env, GIT_INDEX_FILE: idx } }).toString().trim();
    assert.equal(buildTrees(kept, []).root, gitTree);
  });

  it('writes loose objects, a commit and a branch that git reads and fsck --strict accepts', async () => {
    const repo = path.join(root, 'loose');
    await initWorkspaceRepo(repo);
    const blob = gitObject('blob', Buffer.from('hello\n'));
    assert.equal(blob.id, 'ce013625030ba8dba906f756967f9e9ca394464a', 'the id git hash-object gives for "hello\\n"');
    const { root: tree, trees } = buildTrees([{ mode: '100644', sha: blob.id, path: 'src/hello.txt' }], []);
    const when = new Date('2026-11-30T12:00:00Z');
    const commitObj = gitObject('commit', commitBody(tree, 'EXP-Bench <expbench@localhost>', 'task start', when));
    writeLoose(path.join(repo, '.git'), [blob, ...trees, commitObj, blob]);
    await writeRef(path.join(repo, '.git'), 'refs/heads/main', commitObj.id);
    assert.equal(await sh(repo, 'rev-parse', 'HEAD'), commitObj.id);
    assert.equal(await sh(repo, 'log', '--format=%s|%an|%ae|%at', '-1'), `task start|EXP-Bench|expbench@localhost|${when.getTime() / 1000}`);
    assert.equal(await sh(repo, 'show', 'HEAD:src/hello.txt'), 'hello');
    assert.equal(await sh(repo, 'fsck', '--full', '--strict', '--no-dangling'), '');
    assert.equal(await sh(repo, 'reflog', '--all'), '', 'no reflog written');
    await assert.rejects(async () => writeLoose(path.join(repo, '.git'), [blob]), /EEXIST/, 'an object already written is an error, not overwritten');
  });

  it('lists the object store as git does (loose and packed); undefined when alternates are recorded', async () => {
    const repo = path.join(root, 'store');
    await initRepo(repo);
    await commit(repo, 'one', tricky);
    await sh(repo, 'gc', '--quiet');
    await commit(repo, 'two', { 'new.txt': 'loose after the pack\n' });
    const byGit = (await sh(repo, 'cat-file', '--batch-all-objects', '--batch-check=%(objectname)')).split('\n').sort();
    const mine = (await listObjectStore(path.join(repo, '.git')))?.sort();
    assert.ok(byGit.length > 20);
    assert.ok((await fsp.readdir(path.join(repo, '.git/objects/pack'))).some((f) => f.endsWith('.idx')), 'a pack exists');
    assert.deepEqual(mine, byGit);
    await fsp.writeFile(path.join(repo, '.git/objects/info/alternates'), '/elsewhere/objects\n');
    assert.equal(await listObjectStore(path.join(repo, '.git')), undefined);
  });

  it('reads HEAD from the files as git rev-parse does; unusual layouts are left to git', async () => {
    const repo = path.join(root, 'heads');
    await initRepo(repo);
    const c1 = await commit(repo, 'one', { 'a.txt': '1\n' });
    const real = await fsp.realpath(repo);
    assert.deepEqual(await probeSource(repo), { source: { kind: 'clone', location: real }, head: c1 });
    await sh(repo, 'pack-refs', '--all');
    assert.equal(await fsp.stat(path.join(repo, '.git/refs/heads/main')).catch(() => undefined), undefined, 'the branch is only in packed-refs');
    assert.equal((await probeSource(repo)).head, c1);
    const c2 = await commit(repo, 'two', { 'a.txt': '2\n' });
    assert.equal((await probeSource(repo)).head, c2, 'a loose ref wins over the packed one');
    await sh(repo, 'checkout', '--quiet', '--detach', c1);
    assert.equal((await probeSource(repo)).head, c1, 'detached HEAD');
    await sh(repo, 'checkout', '--quiet', 'main');
    // A linked worktree (.git is a file), a bare clone, and core.worktree: the same answers as git gives.
    const linked = path.join(root, 'heads-linked');
    await sh(repo, 'worktree', 'add', '--quiet', '--detach', linked, c1);
    assert.deepEqual(await probeSource(linked), { source: { kind: 'clone', location: await fsp.realpath(linked) }, head: c1 });
    const bare = path.join(root, 'heads.git');
    await sh(root, 'clone', '--quiet', '--bare', repo, bare);
    assert.deepEqual(await probeSource(bare), { source: { kind: 'clone', location: await fsp.realpath(bare) }, head: c2 });
    await sh(bare, 'pack-refs', '--all');
    assert.equal((await probeSource(bare)).head, c2);
    await fsp.rm(path.join(bare, 'config'));
    assert.equal(await sh(bare, 'rev-parse', '--is-bare-repository'), 'true', 'git still takes it as a bare repository');
    assert.deepEqual(await probeSource(bare), { source: { kind: 'clone', location: await fsp.realpath(bare) }, head: c2 }, 'bare, no config');
    const elsewhere = path.join(root, 'heads-worktree');
    await fsp.mkdir(elsewhere);
    await sh(repo, 'config', 'core.worktree', elsewhere);
    assert.deepEqual(await probeSource(repo), { source: { kind: 'folder', location: real } }, 'git says the work tree is elsewhere: not the top');
  });

  it('keeps the first git init as a template in the cache and copies it for later workspaces', async () => {
    const cache = path.join(root, 'init-cache');
    const first = path.join(root, 'init-1', 'workspace');
    await fsp.mkdir(path.dirname(first));
    await initWorkspaceRepo(first, undefined, cache);
    const template = path.join(cache, INIT_TEMPLATE);
    assert.equal(await fsp.readFile(path.join(template, 'HEAD'), 'utf8'), 'ref: refs/heads/main\n');
    const second = path.join(root, 'init-2', 'workspace');
    await fsp.mkdir(path.dirname(second));
    await fsp.writeFile(path.join(template, 'marker'), 'copied, not made by git\n');
    await initWorkspaceRepo(second, undefined, cache);
    assert.equal(await fsp.readFile(path.join(second, '.git', 'marker'), 'utf8'), 'copied, not made by git\n');
    await fsp.rm(path.join(template, 'marker'));
    await fsp.rm(path.join(second, '.git', 'marker'));
    const plain = path.join(root, 'init-plain');
    await sh(root, 'init', '--quiet', '--template=', '--initial-branch=main', plain);
    for (const f of ['config', 'HEAD']) {
      assert.equal(await fsp.readFile(path.join(second, '.git', f), 'utf8'), await fsp.readFile(path.join(plain, '.git', f), 'utf8'), f);
    }
    const list = async (d: string) => (await fsp.readdir(d, { recursive: true })).sort();
    assert.deepEqual(await list(path.join(second, '.git')), await list(path.join(plain, '.git')));
    assert.equal(await sh(second, 'rev-parse', '--is-inside-work-tree'), 'true');
    assert.equal(await sh(second, 'symbolic-ref', 'HEAD'), 'refs/heads/main');
  });
});
