import * as path from 'node:path';
import * as vscode from 'vscode';
import type { Problem, Task } from '../core/tasks/types';
import { plural } from '../core/util/plural';
import type { KnownSession, SessionIndex } from './sessionIndex';
import { STATUS_TEXT, taskLabel, type TaskStatus } from './taskLabel';
import type { TaskStore } from './taskStore';

/** Tree nodes: conference → paper → task, plus file-level problems that belong to no task. */
export type TaskNode =
  | { kind: 'conference'; conference: string; tasks: Task[]; problems: Problem[] }
  | { kind: 'paper'; conference: string; paperId: string; tasks: Task[]; problems: Problem[] }
  | { kind: 'task'; task: Task; session?: KnownSession }
  | { kind: 'problem'; problem: Problem };

const TYPE_ICON: Record<number, string> = { 1: 'file-code', 2: 'file-symlink-file', 3: 'book' };
const TYPE_LABEL: Record<number, string> = {
  1: 'type 1: masked_source removed',
  2: 'type 2: source removed',
  3: 'type 3: README only masked; judged against the method',
};

const NO_ANSWER_LABEL = 'no_answer: the dataset\'s extraction found no implementation of this experiment in the repository (no requirements)';
const STATUS_ICON: Partial<Record<TaskStatus, vscode.ThemeIcon>> = {
  opened: new vscode.ThemeIcon('circle-large-outline', new vscode.ThemeColor('charts.blue')),
  'in-progress': new vscode.ThemeIcon('play-circle', new vscode.ThemeColor('charts.yellow')),
  submitted: new vscode.ThemeIcon('pass-filled', new vscode.ThemeColor('charts.green')),
  'gave-up': new vscode.ThemeIcon('circle-slash'),
};

/** The "Tasks" tree of the EXP-Bench view container (view id `expbench.tasks`). */
export class TaskTreeProvider implements vscode.TreeDataProvider<TaskNode>, vscode.Disposable {
  private readonly changed = new vscode.EventEmitter<TaskNode | undefined>();
  readonly onDidChangeTreeData = this.changed.event;
  private readonly sub: vscode.Disposable;

  constructor(private readonly store: TaskStore, private readonly sessions?: SessionIndex) {
    const subs = [store.onDidChange(() => this.changed.fire(undefined)), ...(sessions ? [sessions.onDidChange(() => this.changed.fire(undefined))] : [])];
    this.sub = vscode.Disposable.from(...subs);
  }

  async getChildren(node?: TaskNode): Promise<TaskNode[]> {
    const r = await this.store.get();
    if (!node) {
      const byConf = group(r.tasks, (t) => t.conference);
      const nodes: TaskNode[] = [...byConf.entries()].map(([conference, tasks]) => ({
        kind: 'conference', conference, tasks,
        problems: r.problems.filter((p) => tasks.some((t) => t.file === p.file)),
      }));
      const orphan = r.problems.filter((p) => !r.tasks.some((t) => t.file === p.file));
      return [...nodes, ...orphan.map((problem) => ({ kind: 'problem' as const, problem }))];
    }
    if (node.kind === 'conference') {
      return [...group(node.tasks, (t) => t.paperId).entries()].map(([paperId, tasks]) => ({
        kind: 'paper', conference: node.conference, paperId, tasks,
        problems: node.problems.filter((p) => p.file === tasks[0].file),
      }));
    }
    if (node.kind === 'paper') {
      const known = await this.sessions?.byTask().catch(() => undefined);
      return node.tasks.map((task) => ({ kind: 'task', task, session: known?.get(task.id)?.[0] }));
    }
    return [];
  }

