import * as os from 'node:os';
import * as path from 'node:path';
import { randomBytes } from 'node:crypto';
import * as vscode from 'vscode';
import { isExpBenchError } from '../core/errors';
import { log } from '../core/log';
import { writeSessionMarker } from '../core/session/marker';
import type { Task } from '../core/tasks/types';
import { prepareSession } from '../core/workspace/prepare';
import type { CommandSpec } from './commands';
import { pickTask } from './taskCommands';
import type { TaskStore } from './taskStore';

const logger = log('openTask');

/** The folder new sessions go to: setting `expbench.sessionsDir`, default `~/expbench-sessions`. */
export function sessionsDir(): string {
  const s = vscode.workspace.getConfiguration('expbench').get<string>('sessionsDir', '');
  return s ? s.replace(/^~(?=$|[\\/])/, os.homedir()) : path.join(os.homedir(), 'expbench-sessions');
}

/** A new session folder name: the task id with `/` → `_`, plus a short random suffix. */
export function newSessionDir(task: Task): string {
  return path.join(sessionsDir(), `${task.id.replace(/[/\\]/g, '_')}-${randomBytes(3).toString('hex')}`);
}

/**
 * Asks for the task's repository: `code_url` (or a bundled repository, or `reproduce_eval.code`)
 * prefilled; otherwise a URL or a folder chosen by the user.
 */
async function askSource(task: Task): Promise<string | undefined> {
  const known = task.paper?.localRepo ?? task.paper?.codeUrl;
  const suggestion = known ?? task.paper?.suggestedCodeUrl ?? '';
  const pickFolder = 'Choose a local folder or clone…';
  const choice = await vscode.window.showQuickPick(
    [...(suggestion ? [{ label: suggestion, description: known ? 'from the task' : 'suggested (reproduce_eval.code)' }] : []),
      { label: 'Enter a git URL…' }, { label: pickFolder }],
    { placeHolder: `Repository for ${task.id}${task.paper?.codeUrl ? '' : ' (the paper list has no code_url)'}`, ignoreFocusOut: true },
  );
  if (!choice) return undefined;
  if (choice.label === pickFolder) {
    return (await vscode.window.showOpenDialog({ canSelectFolders: true, canSelectFiles: false, openLabel: 'Use as the task repository' }))?.[0]?.fsPath;
  }
  if (choice.label === 'Enter a git URL…') {
    return vscode.window.showInputBox({ prompt: 'Git URL of the paper repository', value: suggestion, ignoreFocusOut: true });
  }
  return choice.label;
}

/** Options of "Open Task" for tests and scripts (all optional; given ones skip their dialog). */
export interface OpenTaskOptions {
  /** Repository: git URL, local clone or folder. Default: asked (prefilled from the task). */
  source?: string;
  /** Commit to pin; default the source's HEAD. */
  commit?: string;
  /** Session folder to create (must be absent or empty). Default: {@link newSessionDir}. */
  outDir?: string;
  /** false: prepare only, do not open the workspace in the window (default true). */
  open?: boolean;
  /** Same as `open` (older name). */
  openWindow?: boolean;
}

/**
 * Normalises the command's arguments: `(taskIdOrNode, options?)` or one object
 * `{ taskId, source?, commit?, outDir?, open? }`. With the object form and no `source`, the task's
 * own repository (`local_repo`, else `code_url`) is used without asking, when it has one.
 */
function readArgs(arg: unknown, opts: OpenTaskOptions | undefined): { target: unknown; opts: OpenTaskOptions; scripted: boolean } {
  if (arg && typeof arg === 'object' && typeof (arg as { taskId?: unknown }).taskId === 'string') {
    const { taskId, ...rest } = arg as OpenTaskOptions & { taskId: string };
    return { target: taskId, opts: { ...rest, ...opts }, scripted: true };
  }
  return { target: arg, opts: opts ?? {}, scripted: false };
}

/**
 * Command "Open Task": prepares a pinned, masked session (cancellable progress), then opens its
 * workspace in a window (the brief opens beside it there).
 * Arguments: none (pick), a task id or tree node (+ {@link OpenTaskOptions}), or one object
 * `{ taskId, source?, commit?, outDir?, open? }` (tests and scripts: no dialog when the task has a
 * repository or `source` is given).
 * @returns the session folder, or undefined when cancelled or failed (the error is shown)
 */
export function openTaskCommand(store: TaskStore): CommandSpec {
  return {
    id: 'expbench.openTask',
    async execute(arg?: unknown, options?: OpenTaskOptions) {
      const { target, opts, scripted } = readArgs(arg, options);
      const task = await pickTask(store, target);
      if (!task) return undefined;
      const known = scripted ? task.paper?.localRepo ?? task.paper?.codeUrl : undefined;
      const source = opts.source ?? known ?? (await askSource(task));
      if (!source) return undefined;
      const outDir = opts.outDir ?? newSessionDir(task);
      try {
        const manifest = await vscode.window.withProgress(
          { location: vscode.ProgressLocation.Notification, title: `EXP-Bench: preparing ${task.id}`, cancellable: true },
          async (progress, token) => {
            const ac = new AbortController();
            const sub = token.onCancellationRequested(() => ac.abort());
            try {
              const m = await prepareSession({ task, source, commit: opts.commit, outDir, signal: ac.signal,
                onProgress: (p) => progress.report({ message: p.message }) });
              await writeSessionMarker(outDir, task);
              return m;
            } finally {
              sub.dispose();
            }
          });
        logger.info(`prepared ${task.id} at ${manifest.commit} in ${outDir}`);
        if (opts.open !== false && opts.openWindow !== false) {
          await vscode.commands.executeCommand('vscode.openFolder', vscode.Uri.file(path.join(outDir, 'workspace')), { forceNewWindow: false });
        }
        return outDir;
      } catch (e) {
        if (isExpBenchError(e, 'CANCELLED')) {
          void vscode.window.showInformationMessage(`EXP-Bench: preparation of ${task.id} cancelled; nothing was left in ${outDir}.`);
          return undefined;
        }
        const msg = e instanceof Error ? e.message : String(e);
        logger.error(`Open Task ${task.id}: ${msg}`);
        void vscode.window.showErrorMessage(`EXP-Bench: cannot open ${task.id}: ${msg}`);
        return undefined;
      }
    },
  };
}
