import * as assert from 'node:assert/strict';
import { promises as fsp } from 'node:fs';
import * as path from 'node:path';
import { isExpBenchError } from '../../src/core/errors';
import { SessionLayout } from '../../src/core/layout';
import { applyToCheckout, checkoutTaskStart, makePatch, taskStartCommit } from '../../src/core/workspace/patch';
import { prepareSession } from '../../src/core/workspace/prepare';
import { binaryBytes, buildPaperRepo, PaperFixture, sh, tmpDir, writeFiles } from '../fixtures/repos/build';

/** Every file under `dir` (relative path → bytes + executable bit), skipping `.git` and the given prefixes. */
async function snapshot(dir: string, skip: string[] = []): Promise<Map<string, string>> {
  const out = new Map<string, string>();
  const walk = async (rel: string) => {
    for (const e of await fsp.readdir(path.join(dir, rel), { withFileTypes: true })) {
      const r = rel ? `${rel}/${e.name}` : e.name;
      if (e.name === '.git' || skip.some((s) => r === s || r.startsWith(s + '/'))) continue;
      if (e.isDirectory()) await walk(r);
      else {
        const st = await fsp.lstat(path.join(dir, r));
        out.set(r, `${st.mode & 0o100 ? 'x' : '-'}:${(await fsp.readFile(path.join(dir, r))).toString('base64')}`);
      }
    }
  };
  await walk('');
  return out;
}

