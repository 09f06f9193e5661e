import type * as vscode from 'vscode';
import { log } from '../../core/log';
import { errorMessage } from '../../core/util/errors';

const logger = log('follow');

/**
 * How often a view that follows a folder on disk re-checks it behind its file watcher, ms (docs/results.md,
 * "Following the folder"). VS Code's watcher of a folder outside the workspace can miss or drop events
 * (code-server's recursive watcher, a loaded machine), so a view never relies on it alone.
 */
export const RECHECK_MS = 5_000;

/** What {@link Recheck} calls. */
export interface RecheckOptions {
  /** A cheap summary of the followed files (stat only, bounded); a change from the last one fires `changed`. */
  fingerprint: () => Promise<string>;
  /** Called when the fingerprint changed since the last check. */
  changed: () => void;
  /** Called after each check, changed or not, with its time. */
  checked?: (at: Date) => void;
  /** Interval, ms (default {@link RECHECK_MS}). */
  everyMs?: number;
  /** Whether to check now (the view is visible); a tick while false does nothing. */
  active?: () => boolean;
}

/**
 * A periodic re-check behind a file watcher: every `everyMs` while `active()`, computes the
 * fingerprint and fires `changed` when it differs from the one before (the first one only sets the
 * baseline: call {@link reset} after a full read so that a change during the read is seen). One
 * check at a time; a failing fingerprint is logged and counts as unchanged.
 */
export class Recheck implements vscode.Disposable {
  private readonly timer: NodeJS.Timeout;
  private last: string | undefined;
  private running = false;
  /** When the files were last checked (undefined before the first check). */
  lastChecked: Date | undefined;

  constructor(private readonly o: RecheckOptions) {
    this.timer = setInterval(() => void this.check(), o.everyMs ?? RECHECK_MS);
  }

  /** Takes the fingerprint as it is now as the baseline (call before a full read starts). */
  async reset(): Promise<void> {
    this.last = await this.o.fingerprint().catch(() => undefined);
  }

  /** Checks once now (also what each tick does). @returns whether it fired `changed` */
  async check(): Promise<boolean> {
    if (this.running || (this.o.active && !this.o.active())) return false;
    this.running = true;
    try {
      const now = await this.o.fingerprint();
      const before = this.last;
      this.last = now;
      this.lastChecked = new Date();
      this.o.checked?.(this.lastChecked);
      if (before !== undefined && before !== now) { this.o.changed(); return true; }
      return false;
    } catch (e) {
      logger.debug(`re-check failed: ${errorMessage(e)}`);
      return false;
    } finally {
      this.running = false;
    }
  }

  dispose(): void { clearInterval(this.timer); }
}
