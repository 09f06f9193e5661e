import { promises as fsp } from 'node:fs';
import * as path from 'node:path';
import { watch, type FSWatcher } from 'chokidar';
import { git, type GitRepo } from '../git';
import { hostRepositoryOf } from '../workspace/hostRepo';
import { log } from '../log';
import { errorMessage } from '../util/errors';
import { isKnownCache } from '../workspace/patchRule';
import type { WorkspaceRecorder } from './recorder';

const logger = log('watcher');

/** Quiet time after the last change on disk before a batch is recorded, ms. */
export const WATCH_DEBOUNCE_MS = 300;
/** Longest a batch waits while changes keep coming (a run writing files the whole time), ms. */
export const WATCH_MAX_WAIT_MS = 2_000;

/** One batch of changes seen on disk: workspace-relative paths with `/`, each sorted. */
export interface WatchBatch {
  created: string[];
  changed: string[];
  deleted: string[];
}

export interface WorkspaceWatcherOptions {
  /** Quiet time before a batch is recorded, ms (default {@link WATCH_DEBOUNCE_MS}). */
  debounceMs?: number;
  /** Called after each non-empty batch is recorded (the stepper refreshes its patch summary). */
  onBatch?: (batch: WatchBatch) => void;
}

interface Seen { size: number; mtimeMs: number }

/**
 * Watches a session's workspace on the host (chokidar: one `fs.watch` per folder; the work
 * container's writes reach the host through its bind mount, so edits made in the editor, the
 * terminal or the container are all seen) and records what changed into the session's event log
 * through `recorder`: `file.created`, `file.changed` (size or mtime moved), `file.deleted`.
 *
 * Not watched or recorded: `.git/`, the known caches (src/core/workspace/patchRule.ts:
 * `__pycache__/`, `*.pyc`, …), and files git ignores (`.gitignore`, `.git/info/exclude`, which
 * holds `.devcontainer/`): folders ignored at start are not watched at all, and every batch's new
 * paths are checked with `git check-ignore`. Git runs in the session's host repository
 * (`private/repo.git`, the workspace as its work tree), never in the workspace's own `.git`. Changes are debounced ({@link WATCH_DEBOUNCE_MS}, at
 * most {@link WATCH_MAX_WAIT_MS}) and recorded one batch at a time.
 */
export class WorkspaceWatcher {
  private readonly known = new Map<string, Seen | undefined>();
  private readonly pending = new Set<string>();
  private timer: NodeJS.Timeout | undefined;
  private firstPendingAt = 0;
  private chain: Promise<void> = Promise.resolve();
  private fsw: FSWatcher | undefined;
  private closed = false;

  private constructor(readonly workspace: string, private readonly repo: GitRepo, private readonly recorder: WorkspaceRecorder,
    private readonly opts: WorkspaceWatcherOptions, private readonly ignoredDirs: string[]) {}

  /**
   * Starts watching `workspace` (a task workspace: a git repository). Resolves once the watch is
   * set up (chokidar's `ready`): changes after that are seen.
   * @throws ExpBenchError `GIT_FAILED` when the workspace's files cannot be listed.
   */
  static async start(workspace: string, recorder: WorkspaceRecorder, opts: WorkspaceWatcherOptions = {}): Promise<WorkspaceWatcher> {
    const h = await hostRepositoryOf(workspace);
    const run = { repo: h.repo, env: { GIT_LITERAL_PATHSPECS: '1' } };
    const [files, ignored] = await Promise.all([
      git(['ls-files', '-z', '--cached', '--others', '--exclude-standard'], run),
      git(['ls-files', '-z', '--others', '--ignored', '--exclude-standard', '--directory'], run),
    ]);
    const w = new WorkspaceWatcher(path.resolve(workspace), h.repo, recorder, opts,
      ignored.text.split('\0').filter((p) => p.endsWith('/')).map((p) => p.slice(0, -1)));
    for (const f of files.text.split('\0')) if (f && !isKnownCache(f)) w.known.set(f, undefined);
    await w.watch();
    return w;
  }

