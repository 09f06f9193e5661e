import * as vscode from 'vscode';
import { log } from '../core/log';
import { BRIEF_VIEW_TYPE, BriefSerializer } from './brief/briefPanel';
import { registerCommands } from './commands';
import { createLogChannel } from './logger';
import { taskCommands } from './taskCommands';
import { TaskStore } from './taskStore';
import { TaskTreeProvider } from './taskTree';

const logger = log('activate');

/**
 * The composition root: builds each feature with plain constructors and puts every disposable on
 * `context.subscriptions`. Activation does no I/O beyond registering (datasets load lazily when
 * the tree or a command first needs them). Returns the API used by the extension's own tests.
 */
export function activate(context: vscode.ExtensionContext): ExtensionApi {
  const started = performance.now();
  const channel = createLogChannel();
  const store = new TaskStore();
  const tree = new TaskTreeProvider(store);
  context.subscriptions.push(
    channel, store, tree,
    vscode.window.createTreeView('expbench.tasks', { treeDataProvider: tree, showCollapseAll: true }),
    vscode.window.registerWebviewPanelSerializer(BRIEF_VIEW_TYPE, new BriefSerializer((id) => store.find(id), context.extensionUri)),
    ...registerCommands(taskCommands(store, context.extensionUri)),
  );
  const activationMs = performance.now() - started;
  logger.info(`activated in ${activationMs.toFixed(1)} ms`);
  return { store, activationMs };
}

export function deactivate(): void {
  // everything is disposed through context.subscriptions
}

/** What `activate` returns (for the extension's own tests and benchmarks). */
export interface ExtensionApi {
  store: TaskStore;
  /** Time spent in activate(), ms. */
  activationMs: number;
}
