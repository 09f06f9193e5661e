// The Trajectories view, the triage table and Compare Runs inside the real extension host, on
// session folders of the bundled sample the test makes with the core (a person's session, judged
// by the heuristic judge without the verifier: no container), under a temporary
// `expbench.sessionsDir`, plus a real SWE-agent trajectory file added to the view.
import * as assert from 'node:assert/strict';
import { promises as fsp } from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import * as vscode from 'vscode';
import type { Comparison } from '../../src/core/viewer/compare';
import { importOwnEvents } from '../../src/core/trajectory/own';
import type { TriageFeature } from '../../src/extension/trajectory/triage';
import type { TrajectoryNode } from '../../src/extension/trajectory/trajectoriesView';
import { HUMAN_GIT_LOG, makeHumanSession } from '../unit/triage.fixtures';
import { api } from './extensionApi';

const ROOT = path.resolve(__dirname, '../../..');
const SWE_TRAJ = path.join(ROOT, '..', 'shared', 'data', 'trajectories', 'swe-agent', 'SWE-agent__SWE-agent', 'swe-agent__test-repo-i1.traj');

/** Resolves when `check` holds (checked now and after each store change), rejects after `ms`. */
function until(t: TriageFeature, check: () => Promise<boolean>, what: string, ms = 60_000): Promise<void> {
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => { sub.dispose(); reject(new Error(`timed out waiting for ${what}`)); }, ms);
    const test = () => void check().then((ok) => { if (ok) { clearTimeout(timer); sub.dispose(); resolve(); } }, reject);
    const sub = t.store.onDidChange(test);
    test();
  });
}

describe('Trajectories view and triage table (real extension host)', function () {
  this.timeout(240_000);
  let tmp: string;
  let sessions: string;
  let human: string;
  let triage: TriageFeature;
  const config = () => vscode.workspace.getConfiguration('expbench');
  let before_: string | undefined;

  before(async () => {
    triage = (await api()).triage;
    tmp = await fsp.mkdtemp(path.join(os.tmpdir(), 'expbench-triage-vscode-'));
    sessions = path.join(tmp, 'sessions');
    human = path.join(sessions, 'human-1');
    await makeHumanSession(human, path.join(tmp, 'cache'), { verify: false });
    before_ = config().inspect<string>('sessionsDir')?.globalValue;
    await config().update('sessionsDir', sessions, vscode.ConfigurationTarget.Global);
  });
  after(async () => {
    await config().update('sessionsDir', before_, vscode.ConfigurationTarget.Global);
    await triage?.store.forget(SWE_TRAJ);
    await vscode.commands.executeCommand('workbench.action.closeAllEditors');
    if (tmp) await fsp.rm(tmp, { recursive: true, force: true }).catch(() => undefined);
  });

  it('lists the sessions under expbench.sessionsDir by task, and a trajectory file once added; a run opens in the viewer', async () => {
    await until(triage, async () => (await triage.store.rows()).some((r) => r.run === human), 'the session in the store');
    const added = await vscode.commands.executeCommand<string>('expbench.trajectories.addFile', SWE_TRAJ);
    assert.equal(added, SWE_TRAJ);
    assert.deepEqual(triage.store.files()[0], SWE_TRAJ, 'remembered (globalState)');
    const tasks = await triage.tree.getChildren();
    const labels = tasks.map((n) => triage.tree.getTreeItem(n).label);
    assert.ok(labels.includes('sample/toycal/0'), JSON.stringify(labels));
    const sample = tasks.find((n) => triage.tree.getTreeItem(n).label === 'sample/toycal/0')!;
    const runs = await triage.tree.getChildren(sample);
    assert.equal(runs.length, 1);
    const item = triage.tree.getTreeItem(runs[0]);
    assert.equal(item.label, 'human');
    assert.match(String(item.description), /^D 0% I 0% E – · \d+ steps · ⚑ 1 flag$/);
    assert.deepEqual(item.command?.arguments, [{ uri: human }]);
    const swe = (await Promise.all(tasks.map((n) => triage.tree.getChildren(n)))).flat().find((n): n is Extract<TrajectoryNode, { kind: 'run' }> => n.kind === 'run' && n.row.source === 'file' && (n.row.run === SWE_TRAJ || n.row.run.startsWith(`${SWE_TRAJ}#`)));
    assert.ok(swe, 'the SWE-agent file is listed');
    assert.equal(triage.tree.getTreeItem(swe).label, `swe-agent${swe.row.model ? ` · ${swe.row.model}` : ''}`);

    await vscode.commands.executeCommand(item.command!.command, ...item.command!.arguments!);
    const tab = vscode.window.tabGroups.activeTabGroup.activeTab;
    assert.ok(tab?.input instanceof vscode.TabInputCustom && tab.input.viewType === 'expbench.trajectory', 'the viewer is the active editor');
    assert.equal((tab.input as vscode.TabInputCustom).uri.fsPath, path.join(human, 'private', 'events.jsonl'));
  });

  it('the triage table: its webview asks for the rows, a row opens the run at its first flagged step', async () => {
    const count = await vscode.commands.executeCommand<number>('expbench.trajectory.triage');
    assert.ok(count >= 2, `rows: ${count}`);
    // the rows are posted once the webview's script has run and said `ready`
    await new Promise<void>((resolve, reject) => {
      const t0 = Date.now();
      const poll = () => (triage.panel.posted ? resolve() : Date.now() - t0 > 90_000 ? reject(new Error('the triage webview never said ready')) : setTimeout(poll, 200));
      poll();
    });
    const row = triage.panel.posted!.rows.find((r) => r.run === human)!;
    const t = await importOwnEvents(path.join(human, 'private', 'events.jsonl'));
    assert.equal(row.firstFlaggedStep, t.steps.find((s) => s.action?.command === HUMAN_GIT_LOG)!.index);
    const opened = new Promise<{ uri: string; step?: number }>((resolve) => { const s = triage.panel.onDidOpen((e) => { s.dispose(); resolve(e); }); });
    await triage.panel.receive({ type: 'open', run: row.run, step: row.firstFlaggedStep! });
    assert.deepEqual(await opened, { uri: human, step: row.firstFlaggedStep });
    const tab = vscode.window.tabGroups.activeTabGroup.activeTab;
    assert.ok(tab?.input instanceof vscode.TabInputCustom && tab.input.viewType === 'expbench.trajectory');
  });

  it('a new session folder is listed without a refresh (file watcher); Compare Runs compares two runs of one task and refuses others', async () => {
    const second = path.join(sessions, 'human-2');
    await makeHumanSession(second, path.join(tmp, 'cache'), { judged: false });
    await until(triage, async () => (await triage.store.rows()).some((r) => r.run === second), 'the new session listed', 90_000);
    const c = await vscode.commands.executeCommand<Comparison>('expbench.trajectory.compareRuns', { left: human, right: second });
    assert.ok(c, 'compared');
    assert.equal(c.task, 'sample/toycal/0');
    assert.equal(c.left.run, human);
    assert.ok(c.phases.find((p) => p.phase === 'design')!.right.length > 0);
    const refused = await vscode.commands.executeCommand<Comparison | undefined>('expbench.trajectory.compareRuns', { left: human, right: SWE_TRAJ });
    assert.equal(refused, undefined, 'runs of different tasks are refused');
  });
});
