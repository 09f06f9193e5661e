import { promises as fsp } from 'node:fs';
import * as path from 'node:path';
import writeFileAtomic from 'write-file-atomic';

/**
 * Writes `data` to `file` atomically (temp file + fsync + rename, via `write-file-atomic`),
 * creating parent folders. A reader sees the old or the new content, never half of it.
 */
export async function writeAtomic(file: string, data: string | Buffer): Promise<void> {
  await fsp.mkdir(path.dirname(file), { recursive: true });
  await writeFileAtomic(file, data);
}

/** Writes `value` as pretty JSON (2 spaces, trailing newline) atomically. */
export async function writeJsonAtomic(file: string, value: unknown): Promise<void> {
  await writeAtomic(file, JSON.stringify(value, null, 2) + '\n');
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
