import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { log } from '../log';
import { errorMessage } from '../util/errors';

const logger = log('sandbox');

/**
 * Who owns a container or a temp file: the process that made it, as `<host>/<pid>/<start>` where
 * `<start>` is the process's start time in clock ticks since boot (Linux `/proc/<pid>/stat`,
 * field 22; `0` elsewhere), so that a pid reused by a later process is not taken for the owner.
 */
export function ownerToken(pid = process.pid): string {
  return `${os.hostname()}/${pid}/${startTicks(pid) ?? 0}`;
}

/**
 * Whether the owner named by {@link ownerToken} is gone: `true` when it ran on this host and no
 * process with that pid (and start time, where known) exists now; `false` when it still runs;
 * `undefined` when this cannot be told (another host, or not a token).
 */
export function ownerGone(token: string | undefined): boolean | undefined {
  const m = /^(.*)\/(\d+)\/(\d+)$/.exec(token ?? '');
  if (!m || m[1] !== os.hostname()) return undefined;
  const pid = Number(m[2]);
  if (!processAlive(pid)) return true;
  const start = startTicks(pid);
  return start !== undefined && m[3] !== '0' && String(start) !== m[3];
}

/** Whether a process with this pid exists (on this host, in this pid namespace). */
export function processAlive(pid: number): boolean {
  if (!Number.isSafeInteger(pid) || pid <= 0) return false;
  try {
    process.kill(pid, 0);
    return true;
  } catch (e) {
    return (e as NodeJS.ErrnoException).code === 'EPERM'; // exists, owned by another user
  }
}

function startTicks(pid: number): number | undefined {
  try {
    const stat = fs.readFileSync(`/proc/${pid}/stat`, 'utf8');
    // the command name (field 2) is in parentheses and may hold spaces: count from after its ')'
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    const n = Number(fields[19]);
    return Number.isFinite(n) ? n : undefined;
  } catch {
    return undefined;
  }
}

/**
 * Removes the entries of `dir` whose name matches `pattern` (its first group: the pid of the
 * process that made it, as in `expbench-patch-<pid>-<random>.index`) and whose process is gone
 * (pids of this pid namespace: the temp folder is not shared with containers), when they were last
 * changed more than `minAgeMs` ago. Entries of live processes, and anything not matching, are kept.
 * Never throws (a sweep is best effort; failures are logged).
 * @returns the paths removed
 */
export async function sweepDeadOwners(dir: string, pattern: RegExp, minAgeMs = 0): Promise<string[]> {
  const removed: string[] = [];
  let names: string[];
  try { names = await fs.promises.readdir(dir); } catch { return removed; }
  for (const name of names) {
    const m = pattern.exec(name);
    if (!m || processAlive(Number(m[1])) || Number(m[1]) === process.pid) continue;
    const p = path.join(dir, name);
    try {
      const st = await fs.promises.lstat(p);
      if (Date.now() - st.mtimeMs < minAgeMs) continue;
      await fs.promises.rm(p, { recursive: true, force: true });
      removed.push(p);
    } catch (e) {
      logger.warn(`could not remove the stale ${p}: ${errorMessage(e)}`);
    }
  }
  if (removed.length) logger.info(`removed ${removed.length} stale temp entr${removed.length === 1 ? 'y' : 'ies'} of ended processes in ${dir}`);
  return removed;
}
