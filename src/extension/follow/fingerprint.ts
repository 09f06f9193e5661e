import { promises as fsp } from 'node:fs';
import * as path from 'node:path';

/** The files of a session folder whose change a view that follows sessions must see (judge, verify, state, log, manifest). */
export const SESSION_FILES = ['private/judge/latest.json', 'private/verify/latest.json', 'private/state.json', 'private/events.jsonl', 'private/manifest.json'] as const;

/** Bounds of {@link sessionsFingerprint}: folders deeper than `depth` below the root, and entries past `entries`, are not looked at. */
export interface FingerprintBounds { depth: number; entries: number }

/** The bounds `expbench report DIR` walks to (src/core/interop/collect.ts: depth 8), with at most 20,000 entries listed. */
export const DEFAULT_BOUNDS: FingerprintBounds = { depth: 8, entries: 20_000 };

const statLine = async (file: string): Promise<string> => {
  const st = await fsp.stat(file).catch(() => undefined);
  return st?.isFile() ? `${file}\u0000${st.size}\u0000${st.mtimeMs}\u0000${st.ino}` : `${file}\u0000-`;
};

/**
 * A cheap summary of what a folder of sessions and harness judge files holds, for a periodic
 * re-check behind a file watcher that can miss events: the names of the folders walked (as
 * `expbench report DIR` walks them: nothing under a session but its own files, nor
 * `node_modules/` or `.git/`), the size, mtime and inode of each session's {@link SESSION_FILES}
 * and of each `*.json` file outside sessions. Only `readdir` and `stat`: no file is opened, and
 * links are not followed into (a `Dirent` that is a link is neither a folder nor a file here).
 * Two calls give the same string when nothing the views read changed.
 *
 * @param dir the folder (absolute); a missing folder gives a fingerprint of its own ("absent")
 * @returns an opaque string (compare for equality only) and whether the bounds cut the walk short
 */
export async function sessionsFingerprint(dir: string, bounds: FingerprintBounds = DEFAULT_BOUNDS): Promise<{ fingerprint: string; truncated: boolean }> {
  const lines: string[] = [];
  let seen = 0;
  let truncated = false;
  const walk = async (d: string, depth: number): Promise<void> => {
    if (depth > bounds.depth) { truncated = true; return; }
    const entries = await fsp.readdir(d, { withFileTypes: true }).catch(() => undefined);
    if (!entries) { lines.push(`${d}\u0000absent`); return; }
    entries.sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
    const isSession = entries.some((e) => e.name === 'private' && e.isDirectory());
    lines.push(`${d}/`);
    if (isSession) for (const f of SESSION_FILES) lines.push(await statLine(path.join(d, f)));
    // Nothing else of a session is read by the views (its workspace/ and channel/ are the solver's).
    if (isSession) return;
    for (const e of entries) {
      if (++seen > bounds.entries) { truncated = true; return; }
      if (e.name === 'node_modules' || e.name === '.git') continue;
      const p = path.join(d, e.name);
      if (e.isDirectory()) await walk(p, depth + 1);
      else if (e.isFile() && e.name.endsWith('.json')) lines.push(await statLine(p));
    }
  };
  await walk(path.resolve(dir), 0);
  return { fingerprint: lines.join('\n'), truncated };
}

/** The same summary for a fixed list of files (a run set's state, its units' judge records). */
export async function filesFingerprint(files: readonly string[]): Promise<string> {
  return (await Promise.all(files.map(statLine))).join('\n');
}
