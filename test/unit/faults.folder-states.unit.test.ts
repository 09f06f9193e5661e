/**
 * The session-folder state machine (src/core/workspace/folder.ts) on real preparations: every kind
 * of user work makes a folder `worked` (or `submitted`), which `prepare` refuses and leaves byte
 * for byte; only a preparation's own files are `preparing` and cleared.
 */
import * as assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { promises as fsp } from 'node:fs';
import * as path from 'node:path';
import { isExpBenchError } from '../../src/core/errors';
import { SessionLayout } from '../../src/core/layout';
import { assertPreparationFinished, inspectSessionFolder } from '../../src/core/workspace/folder';
import { prepareSession, PrepareOptions } from '../../src/core/workspace/prepare';
import { buildPaperRepo, PaperFixture } from '../fixtures/repos/build';
import { snapshot } from '../harness/faults';

type T = PrepareOptions['task'];
const task: T = { id: 'iclr2024/1/0', type: 1, source: ['src/train.py'], maskedSource: ['src/train.py'] };
/** A file of the "task start" commit. */
const tracked = (l: SessionLayout) => git(l.workspace, 'ls-files').split('\n').find((f) => f.endsWith('.py'))!;
const git = (cwd: string, ...args: string[]) => execFileSync('git', ['-c', 'user.name=t', '-c', 'user.email=t@example.org', ...args], { cwd, encoding: 'utf8' });

