/**
 * Runs async tasks one after another, in the order they were given: each starts when the one
 * before it has settled, and a failure does not block the next (the failing task's own promise
 * rejects; the chain goes on). Used where writes to one file must not overlap (a session's state,
 * its event log, a JSON Lines file).
 */
export class SerialChain {
  /** Settles when the last task given so far has settled; never rejects. */
  private tail: Promise<void> = Promise.resolve();

  /**
   * Queues `task`; it starts after every task queued before it has settled.
   * @returns what `task` returns, or its rejection (a synchronous throw becomes a rejection)
   */
  run<T>(task: () => T | PromiseLike<T>): Promise<T> {
    const result = this.tail.then(task);
    this.tail = result.then(() => undefined, () => undefined);
    return result;
  }

  /** Resolves when every task queued so far has settled (successfully or not); never rejects. */
  settled(): Promise<void> { return this.tail; }
}
