/**
 * Decides when a work container has been idle long enough to stop (setting
 * `expbench.container.idleStopMinutes`). A container is busy while any process started with
 * `docker exec` runs in it (every run of reproduce_exp_bench.sh and every container terminal is
 * one); idle time counts from the first check that found it not busy, in this window. Times in ms.
 */
export class IdleTracker {
  private readonly idleSince = new Map<string, number>();

  /**
   * Records one check of container `id` at `now`.
   * @returns true when it has been idle for at least `timeoutMs` (it is then forgotten, so that a
   *   restarted container counts again from zero); never when `timeoutMs` ≤ 0 (stopping is off)
   */
  observe(id: string, busy: boolean, now: number, timeoutMs: number): boolean {
    if (busy) { this.idleSince.delete(id); return false; }
    const since = this.idleSince.get(id);
    if (since === undefined) { this.idleSince.set(id, now); return false; }
    if (timeoutMs <= 0 || now - since < timeoutMs) return false;
    this.idleSince.delete(id);
    return true;
  }

  /** Forgets containers not in `present` (removed or stopped elsewhere). */
  keepOnly(present: Iterable<string>): void {
    const keep = new Set(present);
    for (const id of [...this.idleSince.keys()]) if (!keep.has(id)) this.idleSince.delete(id);
  }
}
