import * as assert from 'node:assert/strict';
import { promises as fsp } from 'node:fs';
import * as path from 'node:path';
import parseDiff from 'parse-diff';
import { makePatch, splitDiff } from '../../src/core/workspace/patch';
import { prepareSession } from '../../src/core/workspace/prepare';
import { binaryBytes, commit, initRepo, sh, tmpDir, writeFiles } from '../fixtures/repos/build';

/**
 * splitDiff parses only the headers with parse-diff and counts hunk lines itself (speed: see
 * bench/patch.bench.ts). Its file list and counts must equal git's own `--numstat` and what
 * parse-diff gives on the whole diff, also for lines that look like diff syntax.
 */
describe('workspace: splitDiff line counts equal git --numstat', function () {
  let dir: string;
  before(async () => {
    dir = await tmpDir();
    await initRepo(dir);
    await commit(dir, 'base', {
      'a.txt': 'one\ntwo\nthree\n',
      'tricky.txt': '-- minus\n++ plus\n@@ at @@\n\\ backslash\ndiff --git x y\nkeep\n',
      'no-eol.txt': 'last line without newline',
      'crlf.txt': 'a\r\nb\r\n',
      'gone.txt': 'x\ny\n',
      'moved from.txt': 'm1\nm2\nm3\nm4\nm5\nm6\nm7\nm8\nm9\nm10\n',
      'bin.dat': binaryBytes(1),
    });
    await writeFiles(dir, {
      'a.txt': 'one\nTWO\nthree\nfour\n',
      'tricky.txt': '--- minus minus\n+++ plus plus\n@@ -1 +1 @@\n\\ No newline at end of file\ndiff --git a/b b/c\nkeep\n',
      'no-eol.txt': 'last line changed, still without newline',
      'crlf.txt': 'a\r\nB\r\nc\r\n',
      'gone.txt': null,
      'moved from.txt': null,
      'moved to.txt': 'm1\nm2\nm3\nm4\nm5\nm6\nm7\nm8\nm9\nm10 changed\n',
      'new.txt': '-\n+\n\n',
      'bin.dat': binaryBytes(2),
    });
    await sh(dir, 'add', '-A');
  });
  after(() => fsp.rm(dir, { recursive: true, force: true }));

  it('gives the same files, statuses and counts as git and as parse-diff on the full text', async () => {
    const text = await sh(dir, '-c', 'core.quotePath=false', 'diff', '--cached', '--find-renames', '--no-color');
    const numstat = await sh(dir, '-c', 'core.quotePath=false', 'diff', '--cached', '--find-renames', '--numstat', '-z');
    const r = splitDiff(text + '\n');
    // --numstat -z: "add\tdel\tpath\0" or, for a rename, "add\tdel\t\0old\0new\0".
    const fields = numstat.split('\0');
    const git = new Map<string, [string, string]>();
    for (let i = 0; i < fields.length && fields[i];) {
      const [add, del, p] = fields[i].split('\t');
      if (p) { git.set(p, [add, del]); i += 1; } else { git.set(fields[i + 2], [add, del]); i += 3; }
    }
    assert.equal(r.files.length, git.size, r.files.map((f) => f.path).join(', '));
    for (const f of r.files) {
      const g = git.get(f.path);
      assert.ok(g, `${f.path} in git's numstat`);
      if (f.binary) assert.deepEqual(g, ['-', '-'], f.path);
      else assert.deepEqual([f.additions, f.deletions], [Number(g[0]), Number(g[1])], f.path);
    }
    const full = parseDiff(text + '\n');
    for (let i = 0; i < full.length; i++) {
      if (r.files[i].binary) continue;
      assert.deepEqual([r.files[i].additions, r.files[i].deletions], [full[i].additions, full[i].deletions], r.files[i].path);
    }
    const byPath = new Map(r.files.map((f) => [f.path, f]));
    assert.equal(byPath.get('moved to.txt')?.status, 'renamed');
    assert.equal(byPath.get('moved to.txt')?.oldPath, 'moved from.txt');
    assert.equal(byPath.get('gone.txt')?.status, 'deleted');
    assert.equal(byPath.get('new.txt')?.status, 'added');
    assert.deepEqual([byPath.get('tricky.txt')?.additions, byPath.get('tricky.txt')?.deletions], [5, 5]);
    assert.deepEqual(r.binaryFiles, ['bin.dat']);
    assert.ok(r.patch.includes('+--- minus minus'), 'the text patch is kept whole');
    assert.ok(!r.patch.includes('Binary files'));
  });

  it('counts nothing for a pure rename (no hunks)', async () => {
    const d = await tmpDir();
    try {
      await initRepo(d);
      await commit(d, 'base', { 'x.txt': 'same\ncontent\n' });
      await fsp.rename(path.join(d, 'x.txt'), path.join(d, 'y.txt'));
      await sh(d, 'add', '-A');
      const r = splitDiff(await sh(d, 'diff', '--cached', '--find-renames') + '\n');
      assert.deepEqual(r.files, [{ path: 'y.txt', status: 'renamed', oldPath: 'x.txt', binary: false, additions: 0, deletions: 0 }]);
    } finally {
      await fsp.rm(d, { recursive: true, force: true });
    }
  });
});

/**
 * git trusts an index entry's stat data unless the entry is "racily clean" (its mtime is not
 * older than the index file's own mtime). makePatch works on a COPY of the index: the copy must
 * keep the index's mtime, or a file rewritten with the same size in the same second as the index
 * was written is missed. Made deterministic by setting the times (ctime, which cannot be set, is
 * left out with core.trustCtime=false in the workspace).
 */
describe('workspace: makePatch sees a same-size rewrite in the index\'s own second (racy git)', function () {
  let root: string;
  before(async () => { root = await tmpDir(); });
  after(() => fsp.rm(root, { recursive: true, force: true }));

  it('lists the file as modified', async () => {
    const src = path.join(root, 'src');
    await initRepo(src);
    await commit(src, 'base', { 'data.bin': binaryBytes(5), 'text.txt': 'aaaa\n' });
    const out = path.join(root, 'session');
    await prepareSession({ task: { id: 'r/1/0', type: 3, source: [], maskedSource: [] }, source: src, outDir: out, cacheDir: path.join(root, 'cache') });
    const ws = path.join(out, 'workspace');
    await sh(ws, 'config', 'core.trustCtime', 'false');
    const past = new Date(Math.floor(Date.now() / 1000) * 1000 - 100_000);
    for (const f of ['data.bin', 'text.txt']) await fsp.utimes(path.join(ws, f), past, past);
    await sh(ws, 'update-index', '--refresh'); // entries get mtime `past`; the index is written now (not racy: no smudging)
    assert.match(await sh(ws, 'ls-files', '--debug', 'text.txt'), /size: 5\b/, 'the entry keeps its size (not smudged)');
    await fsp.writeFile(path.join(ws, 'data.bin'), binaryBytes(6));
    await fsp.writeFile(path.join(ws, 'text.txt'), 'bbbb\n');
    for (const f of ['data.bin', 'text.txt', '.git/index']) await fsp.utimes(path.join(ws, f), past, past);
    const p = await makePatch(ws);
    assert.deepEqual(p.files.map((f) => [f.path, f.status]).sort(), [['data.bin', 'modified'], ['text.txt', 'modified']]);
    assert.match(p.patch, /^\+bbbb$/m);
  });
});
