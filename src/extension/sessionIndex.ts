import { promises as fsp } from 'node:fs';
import * as path from 'node:path';
import * as vscode from 'vscode';
import { SessionLayout } from '../core/layout';
import { log } from '../core/log';
import { clockStatus } from '../core/session/clock';
import { readState } from '../core/session/store';
import { readManifest } from '../core/workspace/manifest';
import { errorMessage } from '../core/util/errors';
import { onDidChange } from './settings';
import type { TaskStatus } from './taskLabel';

const logger = log('tasks');

/** One session folder found under the sessions folder. */
export interface KnownSession {
  root: string;
  taskId: string;
  status: Exclude<TaskStatus, 'not-started'>;
  /** Last change of its state (or manifest), ms since the epoch. */
  changedMs: number;
}

/**
 * Reads one session folder: its complete manifest (`private/manifest.json`) names the task,
 * `private/state.json` gives the status (clock segments, `submitted`, `gaveUp`; see
 * src/core/session/clock.ts `clockStatus`). A folder without a complete manifest (not a session,
 * or a preparation that did not finish) gives undefined; an unreadable state counts as `opened`.
 */
export async function readKnownSession(root: string): Promise<KnownSession | undefined> {
  const layout = new SessionLayout(root);
  const manifest = await readManifest(root).catch(() => undefined);
  if (!manifest) return undefined;
  const state = await readState(layout.state).catch((e: unknown) => { logger.warn(`session ${root}: ${errorMessage(e)}`); return undefined; });
  const stat = await fsp.stat(state ? layout.state : layout.manifest).catch(() => undefined);
  const clock = state ? clockStatus(state) : 'not-started';
  const status = state?.submitted ? 'submitted' : state?.gaveUp ? 'gave-up' : clock === 'not-started' ? 'opened' : 'in-progress';
  return { root, taskId: manifest.taskId, status, changedMs: stat?.mtimeMs ?? 0 };
}

/**
 * The sessions in the sessions folder (`expbench.sessionsDir`), newest first per task. Read on
 * first use and again on {@link SessionIndex.refresh} (the tree's Refresh, a window session opened).
 */
export class SessionIndex implements vscode.Disposable {
  private readonly changed = new vscode.EventEmitter<void>();
  readonly onDidChange = this.changed.event;
  private loading: Promise<Map<string, KnownSession[]>> | undefined;
  private readonly sub: vscode.Disposable;

  constructor(private readonly dir: () => string) {
    this.sub = onDidChange(['sessionsDir'], () => void this.refresh());
  }

  /** Sessions by task id, newest first. */
  byTask(): Promise<Map<string, KnownSession[]>> {
    return (this.loading ??= this.load());
  }

  /** The newest session of `taskId`, if any. */
  async latest(taskId: string): Promise<KnownSession | undefined> {
    return (await this.byTask()).get(taskId)?.[0];
  }

  async refresh(): Promise<void> {
    this.loading = this.load();
    await this.loading;
    this.changed.fire();
  }

  private async load(): Promise<Map<string, KnownSession[]>> {
    const dir = this.dir();
    const names = await fsp.readdir(dir).catch(() => [] as string[]);
    const found = await Promise.all(names.map((n) => readKnownSession(path.join(dir, n)).catch(() => undefined)));
    const m = new Map<string, KnownSession[]>();
    for (const s of found) if (s) m.set(s.taskId, [...(m.get(s.taskId) ?? []), s]);
    for (const list of m.values()) list.sort((a, b) => b.changedMs - a.changedMs);
    return m;
  }

  dispose(): void {
    this.sub.dispose();
    this.changed.dispose();
  }
}
