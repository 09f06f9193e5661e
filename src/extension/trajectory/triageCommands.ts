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

async function pickRun(store: RunStore, title: string, sameTaskAs?: TriageRow): Promise<TriageRow | undefined> {
  const rows = (await store.rows()).filter((r) => !sameTaskAs || (r.task === sameTaskAs.task && r.run !== sameTaskAs.run));
  if (rows.length === 0) {
    void vscode.window.showInformationMessage(sameTaskAs ? `EXP-Bench: no other run of ${sameTaskAs.task ?? 'this task'} to compare with.` : 'EXP-Bench: no runs to compare yet.');
    return undefined;
  }
  const picked = await vscode.window.showQuickPick(rows.map((r) => ({ label: describe(r), description: r.task ?? '', detail: r.run, row: r })), { title, matchOnDescription: true, matchOnDetail: true });
  return picked?.row;
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
          const rows = await store.rows();
          const l = left ? rows.find((r) => r.run === left) : await pickRun(store, 'Compare Runs: the first run');
          if (!l) { if (left) void vscode.window.showErrorMessage(`EXP-Bench: ${left} is not among the listed runs.`); return undefined; }
          const r = await pickRun(store, `Compare ${describe(l)} with…`, l);
          if (!r) return undefined;
          left = l.run; right = r.run;
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