  /** Records what is pending now (without waiting for the quiet time); resolves when it is on disk. */
  flush(): Promise<void> {
    if (this.timer) { clearTimeout(this.timer); this.timer = undefined; }
    const paths = [...this.pending];
    this.pending.clear();
    this.firstPendingAt = 0;
    if (paths.length === 0) return this.chain;
    this.chain = this.chain.then(() => this.record(paths)).catch((e) => logger.error(`recording workspace changes failed: ${errorMessage(e)}`));
    return this.chain;
  }

  /** Stops watching; what is pending is recorded first. */
  async dispose(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    await this.fsw?.close();
    await this.flush();
  }

  /** True for paths never watched nor recorded (relative, `/`-separated). */
  private skipped(rel: string): boolean {
    if (rel === '.git' || rel.startsWith('.git/')) return true;
    if (isKnownCache(rel) || isKnownCache(`${rel}/`)) return true;
    return this.ignoredDirs.some((d) => rel === d || rel.startsWith(`${d}/`));
  }

  private relative(abs: string): string | undefined {
    const rel = path.relative(this.workspace, abs);
    if (!rel || rel.startsWith('..') || path.isAbsolute(rel)) return undefined;
    return rel.split(path.sep).join('/');
  }

  private watch(): Promise<void> {
    const fsw = watch(this.workspace, {
      ignoreInitial: true,
      followSymlinks: false,
      ignored: (p: string) => { const rel = this.relative(p); return rel !== undefined && this.skipped(rel); },
    });
    this.fsw = fsw;
    fsw.on('all', (event, p) => {
      const rel = this.relative(p);
      if (rel === undefined || this.closed) return;
      if (event === 'addDir') return; // its files come as `add` events
      if (event === 'unlinkDir') {
        for (const k of this.known.keys()) if (k.startsWith(`${rel}/`)) this.pending.add(k);
        this.schedule();
        return;
      }
      this.pending.add(rel);
      this.schedule();
    });
    fsw.on('error', (e) => logger.warn(`watching ${this.workspace}: ${errorMessage(e)}`));
    return new Promise((resolve) => fsw.once('ready', () => resolve()));
  }

  private schedule(): void {
    const now = Date.now();
    if (!this.firstPendingAt) this.firstPendingAt = now;
    if (this.timer) clearTimeout(this.timer);
    const wait = Math.min(this.opts.debounceMs ?? WATCH_DEBOUNCE_MS, Math.max(0, this.firstPendingAt + WATCH_MAX_WAIT_MS - now));
    this.timer = setTimeout(() => void this.flush(), wait);
  }

  private async record(paths: string[]): Promise<void> {
    const batch: WatchBatch = { created: [], changed: [], deleted: [] };
    const present: Array<[string, Seen]> = [];
    for (const rel of paths.sort()) {
      const st = await fsp.lstat(path.join(this.workspace, rel)).catch(() => undefined);
      if (!st || st.isDirectory()) {
        if (!st && this.known.has(rel)) batch.deleted.push(rel);
        continue;
      }
      present.push([rel, { size: st.size, mtimeMs: st.mtimeMs }]);
    }
    const ignored = await this.gitIgnored(present.filter(([rel]) => !this.known.has(rel)).map(([rel]) => rel));
    for (const [rel, seen] of present) {
      if (ignored.has(rel)) continue;
      if (!this.known.has(rel)) batch.created.push(rel);
      else {
        const before = this.known.get(rel);
        if (!before || before.size !== seen.size || before.mtimeMs !== seen.mtimeMs) batch.changed.push(rel);
      }
      this.known.set(rel, seen);
    }
    for (const rel of batch.deleted) this.known.delete(rel);
    const abs = (rel: string) => path.join(this.workspace, rel);
    for (const rel of batch.created) await this.recorder.recordCreated(abs(rel));
    for (const rel of batch.changed) await this.recorder.recordChanged(abs(rel), this.known.get(rel)!.size);
    for (const rel of batch.deleted) await this.recorder.recordDeleted(abs(rel));
    if (batch.created.length + batch.changed.length + batch.deleted.length > 0) this.opts.onBatch?.(batch);
  }

  /** Which of `rels` (not tracked) git ignores. */
  private async gitIgnored(rels: string[]): Promise<Set<string>> {
    if (rels.length === 0) return new Set();
    const r = await git(['check-ignore', '-z', '--stdin'], { repo: this.repo, input: rels.join('\0') + '\0', okCodes: [1] });
    return new Set(r.text.split('\0').filter(Boolean));
  }
}
