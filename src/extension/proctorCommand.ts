import * as path from 'node:path';
import * as vscode from 'vscode';
import { log as coreLog } from '../core/log';
import { startProctoredBaseline, type ProctoredBaseline } from '../core/flows/proctoredBaseline';
import { findEditorInstall } from '../core/proctor';
import { errorMessage } from '../core/util/errors';
import type { CommandSpec } from './commands';
import { newSessionDir } from './openTask';
import { pickTask } from './taskCommands';
import type { TaskStore } from './taskStore';

const log = coreLog('proctor');

/**
 * "Start Proctored Baseline…" (tree item menu or palette; argument: a task id or tree node): asks
 * for the session folder (default: a new one in `expbench.sessionsDir`), then runs what
 * `expbench baseline serve` runs (src/core/flows/proctoredBaseline.ts) in this extension host:
 * prepare, the session channel, the work container with code-server inside, the forwarder on
 * 127.0.0.1 and a free port. Shows the link with its token: "Open in Browser" (openExternal) or
 * "Copy Link". The window keeps serving until it closes (every served session is disposed with
 * the extension).
 */
export function proctoredBaselineCommand(store: TaskStore): CommandSpec & vscode.Disposable {
  const served: ProctoredBaseline[] = [];
  return {
    id: 'expbench.startProctoredBaseline',
    async execute(arg?: unknown) {
      const task = await pickTask(store, arg);
      if (!task) return undefined;
      const sessionDir = await vscode.window.showInputBox({
        title: `Proctored baseline of ${task.id}`,
        prompt: 'Session folder (prepared there when empty; a prepared session of this task is reused)',
        value: newSessionDir(task),
        ignoreFocusOut: true,
      });
      if (!sessionDir) return undefined;
      try {
        const s = await vscode.window.withProgress({ location: vscode.ProgressLocation.Notification, title: `EXP-Bench: proctored window for ${task.id}` },
          async (progress) => startProctoredBaseline({
            task, sessionDir, editor: await findEditorInstall({ codeServerDir: codeServerInstallOf(vscode.env.appRoot) }),
            onProgress: (message) => progress.report({ message }),
          }));
        served.push(s);
        log.info(`proctored window of ${task.id} served at ${s.forwarder.origin} (session ${s.sessionDir})`);
        const pick = await vscode.window.showInformationMessage(
          `EXP-Bench: the proctored window of ${task.id} runs inside its container. Give the baseliner this link (it holds the session token): ${s.url}`,
          'Open in Browser', 'Copy Link');
        if (pick === 'Open in Browser') await vscode.env.openExternal(vscode.Uri.parse(s.url));
        else if (pick === 'Copy Link') await vscode.env.clipboard.writeText(s.url);
        return s.url;
      } catch (e) {
        void vscode.window.showErrorMessage(`EXP-Bench: the proctored window could not start: ${errorMessage(e)}`);
        return undefined;
      }
    },
    dispose() {
      for (const s of served.splice(0)) void s.dispose().catch((e: unknown) => log.warn(`stopping a proctored window: ${errorMessage(e)}`));
    },
  };
}

/**
 * The code-server install this window runs from, when it is one (`vscode.env.appRoot` is
 * `<install>/node_modules/code-server/lib/vscode`): the proctored container mounts the same
 * install. Undefined otherwise (findEditorInstall then uses $EXPBENCH_CODE_SERVER_DIR or
 * `.cache/tools/code-server`).
 */
export function codeServerInstallOf(appRoot: string): string | undefined {
  const parts = path.resolve(appRoot).split(path.sep);
  const n = parts.length;
  return n > 4 && parts.slice(n - 4).join('/') === 'node_modules/code-server/lib/vscode' ? parts.slice(0, n - 4).join(path.sep) || path.sep : undefined;
}

/**
 * The status bar item of researcher mode: this window is VS Code on the host, which can read the
 * session's private part and the pristine clones, so it says "Not proctored"; shown while the
 * window holds a task session.
 */
export function notProctoredStatus(hasSession: Promise<boolean>): vscode.Disposable {
  const item = vscode.window.createStatusBarItem('expbench.notProctored', vscode.StatusBarAlignment.Left, 50);
  item.name = 'EXP-Bench: Not Proctored';
  item.text = '$(unlock) Not proctored';
  item.tooltip = 'Researcher mode: this VS Code runs on the host and can read the task\'s answers. For a human baseline use "EXP-Bench: Start Proctored Baseline…" (or expbench baseline serve): its editor runs inside the task container.';
  item.command = 'expbench.startProctoredBaseline';
  void hasSession.then((yes) => { if (yes) item.show(); }, () => undefined);
  return item;
}
