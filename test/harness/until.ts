/**
 * Polls `f` every `everyMs` (200 ms) until it returns a value other than `undefined`, and returns that value.
 * @param what what is awaited, for the error
 * @param ms how long to wait, in milliseconds (default 10 minutes)
 * @param everyMs the pause between two calls, in milliseconds
 * @throws Error "timed out waiting for <what>" after `ms`
 */
export async function until<T>(what: string, f: () => Promise<T | undefined>, ms = 600_000, everyMs = 200): Promise<T> {
  const end = Date.now() + ms;
  for (;;) {
    const v = await f();
    if (v !== undefined) return v;
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, everyMs));
  }
}
