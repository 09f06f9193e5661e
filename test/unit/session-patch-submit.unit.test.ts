// Issue 14, points 1, 2, 3 and 8 on real git workspaces: the stepper's patch list is the
// submission's (one rule), answers and notes are frozen after submit, the submit warnings, and
// changes written straight to disk (as the work container does through its bind mount) are
// recorded and shown, caches excluded.
import * as assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { promises as fsp } from 'node:fs';
import * as path from 'node:path';
import { isExpBenchError } from '../../src/core/errors';
import { submitWarnings } from '../../src/core/flows/submitChecks';
import type { SessionLayout } from '../../src/core/layout';
import { readEvents, type SessionEvent } from '../../src/core/session/events';
import { WorkspaceRecorder } from '../../src/core/session/recorder';
import { runScript, type ScriptExec } from '../../src/core/session/runs';
import { Session } from '../../src/core/session/session';
import { submit } from '../../src/core/session/submit';
import { WorkspaceWatcher, type WatchBatch } from '../../src/core/session/watcher';
import { makePatch } from '../../src/core/workspace/patch';
import { isKnownCache, knownCache } from '../../src/core/workspace/patchRule';
import { patchSummary } from '../../src/extension/session/patchSummary';
import { makeSessionFolder } from './session-fixtures';

const ANSWERS = { design: 'Constant: seed — 0', conclusion: 'accuracy 0.931' };

/** The files of a unified diff as git names them (`diff --git a/X b/X` → X). */
function diffFiles(diff: string): string[] {
  return [...diff.matchAll(/^diff --git a\/(.+?) b\/(.+)$/gm)].map((m) => m[2]).sort();
}

async function write(root: string, files: Record<string, string | Buffer>): Promise<void> {
  for (const [rel, content] of Object.entries(files)) {
    await fsp.mkdir(path.dirname(path.join(root, rel)), { recursive: true });
    await fsp.writeFile(path.join(root, rel), content);
  }
}

/** Runs the command as a local process in the workspace (stands in for the work container's /workspace). */
const localExec = (workspace: string): ScriptExec => ({ command, onOutput }) => new Promise((resolve, reject) => {
  const p = spawn(command[0], command.slice(1), { cwd: workspace });
  p.stdout.on('data', (b: Buffer) => onOutput(b.toString(), 'stdout'));
  p.stderr.on('data', (b: Buffer) => onOutput(b.toString(), 'stderr'));
  p.on('error', reject);
  p.on('close', (code) => resolve({ exitCode: code }));
});

const PYC = Buffer.from([0x61, 0x0d, 0x0d, 0x0a, 0, 0, 0, 0, 0xe3, 0, 0, 0]);

