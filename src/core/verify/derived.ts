import { labelKey, labelsSame, type ProducedNumber } from './produced';
import { isMeasure } from './quantities';

/**
 * Derived claims (pure): a number of the conclusion that is not printed by the run but computed
 * from two numbers the same run (or record) printed. The search is bounded and says what it tried:
 *
 * - **Operations** (over ordered pairs a, b of produced numbers, a ≠ b):
 *   `ratio` a / b; `difference` |a − b| (also ×100 for a claim in `%` or `pp` when both are
 *   fractions); `percent change` |a − b| / |b| · 100 (a claim in `%` only). Rounding needs no
 *   operation: a claim written with fewer decimals than the printed number is already "found"
 *   (claims.ts: the claim's own precision).
 * - **Which operations a claim may use** (its unit): `%` → percent change, difference; `pp` →
 *   difference; `x`/`×` → ratio; no unit → ratio, difference; another unit (`ms`, `GB`…) → difference.
 * - **Tolerance**: the claim's own precision, |computed − claimed| ≤ 0.5·10^(−decimals).
 * - **Inputs**: the last {@link MAX_DERIVED_INPUTS} distinct (value, label) numbers of a group,
 *   uncertainties left out; so at most MAX² pairs × 3 operations per claim.
 * - **Tightening** ({@link DerivedRules}, all three on by default; bench/claims.bench.ts measures
 *   the chance-match rate with and without them):
 *   `requireWord`: the claim's sentence names the operation (a change word such as "reduction",
 *   "lower", "improved" for percent change and difference; "times", "ratio", "faster" or the unit
 *   `x` for a ratio); `sameLabel`: a and b are two **conditions** of one quantity
 *   ({@link sameQuantity}), not two replicates, and when the claim's sentence names a quantity
 *   the outputs label, a's label is that quantity; `requireNamed`: the sentence must name it (a's
 *   label, by its words or the field's table of quantities: quantities.ts), so "a 97.4%
 *   reduction" alone, of nothing named, is not derived; `sourcesStated`: a and
 *   b are numbers the conclusion states too (found claims), as in "the ECE fell from 0.1140 to
 *   0.0030, a 97.4% reduction". A claim whose sources the conclusion does not state stays
 *   "not found" under the default rules (the price of a low chance-match rate; see docs/claims.md).
 */

export type DerivedOp = 'ratio' | 'difference' | 'percent change';

/** One way a claim was computed from two produced numbers. */
export interface DerivedMatch {
  op: DerivedOp;
  /** The computed value (before rounding to the claim's precision). */
  value: number;
  /** a, b: `op` is a / b, |a − b| or |a − b| / |b| · 100. */
  sources: [ProducedNumber, ProducedNumber];
}

/** Switches of the derived search (module docs); {@link DERIVED_RULES} is what the check uses. */
export interface DerivedRules {
  requireWord: boolean;
  sameLabel: boolean;
  /** The claim's sentence names the quantity (a label of a, such as "ECE"): "a 97.4% reduction" of what. */
  requireNamed: boolean;
  /** a and b are numbers the conclusion itself states (found claims): "from 0.0322 to 0.0123, a 62% reduction". */
  sourcesStated: boolean;
}

export const DERIVED_RULES: DerivedRules = { requireWord: true, sameLabel: true, requireNamed: true, sourcesStated: true };

/** Distinct produced numbers per group that the search combines (the last ones printed). */
export const MAX_DERIVED_INPUTS = 400;

const WORDS: Record<DerivedOp, RegExp> = {
  'percent change': /\b(?:reduc\w*|increas\w*|decreas\w*|improv\w*|drop\w*|gain\w*|chang\w*|relative|lower|higher|fewer|more|less|cut\w*|declin\w*|grow\w*|rise|rose|fell|fall\w*|smaller|larger|worse|better|shrank|shrunk)\b/i,
  difference: /\b(?:differ\w*|gap|drop\w*|gain\w*|improv\w*|increas\w*|decreas\w*|reduc\w*|lower|higher|more|less|fewer|delta|points?|pp|margin|worse|better|by)\b/i,
  ratio: /\b(?:times|ratio|fold|factor|faster|slower|larger|smaller|higher|lower|more|less)\b|×/i,
};

