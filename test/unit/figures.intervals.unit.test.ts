import * as assert from 'node:assert/strict';
import fc from 'fast-check';
import { wilson, Z95 } from '../../src/core/figures/intervals';

// Published values of the Wilson score interval (no continuity correction):
// - Newcombe, R. G. (1998). Two-sided confidence intervals for the single proportion: comparison of
//   seven methods. Statistics in Medicine 17, 857–872, Table II, method 3 (4 decimals): his four
//   examples, 0/20 among them.
// - R 4.2.2, `prop.test(x, n, correct = FALSE)$conf.int` (printed with sprintf("%.10f")); scipy
//   1.17's `binomtest(k, n).proportion_ci(method="wilson")` gives the same 10 digits. These add
//   n/n, 0/1, 1/1 and the scipy documentation's 7/50.
const NEWCOMBE: [number, number, number, number][] = [
  [81, 263, 0.2553, 0.3662],
  [15, 148, 0.0624, 0.1605],
  [0, 20, 0.0000, 0.1611],
  [1, 29, 0.0061, 0.1718],
];
const R_PROP_TEST: [number, number, number, number][] = [
  [81, 263, 0.2552885199, 0.3662095770],
  [15, 148, 0.0623863995, 0.1604872417],
  [0, 20, 0.0000000000, 0.1611251581],
  [1, 29, 0.0061132143, 0.1717552188],
  [29, 29, 0.8830302015, 1.0000000000],
  [0, 1, 0.0000000000, 0.7934506856],
  [1, 1, 0.2065493144, 1.0000000000],
  [7, 50, 0.0695083343, 0.2618619371],
  [3, 4, 0.3006418426, 0.9544127392],
];

describe('figures: the Wilson score interval against published values', () => {
  it('matches Newcombe (1998) Table II to his 4 decimals', () => {
    for (const [k, n, lo, hi] of NEWCOMBE) {
      const ci = wilson(k, n)!;
      assert.equal(ci[0].toFixed(4), lo.toFixed(4), `${k}/${n} low`);
      assert.equal(ci[1].toFixed(4), hi.toFixed(4), `${k}/${n} high`);
    }
  });

  it('matches R\'s prop.test(correct = FALSE) to 10 decimals, 0/n and n/n included', () => {
    for (const [k, n, lo, hi] of R_PROP_TEST) {
      const ci = wilson(k, n)!;
      assert.ok(Math.abs(ci[0] - lo) < 5e-11, `${k}/${n} low ${ci[0]} vs ${lo}`);
      assert.ok(Math.abs(ci[1] - hi) < 5e-11, `${k}/${n} high ${ci[1]} vs ${hi}`);
    }
    assert.deepEqual(wilson(0, 20)!.map((x) => x === 0), [true, false], '0/n: the lower bound is exactly 0');
    assert.equal(wilson(29, 29)![1], 1, 'n/n: the upper bound is exactly 1');
  });

  it('has no rate at n = 0 and refuses counts that are no counts', () => {
    assert.equal(wilson(0, 0), null);
    assert.throws(() => wilson(3, 2), RangeError);
    assert.throws(() => wilson(-1, 2), RangeError);
    assert.throws(() => wilson(0.5, 2), RangeError);
    assert.throws(() => wilson(1, Number.NaN), RangeError);
  });

  it('holds k/n, stays in [0, 1], mirrors at n − k and narrows as n grows (property)', () => {
    fc.assert(fc.property(fc.integer({ min: 1, max: 5000 }), fc.double({ min: 0, max: 1, noNaN: true }), (n, f) => {
      const k = Math.round(f * n);
      const [lo, hi] = wilson(k, n)!;
      const [mlo, mhi] = wilson(n - k, n)!;
      assert.ok(lo >= 0 && hi <= 1 && lo <= k / n + 1e-12 && hi >= k / n - 1e-12);
      assert.ok(Math.abs(lo - (1 - mhi)) < 1e-12 && Math.abs(hi - (1 - mlo)) < 1e-12);
      const [blo, bhi] = wilson(4 * k, 4 * n)!;
      assert.ok(bhi - blo <= hi - lo + 1e-12);
    }), { numRuns: 300 });
  });

  it('a 95% interval by default (z = qnorm(0.975)); another z widens or narrows it', () => {
    assert.equal(Z95, 1.959963984540054);
    const [l95, h95] = wilson(7, 50)!;
    const [l99, h99] = wilson(7, 50, 2.5758293035489)!;
    assert.ok(l99 < l95 && h99 > h95);
  });
});
