import * as assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { promises as fsp } from 'node:fs';
import * as path from 'node:path';
import { promisify } from 'node:util';
import { isExpBenchError } from '../../src/core/errors';
import { SessionLayout } from '../../src/core/layout';
import { LOCAL_REPO_ENV } from '../../src/core/git';
import { prepareSession, PrepareOptions } from '../../src/core/workspace/prepare';
import { commit, initRepo, sh, tmpDir } from '../fixtures/repos/build';

const run = promisify(execFile);
const task: PrepareOptions['task'] = { id: 'x/1/0', type: 1, source: [], maskedSource: ['secret.py'] };

/** Files git leaves when a pack-objects run does not finish (`tmp_pack_*`, `tmp_idx_*`), anywhere under `dir`. */
async function gitTempFiles(dir: string): Promise<string[]> {
  const all = await fsp.readdir(dir, { recursive: true }).catch(() => [] as string[]);
  return all.filter((f) => /(^|\/)tmp_(pack|idx)_/.test(f));
}

/**
 * Faults found by a helper trying to break prepareSession (at adc69b8); each test failed before
 * its fix: GIT_DIR in the environment, a SHA-256 source, a session folder on another file system
 * than the cache. (The init template they also covered is gone: the workspace is made by `git init`.)
 */
describe('workspace: prepareSession faults (environment, SHA-256, other file system)', function () {
  let root: string;
  let repo: string;
  let head: string;

  before(async () => {
    root = await tmpDir('expbench-break-');
    repo = path.join(root, 'src');
    await initRepo(repo);
    head = await commit(repo, 'c1', { 'secret.py': 'SECRET\n', 'keep.txt': 'k\n' });
  });
  after(async () => { await fsp.rm(root, { recursive: true, force: true }); });

  it('every variable git names with rev-parse --local-env-vars is kept from git calls', async () => {
    const names = (await sh(root, 'rev-parse', '--local-env-vars')).split('\n');
    assert.ok(names.includes('GIT_DIR'));
    assert.deepEqual(names.filter((n) => !(LOCAL_REPO_ENV as readonly string[]).includes(n)), []);
  });

  it('GIT_DIR in the environment neither redirects the preparation nor writes into that repository', async () => {
    const other = path.join(root, 'other');
    await initRepo(other);
    await commit(other, 'o', { 'other.txt': 'o\n' });
    const configBefore = await fsp.readFile(path.join(other, '.git', 'config'), 'utf8');
    const saved = process.env.GIT_DIR;
    process.env.GIT_DIR = path.join(other, '.git');
    let result: unknown;
    try {
      result = await prepareSession({ task, source: repo, outDir: path.join(root, 'gd'), cacheDir: path.join(root, 'cache-gd') }).catch((e) => e);
    } finally {
      if (saved === undefined) delete process.env.GIT_DIR; else process.env.GIT_DIR = saved;
    }
    assert.equal(await fsp.readFile(path.join(other, '.git', 'config'), 'utf8'), configBefore, 'the GIT_DIR repository was written to');
    assert.ok(!(result instanceof Error), `prepare failed: ${(result as Error)?.message}`);
    assert.equal((result as { commit: string }).commit, head);
  });

  it('a SHA-256 source is refused with an error naming the source', async () => {
    const sha = path.join(root, 'sha256');
    await fsp.mkdir(sha);
    await sh(sha, 'init', '--quiet', '--initial-branch=main', '--object-format=sha256');
    await commit(sha, 'c', { 'secret.py': 'S\n', 'keep.txt': 'k\n' });
    const e = await prepareSession({ task, source: sha, outDir: path.join(root, 'sha-out'), cacheDir: path.join(root, 'cache-sha') }).then(() => undefined, (x) => x);
    assert.ok(e, 'a SHA-256 source was prepared');
    assert.ok(isExpBenchError(e) && e.code !== 'GIT_FAILED', `expected a clear input error, got ${e?.code}: ${e?.message}`);
    assert.equal(e.input, await fsp.realpath(sha));
  });

  it('a session folder on another file system than the cache is prepared, and no git temporary file stays in the cache', async function () {
    const mnt = path.join(root, 'mnt');
    await fsp.mkdir(mnt);
    try {
      await run('mount', ['-t', 'tmpfs', 'tmpfs', mnt]);
    } catch {
      this.skip(); // needs root (mount); the defect does not depend on it
    }
    try {
      const cacheDir = path.join(root, 'cache-xdev');
      const outDir = path.join(mnt, 'session');
      const r = await prepareSession({ task, source: repo, outDir, cacheDir }).catch((e) => e);
      assert.deepEqual(await gitTempFiles(cacheDir), [], 'git temporary files left in the cache');
      assert.ok(!(r instanceof Error), `prepare failed: ${(r as Error)?.message}`);
      const ws = new SessionLayout(outDir).workspace;
      await sh(ws, 'fsck', '--full', '--strict');
      assert.equal(await sh(ws, 'status', '--porcelain'), '');
      assert.equal(await sh(ws, 'ls-tree', '-r', '--name-only', 'HEAD'), 'keep.txt');
    } finally {
      await run('umount', [mnt]).catch(() => undefined);
    }
  });
});
