import * as assert from 'node:assert/strict';
import { promises as fsp } from 'node:fs';
import * as path from 'node:path';
import { createPatch } from 'diff';
import { isExpBenchError } from '../../src/core/errors';
import type { Step } from '../../src/core/steps/step';
import { importOwnEvents } from '../../src/core/trajectory/own';
import { emptyTrajectory, type Trajectory } from '../../src/core/trajectory/types';
import { RepoAtStep, filesOfDiff } from '../../src/core/viewer/repoAtStep';
import { commandWritesFiles, stepChanges } from '../../src/core/viewer/stepEdits';
import { commit, initRepo, sh, tmpDir } from '../fixtures/repos/build';
import { adoptWorkspace } from '../fixtures/hostRepo';

const A0 = 'def f(x):\n    return x + 1\n\n\nprint(f(1))\n';
const A1 = 'def f(x):\n    return x + 2\n\n\nprint(f(1))\n';
const A2 = 'def f(x):\n    return x + 2\n\n\nprint(f(41))\n';
const README = 'toy repo\nseed = 1\n';
const B = 'to be deleted\n';
const NEW = 'import sys\nprint(sys.argv)\n';
const NOTES = '# notes\nT fitted on validation\n';
const SPACED = 'a file with spaces\n';

let at = Date.parse('2026-12-01T10:00:00Z');
function step(s: Partial<Step>): Step {
  at += 10_000;
  return { index: 0, kind: 'edit', actor: 'agent', phase: 'implementation', time: { ms: at, relMs: 0 }, source: { file: 'run.json' }, ...s } as Step;
}

/** Steps that change files each way a trajectory records it. */
function mixedSteps(): Step[] {
  return [
    step({ kind: 'message', text: 'reading the code' }),                                                                     // 0: nothing
    step({ edits: [{ path: 'src/a.py', diff: createPatch('src/a.py', A0, A1), op: 'edit' }] }),                              // 1: a jsdiff diff
    step({ kind: 'tool', action: { tool: 'str_replace_editor', arguments: { command: 'str_replace', path: '/workspace/src/a.py' } },
      edits: [{ path: '/workspace/src/a.py', before: 'print(f(1))', after: 'print(f(41))', op: 'str_replace' }] }),            // 2: before/after, absolute path
    step({ edits: [{ path: 'new.py', after: NEW, op: 'create' }] }),                                                          // 3: a creation with content
    step({ edits: [{ path: 'lib/b.txt', diff: 'diff --git a/lib/b.txt b/lib/b.txt\ndeleted file mode 100644\n--- a/lib/b.txt\n+++ /dev/null\n@@ -1 +0,0 @@\n-to be deleted\n', op: 'delete' }] }), // 4: a git diff deleting
    step({ kind: 'tool', action: { tool: 'bash', command: "sed -i 's/seed = 1/seed = 2/' README.md" }, observation: { text: '' } }), // 5: shell-only
    step({ kind: 'tool', action: { tool: 'write_file', arguments: JSON.stringify({ path: 'docs/notes.md', content: NOTES }) }, observation: { text: 'created docs/notes.md' } }), // 6: the built-in agent's tool
    step({ edits: [{ path: 'my file.txt', diff: createPatch('my file.txt', SPACED, SPACED + 'more\n'), op: 'edit' }] }),     // 7: a path with a space
  ].map((s, i) => ({ ...s, index: i }));
}

function trajectoryOf(steps: Step[], id = 'mixed'): Trajectory {
  return { ...emptyTrajectory(id, 'openhands-v1', path.join('/data', `${id}.jsonl`)), steps };
}

async function read(dir: string, rel: string): Promise<string | null> {
  return fsp.readFile(path.join(dir, rel), 'utf8').catch(() => null);
}

