/**
 * The curator's desk's commands in the real extension host (issue 31): two curators' verdicts in
 * disagreement (another curator's file in the review store, as a git merge brings it, and this
 * window's verdict through `expbench.curation.recordVerdict`), settled by
 * `expbench.curation.resolve`; a dispute answered by `expbench.curation.answerDispute`; the task
 * page's state after each (the same message the webview gets), and the queue's counts.
 */
import * as assert from 'node:assert/strict';
import { promises as fsp } from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import * as vscode from 'vscode';
import { ReviewStore, type Judgement } from '../../src/core/review';
import type { PageMessage, QueueMessage } from '../../src/protocol/curation';
import { writePaper } from '../harness/curationFixture';
import { api } from './extensionApi';

const ROOT = path.resolve(__dirname, '../../..');
const TASK = 'desk/toycal/0';

describe('Curator\'s desk: verdicts, a disagreement resolved, a dispute answered (real extension host)', function () {
  this.timeout(180_000);
  let dir: string;
  let store: ReviewStore;
  let before: { datasets: string[]; review: string };

  const page = async (): Promise<PageMessage> => {
    const p = await vscode.commands.executeCommand<PageMessage | undefined>('expbench.curation.openTaskPage', TASK);
    assert.ok(p, 'no task page');
    return p;
  };

  // `before` is the store's setting as it was: the test's own store replaces it for the file
  this.beforeAll(async () => {
    dir = await fsp.mkdtemp(path.join(os.tmpdir(), 'expbench-desk-vsc-'));
    await writePaper(path.join(dir, 'ds'), 'desk/toycal', { taskFile: path.join(ROOT, 'samples', 'exp-bench', 'tasks', 'sample', 'toycal', 'toycal_complete_final.json') });
    const cfg = vscode.workspace.getConfiguration('expbench');
    before = { datasets: cfg.get<string[]>('datasets', []), review: cfg.get<string>('review.folder', '') };
    await cfg.update('datasets', [...before.datasets, path.join(dir, 'ds')], vscode.ConfigurationTarget.Global);
    await cfg.update('review.folder', path.join(dir, 'review'), vscode.ConfigurationTarget.Global);
    store = new ReviewStore(path.join(dir, 'review'));
    await (await api()).store.reload();
  });

  this.afterAll(async () => {
    await vscode.commands.executeCommand('workbench.action.closeAllEditors');
    const cfg = vscode.workspace.getConfiguration('expbench');
    await cfg.update('datasets', before.datasets, vscode.ConfigurationTarget.Global);
    await cfg.update('review.folder', before.review || undefined, vscode.ConfigurationTarget.Global);
    await (await api()).store.reload();
    await fsp.rm(dir, { recursive: true, force: true });
  });

  it('shows two curators apart, their disagreement in the queue, and settles it with a resolution that says who and why', async () => {
    await store.add({ subject: { kind: 'task', task: TASK }, kind: 'task-verdict', value: 'valid', reason: 'the scripts run', by: 'other-curator@example.org' });
    const mine = await vscode.commands.executeCommand<Judgement | undefined>('expbench.curation.recordVerdict', { task: TASK, verdict: 'needs-fix', reason: 'range past the end' });
    assert.ok(mine);
    let p = await page();
    assert.equal(p.disagreement, true);
    assert.deepEqual(p.curators.map((c) => [c.by === mine.by ? 'me' : c.by, c.verdict]).sort(), [['me', 'needs-fix'], ['other-curator@example.org', 'valid']]);
    assert.equal(p.disagreeing.length, 2);
    assert.deepEqual(p.states, ['disagreement']);
    const q = await vscode.commands.executeCommand<QueueMessage | undefined>('expbench.curation.showQueue', { filter: { state: 'disagreement' } });
    assert.ok(q);
    assert.equal(q.counts.disagreement, 1);
    const row = q.rows.find((r) => r.task === TASK)!;
    assert.deepEqual(row.states, ['disagreement']);
    const pair = q.pairs.find((x) => [x.a, x.b].includes('other-curator@example.org'))!;
    assert.deepEqual([pair.tasks, pair.agree, pair.differ], [1, 0, [TASK]]);
    const res = await vscode.commands.executeCommand<Judgement | undefined>('expbench.curation.resolve', { task: TASK, verdict: 'needs-fix', reason: 'the range is past the end at the pin' });
    assert.ok(res);
    assert.deepEqual((res.value as { resolves: string[] }).resolves.sort(), p.disagreeing.slice().sort());
    p = await page();
    assert.equal(p.disagreement, false);
    assert.equal(p.verdict, 'needs-fix');
    assert.equal(p.decidedBy, res.by);
    assert.equal(p.reason, 'the range is past the end at the pin');
    assert.deepEqual(p.history.map((h) => h.kind), ['task-verdict', 'task-verdict', 'resolution']);
  });

  it('answers a dispute: it leaves the open disputes and the queue, the answer in the history', async () => {
    const d = await store.add({ subject: { kind: 'task', task: TASK }, kind: 'dispute', value: { about: 'expected_outcome', evidence: [{ note: 'my run printed 0.013' }] }, reason: 'the ECE is 0.013, not 0.012', by: 'baseliner@example.org' });
    let p = await page();
    assert.deepEqual(p.openDisputes.map((x) => [x.id, x.about, x.evidence]), [[d.id, 'expected_outcome', [{ note: 'my run printed 0.013' }]]]);
    assert.ok(p.states.includes('open-dispute'));
    const a = await vscode.commands.executeCommand<Judgement | undefined>('expbench.curation.answerDispute', { task: TASK, dispute: d.id, reason: '"about 0.012": within rounding of the seeded run' });
    assert.ok(a);
    assert.deepEqual(a.value, { resolves: [d.id] });
    p = await page();
    assert.deepEqual(p.openDisputes, []);
    assert.ok(!p.states.includes('open-dispute'));
    assert.equal(p.verdict, 'needs-fix', 'an answer without a verdict leaves the verdict');
    const last = p.history[p.history.length - 1];
    assert.deepEqual([last.kind, last.reason], ['resolution', '"about 0.012": within rounding of the seeded run']);
  });
});
