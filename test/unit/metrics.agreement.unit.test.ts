import * as assert from 'node:assert/strict';
import { accuracy, agreementFigures, cohenKappa, macroF1, type LabelPair } from '../../src/core/metrics/agreement';

/** Pairs from a confusion table: rows the reference's classes, columns the other's. */
function fromTable(classes: string[], table: number[][]): LabelPair[] {
  const out: LabelPair[] = [];
  table.forEach((row, i) => row.forEach((n, k) => { for (let x = 0; x < n; x++) out.push({ reference: classes[i], other: classes[k] }); }));
  return out;
}

const close = (a: number | null, b: number) => assert.ok(a !== null && Math.abs(a - b) < 1e-9, `${a} ≠ ${b}`);

describe('agreement figures against hand-computed tables', () => {
  it('two classes, 4/1/1/4: accuracy 0.8, κ 0.6, macro-F1 0.8', () => {
    const p = fromTable(['a', 'b'], [[4, 1], [1, 4]]);
    close(accuracy(p), 0.8);
    // p_o = 0.8, p_e = 0.5·0.5 + 0.5·0.5 = 0.5 → κ = 0.3 / 0.5
    close(cohenKappa(p), 0.6);
    // F1(a) = 2·4 / (2·4 + 1 + 1) = 0.8, F1(b) the same
    close(macroF1(p), 0.8);
  });

  it('three classes, unequal margins (100 items)', () => {
    const p = fromTable(['a', 'b', 'c'], [[25, 3, 2], [4, 20, 6], [1, 5, 34]]);
    close(accuracy(p), 0.79);
    // margins: reference 30/30/40, other 30/28/42 → p_e = .09 + .084 + .168 = .342; κ = (.79 − .342) / .658
    close(cohenKappa(p), 0.448 / 0.658);
    // F1: a 50/60, b 40/58, c 68/82
    close(macroF1(p), (50 / 60 + 40 / 58 + 68 / 82) / 3);
  });

  it('κ edge cases: one class only (undefined), perfect, chance, below chance, one rater constant', () => {
    const one = fromTable(['met'], [[7]]);
    assert.equal(cohenKappa(one), null);
    close(accuracy(one), 1);
    close(macroF1(one), 1);
    close(cohenKappa(fromTable(['a', 'b', 'c'], [[3, 0, 0], [0, 2, 0], [0, 0, 5]])), 1);
    close(cohenKappa(fromTable(['a', 'b'], [[1, 1], [1, 1]])), 0);
    close(cohenKappa(fromTable(['a', 'b'], [[0, 1], [1, 0]])), -1);
    // reference always a, other half a half b: p_o = .5, p_e = 1·.5 → κ = 0; macro-F1 over {a, b}: F1(a) = 2/3, F1(b) = 0
    const constant = fromTable(['a', 'b'], [[2, 2], [0, 0]]);
    close(cohenKappa(constant), 0);
    close(macroF1(constant), (2 / 3 + 0) / 2);
    assert.equal(cohenKappa([]), null);
    assert.equal(accuracy([]), null);
  });

  it('bootstrap intervals over clusters: reproducible, contain the value, none with one cluster, and note an undefined κ', () => {
    const clusters = [
      fromTable(['a', 'b'], [[3, 1], [0, 2]]), fromTable(['a', 'b'], [[2, 0], [1, 3]]),
      fromTable(['a', 'b'], [[4, 0], [0, 1]]), fromTable(['a', 'b'], [[1, 1], [1, 2]]),
    ];
    const f = agreementFigures(clusters, { resamples: 500, seed: 7 });
    assert.equal(f.items, 22);
    assert.equal(f.clusters, 4);
    for (const e of [f.accuracy, f.kappa, f.macroF1]) {
      assert.ok(e.value !== null && e.interval !== null);
      assert.ok(e.interval[0] <= e.value && e.value <= e.interval[1], `${e.value} in ${e.interval}`);
      assert.ok(e.interval[0] < e.interval[1], 'a real spread over these clusters');
    }
    assert.deepEqual(agreementFigures(clusters, { resamples: 500, seed: 7 }), f);
    const single = agreementFigures([clusters[0]]);
    assert.equal(single.kappa.interval, null);
    assert.match(single.notes.join(' '), /fewer than 2 runs/);
    const oneClass = agreementFigures([fromTable(['met'], [[3]]), fromTable(['met'], [[2]])]);
    assert.equal(oneClass.kappa.value, null);
    assert.match(oneClass.notes.join(' '), /one class only/);
  });
});