describe('issue 14: shown = submitted, frozen answers, submit warnings, changes on disk recorded', function () {
  this.timeout(20_000);
  const roots: string[] = [];
  const fresh = async (): Promise<SessionLayout> => { const l = await makeSessionFolder(); roots.push(l.root); return l; };
  after(async () => { for (const r of roots) await fsp.rm(r, { recursive: true, force: true }); });

  it('the cache rule: folders anywhere, bytecode files, not look-alikes', () => {
    assert.deepEqual(knownCache('src/__pycache__/m.cpython-311.pyc'), { path: 'src/__pycache__/', reason: 'cache', why: 'known cache folder __pycache__' });
    assert.equal(knownCache('notebooks/.ipynb_checkpoints/a-checkpoint.ipynb')?.path, 'notebooks/.ipynb_checkpoints/');
    assert.equal(knownCache('x.pyc')?.why, 'known cache file *.pyc');
    for (const p of ['results/metrics.json', 'src/pycache.py', '__pycache__', 'docs/.pytest_cache.md']) assert.equal(isKnownCache(p), false, p);
  });

  // The four cases of issue 14 point 1: each on its own session, stepper list vs. submitted patch.
  const cases: Array<{ name: string; files: Record<string, string | Buffer>; inPatch: string[]; leftOut: Array<[string, 'cache' | 'ignored']> }> = [
    { name: 'a __pycache__ written by a run', files: { 'pkg/__pycache__/train.cpython-311.pyc': PYC, 'pkg/__init__.py': '' },
      inPatch: ['pkg/__init__.py'], leftOut: [['pkg/__pycache__/', 'cache']] },
    { name: 'a results/ file (the harness keeps untracked outputs)', files: { 'results/metrics.json': '{"accuracy": 0.931}\n' },
      inPatch: ['results/metrics.json'], leftOut: [] },
    { name: 'an ignored file', files: { '.gitignore': '*.tmp\n', 'scratch.tmp': 'scratch\n' },
      inPatch: ['.gitignore'], leftOut: [['scratch.tmp', 'ignored']] },
    { name: 'a new file', files: { 'src/new_model.py': 'def f():\n    return 1\n' },
      inPatch: ['src/new_model.py'], leftOut: [] },
  ];
  for (const c of cases) {
    it(`the stepper's list equals the submission's files: ${c.name}`, async () => {
      const layout = await fresh();
      await write(layout.workspace, { ...c.files, 'train.py': 'import sys\nprint("epoch 2")\n' });
      // the stepper: the controller's summary of makePatch (src/extension/session/sessionController.ts refreshPatch)
      const shown = patchSummary(await makePatch(layout.workspace));
      // the submission: the session's submit, default patch, as the window and the CLI call it
      const r = await submit(layout, ANSWERS);
      const submitted = diffFiles(await fsp.readFile(r.files.patch, 'utf8'));
      const expected = [...c.inPatch, 'train.py'].sort();
      assert.deepEqual(shown.files.map((f) => f.path).sort(), expected);
      assert.deepEqual(submitted, expected);
      assert.deepEqual(shown.leftOut?.map((l) => [l.path, l.reason]), c.leftOut);
      for (const l of shown.leftOut ?? []) assert.match(l.why, l.reason === 'cache' ? /known cache/ : /ignored by git/);
    });
  }

  it('a tracked cache file changed by a run is left out of both as well', async () => {
    const layout = await fresh();
    await write(layout.workspace, { 'old/__pycache__/a.pyc': PYC });
    const { execFileSync } = await import('node:child_process');
    execFileSync('git', ['add', '-f', 'old/__pycache__/a.pyc'], { cwd: layout.workspace });
    execFileSync('git', ['-c', 'user.name=t', '-c', 'user.email=t@e', 'commit', '-q', '--amend', '-m', 'task start'], { cwd: layout.workspace });
    await write(layout.workspace, { 'old/__pycache__/a.pyc': Buffer.concat([PYC, PYC]), 'train.py': 'print(2)\n' });
    const p = await makePatch(layout.workspace);
    assert.deepEqual(p.files.map((f) => f.path), ['train.py']);
    assert.deepEqual(p.leftOut.map((l) => l.path), ['old/__pycache__/']);
    assert.ok(!p.patch.includes('a.pyc'));
  });

  it('after submit the design, the conclusion and the notes are refused (the view cannot drift from state.json)', async () => {
    const layout = await fresh();
    const s = await Session.open(layout, { client: 'test' });
    await s.addNote('before submitting');
    await submit(s, ANSWERS);
    const frozen = (e: unknown) => isExpBenchError(e, 'SESSION_INVALID') && /submitted/.test(e.message);
    assert.throws(() => s.setDesign({ constants: [{ name: 'x', description: '' }], independent: [], dependent: [], freeText: '' }), frozen);
    assert.throws(() => s.setConclusion('changed'), frozen);
    await assert.rejects(s.addNote('after submitting'), frozen);
    assert.equal(s.state.conclusion, 'accuracy 0.931');
    assert.deepEqual(s.state.notes.map((n) => n.text), ['before submitting']);
    await s.close();
  });

  it('submit warnings: claims no run produced, no script, never run; then generated files of a run', async () => {
    const layout = await fresh();
    const s = await Session.open(layout, { client: 'test' });
    s.setConclusion('The accuracy is 0.931 and the F1 0.77.');
    let w = await submitWarnings(layout, s.state);
    assert.deepEqual(w.map((x) => x.kind), ['claims-not-produced', 'no-script', 'never-run']);
    assert.deepEqual(w[0].items, ['0.931', '0.77']);
    assert.match(w[1].message, /no reproduce_exp_bench\.sh .*E = false/);

    await write(layout.workspace, { 'reproduce_exp_bench.sh': 'mkdir -p results\necho "{\\"accuracy\\": 0.931}" > results/metrics.json\necho "accuracy 0.931"\n' });
    const run = await runScript(s, { exec: localExec(layout.workspace) });
    assert.equal(run.exitCode, 0);
    w = await submitWarnings(layout, s.state);
    assert.deepEqual(w.map((x) => x.kind), ['claims-not-produced', 'generated-files']);
    assert.deepEqual(w[0].items, ['0.77']);
    assert.deepEqual(w[1].items, ['results/metrics.json']);
    assert.match(w[1].message, new RegExp(`results/metrics\\.json \\(written during run ${run.id}\\)`));
    s.setConclusion('The accuracy is 0.931.');
    await fsp.rm(path.join(layout.workspace, 'results'), { recursive: true });
    assert.deepEqual(await submitWarnings(layout, s.state), []);
    await s.close();
  });

  it('changes written straight to disk are recorded and shown; caches and ignored files are not', async () => {
    const layout = await fresh();
    await write(layout.workspace, { '.gitignore': 'outputs/\n' });
    const s = await Session.open(layout, { client: 'test' });
    const batches: WatchBatch[] = [];
    const watcher = await WorkspaceWatcher.start(layout.workspace, new WorkspaceRecorder(s), { debounceMs: 50, onBatch: (b) => batches.push(b) });
    try {
      // as the container would: plain writes on the bind-mounted folder, no editor involved
      await write(layout.workspace, {
        'results/metrics.json': '{"accuracy": 0.931}\n', 'train.py': 'print("changed from the terminal")\n',
        'src/__pycache__/train.cpython-311.pyc': PYC, 'loose.pyc': PYC, 'outputs/ckpt.bin': PYC,
      });
      const until = async (what: string, ok: () => boolean) => {
        for (let i = 0; i < 100 && !ok(); i++) await new Promise((r) => setTimeout(r, 50));
        assert.ok(ok(), `timed out waiting for ${what}; batches: ${JSON.stringify(batches)}`);
      };
      await until('the batch with results/metrics.json and train.py', () => batches.some((b) => b.created.includes('results/metrics.json'))
        && batches.some((b) => b.changed.includes('train.py')));
      await fsp.rm(path.join(layout.workspace, 'results/metrics.json'));
      await until('the deletion', () => batches.some((b) => b.deleted.includes('results/metrics.json')));
      await watcher.flush();
      const events = (await readEvents(layout.events)).events;
      const files = events.filter((e): e is Extract<SessionEvent, { path: string }> => e.type.startsWith('file.')).map((e) => `${e.type} ${e.path}`);
      assert.ok(files.includes('file.created results/metrics.json'), files.join('; '));
      assert.ok(files.includes('file.changed train.py'), files.join('; '));
      assert.ok(files.includes('file.deleted results/metrics.json'), files.join('; '));
      assert.ok(!files.some((f) => /\.pyc|__pycache__|outputs\//.test(f)), `caches or ignored files recorded: ${files.join('; ')}`);
      const changed = events.find((e) => e.type === 'file.changed');
      assert.ok(changed?.type === 'file.changed' && changed.bytes === Buffer.byteLength('print("changed from the terminal")\n'));
      // the summary the stepper shows after the batch (the controller refreshes on each batch)
      const shown = patchSummary(await makePatch(layout.workspace));
      assert.deepEqual(shown.files.map((f) => f.path).sort(), ['.gitignore', 'train.py']);
      assert.deepEqual(shown.leftOut?.map((l) => l.path), ['loose.pyc', 'outputs/', 'src/__pycache__/']);
    } finally {
      await watcher.dispose();
      await s.close();
    }
  });
});
