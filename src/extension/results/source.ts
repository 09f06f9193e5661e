import * as path from 'node:path';
import * as vscode from 'vscode';
import { promises as fsp } from 'node:fs';
import { isRunSetFolder, readRunSet, RUN_SET_STATE } from '../../core/figures/runSet';
import { filesFingerprint, sessionsFingerprint } from '../follow/fingerprint';

/**
 * What the Results view follows: a folder of sessions or harness judge files, or a run set
 * (runs.md of issue 27). `inputs()` gives the folders to report on now; `onDidChange` fires (debounced)
 * when VS Code's file watcher reports a change of what they hold (a judge record written, a unit
 * finished); the watcher can miss events, so the view also compares `fingerprint()` (stat only,
 * src/extension/follow/fingerprint.ts) every few seconds while it is visible.
 */
export interface ResultsSource extends vscode.Disposable {
  /** What the view shows as its source (the folder's name, `run set <name>`); the folder itself is `dir`. */
  readonly label: string;
  /** The folder or run set folder, absolute. */
  readonly dir: string;
  inputs(): Promise<{ inputs: string[]; note?: string }>;
  readonly onDidChange: vscode.Event<void>;
  /** A cheap summary (readdir and stat, bounded) that changes when what `inputs()` leads to changes. */
  fingerprint(): Promise<string>;
}

/** How a source follows its folder: `watch: false` leaves VS Code's watcher out (the re-check alone; tests). */
export interface SourceOptions { debounceMs?: number; watch?: boolean }

/** Watches `patterns` under `dir` and fires one event after `debounceMs` of quiet. */
class Watch implements vscode.Disposable {
  private readonly emitter = new vscode.EventEmitter<void>();
  readonly event = this.emitter.event;
  private readonly watchers: vscode.FileSystemWatcher[];
  private timer: NodeJS.Timeout | undefined;

  constructor(dir: string, patterns: string[], private readonly debounceMs: number, watch = true) {
    this.watchers = (watch ? patterns : []).map((p) => vscode.workspace.createFileSystemWatcher(new vscode.RelativePattern(vscode.Uri.file(dir), p)));
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

  constructor(readonly dir: string, o: SourceOptions = {}) {
    this.label = path.basename(dir) || dir;
    this.watch = new Watch(dir, ['**/private/{judge/latest.json,events.jsonl,verify/latest.json}', '**/*_eval_judge.json'], o.debounceMs ?? 500, o.watch);
    this.onDidChange = this.watch.event;
  }

  async inputs(): Promise<{ inputs: string[] }> { return { inputs: [this.dir] }; }
  async fingerprint(): Promise<string> { return (await sessionsFingerprint(this.dir)).fingerprint; }
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

  constructor(readonly dir: string, o: SourceOptions = {}) {
    this.label = `run set ${path.basename(dir)}`;
    this.watch = new Watch(dir, [RUN_SET_STATE, 'units/*/private/judge/latest.json'], o.debounceMs ?? 500, o.watch);
    this.onDidChange = this.watch.event;
  }

  async inputs(): Promise<{ inputs: string[]; note: string }> {
    const rs = await readRunSet(this.dir);
    this.label = `run set ${rs.name}`;
    const done = rs.units.filter((u) => u.status === 'done');
    const failed = rs.units.filter((u) => u.status === 'failed').length;
    return { inputs: done.map((u) => u.dir), note: `${done.length} of ${rs.units.length} units finished${failed ? `, ${failed} failed` : ''}` };
  }

  /** The state file and each unit folder's judge record (units/ listed, at most 100,000 names). */
  async fingerprint(): Promise<string> {
    const units = (await fsp.readdir(path.join(this.dir, 'units')).catch(() => [] as string[])).sort().slice(0, 100_000);
    return filesFingerprint([path.join(this.dir, RUN_SET_STATE), ...units.map((u) => path.join(this.dir, 'units', u, 'private', 'judge', 'latest.json'))]);
  }

  dispose(): void { this.watch.dispose(); }
}

/** The source for `dir`: a run set when it holds a run-set state, else a folder. */
export async function sourceFor(dir: string, o?: SourceOptions): Promise<ResultsSource> {
  return (await isRunSetFolder(dir)) ? new RunSetSource(dir, o) : new FolderSource(dir, o);
}
