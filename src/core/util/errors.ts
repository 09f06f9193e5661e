/**
 * The message of a thrown value, for a person: an `Error`'s `message`, a string as it is,
 * anything else through `String()`. Never throws (a value whose `toString` throws gives
 * `"(unprintable error)"`).
 */
export function errorMessage(e: unknown): string {
  if (e instanceof Error) return e.message;
  if (typeof e === 'string') return e;
  if (e && typeof e === 'object' && typeof (e as { message?: unknown }).message === 'string') return (e as { message: string }).message;
  try { return String(e); } catch { return '(unprintable error)'; }
}
