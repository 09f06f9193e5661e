import { watch, type FSWatcher, promises as fsp } from 'node:fs';
import * as vscode from 'vscode';
import { log } from '../../../core/log';
import { detectFormat } from '../../../core/trajectory/detect';
import { importFiles } from '../../../core/trajectory/import';
import { importOwnEvents } from '../../../core/trajectory/own';
import type { Trajectory, TrajProblem } from '../../../core/trajectory/types';
import { errorMessage } from '../../../core/util/errors';
import { Timeline } from '../../../core/viewer/timeline';
import { HEAD_LINES } from './detail';

const logger = log('trajectory-viewer');

/** Quiet time after the last change of a growing file before it is read again, ms. */
export const LIVE_DEBOUNCE_MS = 400;

/**
 * One trajectory file opened in the viewer (a `CustomDocument`): every trajectory it holds (an
 * Inspect `.eval` holds one per sample), the file-level problems of the import, and a
 * {@link Timeline} per trajectory, made on first use. A JSON Lines file is watched: when it grows
 * (an agent at work) it is imported again after {@link LIVE_DEBOUNCE_MS} of quiet and
 * `onDidReload` fires; it is then `live`. A session event log (`expbench-events`) is shown
 * progressively: {@link load} imports its first {@link HEAD_LINES} lines (`partial` true), the
 * whole file is imported after, and `onDidReload` fires when it is (`complete` settles then).
 */
export class TrajectoryDocument implements vscode.CustomDocument {
  trajectories: Trajectory[] = [];
  fileProblems: TrajProblem[] = [];
  /** Why the file could not be read at all (the viewer shows it, naming the file). */
  failure?: string;
  live = false;
  /** True while only the first lines are imported (the rest is being read). */
  partial = false;
  /** Settles when the whole file is imported. */
  complete: Promise<void> = Promise.resolve();
  /** True from {@link open} until there is something to show (a panel posts nothing before: the webview says "Reading…"). */
  opening = false;
  /** Settles when there is something to show (see {@link load}). */
  opened: Promise<void> = Promise.resolve();
  updatedAt?: string;
  private timelines = new Map<number, Timeline>();
  private watcher?: FSWatcher;
  private timer?: NodeJS.Timeout;
  private size = -1;
  private loading?: Promise<void>;
  private readonly reloaded = new vscode.EventEmitter<void>();
  /** Fires after the file was read again (it grew). */
  readonly onDidReload = this.reloaded.event;

  constructor(readonly uri: vscode.Uri) {}

  get file(): string { return this.uri.fsPath; }

  /**
   * Starts {@link load} without waiting for it (the custom editor's webview loads meanwhile);
   * `onDidReload` fires when there is something to show.
   */
  open(): void {
    this.opening = true;
    this.opened = this.load().finally(() => { this.opening = false; this.reloaded.fire(); });
  }

  /**
   * Reads the file progressively: resolves as soon as there is something to show — the first
   * lines of a large session log, the head of a large Inspect sample (its first events mapped,
   * `ImportContext.head`), or the first trajectory of any other file (an Inspect sample, an
   * OpenHands instance) — while the rest is read (`partial` true; `complete` settles and
   * `onDidReload` fires when it is). Then, for JSON Lines, starts watching the file.
   */
  async load(): Promise<void> {
    if (await this.readHead()) {
      this.partial = true;
      this.complete = this.read().finally(() => { this.partial = false; this.reloaded.fire(); this.watchIfJsonl(); });
      return;
    }
    let first!: () => void;
    const firstSeen = new Promise<void>((resolve) => { first = resolve; });
    let done = false;
    const whole = this.read(() => first()).finally(() => { done = true; });
    await Promise.race([firstSeen, whole]);
    if (done) { this.watchIfJsonl(); return; }
    this.partial = true;
    this.complete = whole.finally(() => { this.partial = false; this.reloaded.fire(); this.watchIfJsonl(); });
  }

  private watchIfJsonl(): void {
    if (/\.jsonl$/i.test(this.file) || this.trajectories.some((t) => t.format === 'expbench-events' || (t.format.startsWith('openhands') && /\.jsonl$/.test(t.file)))) this.watch();
  }

