/**
 * Like `Promise.all`, but waits for every promise to settle (none is left running, e.g. a git
 * process still writing into a folder about to be removed) before throwing: the error thrown is
 * the first rejection in the order of `ps`, so callers list steps in the order their failures
 * should be reported.
 * @returns the values, in the order of `ps`
 * @throws the reason of the first rejected promise of `ps`
 */
export async function allSettledOrThrow<T extends readonly unknown[]>(ps: { [K in keyof T]: Promise<T[K]> }): Promise<T> {
  const settled = await Promise.allSettled(ps);
  const failed = settled.find((r): r is PromiseRejectedResult => r.status === 'rejected');
  if (failed) throw failed.reason;
  return settled.map((r) => (r as PromiseFulfilledResult<unknown>).value) as unknown as T;
}
