/**
 * Property tests of the numbers check (issue 33, item 2), with fast-check: the claim's own precision
 * is the tolerance, and every format the rules name reads to the same value (decimals, `1e-3`,
 * `97.4%`, `1,234.5`, `±`, ranges), for numbers no one wrote by hand. Derived claims of a sweep
 * (`n=… mae=…` lines) are derived exactly when the stated change is right, and never between
 * replicates (lines that differ only in a seed).
 */
import * as assert from 'node:assert/strict';
import fc from 'fast-check';
import { checkClaims, extractClaims, matchesClaim, scanNumbers } from '../../src/core/verify/claims';
import { endsWithArrow, indexWordAtEnd } from '../../src/core/verify/produced';
import { camelHumps } from '../../src/core/verify/quantities';

const RUNS = { numRuns: 300, seed: 20261201 };
const statusOf = (conclusion: string, text: string) => checkClaims(conclusion, [{ source: 'stdout', text }]).claims.map((c) => c.status);

/** A value with `d` decimals written, as the text a conclusion would hold. */
const claimArb = fc.record({ int: fc.integer({ min: 0, max: 99_999 }), d: fc.integer({ min: 0, max: 5 }) })
  .map(({ int, d }) => ({ text: (int / 10 ** d).toFixed(d), value: int / 10 ** d, d }));

describe('claims: property tests of the numbers check (fast-check)', () => {
  it('tolerance: a printed number within half a unit of the claim\'s last decimal is found, one beyond it is not', () => {
    fc.assert(fc.property(claimArb, fc.double({ min: -0.49, max: 0.49, noNaN: true }), fc.double({ min: 0.51, max: 5, noNaN: true }), fc.boolean(),
      (c, inside, outside, up) => {
        const unit = 10 ** -c.d;
        const near = (c.value + inside * unit).toFixed(c.d + 3);
        const far = c.value + (up ? 1 : -1) * outside * unit;
        fc.pre(far >= 0);
        const claim = { value: c.value, decimals: c.d };
        assert.equal(matchesClaim(claim, { value: Number(near) }), true, `${c.text} vs ${near}`);
        assert.equal(matchesClaim(claim, { value: far }), false, `${c.text} vs ${far}`);
        // through the whole check, with a label naming the quantity of the sentence
        const found = statusOf(`The accuracy is ${c.text} on the test set.`, `acc = ${near}\n`);
        if (c.value >= 10 || c.d > 0) assert.deepEqual(found, ['found'], `${c.text} vs printed ${near}`);
      }), RUNS);
  });

  it('formats: decimals, exponents, percentages, thousands separators read to their value; 97.4% matches the fraction 0.974', () => {
    fc.assert(fc.property(fc.integer({ min: 1, max: 9_999_999 }), fc.integer({ min: 1, max: 6 }), (m, e) => {
      const exp = `${(m / 1000).toFixed(3)}e-${e}`;
      const [n] = scanNumbers(`value ${exp} here`, false);
      assert.equal(n.text, exp);
      assert.ok(Math.abs(n.value - Number(exp)) <= Number(exp) * 1e-12);
      assert.equal(n.decimals, 3 + e);
      const grouped = m.toLocaleString('en-US') + '.5';
      const [g] = scanNumbers(`total ${grouped} items`, false);
      assert.equal(g.value, m + 0.5, grouped);
      const pct = (m % 1000) / 10;
      const claim = extractClaims(`Accuracy rose to ${pct.toFixed(1)}% overall.`).find((c) => c.unit === '%');
      assert.ok(claim, `${pct.toFixed(1)}%`);
      assert.equal(matchesClaim(claim, { value: pct / 100 }), true);
      assert.equal(matchesClaim(claim, { value: pct / 100 + 0.002 }), false);
    }), RUNS);
  });

  it('uncertainty and ranges: `±`, `+-`, `+/-` give a positive uncertainty; a dash between numbers is a range, never a minus sign', () => {
    const decimal = claimArb.filter((c) => c.d > 0); // a bare integer under 10 is no claim (a count: "3 seeds")
    fc.assert(fc.property(decimal, decimal, fc.constantFrom('±', '+-', '+/-', ' ± ', ' +- '), (a, b, pm) => {
      const claims = extractClaims(`The ECE is ${a.text}${pm}${b.text} over seeds.`);
      const [value, spread] = claims.slice(-2);
      assert.equal(spread?.uncertainty, true);
      assert.equal(spread.value, b.value);
      assert.equal(value.value, a.value);
      const range = extractClaims(`Scores lie in ${a.text}-${b.text} for all runs.`).map((c) => c.value);
      assert.ok(range.every((v) => v >= 0), JSON.stringify(range));
    }), RUNS);
  });

  it('derived over a sweep: the right percent change of two conditions is derived, a wrong one is not, two replicates never', () => {
    const valueArb = fc.integer({ min: 1_000, max: 99_999 }).map((k) => k / 10_000); // 0.1000 … 9.9999, 4 decimals
    fc.assert(fc.property(valueArb, valueArb, fc.double({ min: 0.15, max: 3, noNaN: true }), (a, b, off) => {
      fc.pre(Math.abs(a - b) >= 0.01);
      const pct = (Math.abs(b - a) / a) * 100;
      const right = pct.toFixed(1);
      const wrong = (pct + off).toFixed(1);
      const [ta, tb] = [a.toFixed(4), b.toFixed(4)];
      // the wrong value must not be another operation's result by chance (difference, the other direction's change, a ratio)
      const others = [Math.abs(a - b), Math.abs(a - b) * 100, (Math.abs(a - b) / b) * 100];
      fc.pre(others.every((v) => Math.abs(v - Number(wrong)) > 0.06));
      const sweep = `n=100 mae=${ta}\nn=100000 mae=${tb}\n`;
      const say = (p: string) => `The error changes from ${ta} at 100 samples to ${tb} at 100000 samples, a ${p}% reduction.`;
      assert.equal(statusOf(say(right), sweep).at(-1), 'derived', `${say(right)} | ${sweep}`);
      assert.equal(statusOf(say(wrong), sweep).at(-1), 'not found', `${say(wrong)} | ${sweep}`);
      const seeds = `seed=0 mae=${ta}\nseed=1 mae=${tb}\n`;
      assert.equal(statusOf(`The error changes from ${ta} to ${tb}, a ${right}% reduction.`, seeds).at(-1), 'not found', seeds);
    }), RUNS);
  });
});

