import { promises as fsp } from 'node:fs';
import * as path from 'node:path';
import writeFileAtomic from 'write-file-atomic';

/**
 * Writes `data` to `file` atomically (temp file + fsync + rename, via `write-file-atomic`),
 * creating parent folders. A reader sees the old or the new content, never half of it.
 * `fsync: false` skips the fsync (still atomic, not durable across a crash).
 */
export async function writeAtomic(file: string, data: string | Buffer, opts: { fsync?: boolean } = {}): Promise<void> {
  await fsp.mkdir(path.dirname(file), { recursive: true });
  await writeFileAtomic(file, data, { fsync: opts.fsync !== false });
}

/** Writes `value` as pretty JSON (2 spaces, trailing newline) atomically; `opts` as {@link writeAtomic}. */
export async function writeJsonAtomic(file: string, value: unknown, opts: { fsync?: boolean } = {}): Promise<void> {
  await writeAtomic(file, JSON.stringify(value, null, 2) + '\n', opts);
}

/** Reads and parses a JSON file; returns `undefined` when the file does not exist. Throws on bad JSON. */
export async function readJsonIfExists<T = unknown>(file: string): Promise<T | undefined> {
  try {
    return JSON.parse(await fsp.readFile(file, 'utf8')) as T;
  } catch (e: any) {
    if (e?.code === 'ENOENT') return undefined;
    throw e;
  }
}

/** True when `p` exists (file or folder). */
export async function exists(p: string): Promise<boolean> {
  try { await fsp.access(p); return true; } catch { return false; }
}
