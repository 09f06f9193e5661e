import * as vscode from 'vscode';
import type { SessionService } from '../../core/flows/sessionService';
import { log } from '../../core/log';
import { DEFAULT_IMAGE } from '../../core/sandbox/images';
import { readTaskSnapshot, sessionRootOf } from '../../core/session/marker';
import { readManifest } from '../../core/workspace/manifest';
import { makePatch } from '../../core/workspace/patch';
import type { BriefPanels } from '../brief/briefPanel';
import type { CommandSpec } from '../commands';
import type { TaskStore } from '../taskStore';
import { registerRecorder, type SessionRecorder } from './recorder';
import { SessionController } from './sessionController';
import { openPatchDiff } from '../gaps/patchDiff';
import type { SubmitHooks } from './submitFlow';
import { errorMessage } from '../../core/util/errors';
import { warnIfTrustedPlainFolder } from './trustGuard';

const logger = log('session');

/** The session of this window, once opened (undefined in a window that is not on a task session). */
export interface ActiveSession {
  controller: SessionController;
  recorder: SessionRecorder;
}

/**
 * When this window's first workspace folder is a prepared session's workspace (it holds the
 * session marker), opens the session: restores its state, shows the brief with the stepper beside
 * the editor, starts recording. A half-prepared session (manifest not complete) is refused with
 * the manifest's own message and never opened as if complete.
 */
export async function openWindowSession(context: vscode.ExtensionContext, service: SessionService, store: TaskStore, hooks: SubmitHooks, briefs: BriefPanels): Promise<ActiveSession | undefined> {
  const folder = vscode.workspace.workspaceFolders?.[0]?.uri.fsPath;
  if (!folder) return undefined;
  const found = await sessionRootOf(folder);
  if (!found) return undefined;
  void warnIfTrustedPlainFolder(found.root);
  try {
    const manifest = await readManifest(found.root);
    const task = (await store.find(manifest.taskId)) ?? (await readTaskSnapshot(found.root));
    if (!task) throw new Error(`task ${manifest.taskId} is neither in the configured datasets nor in the session's private/task.json`);
    const controller = await SessionController.open(service, found.root, task, briefs, manifest.image || DEFAULT_IMAGE, hooks);
    const recorder = registerRecorder(context, controller.session, { clockCommand: 'expbench.toggleClock', onDidChangeFiles: () => void controller.refreshPatch() });
    context.subscriptions.push(controller, recorder);
    logger.info(`session ${found.root} opened for ${task.id}`);
    return { controller, recorder };
  } catch (e) {
    const msg = errorMessage(e);
    logger.error(`cannot open the session in ${found.root}: ${msg}`);
    void vscode.window.showErrorMessage(`EXP-Bench: this window's task session cannot be opened: ${msg}`);
    return undefined;
  }
}

/** Commands that act on this window's session; each says so clearly when there is none. */
export function sessionCommands(get: () => Promise<ActiveSession | undefined>): CommandSpec[] {
  const withSession = (id: string, fn: (s: ActiveSession, ...args: any[]) => unknown): CommandSpec => ({
    id,
    async execute(...args: any[]) {
      const s = await get();
      if (!s) {
        void vscode.window.showWarningMessage('EXP-Bench: this window is not on a task session. Use "EXP-Bench: Open Task" first.');
        return undefined;
      }
      return fn(s, ...args);
    },
  });
  return [
    withSession('expbench.toggleClock', async ({ controller: c }) => {
      const st = c.session.clockStatus;
      if (st === 'not-started') await c.session.startClock();
      else if (st === 'running') await c.session.pauseClock(await vscode.window.showInputBox({ prompt: 'Pause reason (optional)' }) || undefined);
      else if (st === 'paused') await c.session.resumeClock();
      c.push();
    }),
    withSession('expbench.addNote', async ({ controller: c }, text?: string) => {
      const t = text ?? (await vscode.window.showInputBox({ prompt: 'Note (timestamped, kept in the session)' }));
      if (t?.trim()) await c.session.addNote(t);
      c.push();
    }),
    withSession('expbench.runScript', ({ controller: c }) => c.runScript()),
    withSession('expbench.showPatch', async ({ controller: c }) => {
      // a diff (multi-file diff editor, read-only task-start side), never an untitled buffer (issue 14)
      await openPatchDiff(c.layout.workspace, await makePatch(c.layout.workspace));
    }),
    withSession('expbench.showSessionBrief', ({ controller: c }) => c.showBrief()),
    withSession('expbench.removeContainer', async ({ controller: c }) => {
      await c.container.remove();
      void vscode.window.showInformationMessage('EXP-Bench: the task container was removed; the workspace is kept.');
    }),
  ];
}
