import { constants as fsc, promises as fsp, type Stats } from 'node:fs';
import type { FileHandle } from 'node:fs/promises';
import * as path from 'node:path';
import { fileError, kindOf, notAFile, outside, tooLarge } from './errors';

/**
 * Open flags of every read here: read-only, non-blocking (a FIFO or a device that would wait for
 * a writer answers at once, and is refused by the fstat that follows), never becoming the
 * process's controlling terminal.
 */
const READ_FLAGS = fsc.O_RDONLY | fsc.O_NONBLOCK | (fsc.O_NOCTTY ?? 0);

/**
 * Opens `file` for reading only when it is a regular file (following symbolic links unless
 * `noFollow`): opened non-blocking, so a FIFO never blocks, then checked with fstat. For the
 * host's own files (`private/`); what the solver can write goes through {@link openUntrusted}.
 * @returns the open handle (the caller closes it), or undefined when the file does not exist
 * @throws ExpBenchError `BAD_INPUT` naming `file` when it is not a regular file or cannot be opened
 */
export async function openRegular(file: string, opts: { noFollow?: boolean } = {}): Promise<FileHandle | undefined> {
  let fh: FileHandle;
  try {
    fh = await fsp.open(file, READ_FLAGS | (opts.noFollow ? fsc.O_NOFOLLOW : 0));
  } catch (e) {
    const code = (e as NodeJS.ErrnoException)?.code;
    if (code === 'ENOENT') return undefined;
    if (code === 'ELOOP' && opts.noFollow) throw notAFile(file, 'a symbolic link');
    if (code === 'ENXIO') { // a socket (or a device without its driver) cannot be opened at all
      const st = await fsp.stat(file).catch(() => undefined);
      throw notAFile(file, st ? kindOf(st) : 'a socket');
    }
    throw fileError(file, 'read', e);
  }
  try {
    const st = await fh.stat();
    if (!st.isFile()) throw notAFile(file, kindOf(st));
    return fh;
  } catch (e) {
    await fh.close().catch(() => undefined);
    throw fileError(file, 'read', e);
  }
}

/**
 * Reads a regular file whole; undefined when it does not exist. For the host's own files; see
 * {@link readUntrusted} for the solver's.
 * @throws ExpBenchError `BAD_INPUT` naming `file` when it is a directory, FIFO or other special
 *   file (never blocks on one), or cannot be read
 */
export async function readRegularFile(file: string, opts: { noFollow?: boolean } = {}): Promise<Buffer | undefined> {
  const fh = await openRegular(file, opts);
  if (!fh) return undefined;
  try {
    return await fh.readFile();
  } catch (e) {
    throw fileError(file, 'read', e);
  } finally {
    await fh.close().catch(() => undefined);
  }
}

/** How {@link openUntrusted} treats the path. */
export interface UntrustedOpenOptions {
  /**
   * The folder the file must be in (the session's workspace, for example): the real path of what
   * was opened (read back from the open descriptor, so a link swapped in meanwhile is caught) must
   * be inside it, else nothing is read.
   */
  within?: string;
  /**
   * A symbolic link as the path's last part: `'refuse'` (default) or `'inside'` (followed when it
   * leads to a regular file inside `within`, which is then required). Links in the folders above
   * are followed by the kernel; `within` catches those that lead out.
   */
  links?: 'refuse' | 'inside';
}

/**
 * Opens a file the solver's side can write (the workspace, a run's output, an imported file) for
 * reading, without ever blocking or following a link out: the entry is looked at first (lstat, so
 * a device or FIFO is never opened at all), then opened read-only, non-blocking and with
 * `O_NOFOLLOW`, then checked again on the descriptor (fstat: still a regular file; its real path:
 * inside `within`). The caller closes the handle.
 * @returns undefined when nothing is at `file`
 * @throws ExpBenchError `BAD_INPUT` naming `file` when it is a directory, FIFO, socket, device or a
 *   refused symbolic link ({@link notAFile}), when it leads out of `within` ({@link outside}), or
 *   when it cannot be opened
 */