describe('claims: the linear readers give what the regular expressions they replace gave (fast-check)', () => {
  // Texts made of the characters the expressions look at, so that the interesting cases are common.
  const textOf = (chars: string, maxLength = 40) => fc.array(fc.constantFrom(...chars.split('')), { maxLength }).map((a) => a.join(''));
  const words = ['seed', 'Epoch', 'step', 'iter', 'iteration', 'fold', 'run', 'trial', 'batch', 'id', 'no', 'lr', 'n'];
  const segArb = fc.tuple(textOf('ab ([:=#\t'), fc.constantFrom(...words), textOf(' :=#\t', 6)).map(([a, w, b]) => a + w + b);

  it('camelHumps is /([a-z\\d])([A-Z])/g then /([A-Z]+)([A-Z][a-z])/g, split at spaces', () => {
    const old = (raw: string) => raw.replace(/([a-z\d])([A-Z])/g, '$1 $2').replace(/([A-Z]+)([A-Z][a-z])/g, '$1 $2').toLowerCase().split(' ');
    fc.assert(fc.property(textOf('aAbB1zZ', 24).filter((s) => s.length > 0), (raw) => assert.deepEqual(camelHumps(raw), old(raw), raw)), RUNS);
    for (const raw of ['mIoU', 'HTMLParser', 'smECE', 'valAcc', 'top1Acc', 'ECE']) assert.deepEqual(camelHumps(raw), old(raw), raw);
  });

  it('indexWordAtEnd is /(?:^|[\\s[(])(seed|epoch|…)\\s*[:=#]?\\s*$/i', () => {
    const OLD = /(?:^|[\s[(])(seed|epoch|step|iter|iteration|fold|run|trial|batch|line|row|id|no)\s*[:=#]?\s*$/i; // the expression replaced, as the reference
    fc.assert(fc.property(fc.oneof(segArb, textOf('seda ([:=#')), (seg) => assert.equal(indexWordAtEnd(seg), OLD.exec(seg)?.[1], JSON.stringify(seg))), RUNS);
  });

  it('endsWithArrow is /(?:->|→|=>)\\s*$/', () => {
    const OLD = /(?:->|→|=>)\s*$/; // the expression replaced, as the reference
    fc.assert(fc.property(textOf('-=>→ a\t'), (seg) => assert.equal(endsWithArrow(seg), OLD.test(seg), JSON.stringify(seg))), RUNS);
  });
});
