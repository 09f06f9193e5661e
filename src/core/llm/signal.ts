/**
 * Runs `f` with a signal of its own that follows `outer`, and removes the one listener it adds to
 * `outer` when `f` settles. The openai client adds an abort listener to the signal it is given on
 * every attempt (its retries included) and never removes it; given one signal for a whole judgement
 * or agent run, more than a few calls passed Node's limit of 10 (MaxListenersExceededWarning)
 * and kept every listener until the end. Now the outer signal holds at most one listener per
 * call in flight.
 */
export async function withChildSignal<T>(outer: AbortSignal | undefined, f: (signal: AbortSignal | undefined) => Promise<T>): Promise<T> {
  if (!outer) return f(undefined);
  const child = new AbortController();
  const abort = () => child.abort(outer.reason);
  if (outer.aborted) abort();
  else outer.addEventListener('abort', abort, { once: true });
  try {
    return await f(child.signal);
  } finally {
    outer.removeEventListener('abort', abort);
  }
}
