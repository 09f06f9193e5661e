import * as os from 'node:os';
import * as path from 'node:path';
import { randomBytes } from 'node:crypto';
import * as vscode from 'vscode';
import { isExpBenchError } from '../core/errors';
import { log } from '../core/log';
import { writeSessionMarker } from '../core/session/marker';
import type { Task } from '../core/tasks/types';
import { prepareTask, resolveTaskPin } from '../core/flows/prepareTask';
import type { CommandSpec } from './commands';
import { withCancellableProgress } from './progress';
import { pickTask } from './taskCommands';
import { setting } from './settings';
import type { TaskStore } from './taskStore';
import type { PrepareStep } from '../core/workspace/prepare';
import { openSessionFolder, showFailure, type OpenTaskDeps } from './switchSession';
import { shownPath } from './shownPath';

const logger = log('openTask');

/** The folder new sessions go to: setting `expbench.sessionsDir`, default `~/expbench-sessions`. */
export function sessionsDir(): string {
  const s = setting('sessionsDir');
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

/** The preparation's steps as the progress notification names them (core steps: src/core/workspace/prepare.ts). */
export const STEP_WORDS: Record<PrepareStep, string> = {
  source: 'Step 1 of 4: getting the repository', tree: 'Step 2 of 4: listing its files', mask: 'Step 3 of 4: masking',
  workspace: 'Step 4 of 4: writing the workspace', finish: 'Prepared',
};

/** A progress line: the step's words, then the core's message when it adds something. */
function stepText(step: PrepareStep, message: string): string {
  if (step === 'finish') return 'Prepared; opening the workspace (the window reloads)…';
  const words = STEP_WORDS[step];
  return words.endsWith(message) ? words : `${words}: ${message}`;
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
 * repository or `source` is given; no question about the window's running container either).
 * The progress notification names each step ({@link STEP_WORDS}); a failure is shown in words
 * with "Show Log" (the log has the full message).
 * @returns the session folder, or undefined when cancelled or failed (the error is shown)
 */
export function openTaskCommand(store: TaskStore, deps: OpenTaskDeps = {}): CommandSpec {
  return {
    id: 'expbench.openTask',
    async execute(arg?: unknown, options?: OpenTaskOptions) {
      const { target, opts, scripted } = readArgs(arg, options);
      const task = await pickTask(store, target);
      if (!task) return undefined;
      // A curation file's repository is the task's pin: no dialog then (resolveTaskPin throws on a bad file).
      const pinned = await resolveTaskPin(task).then((r) => (r.sourceFrom === 'curation' ? r.source : undefined), () => undefined);
      const known = pinned ?? (scripted ? task.paper?.localRepo ?? task.paper?.codeUrl : undefined);
      const source = opts.source ?? known ?? (await askSource(task));
      if (!source) return undefined;
      const outDir = opts.outDir ?? newSessionDir(task);
      try {
        const manifest = await withCancellableProgress(`EXP-Bench: opening ${task.id}`, async (report, signal) => {
          // a local source is named as the window names paths (by its folder, ~), not by where this machine keeps it
          const shown = path.isAbsolute(source) ? shownPath(source) : source;
          const named = (text: string): string => (shown === source ? text : text.split(source).join(shown));
          report(`${STEP_WORDS.source} (${shown})…`);
          const { manifest: m } = await prepareTask({ task, source, commit: opts.commit, outDir, signal, onProgress: (p) => report(named(stepText(p.step, p.message))) });
          await writeSessionMarker(outDir, task);
          return m;
        });
        logger.info(`prepared ${task.id} at ${manifest.commit} (pin: ${manifest.pin?.from ?? 'unknown'}, image ${manifest.image}: ${manifest.environment?.from ?? 'unknown'}) in ${outDir}`);
        deps.onPrepared?.(outDir);
        if (opts.open !== false && opts.openWindow !== false) {
          if (!(await openSessionFolder(outDir, task.id, scripted ? {} : deps))) {
            void vscode.window.showInformationMessage(`EXP-Bench: ${task.id} is prepared in ${outDir}; "Resume Session" in the EXP-Bench view opens it.`);
          }
        }
        return outDir;
      } catch (e) {
        if (isExpBenchError(e, 'CANCELLED')) {
          void vscode.window.showInformationMessage(`EXP-Bench: preparation of ${task.id} cancelled; nothing was left in ${outDir}.`);
          return undefined;
        }
        void showFailure(`cannot open ${task.id}`, e);
        return undefined;
      }
    },
  };
}
