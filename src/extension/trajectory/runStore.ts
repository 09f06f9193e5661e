import * as path from 'node:path';
import * as vscode from 'vscode';
import { log } from '../../core/log';
import { policyByName, type MetricPolicy } from '../../core/metrics/policies';
import { errorMessage, errorReason } from '../../core/util/errors';
import { isSessionFolder } from '../../core/viewer/run';
import { triageRuns, type TriageResult, type TriageRow } from '../../core/viewer/triage';
import { filesFingerprint, sessionsFingerprint } from '../follow/fingerprint';
import { Recheck } from '../follow/recheck';
import { sessionsDir } from '../openTask';
import { onDidChange } from '../settings';
import { TRAJECTORY_VIEW_TYPE } from '../ids';

const logger = log('trajectories');

/** globalState key of the trajectory files the user opened or added (paths only: no contents, no secrets). */
export const REMEMBERED_FILES_KEY = 'expbench.trajectories.files';
/** Most files remembered (the oldest are forgotten first). */
const MAX_FILES = 200;

/**
 * The runs the Trajectories view and the triage table list: the session folders under
 * `expbench.sessionsDir` whose event log holds steps (a person's, the built-in agent's, imported
 * ones), and the trajectory files the user opened in the viewer or added (remembered by path in
 * `globalState`). Rows are computed on first use and again when a session's log, judge or verify
 * record changes (a file watcher, debounced; behind it a stat-only re-check every RECHECK_MS once
 * the rows were asked for, since the watcher of a folder outside the workspace can miss events),
 * the setting changes, or a file is remembered.
 */
export class RunStore implements vscode.Disposable {
  private readonly changed = new vscode.EventEmitter<void>();
  readonly onDidChange = this.changed.event;
  private loading: Promise<TriageResult> | undefined;
  private readonly subs: vscode.Disposable[] = [];
  private watcher: vscode.FileSystemWatcher | undefined;
  private timer: NodeJS.Timeout | undefined;
  private readonly recheck: Recheck;
  readonly policy: MetricPolicy = policyByName('paper-likely');

  /**
   * @param debounceMs quiet time after the last change on disk before the rows are read again, ms
   * @param follow.recheckMs interval of the re-check, ms; follow.watch false: no file watcher (tests)
   */
  constructor(private readonly state: vscode.Memento, private readonly dir: () => string = sessionsDir, private readonly debounceMs = 500, private readonly follow: { recheckMs?: number; watch?: boolean } = {}) {
    this.recheck = new Recheck({
      everyMs: follow.recheckMs,
      active: () => this.loading !== undefined && this.timer === undefined,
      fingerprint: async () => `${(await sessionsFingerprint(this.dir())).fingerprint}\n${await filesFingerprint(this.files())}`,
      changed: () => this.refreshSoon(0),
    });
    this.subs.push(onDidChange(['sessionsDir'], () => { this.watch(); this.refreshSoon(0); }));
    // A trajectory file opened in the viewer is remembered (custom editor tabs of the viewer's type).
    this.subs.push(vscode.window.tabGroups.onDidChangeTabs((e) => {
      for (const t of e.opened) {
        if (t.input instanceof vscode.TabInputCustom && t.input.viewType === TRAJECTORY_VIEW_TYPE && t.input.uri.scheme === 'file') void this.remember(t.input.uri.fsPath);
      }
    }));
    this.watch();
  }

  /** Every run's row (computed once, then after each change). */
  result(): Promise<TriageResult> {
    return (this.loading ??= this.load());
  }

  async rows(): Promise<TriageRow[]> { return (await this.result()).rows; }

  /** The trajectory files remembered, newest first. */
  files(): string[] {
    const v = this.state.get<unknown>(REMEMBERED_FILES_KEY);
    return Array.isArray(v) ? v.filter((x): x is string => typeof x === 'string') : [];
  }

  /**
   * Remembers a trajectory file or a session folder (by absolute path) and lists it; a session
   * under `expbench.sessionsDir`, and the files inside one (its own events.jsonl), are listed
   * through that session instead.
   */
  async remember(file: string): Promise<void> {
    const abs = path.resolve(file);
    if (abs.startsWith(path.resolve(this.dir()) + path.sep) && (/[\\/]private[\\/]/.test(abs) || await isSessionFolder(abs))) return;
    const files = [abs, ...this.files().filter((f) => f !== abs)].slice(0, MAX_FILES);
    await this.state.update(REMEMBERED_FILES_KEY, files);
    await this.refresh();
  }

  /** Forgets a remembered file (the file itself is left alone). */
  async forget(file: string): Promise<void> {
    await this.state.update(REMEMBERED_FILES_KEY, this.files().filter((f) => f !== path.resolve(file)));
    await this.refresh();
  }

  async refresh(): Promise<void> {
    this.loading = this.load();
    await this.loading;
    this.changed.fire();
  }

  private refreshSoon(ms = this.debounceMs): void {
    if (this.timer) clearTimeout(this.timer);
    this.timer = setTimeout(() => { this.timer = undefined; void this.refresh().catch((e) => logger.warn(`could not list the runs: ${errorMessage(e)}`)); }, ms);
  }

  private watch(): void {
    this.watcher?.dispose();
    if (this.follow.watch === false) return;
    const pattern = new vscode.RelativePattern(vscode.Uri.file(this.dir()), '**/private/{events.jsonl,judge/latest.json,verify/latest.json,manifest.json}');
    this.watcher = vscode.workspace.createFileSystemWatcher(pattern);
    const on = () => this.refreshSoon();
    this.watcher.onDidCreate(on);
    this.watcher.onDidChange(on);
    this.watcher.onDidDelete(on);
  }

  private async load(): Promise<TriageResult> {
    const dir = this.dir();
    await this.recheck.reset();
    const rows: TriageRow[] = [];
    const skipped: TriageResult['skipped'] = [];
    const sessions = await triageRuns([dir], this.policy).catch((e) => ({ rows: [], skipped: [{ file: dir, reason: errorReason(e, dir) }] }));
    rows.push(...sessions.rows.filter((r) => r.steps > 0));
    skipped.push(...sessions.skipped.filter((s) => !/no session folder|no such session folder/.test(s.reason)));
    for (const f of this.files()) {
      const r = await triageRuns([f], this.policy).catch((e) => ({ rows: [], skipped: [{ file: f, reason: errorReason(e, f) }] }));
      rows.push(...r.rows);
      skipped.push(...r.skipped);
    }
    return { rows, skipped };
  }

  dispose(): void {
    if (this.timer) clearTimeout(this.timer);
    this.recheck.dispose();
    this.watcher?.dispose();
    for (const s of this.subs) s.dispose();
    this.changed.dispose();
  }
}

/** The path `expbench.trajectory.open` takes for a row: the session folder or the file (without `#<trajectory id>`). */
export function openTarget(row: Pick<TriageRow, 'run' | 'source' | 'id'>): string {
  return row.source === 'file' && row.run.endsWith(`#${row.id}`) ? row.run.slice(0, -(row.id.length + 1)) : row.run;
}