export async function openUntrusted(file: string, opts: UntrustedOpenOptions = {}): Promise<FileHandle | undefined> {
  const root = opts.within === undefined ? undefined : await realRoot(opts.within);
  let target = file;
  try {
    let st = await fsp.lstat(file);
    if (st.isSymbolicLink()) {
      if (opts.links !== 'inside' || root === undefined) throw notAFile(file, 'a symbolic link');
      target = await fsp.realpath(file);
      if (!isInside(root, target)) throw outside(file, opts.within!, target);
      st = await fsp.lstat(target);
    }
    if (!st.isFile()) throw notAFile(file, kindOf(st));
  } catch (e) {
    if ((e as NodeJS.ErrnoException)?.code === 'ENOENT') return undefined;
    throw fileError(file, 'read', e);
  }
  let fh: FileHandle;
  try {
    fh = await fsp.open(target, READ_FLAGS | fsc.O_NOFOLLOW);
  } catch (e) {
    const code = (e as NodeJS.ErrnoException)?.code;
    if (code === 'ENOENT') return undefined;
    if (code === 'ELOOP') throw notAFile(file, 'a symbolic link');
    throw fileError(file, 'read', e);
  }
  try {
    const st = await fh.stat();
    if (!st.isFile()) throw notAFile(file, kindOf(st));
    if (root !== undefined) {
      const real = await descriptorPath(fh, target);
      if (!isInside(root, real)) throw outside(file, opts.within!, real);
    }
    return fh;
  } catch (e) {
    await fh.close().catch(() => undefined);
    throw fileError(file, 'read', e);
  }
}

/** Options of {@link readUntrusted}. */
export interface UntrustedReadOptions extends UntrustedOpenOptions {
  /** The most bytes taken; a larger file is refused whole ({@link tooLarge}), never cut. */
  maxBytes: number;
  /** What the file is, for the message (`reproduce_exp_bench.sh`, `the patch`); default `the file`. */
  what?: string;
}

/**
 * Reads a file the solver's side can write, whole, through {@link openUntrusted}; undefined when
 * nothing is at `file`.
 * @throws ExpBenchError `BAD_INPUT` naming `file` as {@link openUntrusted}, and when it is (or
 *   grows while read) over `maxBytes`
 */
export async function readUntrusted(file: string, opts: UntrustedReadOptions): Promise<Buffer | undefined> {
  const fh = await openUntrusted(file, opts);
  if (!fh) return undefined;
  try {
    const { size } = await fh.stat();
    if (size > opts.maxBytes) throw tooLarge(file, opts.what ?? 'the file', size, opts.maxBytes, 'bytes');
    const buf = await readUpTo(fh, 0, opts.maxBytes + 1);
    if (buf.length > opts.maxBytes) throw tooLarge(file, opts.what ?? 'the file', buf.length, opts.maxBytes, 'bytes');
    return buf;
  } catch (e) {
    throw fileError(file, 'read', e);
  } finally {
    await fh.close().catch(() => undefined);
  }
}

/** {@link readUntrusted} as UTF-8 text (invalid bytes become U+FFFD). */
export async function readUntrustedText(file: string, opts: UntrustedReadOptions): Promise<string | undefined> {
  return (await readUntrusted(file, opts))?.toString('utf8');
}

/** What {@link readUntrustedWindow} read. */
export interface WindowRead {
  text: string;
  /** The file's size, bytes. */
  size: number;
  /** Bytes left out between the head and the tail (0: the whole file). */
  leftOut: number;
}

/**
 * Reads a file that may be long (a run's log): whole when it has at most `maxBytes`, else its
 * first and last `maxBytes / 2` with one line between them saying how much was left out. Opened as
 * {@link openUntrusted}; undefined when nothing is at `file`.
 * @throws ExpBenchError `BAD_INPUT` naming `file` as {@link openUntrusted}
 */
export async function readUntrustedWindow(file: string, opts: UntrustedOpenOptions & { maxBytes: number }): Promise<WindowRead | undefined> {
  const fh = await openUntrusted(file, opts);
  if (!fh) return undefined;
  try {
    const { size } = await fh.stat();
    if (size <= opts.maxBytes) {
      const buf = await readUpTo(fh, 0, opts.maxBytes);
      return { text: buf.toString('utf8'), size, leftOut: 0 };
    }
    const half = Math.floor(opts.maxBytes / 2);
    const [head, tail] = [await readUpTo(fh, 0, half), await readUpTo(fh, size - half, half)];
    const leftOut = size - head.length - tail.length;
    return { text: `${head.toString('utf8')}\n… (${leftOut.toLocaleString('en-US')} bytes left out: the host reads at most ${opts.maxBytes.toLocaleString('en-US')} of this file) …\n${tail.toString('utf8')}`, size, leftOut };
  } catch (e) {
    throw fileError(file, 'read', e);
  } finally {
    await fh.close().catch(() => undefined);
  }
}

