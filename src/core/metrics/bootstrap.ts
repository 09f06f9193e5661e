/**
 * Seeded pseudo-random numbers (mulberry32): the same seed gives the same sequence, so bootstrap
 * intervals are reproducible. Returns floats in [0, 1).
 */
export function mulberry32(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/**
 * Percentile bootstrap interval of a mean, resampling whole clusters (papers) with replacement:
 * tasks of one paper are not independent, so the paper is the unit (issue 5).
 *
 * @param clusters values (0/1 or scores) grouped by paper
 * @param opts `resamples` (default 2000), `level` (default 0.95), `seed` (default 1)
 * @returns [low, high] of the mean over resampled tasks; null when there are no values
 */
export function clusterBootstrap(clusters: number[][], opts: { resamples?: number; level?: number; seed?: number } = {}): [number, number] | null {
  const nonEmpty = clusters.filter((c) => c.length > 0);
  if (nonEmpty.length === 0) return null;
  const B = opts.resamples ?? 2000;
  const level = opts.level ?? 0.95;
  const rnd = mulberry32(opts.seed ?? 1);
  const sums = nonEmpty.map((c) => c.reduce((s, v) => s + v, 0));
  const counts = nonEmpty.map((c) => c.length);
  const k = nonEmpty.length;
  const stats = new Float64Array(B);
  for (let b = 0; b < B; b++) {
    let s = 0;
    let n = 0;
    for (let j = 0; j < k; j++) {
      const pick = Math.floor(rnd() * k);
      s += sums[pick];
      n += counts[pick];
    }
    stats[b] = s / n;
  }
  stats.sort();
  return [quantile(stats, (1 - level) / 2), quantile(stats, 1 - (1 - level) / 2)];
}

/** Quantile of sorted values by linear interpolation between order statistics (type 7). */
export function quantile(sorted: ArrayLike<number>, q: number): number {
  const pos = (sorted.length - 1) * q;
  const lo = Math.floor(pos);
  const hi = Math.ceil(pos);
  return sorted[lo] + (sorted[hi] - sorted[lo]) * (pos - lo);
}
