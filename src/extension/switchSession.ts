import * as path from 'node:path';
import * as vscode from 'vscode';
import { log } from '../core/log';
import { writeSessionWindow } from '../core/session/window';
import { errorMessage } from '../core/util/errors';
import { errorInWords } from './errorWords';
import { showLog } from './logger';

const logger = log('openTask');

/** What Open Task and Resume Session need from the window (all optional). */
export interface OpenTaskDeps {
  /**
   * Called before the window leaves its folder for the new session (the window reloads); false
   * stops there (the session stays prepared). The window's session offers to stop its container.
   */
  beforeSwitch?: (nextTaskId: string) => Promise<boolean>;
  /** Called once a session was prepared (the tree's status). */
  onPrepared?: (sessionDir: string) => void;
}

/**
 * Opens the session folder `sessionDir`'s workspace in this window (it reloads), after
 * `beforeSwitch` agreed, through its session window file (`core/session/window.ts`): the window is
 * in Restricted Mode unless the user trusts this session, whatever parent folder is trusted.
 * @returns false when it was stopped
 * @throws ExpBenchError when the window file cannot be written (the session has no workspace, an unsafe folder)
 */
export async function openSessionFolder(sessionDir: string, nextTaskId: string, deps: OpenTaskDeps = {}): Promise<boolean> {
  if (deps.beforeSwitch && !(await deps.beforeSwitch(nextTaskId))) return false;
  const windowFile = await writeSessionWindow(sessionDir);
  logger.info(`opening ${path.join(sessionDir, 'workspace')} through its window file ${windowFile}`);
  await vscode.commands.executeCommand('vscode.openFolder', vscode.Uri.file(windowFile), { forceNewWindow: false });
  return true;
}

/** Shows a failure in words, with a "Show Log" button (the log has the full message). */
export async function showFailure(what: string, e: unknown): Promise<void> {
  logger.error(`${what}: ${errorMessage(e)}`);
  const pick = await vscode.window.showErrorMessage(`EXP-Bench: ${what}: ${errorInWords(e)}`, 'Show Log');
  if (pick === 'Show Log') showLog();
}
