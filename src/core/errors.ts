/**
 * Errors the core throws on bad input or failed environment. Each names the input it is about
 * (a file, a URL, an id, a session folder) so that the CLI and the extension can show a precise
 * message without guessing.
 */
export type ErrorCode =
  | 'TASK_NOT_FOUND'
  | 'BAD_INPUT'
  | 'SOURCE_UNAVAILABLE'
  | 'MASKED_PATH_MISSING'
  | 'GIT_FAILED'
  | 'DOCKER_UNAVAILABLE'
  | 'IMAGE_MISSING'
  | 'CONTAINER_FAILED'
  | 'SCHEDULER_FAILED'
  | 'SESSION_INVALID'
  | 'JUDGE_FAILED'
  | 'LLM_FAILED'
  | 'BUDGET_EXCEEDED'
  | 'CANCELLED';

export class ExpBenchError extends Error {
  /**
   * @param code machine-readable kind
   * @param input the file, URL, id or folder the error is about
   * @param message a sentence for a person; `input` is prepended when shown
   */
  constructor(readonly code: ErrorCode, readonly input: string, message: string, options?: { cause?: unknown }) {
    super(`${input}: ${message}`, options);
    this.name = 'ExpBenchError';
  }
}

/** True when `e` is an {@link ExpBenchError}, optionally of the given code. */
export function isExpBenchError(e: unknown, code?: ErrorCode): e is ExpBenchError {
  return e instanceof ExpBenchError && (code === undefined || e.code === code);
}

/** Thrown by long operations when their `AbortSignal` fires. */
export function cancelled(input: string): ExpBenchError {
  return new ExpBenchError('CANCELLED', input, 'cancelled by the user');
}

/**
 * The message of a thrown value, for a person: an `Error`'s `message`, a string as it is,
 * anything else through `String()`. Never throws (a value whose `toString` throws gives
 * `"(unprintable error)"`). Also exported by `util/errors` (where most callers import it).
 */
export function errorMessage(e: unknown): string {
  if (e instanceof Error) return e.message;
  if (typeof e === 'string') return e;
  if (e && typeof e === 'object' && typeof (e as { message?: unknown }).message === 'string') return (e as { message: string }).message;
  try { return String(e); } catch { return '(unprintable error)'; }
}

/**
 * The message of `e` said about `input`: without the leading `<input>: ` an {@link ExpBenchError}
 * about that same input carries, for a line that shows the input beside it already.
 */
export function errorReason(e: unknown, input: string): string {
  const m = errorMessage(e);
  return isExpBenchError(e) && e.input === input && m.startsWith(`${input}: `) ? m.slice(input.length + 2) : m;
}