/** The claim as the derived search needs it. */
export interface DerivedClaim {
  value: number;
  unit?: string;
  decimals: number;
  /** The sentence of the conclusion the claim is in. */
  sentence: string;
}

function opsFor(unit: string | undefined): DerivedOp[] {
  if (unit === '%') return ['percent change', 'difference'];
  if (unit === 'pp') return ['difference'];
  if (unit === 'x') return ['ratio'];
  if (unit === undefined) return ['ratio', 'difference'];
  return ['difference'];
}

/** The operations a claim may use under `rules` (its unit, then its sentence's words). */
export function allowedOps(c: DerivedClaim, rules: DerivedRules): DerivedOp[] {
  return opsFor(c.unit).filter((op) => !rules.requireWord || (op === 'ratio' && c.unit === 'x') || WORDS[op].test(c.sentence));
}

/** The inputs of one group: the last {@link MAX_DERIVED_INPUTS} distinct (value, label) numbers, no uncertainties. */
export function derivedInputs(numbers: ProducedNumber[]): ProducedNumber[] {
  const seen = new Map<string, ProducedNumber>();
  for (let i = numbers.length - 1; i >= 0 && seen.size < MAX_DERIVED_INPUTS; i--) {
    const n = numbers[i];
    if (n.uncertainty || !Number.isFinite(n.value)) continue;
    const k = `${n.value}\0${n.labelWords.join(' ')}`;
    if (!seen.has(k)) seen.set(k, n);
  }
  return [...seen.values()].reverse();
}

/**
 * Keys whose values tell replicates apart, not conditions (`seed=0` / `seed=1` of one setting),
 * unless the claim's sentence names the key ("from 0.12 with seed 0 to 0.08 with seed 1").
 */
export const REPLICATE_KEYS = new Set(['seed', 'random seed', 'rng', 'run', 'trial', 'rep', 'repeat', 'replicate', 'repetition', 'fold', 'shuffle']);

/**
 * True when a and b (of one group) are two conditions of one quantity, so that comparing them
 * means something:
 * - **two labels naming one quantity** ("ECE before" / "ECE after"; `mae` / "mean absolute
 *   error": {@link labelsSame});
 * - **one label, two conditions**: the two lines differ in the value of another printed key
 *   that is a setting (`n=100 mae=0.1563` / `n=100000 mae=0.0041`, `lr=0.1` / `lr=0.01`,
 *   `epoch 1` / `epoch 10`), a replicate key ({@link REPLICATE_KEYS}: `seed`, `run`, `fold`…)
 *   counting only when `keyNamed(key)` (the claim's sentence names it); or they are on one line
 *   with an arrow between them (`ECE: 0.0322 -> 0.0123`). Another measured value (`mae` beside
 *   `mse`, a loss, a time: `isMeasure` of quantities.ts) is no setting: it differs between
 *   replicates too. Two lines that differ in no setting, or only in a replicate key, are
 *   replicates (the smECE of seed 0 and of seed 1);
 * - **unlabelled**: both on one line (a table row).
 */
export function sameQuantity(a: ProducedNumber, b: ProducedNumber, keyNamed: (key: string) => boolean = () => false): boolean {
  const la = a.label.toLowerCase();
  const lb = b.label.toLowerCase();
  if (la === '' || lb === '') return la === lb && a.source === b.source && a.line === b.line;
  if (la === lb) return conditions(a, b, keyNamed);
  return labelsSame(a, b);
}

