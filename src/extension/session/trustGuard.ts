import * as vscode from 'vscode';
import { log } from '../../core/log';
import { errorMessage } from '../../core/util/errors';
import { isSessionWindowFile, writeSessionWindow } from '../../core/session/window';

const logger = log('trust');

/** The button of {@link warnIfTrustedPlainFolder}. */
export const REOPEN_IN_SESSION_WINDOW = 'Reopen in Session Window';

/**
 * In a window on the task session at `sessionRoot`: when the window is trusted although it was not
 * opened through the session's window file (someone opened `workspace/` as a plain folder, which
 * VS Code trusts whenever a parent folder is trusted), says so in a modal warning and offers to
 * reopen the session through its window file, where it is in Restricted Mode until the user trusts
 * this session (`core/session/window.ts`). In the session window itself, or in Restricted Mode,
 * it does nothing: a trusted session window is the user's own choice.
 * @returns true when it warned
 */
export async function warnIfTrustedPlainFolder(sessionRoot: string): Promise<boolean> {
  if (!vscode.workspace.isTrusted) return false;
  if (isSessionWindowFile(vscode.workspace.workspaceFile?.fsPath, sessionRoot)) return false;
  logger.warn(`the session ${sessionRoot} is open as a trusted plain folder`);
  const pick = await vscode.window.showWarningMessage(
    'EXP-Bench: this session\'s workspace is open as a plain folder, and VS Code trusts it (a folder inside a trusted folder is trusted). ' +
    'In a trusted window VS Code\'s Git, tasks and workspace settings act on what the solver or the agent wrote.',
    { modal: true, detail: 'Reopen the session in its session window (Restricted Mode until you trust this session), or close the folder.' },
    REOPEN_IN_SESSION_WINDOW,
  );
  if (pick === REOPEN_IN_SESSION_WINDOW) {
    try {
      await vscode.commands.executeCommand('vscode.openFolder', vscode.Uri.file(await writeSessionWindow(sessionRoot)), { forceNewWindow: false });
    } catch (e) {
      void vscode.window.showErrorMessage(`EXP-Bench: cannot reopen the session: ${errorMessage(e)}`);
    }
  }
  return true;
}
