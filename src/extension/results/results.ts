import * as vscode from 'vscode';
import type { Task } from '../../core/tasks/types';
import type { CommandRegistrar } from '../commands';
import { sessionsDir } from '../openTask';
import { onDidChange } from '../settings';
import { ResultsPanel } from './resultsPanel';

export const SHOW_RESULTS_COMMAND = 'expbench.results.show';
export const EXPORT_FIGURES_COMMAND = 'expbench.results.exportFigures';
export const FOLLOW_RESULTS_COMMAND = 'expbench.results.follow';

/** What the workbench hands the tests. */
export interface ResultsFeature extends vscode.Disposable { panel: ResultsPanel }

/**
 * Opens the runs behind a datum: one run in the trajectory viewer (a reference-harness judge file
 * without a trajectory beside it in an editor), several in Triage narrowed to them.
 */
export async function openRuns(opens: string[], label: string): Promise<void> {
  if (opens.length === 1) {
    const [one] = opens;
    if (one.endsWith('_eval_judge.json')) await vscode.commands.executeCommand('vscode.open', vscode.Uri.file(one));
    else await vscode.commands.executeCommand('expbench.trajectory.open', { uri: one });
    return;
  }
  await vscode.commands.executeCommand('expbench.trajectory.triage', { runs: opens, label });
}

/**
 * The Results view (issue 29, docs/results.md): "EXP-Bench: Show Results", "EXP-Bench: Export
 * Figures…" ({dir}: no dialog) and "EXP-Bench: Results: Follow Folder or Run Set…" ({dir}). The
 * view follows `expbench.sessionsDir` until a folder is chosen.
 */
export function activateResults(context: vscode.ExtensionContext, register: CommandRegistrar, tasks: () => Promise<readonly Task[]>): ResultsFeature {
  const panel = new ResultsPanel(context.extensionUri, { tasks, defaultDir: sessionsDir, state: context.workspaceState, openRuns });
  const setting = onDidChange(['sessionsDir'], () => void panel.defaultChanged());
  const commands = register([
    { id: SHOW_RESULTS_COMMAND, async execute(): Promise<string> { panel.show(); await panel.refresh(); return panel.posted?.type ?? 'status'; } },
    { id: EXPORT_FIGURES_COMMAND, execute: (arg?: { dir?: string }) => panel.exportFigures(arg?.dir) },
    {
      id: FOLLOW_RESULTS_COMMAND,
      async execute(arg?: { dir?: string | null }): Promise<string | undefined> {
        if (arg && 'dir' in arg) { await panel.follow(arg.dir ?? undefined); panel.show(); return panel.sourceDir(); }
        panel.show();
        return panel.chooseSource();
      },
    },
  ]);
  return { panel, dispose: () => { setting.dispose(); for (const d of commands) d.dispose(); panel.dispose(); } };
}
