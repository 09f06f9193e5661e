import * as vscode from 'vscode';
import type { CommandRegistrar } from '../commands';
import { RunStore } from './runStore';
import { TrajectoriesTreeProvider } from './trajectoriesView';
import { triageCommands } from './triageCommands';
import { TriagePanel } from './triagePanel';

/** What the workbench hands the activation stage (the Trajectories view's data) and the tests. */
export interface TriageFeature extends vscode.Disposable {
  store: RunStore;
  tree: TrajectoriesTreeProvider;
  panel: TriagePanel;
}

/**
 * Triage across runs (issue 17): the run store (sessions under `expbench.sessionsDir`, remembered
 * trajectory files), the Trajectories tree's data, the triage table and Compare Runs.
 */
export function activateTriage(context: vscode.ExtensionContext, register: CommandRegistrar): TriageFeature {
  const store = new RunStore(context.globalState);
  const tree = new TrajectoriesTreeProvider(store);
  const panel = new TriagePanel(context.extensionUri, store);
  const commands = register(triageCommands(store, panel, context.extensionUri));
  return { store, tree, panel, dispose: () => { for (const d of commands) d.dispose(); panel.dispose(); tree.dispose(); store.dispose(); } };
}
