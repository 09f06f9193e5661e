import * as assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { promises as fsp } from 'node:fs';
import * as path from 'node:path';
import { isExpBenchError } from '../../src/core/errors';
import { claimsStatus } from '../../src/core/verify/sessionClaims';
import { designFromHarnessLines, designToHarnessLines } from '../../src/core/session/design';
import { readEvents } from '../../src/core/session/events';
import { SessionLayout } from '../../src/core/layout';
import { WorkspaceRecorder } from '../../src/core/session/recorder';
import { runScript, ScriptExec } from '../../src/core/session/runs';
import { Session } from '../../src/core/session/session';
import type { DesignDraft } from '../../src/core/session/state';
import { readState } from '../../src/core/session/store';
import { submit } from '../../src/core/session/submit';
import { submitAndScore } from '../../src/core/flows/submit';
import { makeSessionFolder } from './session-fixtures';

/** Runs the command as a real local process in the workspace (stands in for the work container's /workspace). */
const localExec = (workspace: string): ScriptExec => ({ command, onOutput }) => new Promise((resolve, reject) => {
  const p = spawn(command[0], command.slice(1), { cwd: workspace });
  p.stdout.on('data', (b: Buffer) => onOutput(b.toString(), 'stdout'));
  p.stderr.on('data', (b: Buffer) => onOutput(b.toString(), 'stderr'));
  p.on('error', reject);
  p.on('close', (code) => resolve({ exitCode: code }));
});

const DESIGN: DesignDraft = {
  constants: [{ name: 'dataset', description: 'CIFAR-10' }],
  independent: [{ name: 'learning rate', description: 'step size', values: ['0.1', '0.01'] }],
  dependent: [{ name: 'accuracy', description: 'top-1 on the test set' }],
  freeText: 'Three seeds per setting.\n\nReport the mean.',
};

