// The activation stage (bundle dist/extension.js). VS Code counts loading this file and running
// activate() as the extension's activation time (issue 2: ≤ 50 ms), so it holds only what
// activation must register: the Tasks tree view, the brief panel serializer and a stub per
// contributed command. Everything else (the core, zod, openai, dockerode, simple-git, markdown-it)
// is in dist/workbench.js, loaded on first use: the tree's first rows, a command, a brief panel
// to restore, or at once (after activation returns) in a window opened on a task session.
// Keep this file's imports to `vscode`, `node:path` and ./stage, ./ids (scripts/build.mjs fails
// the build when the activation bundle takes in anything from node_modules or src/core).
import * as path from 'node:path';
import * as vscode from 'vscode';
import { BRIEF_VIEW_TYPE, RUN_SETS_VIEW_ID, SESSION_MARKER_SEGMENTS, TASKS_LISTED_CONTEXT, TASKS_VIEW_ID, TRAJECTORIES_VIEW_ID, TRAJECTORY_VIEW_TYPES } from './ids';
import { CommandRouter, contributedCommands } from './stage/commandRouter';
import { LazyCustomEditor, lazyUriHandler } from './stage/lazyCustomEditor';
import { LazyTreeDataProvider } from './stage/lazyTree';
import type { WorkbenchApi, WorkbenchModule } from './workbench';

/** File name of the workbench bundle, next to this one. */
export const WORKBENCH_BUNDLE = 'workbench.js';

/**
 * Registers the activation-time pieces and returns the {@link ExtensionApi}. Does no I/O except,
 * in a window with a folder, one `stat` of the session marker, started after registering.
 */
export function activate(context: vscode.ExtensionContext): ExtensionApi {
  const started = performance.now();
  let loading: Promise<WorkbenchApi> | undefined;
  let loadMs: number | undefined;
  const router: CommandRouter = new CommandRouter(contributedCommands(context.extension.packageJSON), () => workbench());
  const workbench = (): Promise<WorkbenchApi> => (loading ??= new Promise<WorkbenchApi>((resolve) => {
    const t0 = performance.now();
    const file = path.join(__dirname, WORKBENCH_BUNDLE);
    let mod: WorkbenchModule;
    try {
      mod = require(file) as WorkbenchModule;
    } catch (e) {
      throw new Error(`EXP-Bench could not load ${file}: ${e instanceof Error ? e.message : String(e)} (reinstall the extension, or run \`npm run build\` in a development checkout)`);
    }
    const api = mod.activateWorkbench(context, router.register);
    loadMs = performance.now() - t0;
    resolve(api);
  }));
  const tree = new LazyTreeDataProvider(async () => (await workbench()).tree, (message) => { view.message = message; },
    () => void vscode.commands.executeCommand('setContext', TASKS_LISTED_CONTEXT, true));
  const view = vscode.window.createTreeView(TASKS_VIEW_ID, { treeDataProvider: tree, showCollapseAll: true });
  // the Trajectories view (issue 17): runs by task, agent and model, listed once the workbench loads
  const runs = new LazyTreeDataProvider(async () => (await workbench()).triage.tree, (message) => { runsView.message = message; });
  const runsView = vscode.window.createTreeView(TRAJECTORIES_VIEW_ID, { treeDataProvider: runs, showCollapseAll: true });
  // the Run Sets view (issue 27): run sets and their units, listed once the workbench loads
  const runSets = new LazyTreeDataProvider(async () => (await workbench()).runSets.tree, (message) => { runSetsView.message = message; });
  const runSetsView = vscode.window.createTreeView(RUN_SETS_VIEW_ID, { treeDataProvider: runSets, showCollapseAll: true });
  context.subscriptions.push(
    router, tree, view, runs, runsView, runSets, runSetsView,
    vscode.window.registerWebviewPanelSerializer(BRIEF_VIEW_TYPE, {
      deserializeWebviewPanel: async (panel, state) => {
        // at once, before the workbench bundle loads (the serializer then keeps it until the task is found)
        panel.webview.html = `<!DOCTYPE html><html lang="en"><head><meta charset="UTF-8"><meta http-equiv="Content-Security-Policy" content="default-src 'none'"></head><body><p>Loading the task brief…</p></body></html>`;
        return (await workbench()).briefSerializer.deserializeWebviewPanel(panel, state);
      },
    }),
    // the trajectory viewer (issue 17) and the extension's vscode:// links, forwarded once the workbench loads
    ...TRAJECTORY_VIEW_TYPES.map((viewType) => vscode.window.registerCustomEditorProvider(viewType, new LazyCustomEditor(async () => (await workbench()).trajectoryViewer.provider),
      { webviewOptions: { retainContextWhenHidden: true }, supportsMultipleEditorsPerDocument: true })),
    vscode.window.registerUriHandler(lazyUriHandler(async () => (await workbench()).trajectoryViewer)),
  );
  const folder = vscode.workspace.workspaceFolders?.[0]?.uri;
  if (folder) {
    void Promise.resolve(vscode.workspace.fs.stat(vscode.Uri.joinPath(folder, ...SESSION_MARKER_SEGMENTS)))
      .then(() => workbench(), () => undefined)
      .catch((e: unknown) => void vscode.window.showErrorMessage(e instanceof Error ? e.message : String(e)));
  }
  const activationMs = performance.now() - started;
  return {
    activationMs,
    workbench,
    workbenchLoadMs: () => loadMs,
    unhandledCommands: () => router.unhandled(),
  };
}

export function deactivate(): void {
  // everything is disposed through context.subscriptions
}

/** What `activate` returns (for the extension's own tests and benchmarks). */
export interface ExtensionApi {
  /** Time spent in activate(), ms. */
  activationMs: number;
  /** Loads the workbench (once; later calls return the same promise). Rejects when its bundle cannot be loaded. */
  workbench(): Promise<WorkbenchApi>;
  /** Time to load dist/workbench.js and run its activateWorkbench, ms; undefined until it has loaded. */
  workbenchLoadMs(): number | undefined;
  /** Contributed commands without a handler (empty once the workbench has loaded). */
  unhandledCommands(): string[];
}
