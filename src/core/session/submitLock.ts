import { promises as fsp } from 'node:fs';
import * as path from 'node:path';
import { ExpBenchError } from '../errors';
import type { SessionLayout } from '../layout';
import { setTimeout as delay } from 'node:timers/promises';

/** How long {@link SubmitLock.acquire} waits for another submission of the same session, ms. */
export const SUBMIT_LOCK_WAIT_MS = 10 * 60_000;

/**
 * The submit lock of a session: `private/submit.lock`, made exclusively (`O_EXCL`) with the
 * holder's pid and start time. One submission or give-up of a session at a time, across
 * processes: the second waits, then finds the session submitted. A lock whose process is gone (a
 * submission killed midway) is taken over; what that submission left is completed or replaced by
 * the next one (submit.ts).
 */
export class SubmitLock {
  private released = false;

  private constructor(readonly file: string) {}

  /**
   * Takes the lock, waiting (polling every 50 ms, at most {@link SUBMIT_LOCK_WAIT_MS}) while a
   * live process holds it.
   * @throws ExpBenchError `SESSION_INVALID` naming the lock when the wait ends, or it cannot be made
   */
  static async acquire(layout: SessionLayout, action: string, waitMs = SUBMIT_LOCK_WAIT_MS): Promise<SubmitLock> {
    const file = path.join(layout.private, 'submit.lock');
    await fsp.mkdir(layout.private, { recursive: true });
    const until = Date.now() + waitMs;
    for (;;) {
      try {
        await fsp.writeFile(file, JSON.stringify({ pid: process.pid, at: new Date().toISOString(), action }), { flag: 'wx', mode: 0o600 });
        return new SubmitLock(file);
      } catch (e) {
        if ((e as NodeJS.ErrnoException).code !== 'EEXIST') {
          throw new ExpBenchError('SESSION_INVALID', file, `cannot take the submit lock: ${(e as Error).message}`, { cause: e });
        }
      }
      const holder = await readHolder(file);
      // Unreadable for a moment right after its holder made it; later, a torn file of a killed holder.
      const young = holder === undefined && (await fsp.stat(file).then((st) => Date.now() - st.mtimeMs < 2000, () => false));
      if (!young && (holder === undefined || !alive(holder))) {
        // The process that held it is gone: take it over.
        await fsp.rm(file, { force: true });
        continue;
      }
      if (Date.now() > until) {
        throw new ExpBenchError('SESSION_INVALID', file, `cannot ${action}: another submission of this session (pid ${holder ?? 'unknown'}) is still under way; nothing was changed`);
      }
      await delay(50);
    }
  }

  /** Lets the lock go (idempotent). */
  async release(): Promise<void> {
    if (this.released) return;
    this.released = true;
    const holder = await readHolder(this.file);
    if (holder === process.pid) await fsp.rm(this.file, { force: true });
  }
}

async function readHolder(file: string): Promise<number | undefined> {
  try {
    const pid = (JSON.parse(await fsp.readFile(file, 'utf8')) as { pid?: unknown }).pid;
    return typeof pid === 'number' && Number.isSafeInteger(pid) && pid > 0 ? pid : undefined;
  } catch {
    return undefined;
  }
}

function alive(pid: number): boolean {
  try { process.kill(pid, 0); return true; } catch (e) { return (e as NodeJS.ErrnoException).code === 'EPERM'; }
}
