import type { TrajDetail } from '../../../src/protocol/trajectory';

/** Steps on each side of the selection whose details are prefetched. */
export const PREFETCH_AROUND = 20;
/** Details kept at most (the oldest are dropped first). */
const KEPT = 400;

/**
 * The webview's cache of step details (as the host drew them for one search text), so that
 * keyboard stepping draws the next detail without a host round trip. Emptied when the search
 * text changes or the host posts a new header (a reload, another sample, a review stored).
 */
export class DetailCache {
  private map = new Map<number, TrajDetail>();
  private search = '';

  /** The cached detail of `step` for `search`, or undefined. */
  get(step: number, search: string): TrajDetail | undefined {
    return search === this.search ? this.map.get(step) : undefined;
  }

  put(details: readonly TrajDetail[], search: string): void {
    if (search !== this.search) { this.map.clear(); this.search = search; }
    for (const d of details) { this.map.delete(d.step); this.map.set(d.step, d); }
    while (this.map.size > KEPT) this.map.delete(this.map.keys().next().value as number);
  }

  has(step: number, search: string): boolean { return search === this.search && this.map.has(step); }

  clear(): void { this.map.clear(); }
}
