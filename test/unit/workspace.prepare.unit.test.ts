import * as assert from 'node:assert/strict';
import { promises as fsp } from 'node:fs';
import * as path from 'node:path';
import { isExpBenchError } from '../../src/core/errors';
import { SessionLayout } from '../../src/core/layout';
import { readManifest } from '../../src/core/workspace/manifest';
import { MaskedPathMissingError } from '../../src/core/workspace/mask';
import { prepareSession, PrepareOptions } from '../../src/core/workspace/prepare';
import { binaryBytes, blobsEver, buildPaperRepo, commit, initRepo, PaperFixture, SECRET, sh, shBytes } from '../fixtures/repos/build';

type T = PrepareOptions['task'];
const task1: T = { id: 'iclr2024/1/0', type: 1, source: ['src/train.py'], maskedSource: ['src/train.py', 'src/secret_dir', 'lib/helper/secret_helper.py'] };

describe('workspace: prepareSession on real git repositories', function () {
  let fx: PaperFixture;
  let cacheDir: string;
  let sessions: string;

  before(async () => {
    fx = await buildPaperRepo();
    cacheDir = path.join(fx.root, 'cache');
    sessions = path.join(fx.root, 'sessions');
  });
  after(async () => { await fsp.rm(fx.root, { recursive: true, force: true }); });

  const out = (name: string) => path.join(sessions, name);

  it('pins HEAD, masks README + masked_source (in the submodule too), flattens the submodule, records everything', async () => {
    const m = await prepareSession({ task: task1, source: fx.repo, outDir: out('a'), cacheDir });
    const ws = new SessionLayout(out('a')).workspace;
    assert.equal(m.commit, fx.commits[2]);
    assert.equal(m.source.kind, 'clone');
    assert.equal(m.source.location, await fsp.realpath(fx.repo));
    assert.deepEqual(m.submodules, [{ path: 'lib/helper', sha: fx.subCommits[1], url: await fsp.realpath(fx.sub) }]);
    assert.deepEqual(m.masked.map((x) => x.path).sort(),
      ['README.md', 'lib/helper/secret_helper.py', 'src/secret_dir/a.py', 'src/secret_dir/b.py', 'src/train.py']);
    assert.equal(m.masked.find((x) => x.path === 'lib/helper/secret_helper.py')?.inSubmodule, 'lib/helper');
    assert.equal(m.masked.find((x) => x.path === 'src/train.py')?.blob, await sh(fx.repo, 'rev-parse', `${fx.commits[2]}:src/train.py`));
    assert.equal(m.masked.find((x) => x.path === 'README.md')?.reason, 'root README');
    for (const p of m.masked) await assert.rejects(fsp.stat(path.join(ws, p.path)), /ENOENT/, p.path);
    // kept files, byte for byte, modes included; submodule files flattened as plain files
    assert.equal(await fsp.readFile(path.join(ws, 'lib/helper/util.py'), 'utf8'), 'def util():\n    return "util"\n');
    assert.ok(!(await fsp.stat(path.join(ws, 'lib/helper/.git')).catch(() => undefined)), 'no .git in the flattened submodule');
    assert.deepEqual(await fsp.readFile(path.join(ws, 'assets/logo.png')), binaryBytes(1));
    assert.equal(await fsp.readFile(path.join(ws, 'docs/file with spaces.txt'), 'utf8'), 'one\ntwo\nthree\nfour\nfive\nsix\nseven\n');
    assert.ok((await fsp.stat(path.join(ws, 'scripts/run.sh'))).mode & 0o100, 'run.sh keeps its executable bit');
    assert.ok(await fsp.stat(path.join(ws, 'src/naïve model.py')));
    assert.equal(await sh(ws, 'status', '--porcelain'), '', 'fresh workspace is clean');
    assert.equal(await sh(ws, 'ls-files', '--stage', 'lib/helper/util.py').then((l) => l.split(' ')[0]), '100644');
    const back = await readManifest(out('a'));
    assert.deepEqual(back, m);
    assert.match(m.toolVersion, /^\d+\.\d+\.\d+/);
  });

  it('leaves nothing that gives back a masked file: objects, refs, reflogs, packed-refs, alternates, remotes', async () => {
    const ws = new SessionLayout(out('a')).workspace;
    const secretBlobs = new Set([
      ...(await blobsEver(fx.repo, ['src/train.py', 'src/secret_dir', 'README.md'])),
      ...(await blobsEver(fx.sub, ['secret_helper.py'])),
    ]);
    assert.ok(secretBlobs.size >= 8, `history has many masked versions (${secretBlobs.size})`);
    const objects = (await sh(ws, 'cat-file', '--batch-all-objects', '--batch-check')).split('\n');
    assert.ok(objects.length > 5);
    const leaked = objects.map((l) => l.split(' ')[0]).filter((sha) => secretBlobs.has(sha));
    assert.deepEqual(leaked, []);
    const allContent = await shBytes(ws, 'cat-file', '--batch-all-objects', '--batch');
    assert.ok(allContent.length > 1000);
    assert.equal(allContent.includes(SECRET), false, 'no object content holds the secret marker');
    assert.deepEqual((await sh(ws, 'log', '--all', '--format=%s')).split('\n'), ['task start']);
    assert.equal(await sh(ws, 'rev-list', '--all', '--count'), '1');
    assert.equal(await sh(ws, 'for-each-ref', '--format=%(refname)'), 'refs/heads/main');
    assert.equal(await sh(ws, 'remote'), '');
    assert.equal(await sh(ws, 'reflog', '--all'), '');
    assert.equal(await fsp.stat(path.join(ws, '.git/packed-refs')).catch(() => undefined), undefined);
    assert.equal(await fsp.stat(path.join(ws, '.git/objects/info/alternates')).catch(() => undefined), undefined);
    assert.equal(await sh(ws, 'fsck', '--full', '--strict', '--no-dangling'), '');
    assert.equal(await sh(ws, 'grep', '-r', '-c', SECRET, 'HEAD').catch((e) => String(e.code)), '1', 'git grep finds nothing');
  });

  it('writes the Dev Container file and keeps it out of git (.git/info/exclude)', async () => {
    const ws = new SessionLayout(out('a')).workspace;
    const dc = JSON.parse(await fsp.readFile(path.join(ws, '.devcontainer/devcontainer.json'), 'utf8'));
    assert.equal(dc.image, 'expbench/sandbox:1');
    assert.equal(dc.workspaceFolder, '/workspace');
    // from sandbox/devcontainer.template.json, placeholders replaced
    assert.equal(dc.name, 'EXP-Bench iclr2024/1/0');
    assert.equal(dc.remoteUser, 'solver');
    assert.ok(dc.runArgs.includes('--network=none') && dc.runArgs.includes('expbench.task=iclr2024/1/0'), JSON.stringify(dc.runArgs));
    assert.match(await fsp.readFile(path.join(ws, '.git/info/exclude'), 'utf8'), /^\/\.devcontainer\/$/m);
    assert.equal(await sh(ws, 'status', '--porcelain', '--untracked-files=all'), '');
  });

  it('pins an older commit on request (no submodule there) and masks its version', async () => {
    const m = await prepareSession({ task: { ...task1, maskedSource: ['src/train.py'] }, source: fx.repo, commit: fx.commits[1].slice(0, 10), outDir: out('old'), cacheDir });
    assert.equal(m.commit, fx.commits[1]);
    assert.deepEqual(m.submodules, []);
    assert.equal(m.masked.find((x) => x.path === 'src/train.py')?.blob, await sh(fx.repo, 'rev-parse', `${fx.commits[1]}:src/train.py`));
  });

  it('names EVERY missing masked path, and leaves no session behind', async () => {
    const t: T = { ...task1, maskedSource: ['src/train.py', 'src/nope.py', 'lib/helper/missing.py', '/workspace/data/'] };
    const err = await prepareSession({ task: t, source: fx.repo, outDir: out('missing'), cacheDir }).then(() => undefined, (e) => e);
    assert.ok(err instanceof MaskedPathMissingError, String(err));
    assert.equal(err.code, 'MASKED_PATH_MISSING');
    assert.deepEqual(err.missing, ['src/nope.py', 'lib/helper/missing.py', 'data']);
    for (const p of err.missing) assert.ok(err.message.includes(p), p);
    assert.ok(err.message.includes(fx.commits[2]));
    assert.equal(await fsp.stat(out('missing')).catch(() => undefined), undefined);
  });

  it('type 2 masks `source`, type 3 only the README', async () => {
    const m2 = await prepareSession({ task: { id: 't/2/0', type: 2, source: ['src/model.py'], maskedSource: [] }, source: fx.repo, outDir: out('t2'), cacheDir });
    assert.deepEqual(m2.masked.map((x) => x.path).sort(), ['README.md', 'src/model.py']);
    const m3 = await prepareSession({ task: { id: 't/3/0', type: 3, source: [], maskedSource: [] }, source: fx.repo, outDir: out('t3'), cacheDir });
    assert.deepEqual(m3.masked.map((x) => x.path), ['README.md']);
    assert.ok(await fsp.stat(path.join(out('t3'), 'workspace/src/train.py')));
  });

  it('reuses the pristine cache, and fetches a commit the cache lacks', async () => {
    const before = (await fsp.readdir(cacheDir)).sort();
    assert.deepEqual(before.length, 2, `superproject + submodule caches: ${before}`);
    await fsp.writeFile(path.join(fx.repo, 'NEW.txt'), 'new\n');
    await sh(fx.repo, 'add', 'NEW.txt');
    await sh(fx.repo, 'commit', '--quiet', '-m', 'fourth');
    const c4 = await sh(fx.repo, 'rev-parse', 'HEAD');
    const m = await prepareSession({ task: task1, source: fx.repo, outDir: out('c4'), cacheDir });
    assert.equal(m.commit, c4, 'default = the source HEAD now, fetched into the cache');
    assert.deepEqual((await fsp.readdir(cacheDir)).sort(), before);
    assert.ok(await fsp.stat(path.join(out('c4'), 'workspace/NEW.txt')));
  });

  it('a full SHA the cache lacks is fetched; a full id that is not a commit fails and leaves no session', async () => {
    await fsp.writeFile(path.join(fx.repo, 'FIFTH.txt'), 'fifth\n');
    await sh(fx.repo, 'add', 'FIFTH.txt');
    await sh(fx.repo, 'commit', '--quiet', '-m', 'fifth');
    const c5 = await sh(fx.repo, 'rev-parse', 'HEAD');
    await sh(fx.repo, 'reset', '--quiet', '--hard', 'HEAD~1'); // c5 is now on no branch of the source
    await sh(fx.repo, 'branch', 'keep-c5', c5);
    const m = await prepareSession({ task: task1, source: fx.repo, commit: c5, outDir: out('c5'), cacheDir });
    assert.equal(m.commit, c5);
    assert.ok(await fsp.stat(path.join(out('c5'), 'workspace/FIFTH.txt')));
    const tree = await sh(fx.repo, 'rev-parse', `${c5}^{tree}`);
    const err = await prepareSession({ task: task1, source: fx.repo, commit: tree, outDir: out('tree-id'), cacheDir }).catch((e) => e);
    assert.ok(isExpBenchError(err, 'SOURCE_UNAVAILABLE'), String(err));
    assert.ok(err.message.includes(tree), err.message);
    assert.equal(await fsp.stat(out('tree-id')).catch(() => undefined), undefined, 'no session folder left');
    await sh(fx.repo, 'branch', '-D', 'keep-c5');
  });

  it('a masked folder whose masked tree exists in the source history still gets every object in its own store', async () => {
    const repo = path.join(fx.root, 'same-tree');
    await initRepo(repo);
    await commit(repo, 'one', { 'src/a.py': 'a = 1\n', 'README.md': 'r\n' });
    const old = await sh(repo, 'rev-parse', 'HEAD:src');
    await commit(repo, 'two', { 'src/secret.py': `# ${SECRET}\n` });
    const t: T = { id: 's/1/0', type: 1, source: [], maskedSource: ['src/secret.py'] };
    const m = await prepareSession({ task: t, source: repo, outDir: out('same-tree'), cacheDir });
    const ws = new SessionLayout(out('same-tree')).workspace;
    assert.equal(await sh(ws, 'rev-parse', 'HEAD:src'), old, 'the masked src/ is the tree of the first commit');
    assert.equal(await sh(ws, 'cat-file', '-t', old), 'tree', 'and it is in the workspace\'s own object store');
    assert.equal(await sh(ws, 'fsck', '--full', '--strict', '--no-dangling'), '');
    assert.equal(await fsp.stat(path.join(ws, '.git/objects/info/alternates')).catch(() => undefined), undefined);
    assert.equal(await sh(ws, 'status', '--porcelain'), '');
    assert.equal(m.workspaceTree, await sh(ws, 'rev-parse', 'HEAD^{tree}'));
  });

  it('many folders: complete own store, clean checkout, masked folder gone', async () => {
    const repo = path.join(fx.root, 'many-folders');
    await initRepo(repo);
    const files: Record<string, string> = { 'README.md': 'r\n' };
    for (let i = 0; i < 80; i++) files[`d${i}/m.py`] = `x = ${i}\n`;
    files['d7/secret.py'] = `# ${SECRET}\n`;
    await commit(repo, 'c', files);
    const t: T = { id: 'm/1/0', type: 1, source: [], maskedSource: ['d7/secret.py', 'd9'] };
    const m = await prepareSession({ task: t, source: repo, outDir: out('many'), cacheDir });
    const ws = new SessionLayout(out('many')).workspace;
    assert.deepEqual(m.masked.map((x) => x.path).sort(), ['README.md', 'd7/secret.py', 'd9/m.py']);
    assert.equal(await sh(ws, 'fsck', '--full', '--strict', '--no-dangling'), '');
    assert.equal(await sh(ws, 'status', '--porcelain'), '');
    assert.equal((await sh(ws, 'ls-files')).split('\n').length, 79);
    assert.equal(await sh(ws, 'rev-parse', 'HEAD:d8'), await sh(repo, 'rev-parse', 'HEAD:d8'), 'unmasked folders are the source trees');
    assert.equal(await fsp.stat(path.join(ws, 'd9')).catch(() => undefined), undefined);
  });

  it('refuses a non-empty folder, and re-prepares over an unfinished one', async () => {
    await fsp.mkdir(out('busy'), { recursive: true });
    await fsp.writeFile(path.join(out('busy'), 'notes.txt'), 'mine');
    const err = await prepareSession({ task: task1, source: fx.repo, outDir: out('busy'), cacheDir }).catch((e) => e);
    assert.ok(isExpBenchError(err, 'BAD_INPUT'));
    assert.equal(await fsp.readFile(path.join(out('busy'), 'notes.txt'), 'utf8'), 'mine', 'user files survive');

    const half = new SessionLayout(out('half'));
    await fsp.mkdir(path.join(half.workspace, 'src'), { recursive: true });
    await fsp.mkdir(half.private, { recursive: true });
    await fsp.writeFile(half.manifest, JSON.stringify({ complete: false, taskId: task1.id, createdAt: new Date().toISOString() }));
    await assert.rejects(readManifest(out('half')), (e: any) => e.code === 'SESSION_INVALID' && /did not finish/.test(e.message));
    const m = await prepareSession({ task: task1, source: fx.repo, outDir: out('half'), cacheDir });
    assert.equal((await readManifest(out('half'))).workspaceCommit, m.workspaceCommit);
  });

  it('cancels: no manifest, no workspace left, CANCELLED', async () => {
    const ac = new AbortController();
    const err = await prepareSession({
      task: task1, source: fx.repo, outDir: out('cancel'), cacheDir, signal: ac.signal,
      onProgress: (p) => { if (p.step === 'tree') ac.abort(); },
    }).catch((e) => e);
    assert.ok(isExpBenchError(err, 'CANCELLED'), String(err));
    assert.equal(await fsp.stat(out('cancel')).catch(() => undefined), undefined);
  });

  it('imports a plain folder into the cache (same content → same commit)', async () => {
    const folder = path.join(fx.root, 'plain');
    await fsp.mkdir(path.join(folder, 'src'), { recursive: true });
    await fsp.writeFile(path.join(folder, 'README'), 'readme\n');
    await fsp.writeFile(path.join(folder, 'src/train.py'), `# ${SECRET}\n`);
    await fsp.writeFile(path.join(folder, 'src/keep.py'), 'keep\n');
    const t: T = { id: 'f/1/0', type: 1, source: [], maskedSource: ['src/train.py'] };
    const m1 = await prepareSession({ task: t, source: folder, outDir: out('f1'), cacheDir });
    const m2 = await prepareSession({ task: t, source: folder, outDir: out('f2'), cacheDir });
    assert.equal(m1.source.kind, 'folder');
    assert.equal(m1.commit, m2.commit);
    assert.deepEqual(m1.masked.map((x) => x.path).sort(), ['README', 'src/train.py']);
    assert.deepEqual(await fsp.readdir(path.join(out('f1'), 'workspace/src')), ['keep.py']);
    assert.equal(await fsp.stat(path.join(folder, '.git')).catch(() => undefined), undefined, 'the folder itself is untouched');
  });
});