/** Every file of a tree, path → content (sorted). */
async function snapshot(dir: string): Promise<Record<string, string>> {
  const out: Record<string, string> = {};
  for (const e of await fsp.readdir(dir, { recursive: true, withFileTypes: true })) {
    if (!e.isFile()) continue;
    const abs = path.join(e.parentPath, e.name);
    out[path.relative(dir, abs)] = await fsp.readFile(abs, 'utf8');
  }
  return Object.fromEntries(Object.entries(out).sort());
}

describe('viewer: the repository at step N (real git apply, cached trees)', function () {
  this.timeout(120_000);
  let tmp: string;
  let ws: string;
  let headBefore: string;

  before(async () => {
    tmp = await tmpDir('expbench-repoatstep-');
    ws = path.join(tmp, 'workspace');
    await initRepo(ws);
    await commit(ws, 'task start', { 'src/a.py': A0, 'README.md': README, 'lib/b.txt': B, 'my file.txt': SPACED });
    adoptWorkspace(tmp);
    headBefore = await sh(ws, 'rev-parse', 'HEAD');
  });
  after(async () => { await fsp.rm(tmp, { recursive: true, force: true }); });

  it('reads each way a step records a change', () => {
    const s = mixedSteps();
    assert.deepEqual(stepChanges(s[0]), { ops: [], uncertain: [] });
    assert.equal(stepChanges(s[1]).ops[0].kind, 'diff');
    assert.deepEqual(stepChanges(s[2]).ops, [{ kind: 'replace', path: '/workspace/src/a.py', before: 'print(f(1))', after: 'print(f(41))' }]);
    assert.deepEqual(stepChanges(s[3]).ops, [{ kind: 'write', path: 'new.py', content: NEW }]);
    const del = stepChanges(s[4]).ops[0];
    assert.ok(del.kind === 'diff' && del.delete && del.path === 'lib/b.txt');
    assert.deepEqual(stepChanges(s[5]).ops, []);
    assert.match(stepChanges(s[5]).uncertain[0].why, /sed -i/);
    assert.deepEqual(stepChanges(s[6]).ops, [{ kind: 'write', path: 'docs/notes.md', content: NOTES }]);
    for (const c of ['echo hi > out.txt', 'cat > a.py <<EOF', 'cp a b', 'git apply x.patch', 'perl -pi -e s/a/b/ f', 'tee -a log']) assert.ok(commandWritesFiles(c), c);
    for (const c of ['python3 train.py 2>&1', 'ls -la > /dev/null', 'grep -n x a.py', 'cat a.py', 'python x.py >&2', 'git log --oneline']) assert.ok(!commandWritesFiles(c), c);
  });

  it('materialises every step, exactly up to the shell-only step and approximate from it; moves forward incrementally; the workspace is untouched', async () => {
    const repo = new RepoAtStep({ trajectory: trajectoryOf(mixedSteps()), workspace: ws, cacheDir: path.join(tmp, 'cache-a') });
    const base = await repo.at(-1);
    assert.deepEqual(await snapshot(base.dir), { 'README.md': README, 'lib/b.txt': B, 'my file.txt': SPACED, 'src/a.py': A0 });
    assert.equal(base.approximate, false);

    const t1 = await repo.at(1);
    assert.equal(await read(t1.dir, 'src/a.py'), A1);
    assert.deepEqual(t1.changed, [{ path: 'src/a.py', status: 'modified' }]);
    assert.equal(t1.applies, 1);

    const t4 = await repo.at(4);
    assert.equal(t4.applied, 3, 'only steps 2..4 applied onto the tree of step 1');
    assert.equal(t4.applies, 1, 'one git apply of the combined change');
    assert.deepEqual(await snapshot(t4.dir), { 'README.md': README, 'my file.txt': SPACED, 'new.py': NEW, 'src/a.py': A2 });
    assert.deepEqual(t4.changed, [{ path: 'lib/b.txt', status: 'deleted' }, { path: 'new.py', status: 'added' }, { path: 'src/a.py', status: 'modified' }]);
    assert.equal(t4.approximate, false);
    await assert.rejects(fsp.access(t1.dir), 'the tree of step 1 moved forward to step 4');

    const t7 = await repo.at(7);
    assert.equal(t7.approximate, true);
    assert.equal(t7.approximateFrom, 5);
    assert.match(t7.uncertain[0].why, /sed -i 's\/seed = 1\/seed = 2\/' README\.md/);
    assert.equal(await read(t7.dir, 'README.md'), README, 'the sed is not known: the file stays as last recorded');
    assert.equal(await read(t7.dir, 'docs/notes.md'), NOTES);
    assert.equal(await read(t7.dir, 'my file.txt'), SPACED + 'more\n');

    // Backwards: a fresh tree from the base (the cached ones are all later).
    const t2 = await repo.at(2);
    assert.equal(t2.applied, 3);
    assert.equal(await read(t2.dir, 'src/a.py'), A2);
    assert.equal(await read(t2.dir, 'lib/b.txt'), B);
    assert.equal((await repo.at(7)).applied, 0, 'the tree of step 7 is still cached');

    // A second reader of the same cache reuses its trees; the workspace never changed.
    const again = new RepoAtStep({ trajectory: trajectoryOf(mixedSteps()), workspace: ws, cacheDir: path.join(tmp, 'cache-a') });
    assert.equal((await again.at(7)).applied, 0);
    assert.equal(await sh(ws, 'status', '--porcelain'), '');
    assert.equal(await sh(ws, 'rev-parse', 'HEAD'), headBefore);
  });

  it('per-step application (one git apply per step) gives the same trees as the combined one', async () => {
    const steps = mixedSteps();
    const composed = new RepoAtStep({ trajectory: trajectoryOf(steps), workspace: ws, cacheDir: path.join(tmp, 'cache-c') });
    const perStep = new RepoAtStep({ trajectory: trajectoryOf(steps), workspace: ws, cacheDir: path.join(tmp, 'cache-p'), strategy: 'per-step' });
    for (let i = 0; i < steps.length; i++) {
      await composed.clear();
      const c = await composed.at(i);
      const p = await perStep.at(i);
      assert.deepEqual(await snapshot(c.dir), await snapshot(p.dir), `step ${i}`);
    }
    await perStep.clear();
    assert.equal((await perStep.at(7)).applies, 6, 'steps 1, 2, 3, 4, 6, 7 change files');
    await composed.clear();
    assert.equal((await composed.at(7)).applies, 1);
  });

  it('compares step N with step M (git diff --no-index of the two trees) and shows one step\'s own diff', async () => {
    const repo = new RepoAtStep({ trajectory: trajectoryOf(mixedSteps()), workspace: ws, cacheDir: path.join(tmp, 'cache-d') });
    const c = await repo.compare(4, 1);
    assert.deepEqual(c.files, [{ path: 'lib/b.txt', status: 'deleted' }, { path: 'new.py', status: 'added' }, { path: 'src/a.py', status: 'modified' }]);
    assert.match(c.diff, /^diff --git a\/src\/a\.py b\/src\/a\.py\n[\s\S]*^-print\(f\(1\)\)\n\+print\(f\(41\)\)$/m);
    assert.match(c.diff, /^--- a\/lib\/b\.txt\n\+\+\+ \/dev\/null$/m);
    assert.ok(!c.diff.includes('trees/'), 'tree folders do not show in the paths');
    assert.equal(await read(c.left.dir, 'src/a.py'), A1, 'both trees kept');
    assert.equal(await read(c.right.dir, 'src/a.py'), A2);
    assert.deepEqual(filesOfDiff((await repo.compare(1, 1)).diff), []);

    const d = await repo.stepDiff(2);
    assert.deepEqual(d.files.map((f) => [f.path, f.before, f.after]), [['src/a.py', A1, A2]]);
    assert.equal(await fsp.readFile(d.files[0].beforeFile, 'utf8'), A1);
    assert.equal(await fsp.readFile(d.files[0].afterFile, 'utf8'), A2);
    assert.equal(d.approximate, false);
    const d5 = await repo.stepDiff(5);
    assert.deepEqual(d5.files, []);
    assert.equal(d5.approximateFrom, 5);
    const d3 = await repo.stepDiff(3);
    assert.deepEqual(d3.files.map((f) => [f.path, f.before, f.after]), [['new.py', null, NEW]]);
  });

  it('a change that does not apply makes the tree approximate from its step; a changed history is not reused; bad input is named', async () => {
    const steps = mixedSteps();
    steps[2] = { ...steps[2], edits: [{ path: 'src/a.py', before: 'no such text', after: 'x', op: 'str_replace' }] };
    const repo = new RepoAtStep({ trajectory: trajectoryOf(steps), workspace: ws, cacheDir: path.join(tmp, 'cache-a') });
    const t = await repo.at(7);
    assert.equal(t.applied, 8, 'the cached tree of the first history is not reused');
    assert.equal(t.approximateFrom, 2);
    assert.match(t.uncertain[0].why, /not in the file/);
    assert.equal(await read(t.dir, 'src/a.py'), A1);

    await assert.rejects(repo.at(8), (e) => isExpBenchError(e, 'BAD_INPUT') && /steps 0\.\.7/.test(e.message));
    assert.throws(() => new RepoAtStep({ trajectory: trajectoryOf(steps), workspace: ws, cacheDir: path.join(ws, '.cache') }), (e) => isExpBenchError(e, 'BAD_INPUT'));
    const plain = path.join(tmp, 'plain');
    await fsp.mkdir(plain);
    await assert.rejects(new RepoAtStep({ trajectory: trajectoryOf(steps), workspace: plain, cacheDir: path.join(tmp, 'cache-x') }).at(0), (e) => isExpBenchError(e, 'SESSION_INVALID'));
  });

  it("a session's own events: file.edited diffs applied, a watcher's file.changed beside them is the same change, one alone makes the tree approximate", async () => {
    const session = path.join(tmp, 'session');
    await fsp.mkdir(path.join(session, 'private'), { recursive: true });
    const t0 = Date.parse('2026-12-01T11:00:00Z');
    const ev = (dt: number, e: object) => JSON.stringify({ v: 1, at: new Date(t0 + dt).toISOString(), ...e });
    const lines = [
      ev(0, { type: 'session.opened', client: 'vscode', restored: false, taskId: 'sample/toycal/0' }),
      ev(1000, { type: 'file.edited', path: 'src/a.py', diff: createPatch('src/a.py', A0, A1) }),
      ev(1400, { type: 'file.changed', path: 'src/a.py', bytes: A1.length }),
      ev(5000, { type: 'file.edited', path: 'new.py', diff: createPatch('new.py', '', NEW) }),
      ev(5300, { type: 'file.created', path: 'new.py' }),
      ev(9000, { type: 'file.deleted', path: 'lib/b.txt' }),
      ev(20000, { type: 'command.run', command: 'python3 gen.py', exitCode: 0, durationMs: 10, outputExcerpt: '' }),
      ev(20500, { type: 'file.created', path: 'results/out.json' }),
    ];
    await fsp.writeFile(path.join(session, 'private', 'events.jsonl'), lines.join('\n') + '\n');
    const traj = await importOwnEvents(path.join(session, 'private', 'events.jsonl'));
    assert.equal(traj.steps.length, 8);
    const repo = new RepoAtStep({ trajectory: traj, workspace: ws, cacheDir: path.join(tmp, 'cache-s') });
    const t5 = await repo.at(5);
    assert.equal(t5.approximate, false, JSON.stringify(t5.uncertain));
    assert.deepEqual(await snapshot(t5.dir), { 'README.md': README, 'my file.txt': SPACED, 'new.py': NEW, 'src/a.py': A1 });
    const t7 = await repo.at(7);
    assert.equal(t7.approximateFrom, 7);
    assert.deepEqual(t7.uncertain.map((u) => u.path), ['results/out.json']);
    assert.equal(await read(t7.dir, 'results/out.json'), '', 'the file exists; its content is unknown');
  });
});
