import { mulberry32, quantile } from './bootstrap';

/**
 * Agreement between two raters of the same items (a judge and a person, or two people):
 * accuracy, Cohen's κ and macro-F1, with percentile bootstrap intervals that resample whole
 * clusters (runs: the items of one run are not independent).
 *
 * Sources: Cohen's κ = (p_o − p_e) / (1 − p_e), p_e = Σ_k p_A(k)·p_B(k) (Cohen 1960, "A coefficient
 * of agreement for nominal scales"); macro-F1 = the unweighted mean over classes of
 * 2·P·R / (P + R), the reference rater's labels as truth, over the classes either rater used
 * (as PaperBench's JudgeEval reports it, arXiv:2504.01848 §4).
 */

/** One item: the reference rater's label (the person) and the other's (the judge). */
export interface LabelPair {
  reference: string;
  other: string;
}

/** A figure and its interval; `value` null when undefined on these items (see {@link cohenKappa}). */
export interface Estimate {
  value: number | null;
  /** [low, high] of the percentile bootstrap; null with fewer than 2 clusters or an undefined value. */
  interval: [number, number] | null;
}

export interface AgreementFigures {
  items: number;
  /** Clusters (runs) the items come from. */
  clusters: number;
  /** Classes either rater used, sorted. */
  classes: string[];
  accuracy: Estimate;
  kappa: Estimate;
  macroF1: Estimate;
  /** Why a value is null (`one class only: κ is undefined (p_e = 1)`). */
  notes: string[];
}

/** Share of items with the same label; null for no items. */
export function accuracy(pairs: readonly LabelPair[]): number | null {
  if (pairs.length === 0) return null;
  return pairs.filter((p) => p.reference === p.other).length / pairs.length;
}

/**
 * Cohen's κ. Null when it is undefined: no items, or p_e = 1 (both raters used one and the same
 * class for every item: agreement is then perfect but carries no information beyond chance).
 */
export function cohenKappa(pairs: readonly LabelPair[]): number | null {
  const n = pairs.length;
  if (n === 0) return null;
  const a = new Map<string, number>();
  const b = new Map<string, number>();
  let agree = 0;
  for (const p of pairs) {
    a.set(p.reference, (a.get(p.reference) ?? 0) + 1);
    b.set(p.other, (b.get(p.other) ?? 0) + 1);
    if (p.reference === p.other) agree++;
  }
  const po = agree / n;
  let pe = 0;
  for (const [k, ca] of a) pe += (ca / n) * ((b.get(k) ?? 0) / n);
  if (Math.abs(1 - pe) < 1e-12) return null;
  return (po - pe) / (1 - pe);
}

/**
 * Macro-F1 over the classes either rater used, `reference` as truth. A class's F1 is 0 when the
 * other rater never predicted it or it never occurs in the reference (precision or recall 0).
 * Null for no items.
 */
export function macroF1(pairs: readonly LabelPair[]): number | null {
  if (pairs.length === 0) return null;
  const classes = classesOf(pairs);
  let sum = 0;
  for (const k of classes) {
    let tp = 0;
    let fp = 0;
    let fn = 0;
    for (const p of pairs) {
      if (p.other === k && p.reference === k) tp++;
      else if (p.other === k) fp++;
      else if (p.reference === k) fn++;
    }
    sum += tp === 0 ? 0 : (2 * tp) / (2 * tp + fp + fn);
  }
  return sum / classes.length;
}

/** The classes either rater used, sorted. */
export function classesOf(pairs: readonly LabelPair[]): string[] {
  return [...new Set(pairs.flatMap((p) => [p.reference, p.other]))].sort();
}

/**
 * The three figures over items grouped by cluster, each with a percentile bootstrap interval:
 * `resamples` times (default 2000), draw as many clusters as there are, with replacement, and
 * compute the figure over their items; [q_(1−level)/2, q_(1+level)/2] of the values that are
 * defined (default level 0.95, seed 1: reproducible).
 */
export function agreementFigures(clusters: readonly (readonly LabelPair[])[], opts: { resamples?: number; level?: number; seed?: number } = {}): AgreementFigures {
  const nonEmpty = clusters.filter((c) => c.length > 0);
  const all = nonEmpty.flat();
  const notes: string[] = [];
  const kappa = cohenKappa(all);
  if (all.length > 0 && kappa === null) notes.push(`one class only (${classesOf(all).join(', ')}): κ is undefined (p_e = 1)`);
  if (nonEmpty.length < 2 && all.length > 0) notes.push('fewer than 2 runs: no bootstrap interval');
  const B = opts.resamples ?? 2000;
  const level = opts.level ?? 0.95;
  const est = (f: (p: readonly LabelPair[]) => number | null, value: number | null): Estimate => {
    if (value === null || nonEmpty.length < 2) return { value, interval: null };
    const rnd = mulberry32(opts.seed ?? 1);
    const stats: number[] = [];
    for (let b = 0; b < B; b++) {
      const sample: LabelPair[] = [];
      for (let j = 0; j < nonEmpty.length; j++) sample.push(...nonEmpty[Math.floor(rnd() * nonEmpty.length)]);
      const v = f(sample);
      if (v !== null) stats.push(v);
    }
    if (stats.length === 0) return { value, interval: null };
    const sorted = Float64Array.from(stats).sort();
    return { value, interval: [quantile(sorted, (1 - level) / 2), quantile(sorted, 1 - (1 - level) / 2)] };
  };
  return {
    items: all.length, clusters: nonEmpty.length, classes: classesOf(all),
    accuracy: est(accuracy, accuracy(all)), kappa: est(cohenKappa, kappa), macroF1: est(macroF1, macroF1(all)), notes,
  };
}