const measures = new Map<string, boolean>();
/** {@link isMeasure}, memoised (keys repeat on every line of a log). */
function measure(key: string): boolean {
  let r = measures.get(key);
  if (r === undefined) {
    if (measures.size > 10_000) measures.clear();
    measures.set(key, (r = isMeasure(key)));
  }
  return r;
}

function conditions(a: ProducedNumber, b: ProducedNumber, keyNamed: (key: string) => boolean): boolean {
  if (a.source === b.source && a.line === b.line) {
    return (a.index < b.index ? b : a).arrow === true;
  }
  if (!a.keys || !b.keys) return false;
  const own = labelKey(a.label);
  const values = (keys: typeof a.keys) => {
    const m = new Map<string, string[]>();
    for (const k of keys) if (k.key !== own && !k.key.startsWith('#') && !measure(k.key)) (m.get(k.key) ?? m.set(k.key, []).get(k.key)!).push(k.value);
    return m;
  };
  const va = values(a.keys);
  const vb = values(b.keys);
  for (const [k, xs] of va) {
    const ys = vb.get(k);
    if (!ys || xs.join('\0') === ys.join('\0')) continue;
    if (!REPLICATE_KEYS.has(k) || keyNamed(k)) return true;
  }
  return false;
}

/**
 * The first way (in output order of a, then b) `c` is computed from two of `inputs` (one group's
 * {@link derivedInputs}), or undefined. `named(n)` says whether n's label names the quantity of
 * the claim's sentence; `sentenceNames` whether the sentence names any quantity of the outputs;
 * `stated(n)` whether the conclusion states n (a found claim matches it); `keyNamed(key)` whether
 * the sentence names a line key such as `seed` (then seeds are conditions: {@link sameQuantity}).
 */
export function findDerived(c: DerivedClaim, inputs: ProducedNumber[], rules: DerivedRules,
  named: (n: ProducedNumber) => boolean, sentenceNames: boolean, stated: (n: ProducedNumber) => boolean = () => true,
  keyNamed: (key: string) => boolean = () => false): DerivedMatch | undefined {
  const ops = allowedOps(c, rules);
  if (ops.length === 0 || (rules.requireNamed && !sentenceNames)) return undefined;
  const tol = 0.5 * Math.pow(10, -c.decimals) * (1 + 1e-9) + 1e-12;
  const target = Math.abs(c.value);
  const near = (x: number) => Number.isFinite(x) && Math.abs(x - target) <= tol;
  const scaled = c.unit === '%' || c.unit === 'pp';
  const memo = new Map<string, boolean>();
  const same = (a: ProducedNumber, b: ProducedNumber) => {
    if (a.label.toLowerCase() === b.label.toLowerCase()) return sameQuantity(a, b, keyNamed); // by line: conditions or replicates
    const k = `${a.label}\0${b.label}`;
    let r = memo.get(k);
    if (r === undefined) memo.set(k, (r = sameQuantity(a, b, keyNamed)));
    return r;
  };
  const pool = rules.sourcesStated ? inputs.filter(stated) : inputs;
  for (const a of pool) {
    if (rules.requireNamed && !named(a)) continue;
    if (rules.sameLabel && sentenceNames && a.labelWords.length > 0 && !named(a)) continue;
    for (const b of pool) {
      if (a === b || (rules.sameLabel && !same(a, b))) continue;
      for (const op of ops) {
        let v: number;
        if (op === 'ratio') v = b.value === 0 ? NaN : a.value / b.value;
        else if (op === 'percent change') v = b.value === 0 ? NaN : (Math.abs(a.value - b.value) / Math.abs(b.value)) * 100;
        else {
          v = Math.abs(a.value - b.value);
          const fractions = a.unit !== '%' && b.unit !== '%' && Math.abs(a.value) <= 1 && Math.abs(b.value) <= 1;
          if (scaled && fractions && !near(v)) v *= 100;
        }
        if (near(v)) return { op, value: v, sources: [a, b] };
      }
    }
  }
  return undefined;
}
