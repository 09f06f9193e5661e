import * as vscode from 'vscode';
import type { CommandRegistrar } from '../../commands';
import { repoAtStepCommands } from './commands';
import { STEP_SCHEME, StepFileProvider } from './documents';
import type { SourceDeps } from './source';

export { COMPARE_STEPS_COMMAND, OPEN_REPOSITORY_COMMAND, SHOW_STEP_DIFF_COMMAND, type OpenedRepository } from './commands';

/**
 * The repository at a step (issue 17, part 3): the read-only document provider of materialised
 * trees and the three commands (commands.ts). Returns one disposable for all of it.
 */
export function activateRepoAtStep(register: CommandRegistrar, deps: SourceDeps): vscode.Disposable {
  const parts = [
    vscode.workspace.registerTextDocumentContentProvider(STEP_SCHEME, new StepFileProvider()),
    ...register(repoAtStepCommands(deps)),
  ];
  return { dispose: () => { for (const d of parts.splice(0)) d.dispose(); } };
}