  getTreeItem(node: TaskNode): vscode.TreeItem {
    switch (node.kind) {
      case 'conference': {
        const item = new vscode.TreeItem(node.conference, vscode.TreeItemCollapsibleState.Collapsed);
        const papers = new Set(node.tasks.map((t) => t.paperId)).size;
        item.description = `${plural(papers, 'paper')} · ${plural(node.tasks.length, 'task')}`;
        item.iconPath = new vscode.ThemeIcon('library');
        item.contextValue = 'conference';
        return item;
      }
      case 'paper': {
        const title = node.tasks[0].paper?.title;
        const item = new vscode.TreeItem(title ? `${node.paperId} ${title}` : node.paperId, vscode.TreeItemCollapsibleState.Collapsed);
        item.description = plural(node.tasks.length, 'task');
        item.tooltip = tooltip([title ?? node.paperId, node.tasks[0].file, ...problemLines(node.problems)]);
        item.iconPath = node.problems.some((p) => p.severity !== 'info')
          ? new vscode.ThemeIcon('warning', new vscode.ThemeColor('problemsWarningIcon.foreground'))
          : new vscode.ThemeIcon('file-text');
        item.contextValue = 'paper';
        return item;
      }
      case 'task': {
        const t = node.task;
        const serious = t.problems.filter((p) => p.severity !== 'info');
        const status: TaskStatus = node.session?.status ?? 'not-started';
        // The essentials first (the default sidebar width cuts the end); the question follows in the
        // label, not the description, so that the tree's find-as-you-type matches it.
        const item = new vscode.TreeItem(`${taskLabel(t, status, serious.length)}: ${oneLine(t.question, 90)}`, vscode.TreeItemCollapsibleState.None);
        item.id = t.id;
        item.tooltip = tooltip([t.id, TYPE_LABEL[t.type], ...(t.noAnswer ? [NO_ANSWER_LABEL] : []), `status: ${STATUS_TEXT[status]}${node.session ? ` (${node.session.root})` : ''}`,
          '', oneLine(t.question, 300), ...problemLines(t.problems)]);
        item.iconPath = serious.length
          ? new vscode.ThemeIcon('warning', new vscode.ThemeColor('problemsWarningIcon.foreground'))
          : STATUS_ICON[status] ?? new vscode.ThemeIcon(TYPE_ICON[t.type]);
        item.contextValue = node.session ? 'task-session' : 'task';
        item.command = { command: 'expbench.showTaskBrief', title: 'Show Task Brief', arguments: [t.id] };
        return item;
      }
      case 'problem': {
        const p = node.problem;
        const item = new vscode.TreeItem(`${path.basename(p.file)}${p.pointer ? '#' + p.pointer : ''}`, vscode.TreeItemCollapsibleState.None);
        item.description = p.message;
        item.tooltip = tooltip([`${p.severity}: ${p.message}`, `${p.file}${p.pointer ? '#' + p.pointer : ''}`]);
        item.iconPath = new vscode.ThemeIcon(p.severity === 'error' ? 'error' : 'warning', new vscode.ThemeColor(p.severity === 'error' ? 'problemsErrorIcon.foreground' : 'problemsWarningIcon.foreground'));
        item.contextValue = 'problem';
        return item;
      }
    }
  }

  dispose(): void {
    this.sub.dispose();
    this.changed.dispose();
  }
}

function group<T>(xs: T[], key: (x: T) => string): Map<string, T[]> {
  const m = new Map<string, T[]>();
  for (const x of xs) m.set(key(x), [...(m.get(key(x)) ?? []), x]);
  return m;
}

function problemLines(ps: Problem[]): string[] {
  const shown = ps.filter((p) => p.severity !== 'info');
  return shown.length ? ['', ...shown.slice(0, 10).map((p) => `⚠ ${p.pointer}: ${p.message}`), ...(shown.length > 10 ? [`… ${shown.length - 10} more`] : [])] : [];
}

function tooltip(lines: string[]): string {
  return lines.join('\n');
}

function oneLine(s: string, max: number): string {
  const x = s.replace(/\s+/g, ' ').trim();
  return x.length > max ? x.slice(0, max - 1) + '…' : x;
}
