/** Standard normal quantile of 0.975 (two-sided 95%): R's `qnorm(0.975)`. */
export const Z95 = 1.959963984540054;

/** How a figure's whiskers or a table's bounds were computed (named in every caption and in table.csv). */
export type IntervalMethod = 'wilson' | 'bootstrap-paper' | 'none';

/** The words a caption uses for each method. */
export const INTERVAL_WORDS: Record<IntervalMethod, string> = {
  wilson: '95% Wilson score intervals (tasks as independent units; Wilson 1927, without continuity correction)',
  'bootstrap-paper': '95% percentile bootstrap intervals resampling whole papers',
  none: 'no interval',
};

/**
 * The Wilson score interval of a binomial proportion k/n (Wilson 1927; Newcombe 1998, method 3):
 * the interval R's `prop.test(k, n, correct = FALSE)` and statsmodels' `proportion_confint(k, n,
 * method="wilson")` report. Unlike the normal (Wald) interval p ± z·se it stays inside [0, 1] and
 * is not empty at 0/n or n/n (0/20 → [0, 0.1611]), which is where EXP-Bench's conjunctive rates live.
 *
 * @param k successes, an integer 0 ≤ k ≤ n
 * @param n trials, an integer ≥ 0
 * @param z the normal quantile (default {@link Z95}: a 95% interval)
 * @returns [low, high] in [0, 1]; null when n = 0 (no rate)
 * @throws RangeError when k or n is not an integer or k is outside 0..n
 */
export function wilson(k: number, n: number, z = Z95): [number, number] | null {
  if (!Number.isInteger(k) || !Number.isInteger(n) || n < 0 || k < 0 || k > n) throw new RangeError(`wilson: expected integers 0 ≤ k ≤ n, got k=${k}, n=${n}`);
  if (n === 0) return null;
  const p = k / n;
  const z2 = z * z;
  const centre = (p + z2 / (2 * n)) / (1 + z2 / n);
  const half = (z / (1 + z2 / n)) * Math.sqrt((p * (1 - p)) / n + z2 / (4 * n * n));
  // At k = 0 and k = n the bound is exactly 0 or 1 (rounding would leave 1e-17 off).
  return [k === 0 ? 0 : Math.max(0, centre - half), k === n ? 1 : Math.min(1, centre + half)];
}
