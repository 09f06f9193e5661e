import * as vscode from 'vscode';

/** Typed access to the `expbench.*` settings (all declared in package.json `contributes.configuration`). */
export interface Settings {
  /** Dataset folders with EXP-Bench task files and paper lists. */
  datasets: string[];
  /** Show the bundled sample task in the tree. */
  showSample: boolean;
}

export function readSettings(): Settings {
  const c = vscode.workspace.getConfiguration('expbench');
  return {
    datasets: c.get<string[]>('datasets', []),
    showSample: c.get<boolean>('showSample', true),
  };
}

/** Calls `listener` when any `expbench.*` setting changes. */
export function onSettingsChanged(listener: () => void): vscode.Disposable {
  return vscode.workspace.onDidChangeConfiguration((e) => { if (e.affectsConfiguration('expbench')) listener(); });
}
