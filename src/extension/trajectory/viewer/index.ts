import * as vscode from 'vscode';
import type { CommandRegistrar } from '../../commands';
import { handleViewerUri, viewerCommands } from './commands';
import { defaultReviewFolder, viewerExtras } from './extras';
import { pinsFor } from '../../../core/viewer/pins';
import type { Task } from '../../../core/tasks/types';
import { setting } from '../../settings';
import { TrajectoryEditorProvider } from './provider';

/** What the workbench hands the activation stage and the tests. */
export interface TrajectoryViewer extends vscode.Disposable {
  /** The custom editor `expbench.trajectory` (the activation stage's registration forwards to it). */
  provider: TrajectoryEditorProvider;
  /** The extension's `vscode://` links (`/trajectory?uri=…&step=N`). */
  handleUri(uri: vscode.Uri): Promise<void>;
}

/**
 * The trajectory viewer (issue 17): the custom editor's provider, its commands, and its link
 * handler. The activation stage (src/extension/extension.ts) registers the editor and the URI
 * handler and forwards to these once the workbench has loaded.
 */
export function activateTrajectoryViewer(context: vscode.ExtensionContext, register: CommandRegistrar, deps: { findTask?: (id: string) => Promise<Task | undefined> } = {}): TrajectoryViewer {
  // pins: the judge's verdicts and the monitor's flags on the steps that caused them (src/core/viewer/pins.ts)
  const extras = viewerExtras({
    reviewFolder: defaultReviewFolder, extensionId: context.extension.id, pins: (_file, t) => pinsFor(t),
    findTask: deps.findTask, prices: () => setting('llm.prices'),
  });
  const provider = new TrajectoryEditorProvider(context.extensionUri, extras);
  const commands = register(viewerCommands(provider, extras));
  return {
    provider,
    handleUri: (uri) => handleViewerUri(uri),
    dispose: () => { for (const d of commands) d.dispose(); provider.dispose(); },
  };
}
