import { randomBytes } from 'node:crypto';
import { constants as fsc, promises as fsp } from 'node:fs';
import type { FileHandle } from 'node:fs/promises';
import * as path from 'node:path';
import { ExpBenchError } from '../errors';
import { fileError, kindOf, notAFile, readRegularFile } from '../untrusted';
import { errorMessage } from './errors';

/**
 * Temp files of {@link writeAtomic}: `.<name>.<pid>.<8 hex>.tmp` beside the target, so that a
 * writer killed before its rename leaves a file that the next writer in that folder recognises
 * (and removes once its pid is gone, see {@link sweepTempFiles}).
 */
const TEMP_NAME = /^\.(.+)\.(\d+)\.[0-9a-f]{8}\.tmp$/;

/** The temp file {@link writeAtomic} uses for `file` (unique per call). */
function tempFor(file: string): string {
  return path.join(path.dirname(file), `.${path.basename(file)}.${process.pid}.${randomBytes(4).toString('hex')}.tmp`);
}

/** True when `name` is a temp file left by {@link writeAtomic} (of any process). */
export function isTempFile(name: string): boolean {
  return TEMP_NAME.test(path.basename(name));
}

/**
 * Writes all of `data` through `fh` at `position` (null: the current position, or the end for a
 * file opened to append): `write()` may write fewer bytes than asked (a nearly full disk), so it
 * loops until every byte is written.
 * @throws the file system's error (ENOSPC, EIO, …) when a write fails; some bytes may be written then.
 */
export async function writeFully(fh: FileHandle, data: Buffer, position: number | null = null): Promise<void> {
  let done = 0;
  while (done < data.length) {
    const { bytesWritten } = await fh.write(data, done, data.length - done, position === null ? null : position + done);
    if (bytesWritten <= 0) throw Object.assign(new Error(`write() wrote nothing (${data.length - done} bytes left)`), { code: 'EIO' });
    done += bytesWritten;
  }
}

// The read side (regular files only, never blocking; the solver's files through openUntrusted) and
// the file-system errors live in the untrusted room; re-exported for the callers of this file.
export { fileError, kindOf, notAFile, openRegular, readRegularFile } from '../untrusted';

/** In-process writes per target, in call order (the last call's content ends on disk). */
const queues = new Map<string, Promise<unknown>>();
/** Folders already swept for stale temp files by this process. */
const swept = new Set<string>();

/**
 * Writes `data` to `file` durably and atomically, creating parent folders: every byte is written
 * to a temp file beside it (short writes are retried until complete), the temp file is fsynced,
 * renamed over `file`, and the folder is fsynced. A reader sees the old or the new content, never
 * part of it; when any step fails the old file is left as it was and the temp file is removed.
 * Writes of one process to the same file happen in call order. The first write of a process into
 * a folder removes the temp files that writers since killed left in it.
 * `fsync: false` skips both fsyncs (still atomic, not durable across a power loss).
 *
 * A symbolic link at `file` is replaced (never written through).
 * @throws ExpBenchError `BAD_INPUT` naming `file` when it is a directory, FIFO or other non-regular
 *   file (left untouched), when the disk is full, or on any other file-system error.
 */
export function writeAtomic(file: string, data: string | Buffer, opts: { fsync?: boolean } = {}): Promise<void> {
  const buf = typeof data === 'string' ? Buffer.from(data, 'utf8') : data;
  return queued(file, (key) => writeNow(key, (fh) => writeFully(fh, buf), opts.fsync !== false));
}

/**
 * {@link writeAtomic} of what `source` yields (a zip writer's output stream, …), without holding it
 * whole in memory: the same temp file beside `file`, fsync, rename and folder fsync; on any
 * failure (the source's too) the old file is left as it was and the temp file removed.
 * @throws ExpBenchError `BAD_INPUT` naming `file` as {@link writeAtomic} does (disk full, not a
 *   regular file, …); the source's own ExpBenchError as it is
 */
export function writeAtomicStream(file: string, source: AsyncIterable<Uint8Array | string>, opts: { fsync?: boolean } = {}): Promise<void> {
  return queued(file, (key) => writeNow(key, async (fh) => {
    for await (const chunk of source) await writeFully(fh, typeof chunk === 'string' ? Buffer.from(chunk, 'utf8') : Buffer.from(chunk.buffer, chunk.byteOffset, chunk.byteLength));
  }, opts.fsync !== false));
}