/**
 * Copies a file the solver's side can write to `dest` (created new: an existing entry there, a
 * link included, is refused by the exclusive create), opened as {@link openUntrusted}; the copy
 * keeps the permission bits (`& 0o777`).
 * @returns false when nothing is at `src`
 * @throws ExpBenchError `BAD_INPUT` naming `src` as {@link readUntrusted}, or naming `dest` when it cannot be written
 */
export async function copyUntrusted(src: string, dest: string, opts: UntrustedReadOptions): Promise<boolean> {
  const fh = await openUntrusted(src, opts);
  if (!fh) return false;
  let out: FileHandle | undefined;
  try {
    const st = await fh.stat();
    if (st.size > opts.maxBytes) throw tooLarge(src, opts.what ?? 'the file', st.size, opts.maxBytes, 'bytes');
    try {
      out = await fsp.open(dest, fsc.O_WRONLY | fsc.O_CREAT | fsc.O_EXCL | fsc.O_NOFOLLOW, st.mode & 0o777);
    } catch (e) {
      throw fileError(dest, 'write', e);
    }
    const chunk = Buffer.allocUnsafe(1024 * 1024);
    let position = 0;
    for (;;) {
      const { bytesRead } = await fh.read(chunk, 0, chunk.length, position);
      if (bytesRead === 0) break;
      position += bytesRead;
      if (position > opts.maxBytes) throw tooLarge(src, opts.what ?? 'the file', position, opts.maxBytes, 'bytes');
      let done = 0;
      while (done < bytesRead) done += (await out.write(chunk, done, bytesRead - done)).bytesWritten;
    }
    await out.chmod(st.mode & 0o777);
    return true;
  } catch (e) {
    throw fileError(src, 'read', e);
  } finally {
    await out?.close().catch(() => undefined);
    await fh.close().catch(() => undefined);
  }
}

/**
 * The status of `file` itself (lstat: a symbolic link is never followed) when it is a regular
 * file; undefined when nothing is there or it is anything else (a link, a folder, a FIFO, a
 * socket, a device), so that a marker the solver's side can replace never speaks for another file.
 * Never opens the file. For markers whose existence and time are all that is read.
 */
export async function regularFileStat(file: string): Promise<Stats | undefined> {
  const st = await fsp.lstat(file).catch(() => undefined);
  return st?.isFile() ? st : undefined;
}

/** True when `p` (an absolute, real path) is `root` or below it. */
export function isInside(root: string, p: string): boolean {
  const rel = path.relative(root, p);
  return rel === '' || (!rel.startsWith('..') && !path.isAbsolute(rel));
}

async function realRoot(dir: string): Promise<string> {
  return fsp.realpath(dir).catch(() => path.resolve(dir));
}

/** The real path of an open descriptor (Linux: /proc/self/fd); elsewhere the real path of `opened`. */
async function descriptorPath(fh: FileHandle, opened: string): Promise<string> {
  try {
    return await fsp.readlink(`/proc/self/fd/${fh.fd}`);
  } catch {
    return fsp.realpath(opened);
  }
}

/** Reads up to `n` bytes from `position` (fewer at the end of the file), in chunks of at most 1 MiB. */
async function readUpTo(fh: FileHandle, position: number, n: number): Promise<Buffer> {
  const chunks: Buffer[] = [];
  let got = 0;
  while (got < n) {
    const want = Math.min(n - got, 1024 * 1024);
    const buf = Buffer.allocUnsafe(want);
    const { bytesRead } = await fh.read(buf, 0, want, position + got);
    if (bytesRead === 0) break;
    chunks.push(bytesRead === want ? buf : buf.subarray(0, bytesRead));
    got += bytesRead;
  }
  return chunks.length === 1 ? chunks[0] : Buffer.concat(chunks, got);
}
