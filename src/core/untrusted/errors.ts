import { ExpBenchError, errorMessage } from '../errors';

/** What a non-regular file is, in words (`a directory`, `a FIFO (named pipe)`, …). */
export function kindOf(st: { isDirectory(): boolean; isFIFO(): boolean; isSocket(): boolean; isSymbolicLink(): boolean }): string {
  if (st.isDirectory()) return 'a directory';
  if (st.isFIFO()) return 'a FIFO (named pipe)';
  if (st.isSocket()) return 'a socket';
  if (st.isSymbolicLink()) return 'a symbolic link';
  return 'a device or other special file';
}

/** The error for a path that should be a regular file and is not: what it is and what to do. */
export function notAFile(file: string, kind: string): ExpBenchError {
  return new ExpBenchError('BAD_INPUT', file,
    `is ${kind}, not a regular file; nothing was read from or written to it: move it away (for example \`mv '${file}' '${file}.moved'\`) and run the command again`);
}

/** The error for a path whose real location is outside the folder it must be in (reached through a symbolic link). */
export function outside(file: string, root: string, real: string): ExpBenchError {
  return new ExpBenchError('BAD_INPUT', file,
    `leads out of ${root} (to ${real}) through a symbolic link; the host reads nothing outside it, so nothing was read`);
}

/**
 * The error for input over its size limit: what it is, how large, the limit, and that nothing was
 * taken. `unit` is `bytes` for files and `characters` for text.
 */
export function tooLarge(input: string, what: string, size: number, limit: number, unit: 'bytes' | 'characters'): ExpBenchError {
  return new ExpBenchError('BAD_INPUT', input,
    `${what} is ${size.toLocaleString('en-US')} ${unit}, over the limit of ${limit.toLocaleString('en-US')} ${unit}; nothing of it was taken: shorten it`);
}

/** A file-system error as an {@link ExpBenchError} naming `file`, saying what happened and what to do. */
export function fileError(file: string, doing: 'read' | 'write', e: unknown): ExpBenchError {
  if (e instanceof ExpBenchError) return e;
  const code = (e as NodeJS.ErrnoException)?.code;
  const msg = errorMessage(e);
  if (code === 'ENOSPC' || code === 'EDQUOT') {
    return new ExpBenchError('BAD_INPUT', file,
      `cannot ${doing}: the disk is full (${code}); the file's previous content is unchanged: free some space and run the command again`, { cause: e });
  }
  if (code === 'EISDIR') return notAFile(file, 'a directory');
  if (code === 'EACCES' || code === 'EPERM' || code === 'EROFS') {
    return new ExpBenchError('BAD_INPUT', file, `cannot ${doing}: permission denied (${code}): check who owns the folder`, { cause: e });
  }
  return new ExpBenchError('BAD_INPUT', file, `cannot ${doing}: ${msg}`, { cause: e });
}
