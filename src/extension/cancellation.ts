/** What {@link abortOnCancel} needs of a `vscode.CancellationToken` (kept structural: this file loads without VS Code). */
export interface CancellationLike {
  readonly isCancellationRequested: boolean;
  onCancellationRequested(listener: () => unknown): { dispose(): unknown };
}

/**
 * An AbortSignal that aborts when `token` is cancelled (at once when it already is): the bridge
 * from VS Code's cancellation to the AbortSignal every long core operation takes.
 * @returns the signal and `dispose`, which stops listening to the token (the signal stays as it is)
 */
export function abortOnCancel(token: CancellationLike): { signal: AbortSignal; dispose(): void } {
  const ac = new AbortController();
  if (token.isCancellationRequested) {
    ac.abort();
    return { signal: ac.signal, dispose: () => undefined };
  }
  const sub = token.onCancellationRequested(() => ac.abort());
  return { signal: ac.signal, dispose: () => void sub.dispose() };
}