/** Runs `write` for `file` after the writes of this process to it that came before (call order). */
function queued(file: string, write: (key: string) => Promise<void>): Promise<void> {
  const key = path.resolve(file);
  const prev = queues.get(key) ?? Promise.resolve();
  const run = prev.catch(() => undefined).then(() => write(key));
  queues.set(key, run);
  const clear = () => { if (queues.get(key) === run) queues.delete(key); };
  run.then(clear, clear);
  return run;
}

async function writeNow(file: string, fill: (fh: FileHandle) => Promise<void>, fsync: boolean): Promise<void> {
  const dir = path.dirname(file);
  let mode = 0o666;
  try {
    await fsp.mkdir(dir, { recursive: true });
    const st = await fsp.lstat(file).catch((e: NodeJS.ErrnoException) => { if (e.code === 'ENOENT') return undefined; throw e; });
    if (st && !st.isFile() && !st.isSymbolicLink()) throw notAFile(file, kindOf(st));
    if (st?.isFile()) mode = st.mode & 0o7777;
  } catch (e) {
    throw fileError(file, 'write', e);
  }
  if (!swept.has(dir)) {
    swept.add(dir);
    await sweepTempFiles(dir);
  }
  const tmp = tempFor(file);
  let fh: FileHandle | undefined;
  try {
    fh = await fsp.open(tmp, 'wx', mode);
    await fill(fh);
    if (fsync) await fh.sync();
    await fh.close();
    fh = undefined;
    await fsp.rename(tmp, file);
  } catch (e) {
    await fh?.close().catch(() => undefined);
    await fsp.rm(tmp, { force: true }).catch(() => undefined);
    throw fileError(file, 'write', e);
  }
  if (fsync) await syncFolder(dir);
}

/** fsyncs a folder (makes a rename in it durable). Errors are ignored: some file systems refuse it. */
async function syncFolder(dir: string): Promise<void> {
  let fh: FileHandle | undefined;
  try {
    fh = await fsp.open(dir, fsc.O_RDONLY | fsc.O_DIRECTORY);
    await fh.sync();
  } catch {
    // Folders cannot be fsynced on every file system (EINVAL); the rename is still atomic.
  } finally {
    await fh?.close().catch(() => undefined);
  }
}

/**
 * Removes the temp files of {@link writeAtomic} in `dir` whose writing process is gone (killed
 * before its rename). Files of live processes (a write in progress) are kept. Never throws.
 * @returns the paths removed
 */
export async function sweepTempFiles(dir: string): Promise<string[]> {
  const names = await fsp.readdir(dir).catch(() => [] as string[]);
  const removed: string[] = [];
  for (const name of names) {
    const m = TEMP_NAME.exec(name);
    if (!m) continue;
    const pid = Number(m[2]);
    if (pid === process.pid || processAlive(pid)) continue;
    const p = path.join(dir, name);
    if (await fsp.rm(p, { force: true }).then(() => true, () => false)) removed.push(p);
  }
  return removed;
}

function processAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (e) {
    return (e as NodeJS.ErrnoException).code === 'EPERM';
  }
}

/** Writes `value` as pretty JSON (2 spaces, trailing newline) atomically; `opts` as {@link writeAtomic}. */
export async function writeJsonAtomic(file: string, value: unknown, opts: { fsync?: boolean } = {}): Promise<void> {
  await writeAtomic(file, JSON.stringify(value, null, 2) + '\n', opts);
}

/**
 * Reads and parses a JSON file; returns `undefined` when the file does not exist.
 * @throws ExpBenchError `BAD_INPUT` naming `file` when it is not valid JSON (the parser's message),
 *   is not a regular file, or cannot be read
 */
export async function readJsonIfExists<T = unknown>(file: string): Promise<T | undefined> {
  const buf = await readRegularFile(file);
  if (buf === undefined) return undefined;
  try {
    return JSON.parse(buf.toString('utf8')) as T;
  } catch (e) {
    throw new ExpBenchError('BAD_INPUT', file, `not valid JSON (${errorMessage(e)})`, { cause: e });
  }
}

/** True when `p` exists (file or folder). */
export async function exists(p: string): Promise<boolean> {
  try { await fsp.access(p); return true; } catch { return false; }
}
