import * as vscode from 'vscode';
import type { Task } from '../core/tasks/types';
import type { BriefPanels } from './brief/briefPanel';
import type { CommandSpec } from './commands';
import { plural } from '../core/util/plural';
import { openSessionFolder, type OpenTaskDeps } from './switchSession';
import type { SessionIndex } from './sessionIndex';
import { setting, updateSetting } from './settings';
import type { TaskStore } from './taskStore';
import type { TaskNode } from './taskTree';

/** Resolves a command argument (task id, tree node, or nothing → quick pick) to a task. */
export async function pickTask(store: TaskStore, arg: unknown): Promise<Task | undefined> {
  if (typeof arg === 'string') {
    const t = await store.find(arg);
    if (!t) void vscode.window.showErrorMessage(`EXP-Bench: task ${arg} is not in the configured datasets (${store.dirs().join(', ')}).`);
    return t;
  }
  if (arg && typeof arg === 'object' && (arg as TaskNode).kind === 'task') return (arg as { task: Task }).task;
  const r = await store.get();
  const picked = await vscode.window.showQuickPick(
    r.tasks.map((t) => ({ label: t.id, description: `type ${t.type}`, detail: t.question.slice(0, 200), task: t })),
    { placeHolder: 'Pick an EXP-Bench task', matchOnDetail: true },
  );
  return picked?.task;
}

/**
 * The task-browsing commands: Show Task Brief, Add Dataset Folder…, Refresh, and Resume Session
 * (argument: a task id or tree node; opens the task's newest session from the sessions folder in
 * this window, after `deps.beforeSwitch`).
 */
export function taskCommands(store: TaskStore, briefs: BriefPanels, sessions?: SessionIndex, deps: OpenTaskDeps = {}): CommandSpec[] {
  return [
    {
      id: 'expbench.showTaskBrief',
      async execute(arg?: unknown) {
        const task = await pickTask(store, arg);
        if (task) briefs.show(task);
      },
    },
    {
      id: 'expbench.addDatasetFolder',
      async execute(folder?: vscode.Uri) {
        const uri = folder ?? (await vscode.window.showOpenDialog({ canSelectFolders: true, canSelectFiles: false, openLabel: 'Add Dataset Folder' }))?.[0];
        if (!uri) return;
        const current = setting('datasets');
        if (!current.includes(uri.fsPath)) await updateSetting('datasets', [...current, uri.fsPath]);
        const r = await store.reload();
        void vscode.window.showInformationMessage(`EXP-Bench: ${plural(r.tasks.length, 'task')} loaded, ${plural(r.problems.filter((p) => p.severity !== 'info').length, 'problem')}.`);
      },
    },
    { id: 'expbench.refreshTasks', execute: async () => { await sessions?.refresh(); return store.reload(); } },
    {
      id: 'expbench.resumeSession',
      async execute(arg?: unknown) {
        const task = await pickTask(store, arg);
        if (!task) return undefined;
        const known = await sessions?.latest(task.id);
        if (!known) {
          void vscode.window.showWarningMessage(`EXP-Bench: ${task.id} has no session in ${setting('sessionsDir') || '~/expbench-sessions'}; use "Open Task".`);
          return undefined;
        }
        return (await openSessionFolder(known.root, task.id, deps)) ? known.root : undefined;
      },
    },
  ];
}