describe('workspace: makePatch and the round trip through git apply', function () {
  let fx: PaperFixture;
  let ws: string;
  let tmp: string;

  before(async () => {
    fx = await buildPaperRepo();
    tmp = await tmpDir();
    const outDir = path.join(fx.root, 'session');
    await prepareSession({
      task: { id: 'p/1/0', type: 1, source: [], maskedSource: ['src/train.py'] },
      source: fx.repo, outDir, cacheDir: path.join(fx.root, 'cache'),
    });
    ws = new SessionLayout(outDir).workspace;
  });
  after(async () => {
    await fsp.rm(fx.root, { recursive: true, force: true });
    await fsp.rm(tmp, { recursive: true, force: true });
  });

  it('is empty on a fresh workspace', async () => {
    const p = await makePatch(ws);
    assert.equal(p.patch, '');
    assert.deepEqual(p.files, []);
    assert.deepEqual(p.ignoredFiles, []);
    assert.equal(p.base, await taskStartCommit(ws));
  });

  it('lists every kind of change, leaves binaries and ignored outputs out, and does not touch the index', async () => {
    await writeFiles(ws, {
      'src/model.py': 'class Model:\n    def forward(self):\n        return 42\n',   // modified
      'src/train.py': 'print("my own training")\n',                                 // added (was masked)
      'reproduce_exp_bench.sh': { exec: '#!/bin/bash\nset -e\npython3 src/train.py\n' }, // added, executable
      'results/final table.md': '| a | b |\n',                                       // added, spaces
      'lib/helper/util.py': null,                                                    // deleted (flattened submodule)
      'assets/logo.png': binaryBytes(7),                                             // binary modified
      'assets/new.bin': binaryBytes(8),                                              // binary added
      'assets/old.bin': null,                                                        // binary deleted
      'build/out.o': 'ignored output\n',                                             // ignored (build/)
      'src/cache.pyc': 'ignored\n',                                                  // ignored (*.pyc)
      'nested/repo/file.txt': 'inside a nested repository\n',
    });
    await sh(path.join(ws, 'nested/repo'), 'init', '--quiet');
    // renamed (with a small edit) — a file whose name has spaces
    await fsp.rename(path.join(ws, 'docs/file with spaces.txt'), path.join(ws, 'docs/renamed file.txt'));
    await fsp.appendFile(path.join(ws, 'docs/renamed file.txt'), 'eight\n');
    await fsp.rename(path.join(ws, 'src/naïve model.py'), path.join(ws, 'src/naïve model 2.py'));
    // a binary renamed with a change
    const moved = binaryBytes(3);
    moved[100] ^= 0xff;
    await fsp.writeFile(path.join(ws, 'assets/moved.bin'), moved);
    await fsp.rm(path.join(ws, 'assets/move.bin'));
    const indexBefore = await fsp.readFile(path.join(ws, '.git/index'));
    const statusBefore = await sh(ws, '--no-optional-locks', 'status', '--porcelain');

    const p = await makePatch(ws);
    const byPath = new Map(p.files.map((f) => [f.path, f]));
    const expect = (file: string, status: string, binary = false, oldPath?: string) => {
      const f = byPath.get(file);
      assert.ok(f, `${file} listed (got ${[...byPath.keys()].join(', ')})`);
      assert.equal(f.status, status, file);
      assert.equal(f.binary, binary, file);
      assert.equal(f.oldPath, oldPath, file);
    };
    expect('src/model.py', 'modified');
    expect('src/train.py', 'added');
    expect('reproduce_exp_bench.sh', 'added');
    expect('results/final table.md', 'added');
    expect('lib/helper/util.py', 'deleted');
    expect('assets/logo.png', 'modified', true);
    expect('assets/new.bin', 'added', true);
    expect('assets/old.bin', 'deleted', true);
    expect('docs/renamed file.txt', 'renamed', false, 'docs/file with spaces.txt');
    expect('src/naïve model 2.py', 'renamed', false, 'src/naïve model.py');
    expect('assets/moved.bin', 'renamed', true, 'assets/move.bin');
    // A nested repository's files are plain content of the patch (its own .git is not; git never ran in it).
    expect('nested/repo/file.txt', 'added');
    assert.equal(p.files.length, 12, p.files.map((f) => f.path).join(', '));
    assert.equal(byPath.get('src/model.py')!.additions, 2);
    assert.equal(byPath.get('src/model.py')!.deletions, 1);
    assert.equal(byPath.get('docs/renamed file.txt')!.additions, 1);
    assert.deepEqual(p.binaryFiles.sort(), ['assets/logo.png', 'assets/moved.bin', 'assets/new.bin', 'assets/old.bin']);
    assert.deepEqual(p.ignoredFiles.sort(), ['build/', 'src/cache.pyc']);
    assert.deepEqual(p.nestedRepositories, ['nested/repo/']);
    assert.ok(!p.patch.includes('Binary files'), 'binary files are not in the patch');
    assert.ok(!p.patch.includes('ignored output'));
    assert.ok(!p.patch.includes('.devcontainer'));
    assert.ok(p.patch.includes('new file mode 100755'), 'the script is added executable');
    assert.deepEqual(await fsp.readFile(path.join(ws, '.git/index')), indexBefore, 'the user index is byte-identical');
    assert.equal(await sh(ws, '--no-optional-locks', 'status', '--porcelain'), statusBefore);
    assert.match(statusBefore, /^\?\? reproduce_exp_bench\.sh$/m, 'untracked files stay untracked for the user');
  });

  it('applies cleanly (git apply --check) to a fresh masked checkout', async () => {
    const dest = path.join(tmp, 'check');
    await checkoutTaskStart(ws, dest);
    assert.equal(await fsp.stat(path.join(dest, 'src/train.py')).catch(() => undefined), undefined, 'the checkout is masked');
    assert.ok(await fsp.stat(path.join(dest, 'docs/file with spaces.txt')));
    const p = await makePatch(ws);
    const file = path.join(tmp, 'work.patch');
    await fsp.writeFile(file, p.patch);
    await sh(dest, 'apply', '--check', file);
  });

  it('round trip: applyToCheckout rebuilds the workspace exactly (text, binary, modes, deletions, renames)', async () => {
    const dest = path.join(tmp, 'round');
    await checkoutTaskStart(ws, dest);
    await applyToCheckout(ws, dest);
    const skip = ['.devcontainer', 'build', 'src/cache.pyc'];
    const want = await snapshot(ws, skip);
    const got = await snapshot(dest, skip);
    assert.deepEqual([...got.keys()].sort(), [...want.keys()].sort());
    for (const [k, v] of want) assert.equal(got.get(k), v, k);
    assert.ok(want.has('assets/new.bin') && !want.has('assets/old.bin') && want.has('src/naïve model 2.py'));
    assert.ok(want.has('assets/moved.bin') && !want.has('assets/move.bin'));
    assert.ok(want.has('nested/repo/file.txt'), 'the nested repository\'s file (its .git left out) came through');
  });

  it('rejects a folder that is not a task workspace', async () => {
    const other = path.join(tmp, 'other');
    await fsp.mkdir(other);
    await sh(other, 'init', '--quiet');
    await sh(other, '-c', 'user.name=x', '-c', 'user.email=x@y', 'commit', '--quiet', '--allow-empty', '-m', 'not it');
    await assert.rejects(makePatch(other), (e: unknown) => isExpBenchError(e, 'SESSION_INVALID') && /not a task workspace/.test((e as Error).message));
    // A folder named workspace whose session has no host repository (and no manifest to rebuild one): refused, naming it.
    const bare = path.join(tmp, 'handmade', 'workspace');
    await fsp.mkdir(bare, { recursive: true });
    await sh(bare, 'init', '--quiet');
    await sh(bare, '-c', 'user.name=x', '-c', 'user.email=x@y', 'commit', '--quiet', '--allow-empty', '-m', 'task start');
    await assert.rejects(makePatch(bare), (e: unknown) => isExpBenchError(e, 'SESSION_INVALID') && /earlier version .*no manifest/.test((e as Error).message));
  });
});
