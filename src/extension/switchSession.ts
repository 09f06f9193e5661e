import * as path from 'node:path';
import * as vscode from 'vscode';
import { log } from '../core/log';
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
 * `beforeSwitch` agreed. @returns false when it was stopped
 */
export async function openSessionFolder(sessionDir: string, nextTaskId: string, deps: OpenTaskDeps = {}): Promise<boolean> {
  if (deps.beforeSwitch && !(await deps.beforeSwitch(nextTaskId))) return false;
  await vscode.commands.executeCommand('vscode.openFolder', vscode.Uri.file(path.join(sessionDir, 'workspace')), { forceNewWindow: false });
  return true;
}

/** Shows a failure in words, with a "Show Log" button (the log has the full message). */
export async function showFailure(what: string, e: unknown): Promise<void> {
  logger.error(`${what}: ${errorMessage(e)}`);
  const pick = await vscode.window.showErrorMessage(`EXP-Bench: ${what}: ${errorInWords(e)}`, 'Show Log');
  if (pick === 'Show Log') showLog();
}
