// The Run Sets view and the run-set board inside the real extension host, on a run set of the
// fixture paper (fixture2026/90001) the test plans with the core. The board follows the state file
// as records are appended to it; a row opens the unit's session (prepared by the core, opened
// through the session service) in the trajectory viewer; Cancel records the units cancelled;
// Resume and Start Run Set… run the CLI's orchestrator as a process of its own (here every unit
// needs 8 GPUs, so each run ends at once with the units waiting: no container, no model).
import * as assert from 'node:assert/strict';
import { promises as fsp } from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import * as vscode from 'vscode';
import { SessionService } from '../../src/core/flows/sessionService';
import { prepareTask } from '../../src/core/flows/prepareTask';
import { createRunSet, planRunSet, readSpec, RunSetLayout, RunSetLog } from '../../src/core/runs';
import { findTask, loadDatasets } from '../../src/core/tasks/loader';
import type { RunsBoardMessage } from '../../src/protocol/runs';
import type { RunSetBoard } from '../../src/extension/runs/boardPanel';
import type { RunSetsFeature } from '../../src/extension/runs';
import { buildRunSetFixture } from '../harness/runSetFixture';
import { api } from './extensionApi';

/** Resolves with the board's next post that passes `check` (or the current one), rejects after `ms`. */
function boardWhere(b: RunSetBoard, check: (m: RunsBoardMessage) => boolean, what: string, ms = 60_000): Promise<RunsBoardMessage> {
  return new Promise((resolve, reject) => {
    if (b.posted && check(b.posted)) { resolve(b.posted); return; }
    const timer = setTimeout(() => { sub.dispose(); reject(new Error(`timed out waiting for ${what}; last board: ${JSON.stringify(b.posted?.counts)}`)); }, ms);
    const sub = b.onDidPost((m) => { if (check(m)) { clearTimeout(timer); sub.dispose(); resolve(m); } });
  });
}