describe('session submit, give-up, runs, claims and recording', () => {
  let layout: SessionLayout;
  let t: number;
  const now = () => t;
  beforeEach(async () => { layout = await makeSessionFolder(); t = Date.parse('2026-03-01T09:00:00.000Z'); });
  afterEach(async () => { await fsp.rm(layout.root, { recursive: true, force: true }); });

  it('design: structured ↔ harness lines', () => {
    const lines = designToHarnessLines(DESIGN);
    assert.deepEqual(lines, [
      'Constant: dataset — CIFAR-10',
      'Independent: learning rate — step size (values: 0.1, 0.01)',
      'Dependent: accuracy — top-1 on the test set',
      'Three seeds per setting.',
      'Report the mean.',
    ]);
    assert.deepEqual(designFromHarnessLines(lines), { ...DESIGN, freeText: 'Three seeds per setting.\nReport the mean.' });
  });

  it('submit freezes the answers, writes every harness file, stops the clock, then verifies and judges', async () => {
    const s = await Session.open(layout, { client: 'test', now });
    await s.clock.start();
    s.setDesign(DESIGN);
    await fsp.writeFile(path.join(layout.workspace, 'train.py'), 'import sys\nprint("epoch 1")\nprint("accuracy 0.931")\n');
    await fsp.writeFile(layout.script, '#!/bin/bash\npython3 train.py\n');
    t += 42 * 60_000;
    const calls: string[] = [];
    const r = await submitAndScore(s, { design: DESIGN, conclusion: 'Accuracy reaches 93.1%.' }, {
      verify: async (l) => { calls.push(`verify ${l.root}`); assert.ok((await readState(l.state))?.submitted, 'verify runs after the state is frozen'); return { ok: true, summary: 'E = true', record: 'private/verify/latest.json' }; },
      judge: async () => { calls.push('judge'); throw new Error('endpoint unreachable'); },
    });
    assert.deepEqual(calls, [`verify ${layout.root}`, 'judge']);
    assert.equal(r.workingMs, 42 * 60_000);
    assert.deepEqual(r.verify, { ok: true, summary: 'E = true', record: 'private/verify/latest.json' });
    assert.deepEqual(r.judge, { ok: false, error: 'endpoint unreachable' });

    const harnessAnswers = { design: designToHarnessLines(DESIGN), conclusion: 'Accuracy reaches 93.1%.' };
    assert.deepEqual(JSON.parse(await fsp.readFile(layout.answers, 'utf8')), harnessAnswers);
    assert.deepEqual(JSON.parse(await fsp.readFile(path.join(layout.harness, 'answers.json'), 'utf8')), harnessAnswers);
    assert.deepEqual(JSON.parse(await fsp.readFile(path.join(layout.private, 'design.json'), 'utf8')), DESIGN);
    const patch = await fsp.readFile(path.join(layout.harness, 'patch.diff'), 'utf8');
    assert.match(patch, /^\+print\("accuracy 0\.931"\)$/m, 'the edit is in the patch');
    assert.match(patch, /^diff --git a\/reproduce_exp_bench\.sh b\/reproduce_exp_bench\.sh$/m, 'the untracked script is in the patch');
    assert.equal(await fsp.readFile(path.join(layout.harness, 'reproduce_exp_bench.sh'), 'utf8'), '#!/bin/bash\npython3 train.py\n');
    assert.equal(s.clock.status, 'stopped');
    assert.throws(() => s.setConclusion('changed my mind'), (e: unknown) => isExpBenchError(e, 'SESSION_INVALID'));
    await assert.rejects(submit(s, harnessAnswers), (e: unknown) => isExpBenchError(e, 'SESSION_INVALID') && /already submitted/.test(e.message));
    await s.close();

    const state = (await readState(layout.state))!;
    assert.deepEqual(state.submitted, { at: '2026-03-01T09:42:00.000Z', workingMs: 42 * 60_000 });
    const types = (await readEvents(layout.events)).events.map((e) => e.type);
    assert.deepEqual(types.slice(-3), ['submitted', 'verify.finished', 'judge.finished']);
    const submitted = (await readEvents(layout.events)).events.find((e) => e.type === 'submitted')!;
    assert.ok(submitted.type === 'submitted');
    assert.equal(submitted.patch, 'private/harness/patch.diff');
    assert.equal(submitted.patchBytes, Buffer.byteLength(patch));
    assert.equal(submitted.script, 'private/harness/reproduce_exp_bench.sh');
  });

  it('submit from a layout (as the CLI does) accepts the harness form and refuses bad answers, naming them', async () => {
    await assert.rejects(submit(layout, { design: 42, conclusion: 'x' } as any, { answersSource: 'answers.json' }),
      (e: unknown) => isExpBenchError(e, 'BAD_INPUT') && e.message.startsWith('answers.json:'));
    assert.equal(await fsp.access(layout.answers).then(() => true, () => false), false, 'nothing frozen');
    const r = await submit(layout, { design: 'Constant: seed — 0\nvary the width', conclusion: 'wider is better' });
    assert.deepEqual(r.design, { constants: [{ name: 'seed', description: '0' }], independent: [], dependent: [], freeText: 'vary the width' });
    assert.ok(r.warnings.some((w) => /reproduce_exp_bench\.sh does not exist/.test(w)));
    assert.ok(r.warnings.some((w) => /patch is empty/.test(w)));
    assert.equal(r.files.script, null);
    assert.equal(await fsp.readFile(path.join(layout.harness, 'patch.diff'), 'utf8'), '');
    const state = (await readState(layout.state))!;
    assert.equal(state.conclusion, 'wider is better');
    assert.ok(state.submitted);
  });

  it('runs the script through the injected exec: log streamed to private/runs, history and script.run recorded', async () => {
    const s = await Session.open(layout, { client: 'test' });
    await assert.rejects(runScript(s, { exec: localExec(layout.workspace) }), (e: unknown) => isExpBenchError(e, 'BAD_INPUT') && e.message.startsWith(layout.script));
    await fsp.writeFile(layout.script, 'echo "val accuracy: 0.9312"\necho "loss 0.25" >&2\nexit 3\n');
    const live: string[] = [];
    const run = await runScript(s, { exec: localExec(layout.workspace), onOutput: (c) => live.push(c) });
    assert.equal(run.exitCode, 3);
    assert.match(run.log, /^private\/runs\/run-\d{8}T\d{6}Z-[0-9a-f]{4}\.log$/);
    const log = await fsp.readFile(path.join(layout.root, run.log), 'utf8');
    assert.match(log, /val accuracy: 0\.9312/);
    assert.match(log, /loss 0\.25/);
    assert.equal(live.join(''), log);
    assert.deepEqual(s.state.runs, [run]);
    const ev = (await readEvents(layout.events)).events.at(-1)!;
    assert.ok(ev.type === 'script.run' && ev.runId === run.id && ev.exitCode === 3 && ev.log === run.log);

    const failing: ScriptExec = async ({ onOutput }) => { onOutput('starting\n', 'stdout'); throw new Error('container is not running'); };
    const broken = await runScript(s, { exec: failing });
    assert.equal(broken.exitCode, null);
    assert.equal(broken.error, 'container is not running');
    assert.equal(s.state.runs.length, 2);

    const claims = await claimsStatus(layout, 'Validation accuracy is 93.1%, the loss 0.25 and the F1 0.88.');
    assert.deepEqual(claims.claims.map((c) => [c.text, c.found]), [['93.1%', true], ['0.25', true], ['0.88', false]]);
    assert.equal(claims.allFound, false);
    assert.deepEqual(claims.claims[0].where, [{ source: run.log, line: 1 }]);
    assert.equal(claims.logs.length, 2);
    await s.close();
  });

  it('claims with no runs yet are all not found', async () => {
    const r = await claimsStatus(layout, 'We get 71.2% accuracy.');
    assert.deepEqual(r.logs, []);
    assert.deepEqual(r.claims.map((c) => c.found), [false]);
  });

  it('records edits as diffs against task start, then against the last save; creations, deletions and commands', async () => {
    const s = await Session.open(layout, { client: 'test' });
    const rec = new WorkspaceRecorder(s);
    const file = path.join(layout.workspace, 'train.py');
    assert.equal(await rec.recordSave(file, 'import sys\nprint("epoch 1")\n'), false, 'unchanged since task start: nothing recorded');
    assert.equal(await rec.recordSave(file, 'import sys\nprint("epoch 2")\n'), true);
    assert.equal(await rec.recordSave(file, 'import sys\nprint("epoch 2")\nprint("done")\n'), true);
    assert.equal(await rec.recordSave(path.join(layout.workspace, 'new.py'), 'x = 1\n'), true);
    assert.equal(await rec.recordSave(path.join(layout.root, 'private', 'state.json'), '{}'), false, 'outside the workspace');
    assert.equal(await rec.recordSave(path.join(layout.workspace, '.git', 'config'), ''), false, '.git is not recorded');
    await rec.recordCreated(path.join(layout.workspace, 'data', 'x.csv'));
    await rec.recordDeleted(path.join(layout.workspace, 'new.py'));
    await rec.recordCommand({ command: 'pip install -e .', exitCode: 0, durationMs: 5300, output: 'x'.repeat(10_000), cwd: '/workspace' });
    await s.close();
    const events = (await readEvents(layout.events)).events.filter((e) => e.type !== 'session.opened');
    assert.deepEqual(events.map((e) => e.type), ['file.edited', 'file.edited', 'file.edited', 'file.created', 'file.deleted', 'command.run']);
    const [e1, e2, e3] = events;
    assert.ok(e1.type === 'file.edited' && e2.type === 'file.edited' && e3.type === 'file.edited');
    assert.equal(e1.path, 'train.py');
    assert.match(e1.diff, /^-print\("epoch 1"\)$/m);
    assert.match(e1.diff, /^\+print\("epoch 2"\)$/m);
    assert.doesNotMatch(e2.diff, /epoch 1/, 'the second diff is against the first save');
    assert.match(e2.diff, /^\+print\("done"\)$/m);
    assert.equal(e3.path, 'new.py');
    assert.match(e3.diff, /^\+x = 1$/m);
    const created = events[3];
    assert.ok(created.type === 'file.created' && created.path === 'data/x.csv');
    const cmd = events[5];
    assert.ok(cmd.type === 'command.run');
    assert.equal(cmd.exitCode, 0);
    assert.ok(cmd.outputExcerpt.length < 4100);
  });

  it('notes and phase changes are recorded and restored; drafts are recorded as answers.saved', async () => {
    let s = await Session.open(layout, { client: 'test', draftQuietMs: 50 });
    await s.addNote('the README is missing: guessing the entry point');
    await s.setPhase('implementation');
    s.setConclusion('draft');
    await new Promise((r) => setTimeout(r, 200));
    await assert.rejects(s.addNote('  '), (e: unknown) => isExpBenchError(e, 'BAD_INPUT'));
    await s.close();
    s = await Session.open(layout, { client: 'test' });
    assert.equal(s.state.phase, 'implementation');
    assert.equal(s.state.conclusion, 'draft');
    assert.deepEqual(s.state.notes.map((n) => n.text), ['the README is missing: guessing the entry point']);
    await s.close();
    const types = (await readEvents(layout.events)).events.map((e) => e.type);
    assert.deepEqual(types, ['session.opened', 'note.added', 'phase.changed', 'answers.saved', 'session.opened']);
  });
});