describe('faults: session-folder states (inspectSessionFolder, prepare\'s claim)', function () {
  this.timeout(60_000);
  let fx: PaperFixture;
  let cacheDir: string;
  let n = 0;
  before(async () => {
    fx = await buildPaperRepo();
    cacheDir = path.join(fx.root, 'cache');
  });
  after(async () => { await fsp.rm(fx.root, { recursive: true, force: true }); });
  const prepared = async () => {
    const dir = path.join(fx.root, 'sessions', `s${++n}`);
    await prepareSession({ task, source: fx.repo, outDir: dir, cacheDir });
    return new SessionLayout(dir);
  };

  it('absent, empty, prepared', async () => {
    assert.equal((await inspectSessionFolder(path.join(fx.root, 'nope'))).state, 'absent');
    const empty = path.join(fx.root, 'empty');
    await fsp.mkdir(empty);
    assert.equal((await inspectSessionFolder(empty)).state, 'empty');
    const l = await prepared();
    const r = await inspectSessionFolder(l.root);
    assert.deepEqual([r.state, r.manifest, r.work, r.taskId], ['prepared', 'complete', [], task.id]);
  });

  it('a workspace .git replaced by a link to a host folder: the folder check reads nothing where it leads', async () => {
    const l = await prepared();
    const elsewhere = path.join(fx.root, `elsewhere-${n}`);
    await fsp.mkdir(path.join(elsewhere, 'refs', 'heads'), { recursive: true });
    await fsp.writeFile(path.join(elsewhere, 'refs', 'heads', 'host-secret-name'), 'x\n');
    await fsp.writeFile(path.join(elsewhere, 'packed-refs'), `${'a'.repeat(40)} refs/tags/host-secret-tag\n`);
    await fsp.rm(path.join(l.workspace, '.git'), { recursive: true });
    await fsp.symlink(elsewhere, path.join(l.workspace, '.git'));
    const r = await inspectSessionFolder(l.root);
    assert.doesNotMatch(JSON.stringify(r), /host-secret/);
  });

  it('a new folder holding only a host claim (baseline serve\'s serve.json, taken before it prepares) is empty: prepare goes on and keeps the claim', async () => {
    const dir = path.join(fx.root, 'sessions', 'claimed');
    const l = new SessionLayout(dir);
    await fsp.mkdir(l.private, { recursive: true });
    await fsp.writeFile(path.join(l.private, 'serve.json'), JSON.stringify({ pid: process.pid }));
    assert.equal((await inspectSessionFolder(dir)).state, 'empty');
    await prepareSession({ task, source: fx.repo, outDir: dir, cacheDir });
    const r = await inspectSessionFolder(dir);
    assert.deepEqual([r.state, r.work], ['prepared', []]);
    assert.ok(await fsp.stat(path.join(l.private, 'serve.json')).then(() => true), 'the claim is still there');
    // Anything else beside it is still work.
    const other = path.join(fx.root, 'sessions', 'claimed-and-more');
    await fsp.mkdir(path.join(other, 'private'), { recursive: true });
    await fsp.writeFile(path.join(other, 'private', 'serve.json'), '{}');
    await fsp.writeFile(path.join(other, 'private', 'mine.txt'), 'mine');
    const w = await inspectSessionFolder(other);
    assert.deepEqual([w.state, w.work], ['worked', ['private/mine.txt']]);
  });

  const kinds: Array<[string, (l: SessionLayout) => Promise<void>, RegExp, 'worked' | 'submitted']> = [
    ['a changed file', (l) => fsp.appendFile(path.join(l.workspace, tracked(l)), '# mine\n'), /workspace\/.+/, 'worked'],
    ['an untracked file', (l) => fsp.writeFile(path.join(l.workspace, 'notes.md'), 'mine'), /workspace\/notes\.md/, 'worked'],
    ['a file git ignores', async (l) => { await fsp.appendFile(path.join(l.workspace, '.git', 'info', 'exclude'), 'out/\n'); await fsp.mkdir(path.join(l.workspace, 'out')); await fsp.writeFile(path.join(l.workspace, 'out', 'r.txt'), '1'); }, /workspace\/out\//, 'worked'],
    ['a commit after "task start"', async (l) => { await fsp.writeFile(path.join(l.workspace, 'c.py'), 'c'); git(l.workspace, 'add', 'c.py'); git(l.workspace, 'commit', '-qm', 'mine'); }, /commits after "task start"/, 'worked'],
    ['a stash', async (l) => { await fsp.appendFile(path.join(l.workspace, tracked(l)), '# stashed\n'); git(l.workspace, 'stash', '-q'); }, /refs besides the branch/, 'worked'],
    ['a state.json', (l) => fsp.writeFile(l.state, '{}'), /private\/state\.json/, 'worked'],
    ['an events.jsonl', (l) => fsp.writeFile(l.events, '{"v":1}\n'), /private\/events\.jsonl/, 'worked'],
    ['a verify record', async (l) => { await fsp.mkdir(l.verify); await fsp.writeFile(path.join(l.verify, 'latest.json'), '{}'); }, /private\/verify/, 'worked'],
    ['a file beside workspace/', (l) => fsp.writeFile(path.join(l.root, 'notes.txt'), 'mine'), /notes\.txt/, 'worked'],
    ['answers.json', (l) => fsp.writeFile(l.answers, '{}'), /private\/answers\.json/, 'submitted'],
  ];
  for (const [what, make, item, state] of kinds) {
    it(`${what} is user work, under a complete manifest and under a killed preparation's draft; prepare refuses and keeps it`, async () => {
      for (const manifest of ['complete', 'draft'] as const) {
        const l = await prepared();
        await make(l);
        if (manifest === 'draft') await fsp.writeFile(l.manifest, JSON.stringify({ complete: false, taskId: task.id, createdAt: new Date().toISOString() }));
        const r = await inspectSessionFolder(l.root);
        assert.equal(r.state, state, `${what} (${manifest}): ${JSON.stringify(r)}`);
        assert.ok(r.work.some((w) => item.test(w)), `${what} (${manifest}) not listed: ${r.work.join(', ')}`);
        const before = snapshot(l.root);
        const err = await prepareSession({ task, source: fx.repo, outDir: l.root, cacheDir }).catch((e) => e);
        assert.ok(isExpBenchError(err, 'BAD_INPUT'), String(err));
        assert.match(err.message, /nothing in it was changed or removed: choose a new folder/);
        assert.deepEqual(snapshot(l.root), before, `${what} (${manifest}): prepare changed the folder`);
      }
    });
  }

  it('a killed preparation\'s own files are `preparing` and cleared; a live one\'s are left alone', async () => {
    // Killed after "task start", before the manifest: the draft, a clean workspace, a temp file of the writer.
    const l = await prepared();
    await fsp.writeFile(l.manifest, JSON.stringify({ complete: false, taskId: task.id, createdAt: new Date().toISOString(), pid: 999_999_999 }));
    await fsp.writeFile(path.join(l.private, '.manifest.json.999999999.0123abcd.tmp'), '{"compl');
    await fsp.rm(path.join(l.private, 'task.json'), { force: true });
    assert.equal((await inspectSessionFolder(l.root)).state, 'preparing');
    await assert.rejects(assertPreparationFinished(l.root, 'submit'), (e: Error) => isExpBenchError(e, 'SESSION_INVALID') && /Prepare the task into a new folder/.test(e.message) && !/prepare the session again/.test(e.message));
    await prepareSession({ task, source: fx.repo, outDir: l.root, cacheDir });
    assert.equal((await inspectSessionFolder(l.root)).state, 'prepared');
    assert.deepEqual((await fsp.readdir(l.private)).sort(), ['manifest.json', 'repo.git']);

    // Killed before its draft landed: an initialised repository, nothing in it.
    const bare = new SessionLayout(path.join(fx.root, 'sessions', `bare${++n}`));
    await fsp.mkdir(bare.private, { recursive: true });
    git(path.dirname(bare.workspace), 'init', '-q', bare.workspace);
    assert.equal((await inspectSessionFolder(bare.root)).state, 'preparing');
    await fsp.writeFile(path.join(bare.workspace, 'mine.py'), 'x');
    assert.equal((await inspectSessionFolder(bare.root)).state, 'worked', 'a file beside an empty repository is someone\'s');

    // A draft whose process runs (this one): refused, left as it is.
    const live = await prepared();
    await fsp.writeFile(live.manifest, JSON.stringify({ complete: false, taskId: task.id, createdAt: new Date().toISOString(), pid: process.pid }));
    const err = await prepareSession({ task, source: fx.repo, outDir: live.root, cacheDir }).catch((e) => e);
    assert.ok(isExpBenchError(err, 'BAD_INPUT') && /another preparation \(pid \d+\) is writing/.test(err.message), String(err));
    assert.equal(JSON.parse(await fsp.readFile(live.manifest, 'utf8')).pid, process.pid);
  });

  it('damaged manifests are `damaged` (or `worked` with work): never cleared', async () => {
    for (const bad of ['{}', '[]', '1', '{"complete":"true"}', '{"complete":fa']) {
      const l = await prepared();
      await fsp.writeFile(l.manifest, bad);
      const r = await inspectSessionFolder(l.root);
      assert.deepEqual([r.state, r.manifest], ['damaged', 'damaged'], bad);
      await assert.rejects(prepareSession({ task, source: fx.repo, outDir: l.root, cacheDir }), (e: Error) => isExpBenchError(e, 'BAD_INPUT') && /damaged manifest/.test(e.message));
      await assert.rejects(assertPreparationFinished(l.root, 'verify'), (e: Error) => isExpBenchError(e, 'SESSION_INVALID') && /cannot verify: the manifest is damaged/.test(e.message));
      assert.equal(await fsp.readFile(l.manifest, 'utf8'), bad);
    }
  });
});
