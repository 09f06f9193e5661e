import { ExpBenchError } from '../errors';
import { errorMessage } from '../util/errors';

/** Error codes of a file system that is full (`ENOSPC`) or over quota (`EDQUOT`). */
const FULL = new Set(['ENOSPC', 'EDQUOT']);

/** True when `e` (or its cause) is a "no space left" error of the file system. */
export function isDiskFull(e: unknown): boolean {
  for (let x: unknown = e, i = 0; x && i < 5; x = (x as { cause?: unknown }).cause, i++) {
    if (FULL.has(String((x as NodeJS.ErrnoException).code))) return true;
    if (/\bENOSPC\b|No space left on device/.test(errorMessage(x))) return true;
  }
  return false;
}

/**
 * Any error of a verification as an {@link ExpBenchError} naming its input, so that no raw stack
 * reaches the user: ExpBenchErrors as they are; a full disk as CONTAINER_FAILED saying which file
 * and what to do; anything else as CONTAINER_FAILED with its message.
 * @param input the session folder (used when the error names no file)
 */
export function asVerifyError(e: unknown, input: string): ExpBenchError {
  if (e instanceof ExpBenchError) return e;
  const file = (e as NodeJS.ErrnoException | undefined)?.path;
  if (isDiskFull(e)) {
    return new ExpBenchError('CONTAINER_FAILED', file ?? input,
      `the disk is full (${errorMessage(e)}): the verification could not be completed; free some space, then run the verifier again`, { cause: e });
  }
  return new ExpBenchError('CONTAINER_FAILED', file ?? input, `the verification could not be completed: ${errorMessage(e)}`, { cause: e });
}
