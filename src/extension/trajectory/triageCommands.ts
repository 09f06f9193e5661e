import * as vscode from 'vscode';
import { errorMessage } from '../../core/util/errors';
import { compareRuns, type Comparison } from '../../core/viewer/compare';
import type { TriageRow } from '../../core/viewer/triageTable';
import type { CommandSpec } from '../commands';
import { showComparison } from './comparePanel';
import { openTarget, type RunStore } from './runStore';
import type { TrajectoryNode } from './trajectoriesView';
import type { TriagePanel } from './triagePanel';

export const TRIAGE_COMMAND = 'expbench.trajectory.triage';
export const COMPARE_RUNS_COMMAND = 'expbench.trajectory.compareRuns';
export const REFRESH_TRAJECTORIES_COMMAND = 'expbench.trajectories.refresh';
export const ADD_TRAJECTORY_FILE_COMMAND = 'expbench.trajectories.addFile';
export const FORGET_TRAJECTORY_FILE_COMMAND = 'expbench.trajectories.forgetFile';

/** Arguments of `expbench.trajectory.compareRuns` (JSON-serialisable): two runs as the viewer names them (session folders, files, `<file>#<id>`). */
export interface CompareRunsArgs { left: string; right: string }

const describe = (r: TriageRow) => `${r.agent}${r.model ? ` · ${r.model}` : ''}`;

/**
 * The two runs of Compare Runs in one quick pick of two steps: the first run (skipped when `first`
 * is given), then another run of its task. One widget for both steps: a second quick pick opened
 * while the first one hid could open hidden on a loaded machine, and the command then waited on
 * it. It stays open when the focus moves (Escape cancels), as VS Code's multi-step inputs do.
 * @returns the pair, or undefined when cancelled or when a step has nothing to pick (said in a message)
 */
async function pickPair(store: RunStore, first?: TriageRow): Promise<[TriageRow, TriageRow] | undefined> {
  const all = await store.rows();
  const qp = vscode.window.createQuickPick<vscode.QuickPickItem & { row: TriageRow }>();
  Object.assign(qp, { ignoreFocusOut: true, matchOnDescription: true, matchOnDetail: true, totalSteps: first ? undefined : 2 });
  /** Shows the step after `left` (the first step when undefined); false when it has no runs. */
  const step = (left: TriageRow | undefined): boolean => {
    const rows = all.filter((r) => !left || (r.task === left.task && r.run !== left.run));
    if (rows.length === 0) {
      void vscode.window.showInformationMessage(left ? `EXP-Bench: no other run of ${left.task ?? 'this task'} to compare with.` : 'EXP-Bench: no runs to compare yet.');
      return false;
    }
    qp.title = left ? `Compare ${describe(left)} with…` : 'Compare Runs: the first run';
    if (!first) qp.step = left ? 2 : 1;
    qp.value = '';
    qp.items = rows.map((r) => ({ label: describe(r), description: r.task ?? '', detail: r.run, row: r }));
    return true;
  };
  return new Promise((resolve) => {
    let left = first;
    let done = false;
    const finish = (v: [TriageRow, TriageRow] | undefined) => {
      if (done) return;
      done = true;
      resolve(v);
      qp.dispose();
    };
    qp.onDidAccept(() => {
      const picked = qp.selectedItems[0]?.row;
      if (!picked) return;
      if (left) { finish([left, picked]); return; }
      left = picked;
      if (!step(left)) finish(undefined);
    });
    qp.onDidHide(() => finish(undefined));
    if (step(left)) qp.show();
    else finish(undefined);
  });
}

/**
 * The triage commands: the triage table, Compare Runs ({left, right}; from the tree's context menu
 * with the run as left; without arguments, two quick picks, the second among runs of the same
 * task), Refresh, Add Trajectory File… (remembered, listed in the view) and Remove from
 * Trajectories (a remembered file, from the view's context menu). Each returns what it
 * showed (tests), undefined when cancelled or refused (the reason shown as an error message).
 */
export function triageCommands(store: RunStore, panel: TriagePanel, extensionUri: vscode.Uri): CommandSpec[] {
  return [
    {
      id: TRIAGE_COMMAND,
      // {runs, label}: the Results view's runs behind a bar or cell; those not listed yet are remembered (as files opened in the viewer are)
      async execute(arg?: { runs?: string[]; label?: string }): Promise<number> {
        if (!Array.isArray(arg?.runs)) { panel.show(); return (await store.rows()).length; }
        const listed = new Set((await store.rows()).map((r) => openTarget(r)));
        for (const r of arg.runs) if (!listed.has(r) && !r.endsWith('_eval_judge.json')) await store.remember(r);
        panel.focus(arg.runs, arg.label ?? `${arg.runs.length} runs`);
        return (await store.rows()).length;
      },
    },
    {
      id: COMPARE_RUNS_COMMAND,
      async execute(arg?: Partial<CompareRunsArgs> | TrajectoryNode): Promise<Comparison | undefined> {
        let left = arg && 'left' in arg ? arg.left : arg && 'kind' in arg && arg.kind === 'run' ? arg.row.run : undefined;
        let right = arg && 'right' in arg ? arg.right : undefined;
        if (!left || !right) {
          const l = left ? (await store.rows()).find((r) => r.run === left) : undefined;
          if (left && !l) { void vscode.window.showErrorMessage(`EXP-Bench: ${left} is not among the listed runs.`); return undefined; }
          const pair = await pickPair(store, l);
          if (!pair) return undefined;
          [left, right] = [pair[0].run, pair[1].run];
        }
        try {
          const c = await compareRuns(left, right, store.policy);
          showComparison(extensionUri, c);
          return c;
        } catch (e) {
          void vscode.window.showErrorMessage(`EXP-Bench: cannot compare: ${errorMessage(e)}`);
          return undefined;
        }
      },
    },
    {
      id: REFRESH_TRAJECTORIES_COMMAND,
      async execute(): Promise<number> { await store.refresh(); return (await store.rows()).length; },
    },
    {
      id: ADD_TRAJECTORY_FILE_COMMAND,
      async execute(file?: vscode.Uri | string): Promise<string | undefined> {
        const uri = typeof file === 'string' ? vscode.Uri.file(file) : file ?? (await vscode.window.showOpenDialog({ title: 'Add Trajectory File', canSelectMany: false, openLabel: 'Add' }))?.[0];
        if (!uri) return undefined;
        await store.remember(uri.fsPath);
        return uri.fsPath;
      },
    },
    {
      // the view's context menu on a remembered file's run or problem row: the file is left alone
      id: FORGET_TRAJECTORY_FILE_COMMAND,
      async execute(arg?: TrajectoryNode | string): Promise<string | undefined> {
        const file = typeof arg === 'string' ? arg : arg?.kind === 'problem' ? arg.file : arg?.kind === 'run' && arg.row.source === 'file' ? fileOfRun(arg.row.run) : undefined;
        if (!file || !store.files().includes(file)) return undefined;
        await store.forget(file);
        return file;
      },
    },
  ];
}

/**
 * The file of a file-backed run key, `<file>#<sample>`: the key up to the first `#` after its last
 * `/` (a `#` inside a folder name is kept), linear in the key's length.
 */
function fileOfRun(run: string): string {
  const hash = run.indexOf('#', run.lastIndexOf('/') + 1);
  return hash >= 0 ? run.slice(0, hash) : run;
}
