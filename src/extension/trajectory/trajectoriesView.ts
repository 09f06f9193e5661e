import * as path from 'node:path';
import * as vscode from 'vscode';
import { plural } from '../../core/util/plural';
import { formatDuration, sortRows, type TriageRow } from '../../core/viewer/triageTable';
import { openTarget, type RunStore } from './runStore';

export { TRAJECTORIES_VIEW_ID } from '../ids';

/** Tree nodes: a task, then its runs (agent · model); files that could not be read. */
export type TrajectoryNode =
  | { kind: 'task'; task: string | null; rows: TriageRow[] }
  | { kind: 'run'; row: TriageRow }
  | { kind: 'problem'; file: string; reason: string };

const pct = (x: number | null) => (x === null ? '–' : `${Math.round(100 * x)}%`);
const yes = (x: boolean | null) => (x === null ? '–' : x ? '✓' : '✗');

/**
 * The Trajectories tree (view `expbenchTrajectories`): runs by task, each labelled with its agent
 * and model and described by its scores (D, I, E under the store's policy), steps and monitor
 * flags. A run's click opens it in the trajectory viewer (`expbench.trajectory.open` {uri}).
 * Follows the store (its rows change when a session's files or the remembered files change).
 */
export class TrajectoriesTreeProvider implements vscode.TreeDataProvider<TrajectoryNode>, vscode.Disposable {
  private readonly changed = new vscode.EventEmitter<TrajectoryNode | undefined>();
  readonly onDidChangeTreeData = this.changed.event;
  private readonly sub: vscode.Disposable;

  constructor(private readonly store: RunStore) {
    this.sub = store.onDidChange(() => this.changed.fire(undefined));
  }

  async getChildren(node?: TrajectoryNode): Promise<TrajectoryNode[]> {
    if (node?.kind === 'task') return sortRows(sortRows(node.rows, 'model'), 'agent').map((row) => ({ kind: 'run' as const, row }));
    if (node) return [];
    const { rows, skipped } = await this.store.result();
    const byTask = new Map<string, TriageRow[]>();
    for (const r of rows) byTask.set(r.task ?? '', [...(byTask.get(r.task ?? '') ?? []), r]);
    const tasks = [...byTask.entries()].sort(([a], [b]) => (a === '' ? 1 : b === '' ? -1 : a.localeCompare(b)))
      .map(([task, rs]) => ({ kind: 'task' as const, task: task || null, rows: rs }));
    return [...tasks, ...skipped.map((s) => ({ kind: 'problem' as const, file: s.file, reason: s.reason }))];
  }

  getTreeItem(node: TrajectoryNode): vscode.TreeItem {
    if (node.kind === 'task') {
      const item = new vscode.TreeItem(node.task ?? '(task not known)', vscode.TreeItemCollapsibleState.Expanded);
      item.id = `task:${node.task ?? ''}`;
      item.description = plural(node.rows.length, 'run');
      item.iconPath = new vscode.ThemeIcon('beaker');
      item.contextValue = 'expbench.trajectoryTask';
      return item;
    }
    if (node.kind === 'problem') {
      const item = new vscode.TreeItem(path.basename(node.file), vscode.TreeItemCollapsibleState.None);
      item.description = node.reason;
      item.tooltip = `${node.file}\n${node.reason}`;
      item.iconPath = new vscode.ThemeIcon('warning');
      // a remembered file (opened or added, gone or unreadable now) can be removed from the view
      if (this.store.files().includes(node.file)) item.contextValue = 'expbench.trajectoryProblem.file';
      return item;
    }
    const r = node.row;
    const item = new vscode.TreeItem(`${r.agent}${r.model ? ` · ${r.model}` : ''}`, vscode.TreeItemCollapsibleState.None);
    item.id = `run:${r.run}`;
    const scores = r.judge ? `D ${pct(r.D)} I ${pct(r.I)} E ${yes(r.E)}` : 'not judged';
    item.description = [scores, plural(r.steps, 'step'), r.monitorFlags ? `⚑ ${plural(r.monitorFlags, 'flag')}` : ''].filter(Boolean).join(' · ');
    item.tooltip = new vscode.MarkdownString([
      `**${r.agent}${r.model ? ` · ${r.model}` : ''}** (${r.actor}, ${r.source})`, '',
      `${r.run}`, '',
      `D ${pct(r.D)} · I ${pct(r.I)} · E ${yes(r.E)} · C ${yes(r.C)} · All·E✓ ${yes(r.AllE)} (${r.judge ?? 'not judged'}, policy ${r.policy})`,
      `${plural(r.steps, 'step')} · ${r.tokens} tokens · ${r.costUsd === null ? 'no cost' : `${r.costUsd.toFixed(4)} USD`} · ${formatDuration(r.durationMs)}`,
      r.monitorFlags ? `monitor: ${plural(r.monitorFlags, 'flag')}, first at step ${r.firstFlaggedStep}` : 'monitor: no flag',
    ].join('\n\n'));
    item.iconPath = new vscode.ThemeIcon(r.monitorFlags ? 'warning' : r.actor === 'human' ? 'person' : 'hubot');
    item.contextValue = r.source === 'file' ? 'expbench.trajectoryRun.file' : 'expbench.trajectoryRun.session';
    item.command = { command: 'expbench.trajectory.open', title: 'Open Trajectory', arguments: [{ uri: openTarget(r) }] };
    return item;
  }

  dispose(): void {
    this.sub.dispose();
    this.changed.dispose();
  }
}
