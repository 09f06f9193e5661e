import * as path from 'node:path';
import * as vscode from 'vscode';
import { isRunSetFolder, readRunSet, RUN_SET_STATE } from '../../core/figures/runSet';

/**
 * What the Results view follows: a folder of sessions or harness judge files, or a run set
 * (runs.md of issue 27). `inputs()` gives the folders to report on now; `onDidChange` fires (debounced)
 * when something they hold changes on disk: a judge record written, a unit finished.
 */
export interface ResultsSource extends vscode.Disposable {
  /** What the view shows as its source (the folder's name, `run set <name>`); the folder itself is `dir`. */
  readonly label: string;
  /** The folder or run set folder, absolute. */
  readonly dir: string;
  inputs(): Promise<{ inputs: string[]; note?: string }>;
  readonly onDidChange: vscode.Event<void>;
}

/** Watches `patterns` under `dir` and fires one event after `debounceMs` of quiet. */
class Watch implements vscode.Disposable {
  private readonly emitter = new vscode.EventEmitter<void>();
  readonly event = this.emitter.event;
  private readonly watchers: vscode.FileSystemWatcher[];
  private timer: NodeJS.Timeout | undefined;

  constructor(dir: string, patterns: string[], private readonly debounceMs: number) {
    this.watchers = patterns.map((p) => vscode.workspace.createFileSystemWatcher(new vscode.RelativePattern(vscode.Uri.file(dir), p)));
    const on = () => { if (this.timer) clearTimeout(this.timer); this.timer = setTimeout(() => { this.timer = undefined; this.emitter.fire(); }, this.debounceMs); };
    for (const w of this.watchers) { w.onDidCreate(on); w.onDidChange(on); w.onDidDelete(on); }
  }

  dispose(): void {
    if (this.timer) clearTimeout(this.timer);
    for (const w of this.watchers) w.dispose();
    this.emitter.dispose();
  }
}

/** A folder of sessions (at any depth) and/or reference-harness judge files, as `expbench report DIR` reads it. */
export class FolderSource implements ResultsSource {
  private readonly watch: Watch;
  readonly onDidChange: vscode.Event<void>;
  readonly label: string;

  constructor(readonly dir: string, debounceMs = 500) {
    this.label = path.basename(dir) || dir;
    this.watch = new Watch(dir, ['**/private/{judge/latest.json,events.jsonl,verify/latest.json}', '**/*_eval_judge.json'], debounceMs);
    this.onDidChange = this.watch.event;
  }

  async inputs(): Promise<{ inputs: string[] }> { return { inputs: [this.dir] }; }
  dispose(): void { this.watch.dispose(); }
}

/**
 * A run set folder: the session folders of its finished units (`unit.finished` `done`), read
 * through src/core/figures/runSet.ts; the note says how many of the planned units have finished.
 * Follows the state file and the units' judge records.
 */
export class RunSetSource implements ResultsSource {
  private readonly watch: Watch;
  readonly onDidChange: vscode.Event<void>;
  label: string;

  constructor(readonly dir: string, debounceMs = 500) {
    this.label = `run set ${path.basename(dir)}`;
    this.watch = new Watch(dir, [RUN_SET_STATE, 'units/*/private/judge/latest.json'], debounceMs);
    this.onDidChange = this.watch.event;
  }

  async inputs(): Promise<{ inputs: string[]; note: string }> {
    const rs = await readRunSet(this.dir);
    this.label = `run set ${rs.name}`;
    const done = rs.units.filter((u) => u.status === 'done');
    const failed = rs.units.filter((u) => u.status === 'failed').length;
    return { inputs: done.map((u) => u.dir), note: `${done.length} of ${rs.units.length} units finished${failed ? `, ${failed} failed` : ''}` };
  }

  dispose(): void { this.watch.dispose(); }
}

/** The source for `dir`: a run set when it holds a run-set state, else a folder. */
export async function sourceFor(dir: string, debounceMs?: number): Promise<ResultsSource> {
  return (await isRunSetFolder(dir)) ? new RunSetSource(dir, debounceMs) : new FolderSource(dir, debounceMs);
}