  /** The timeline of trajectory `i` (made once). */
  timeline(i: number): Timeline {
    let t = this.timelines.get(i);
    if (!t) { t = new Timeline(this.trajectories[i]); this.timelines.set(i, t); }
    return t;
  }

  /** Imports the first lines of a session event log; false (nothing read) for any other file. */
  private async readHead(): Promise<boolean> {
    try {
      const d = await detectFormat(this.file);
      if (d.kind !== 'jsonl' || d.format !== 'expbench-events') return false;
      const started = performance.now();
      const t = await importOwnEvents(this.file, { maxLines: HEAD_LINES });
      if (t.steps.length < HEAD_LINES / 2) return false; // a small file: the whole import is as quick
      this.trajectories = [t];
      this.timelines.clear();
      logger.info(`${this.file}: first ${t.steps.length} steps read in ${Math.round(performance.now() - started)} ms; reading the rest`);
      return true;
    } catch {
      return false;
    }
  }

  /** Imports the whole file; `onFirst` is called once the first trajectory is in `trajectories` (a first read shows it at once). */
  private async read(onFirst?: () => void): Promise<void> {
    const started = performance.now();
    const list: Trajectory[] = [];
    const growing = this.trajectories.length === 0;
    let head = false;
    try {
      this.size = (await fsp.stat(this.file)).size;
      const r = await importFiles([this.file], (t) => {
        list.push(t);
        if (!growing) return;
        this.trajectories = list;
        if (list.length !== 1) return;
        // the head shown so far is replaced by the whole trajectory: its timeline is made anew, the panels post it
        if (head) { this.timelines.delete(0); logger.info(`${this.file}: the first trajectory read whole in ${Math.round(performance.now() - started)} ms`); this.reloaded.fire(); }
        onFirst?.();
      }, {
        onHead: (t) => {
          if (!growing || list.length > 0) return;
          head = true;
          this.trajectories = [t];
          this.timelines.clear();
          logger.info(`${this.file}: the head of ${t.id} (${t.steps.length} steps) read in ${Math.round(performance.now() - started)} ms; mapping the rest`);
          onFirst?.();
        },
      });
      this.fileProblems = r.problems;
      this.failure = r.files[0]?.unreadable ? (r.problems.find((p) => p.severity === 'error')?.message ?? 'no known trajectory format') : undefined;
    } catch (e) {
      this.failure = errorMessage(e);
    }
    this.trajectories = list;
    // a first read grew the list in place: its timelines stay right; a reread replaces them
    if (!growing) this.timelines.clear();
    logger.info(`${this.file}: ${list.length} trajectories, ${list.reduce((n, t) => n + t.steps.length, 0)} steps read in ${Math.round(performance.now() - started)} ms${this.failure ? ` (${this.failure})` : ''}`);
  }

  private watch(): void {
    if (this.watcher) return;
    try {
      this.watcher = watch(this.file, { persistent: false }, () => this.changed());
      this.watcher.on('error', (e) => logger.warn(`stopped watching ${this.file}: ${errorMessage(e)}`));
    } catch (e) {
      logger.warn(`cannot watch ${this.file} for new steps: ${errorMessage(e)}`);
    }
  }

  private changed(): void {
    if (this.timer) clearTimeout(this.timer);
    this.timer = setTimeout(() => void this.reloadIfGrown(), LIVE_DEBOUNCE_MS);
  }

  private async reloadIfGrown(): Promise<void> {
    if (this.loading) { await this.loading; }
    const size = await fsp.stat(this.file).then((s) => s.size, () => -1);
    if (size < 0 || size === this.size) return;
    this.loading = this.read().finally(() => { this.loading = undefined; });
    await this.loading;
    this.live = true;
    this.updatedAt = new Date().toISOString();
    this.reloaded.fire();
  }

  dispose(): void {
    if (this.timer) clearTimeout(this.timer);
    this.watcher?.close();
    this.reloaded.dispose();
  }
}