describe('Run Sets view and board (real extension host)', function () {
  this.timeout(300_000);
  let tmp: string;
  let dir: string;
  let feature: RunSetsFeature;
  let specFile: string;

  before(async () => {
    feature = (await api()).runSets;
    tmp = await fsp.mkdtemp(path.join(os.tmpdir(), 'expbench-runs-vscode-'));
    const dataset = await buildRunSetFixture(tmp);
    specFile = path.join(tmp, 'spec.jsonc');
    await fsp.writeFile(specFile, `{ "version": 1, "name": "board test", "datasets": ["exp-bench"], "tasks": ["fixture2026/90001/*"],
      "agent": { "name": "scripted", "model": "scripted-agent" }, "concurrency": 2 }`);
    const { spec, text } = await readSpec(specFile);
    dir = path.join(tmp, 'run');
    await createRunSet(dir, spec, text, specFile, (await planRunSet(spec)).units);
    // unit 0's session: prepared and opened through the session service (its event log exists)
    const task = findTask(await loadDatasets([dataset]), 'fixture2026/90001/0')!;
    const session = new RunSetLayout(dir).session('units/fixture2026-90001-0.scripted.a1');
    await prepareTask({ task, outDir: session, cacheDir: path.join(tmp, 'cache') });
    const h = await new SessionService().open(session, { client: 'agent', taskId: task.id });
    await h.release();
  });
  after(async () => {
    await vscode.commands.executeCommand('workbench.action.closeAllEditors');
    if (feature && dir) await feature.index.forget(dir);
    if (tmp) await fsp.rm(tmp, { recursive: true, force: true }).catch(() => undefined);
  });

  it('Open Run Set shows the board, which follows the state file as it grows; the view lists the run set and its units', async () => {
    const shown = await vscode.commands.executeCommand<string>('expbench.runs.open', { dir });
    assert.equal(shown, dir);
    const board = feature.boards.get(dir)!;
    let m = await boardWhere(board, (x) => x.rows.length === 6, 'six rows');
    assert.equal(m.name, 'board test');
    assert.deepEqual(m.rows.map((r) => r.status), Array(6).fill('pending'));
    const log = new RunSetLog(new RunSetLayout(dir).state);
    const [u0, u1] = m.rows;
    const ref = { kind: 'local', unit: u0.unit, id: `${os.hostname()}/1/1`, logFile: path.join(dir, 'exec', u0.name, 'try-1.log'), submittedAt: new Date().toISOString() };
    await log.append({ type: 'unit.placed', unit: u0.unit, try: 1, ref });
    await log.append({ type: 'unit.started', unit: u0.unit, try: 1, ref, host: os.hostname() });
    await log.append({ type: 'unit.progress', unit: u0.unit, phase: 'implementation', steps: 3, tokens: 360, costUsd: null });
    m = await boardWhere(board, (x) => x.rows[0].status === 'running' && x.rows[0].phase === 'implementation', 'unit 0 running');
    assert.equal(m.rows[0].tokens, 360);
    await log.append({ type: 'unit.waiting', unit: u1.unit, reason: 'needs 8 GPUs, 0 here' });
    await log.append({ type: 'unit.finished', unit: u0.unit, try: 1, status: 'done', message: 'submitted', outcome: { submitted: true, E: true, D: true, I: true, C: true, All: true, AllE: true } });
    m = await boardWhere(board, (x) => x.counts.done === 1 && x.rows[1].detail === 'waiting: needs 8 GPUs, 0 here', 'unit 0 done, unit 1 waiting');
    assert.equal(m.rows[0].mark, '✓');
    // The Run Sets view: the run set with its counts, its units with their status.
    const roots = await feature.tree.getChildren();
    const node = roots.find((n) => n.kind === 'runSet' && n.dir === dir)!;
    assert.ok(node, 'the run set is listed');
    const item = feature.tree.getTreeItem(node);
    assert.equal(item.label, 'board test');
    assert.match(String(item.description), /^1\/6 done/);
    assert.deepEqual(item.command?.arguments, [{ dir }]);
    const units = await feature.tree.getChildren(node);
    assert.equal(units.length, 6);
    assert.match(String(feature.tree.getTreeItem(units[1]).description), /scripted a1 · pending · waiting: needs 8 GPUs, 0 here/);
  });

  it('a row opens the unit\'s session in the trajectory viewer', async () => {
    const board = feature.boards.get(dir)!;
    await board.receive({ type: 'open', unit: board.posted!.rows[0].unit });
    const tab = vscode.window.tabGroups.activeTabGroup.activeTab;
    assert.ok(tab?.input instanceof vscode.TabInputCustom && tab.input.viewType === 'expbench.trajectory', 'the viewer is the active editor');
    assert.equal((tab.input as vscode.TabInputCustom).uri.fsPath, path.join(dir, 'units', 'fixture2026-90001-0.scripted.a1', 'private', 'events.jsonl'));
  });

  it('Cancel records the units not finished as cancelled; Resume runs the orchestrator in a process of its own, which the board follows', async () => {
    const board = feature.boards.get(dir)!;
    await board.receive({ type: 'cancel' });
    let m = await boardWhere(board, (x) => x.cancelled && x.counts.cancelled === 5, 'five units cancelled');
    assert.equal(m.counts.done, 1);
    await fsp.writeFile(path.join(tmp, 'exp-bench', 'tasks', 'fixture2026', '90001', 'curation.jsonc'), '{ "version": 1, "environment": { "gpus": 8 } }');
    // The unit keys hold the image and pin only: a curation file with an environment but no pin keeps the keys.
    await board.receive({ type: 'resume' });
    m = await boardWhere(board, (x) => x.orchestrator?.command === 'resume' && x.rows.slice(1).every((r) => r.detail === 'waiting: needs 8 GPUs, 0 here'), 'the resumed units waiting');
    assert.equal(m.rows[0].status, 'done', 'the done unit is not run again');
    m = await boardWhere(board, (x) => x.orchestrator?.alive === false, 'the orchestrator ended');
    assert.equal(m.orchestrator?.command, 'resume');
  });

  it('Start Run Set… starts `runs start` in the background and opens its board', async () => {
    const out = path.join(tmp, 'run2');
    const r = await vscode.commands.executeCommand<{ dir: string; pid: number; log: string }>('expbench.runs.start', { spec: specFile, out });
    assert.equal(r?.dir, out);
    assert.ok(r.pid > 0);
    const board = feature.boards.get(out)!;
    const m = await boardWhere(board, (x) => x.rows.length === 6 && x.rows.every((row) => row.detail === 'waiting: needs 8 GPUs, 0 here'), 'the new run set\'s units waiting');
    assert.equal(m.name, 'board test');
    await feature.index.forget(out);
    // A spec that changes this run set's units is refused: the message names them.
    await fsp.writeFile(path.join(tmp, 'spec3.jsonc'), (await fsp.readFile(specFile, 'utf8')).replace('"scripted-agent"', '"another-model"'));
    const refused = await vscode.commands.executeCommand('expbench.runs.start', { spec: path.join(tmp, 'spec3.jsonc'), out });
    assert.equal(refused, undefined, 'refused (the error was shown)');
  });
});
