import type { Claim, ClaimLocation, ClaimsResult } from './record';
import { scanNumbers } from './numbers';
import { labelKey, labelNamed, namingOf, producedNumbers, type ProducedNumber } from './produced';
import { DERIVED_RULES, derivedInputs, findDerived, type DerivedRules } from './derived';

export { scanNumbers, type FoundNumber } from './numbers';

/**
 * The claims check (pure): which numbers in the solver's conclusion were produced by the run.
 *
 * ## What counts as a claim (rules, in order)
 * A number in the conclusion (`0.93`, `-1.5`, `.5`, `1,234`, `1e-3`, `2.5E+4`), optionally followed
 * by a unit: `%`, `x`/`×` (a factor such as `3.5x`), `pp`, or a unit word (`ms`, `s`, `sec`,
 * `seconds`, `min`, `minutes`, `h`, `hours`, `GB`, `MB`, `KB`, `dB`). It is NOT a claim when:
 * 1. it is a list marker: at the start of a line and followed by `.` or `)` and a space (`1. `, `2) `);
 * 2. it is part of a name: glued to a letter or `_` before it (`v2`, `layer3`, `F1`), glued
 *    through a hyphen to a word (`GPT-4`, `CIFAR-10`, `ResNet-50`), or followed directly by a
 *    letter that is not a unit (`2D`, `3rd`, `10k`);
 * 3. it follows a reference word: Figure/Fig./Table/Section/Sec./Eq./Equation/Appendix/Algorithm/
 *    step/epoch/seed/run/version (`Table 2`, `seed 3`);
 * 4. it is inside square brackets (a citation such as `[12]`);
 * 5. it is a bare integer (no decimal point, exponent or unit) that is a year (1900–2100) or small
 *    (|n| < 10: counts such as "3 seeds", "2 methods").
 * A `-` between two digits (`0.9-0.95`) is a range dash, not a minus sign.
 *
 * ## When a claim is found
 * A number printed by the run matches a claim when it rounds to the claim at the claim's own
 * precision: with d decimals written (for `1e-3`, the mantissa's decimals minus the exponent),
 * |printed − claimed| ≤ 0.5·10^(−d). Percentages match both scales: `93%` matches `0.93`, `0.9312`,
 * `93.0` and `93.1%`; a plain claim `0.93` matches a printed `93.1%`. A claim stated more precisely
 * than the run printed it (`0.9312` vs `0.93`) is not found. `±`, `+-` and `+/-` read as uncertainty:
 * in `0.00331+-0.00043` the claim 0.00331 and its uncertainty 0.00043 (never −0.00043); an
 * uncertainty claim matches printed uncertainties, another claim matches printed values (and
 * printed uncertainties only when its sentence says "std", "deviation", "uncertainty", "error bar",
 * "confidence" or "±").
 *
 * ## Same quantity (the context rule)
 * Printed numbers are read with their label (produced.ts: `ECE after scaling = 0.0123` is labelled
 * "ECE after scaling"; numbers inside names and formulas, such as the 0.4 of `0.5 + 0.4*sin(2πf)`,
 * are not values). A printed value counts for a claim when it has no label, or its label names
 * what the claim's sentence names (a shared word, a prefix such as acc/accuracy, an acronym such as
 * ECE/expected calibration error). When the sentence names no quantity that any label of the
 * outputs names, the rule cannot tell and every printed value counts. Values under a label of
 * another quantity are listed in `otherQuantity`, not counted.
 *
 * ## Derived
 * A claim not found may be `derived`: computed from two numbers printed in the same run or record
 * (ratio, difference, percent change; derived.ts has the bounded search and its rules). `found`
 * stays false for it; `status` says `derived`, and `allProduced` is true when every claim is
 * found or derived (what `verify --check` requires).
 */

/** A claim of a conclusion, with what the check needs (precision, sentence). */
export type ExtractedClaim = Omit<Claim, 'found' | 'where'> & { decimals: number; sentence: string };

/** The numeric claims of a conclusion, by the rules in this module's docstring. */
export function extractClaims(conclusion: string): ExtractedClaim[] {
  return scanNumbers(conclusion, true)
    .filter((n) => !(n.bareInteger && (Math.abs(n.value) < 10 || (n.value >= 1900 && n.value <= 2100))))
    .map((n) => ({
      text: n.text,
      value: n.value,
      ...(n.unit ? { unit: n.unit } : {}),
      ...(n.uncertainty ? { uncertainty: true } : {}),
      decimals: n.decimals,
      context: contextOf(conclusion, n.index, n.text.length),
      sentence: sentenceOf(conclusion, n.index),
    }));
}

function contextOf(text: string, index: number, len: number): string {
  const from = Math.max(0, index - 40);
  const to = Math.min(text.length, index + len + 40);
  return ((from > 0 ? '…' : '') + text.slice(from, to) + (to < text.length ? '…' : '')).replace(/\s+/g, ' ').trim();
}

/** The sentence around `index`: bounded by `.`, `!`, `?` or `;` before a space, or a line break. */
export function sentenceOf(text: string, index: number): string {
  const stop = /[.!?;](?=\s|$)|\n/g;
  let from = 0;
  let to = text.length;
  for (const m of text.matchAll(stop)) {
    const at = m.index ?? 0;
    if (at < index) from = at + 1;
    else { to = at; break; }
  }
  return text.slice(from, to).trim();
}

/** True when `printed` (a number from the run's output) rounds to the claim; see module docs. */
export function matchesClaim(claim: { value: number; unit?: string; decimals: number }, printed: { value: number; unit?: string }): boolean {
  const tol = 0.5 * Math.pow(10, -claim.decimals) * (1 + 1e-9) + 1e-12;
  const near = (x: number) => Math.abs(x - claim.value) <= tol;
  if (near(printed.value)) return true;
  if (claim.unit === '%' && printed.unit !== '%' && near(printed.value * 100)) return true;
  if (claim.unit !== '%' && printed.unit === '%' && near(printed.value / 100)) return true;
  return false;
}

/** One text the run produced: `stdout`, `stderr`, or a file path relative to /workspace. */
export interface OutputSource {
  source: string;
  text: string;
  /** The run or record it belongs to (derived claims combine numbers of one group); default one group. */
  group?: string;
}

/** Max locations reported per claim. */
export const MAX_WHERE = 5;

const UNCERTAINTY_WORDS = /\b(?:std|stdev|sd|se|stderr|deviation|uncertaint\w*|error bars?|confidence|ci)\b|±|\+-|\+\/-/i;

const loc = (n: ProducedNumber): ClaimLocation => ({ source: n.source, line: n.line });

/**
 * Checks each claim of `conclusion` against the run's outputs (found, derived or not found; rules
 * in this module's docs). Locations are cited in `outputs` order (put the latest run first).
 * @returns claims with `status`, `found` and up to {@link MAX_WHERE} locations each (1-based lines)
 */
export function checkClaims(conclusion: string, outputs: OutputSource[], rules: DerivedRules = DERIVED_RULES): ClaimsResult {
  const claims = extractClaims(conclusion);
  const produced = outputs.flatMap((o) => producedNumbers(o.source, o.text, o.group ?? ''));
  const labels = new Map<string, string[]>();
  for (const p of produced) if (p.label !== '' && !labels.has(p.label)) labels.set(p.label, p.labelWords);
  const groups = new Map<string, ProducedNumber[]>();
  for (const p of produced) {
    const g = groups.get(p.group);
    if (g) g.push(p); else groups.set(p.group, [p]);
  }
  const inputs = [...groups.values()].map(derivedInputs);
  const stated: ExtractedClaim[] = [];
  const stateOf = (n: ProducedNumber) => stated.some((c) => matchesClaim(c, n));
  const first = claims.map(checkOne);
  claims.forEach((c, i) => { if (first[i].status === 'found') stated.push(c); });
  const result = first.map((r, i) => (r.status === 'not found' ? derive(claims[i], r) : r));
  return { claims: result, allFound: result.every((c) => c.found), allProduced: result.every((c) => c.status !== 'not found') };

  function checkOne(c: ExtractedClaim): Claim {
    const { decimals: _d, sentence, ...rest } = c;
    const { named, sentenceNames } = naming(sentence);
    const spread = UNCERTAINTY_WORDS.test(sentence);
    const values = produced.filter((p) => (c.uncertainty ? p.uncertainty === true : !p.uncertainty || spread) && matchesClaim(c, p));
    const counted = values.filter((p) => !sentenceNames || p.labelWords.length === 0 || named(p));
    const other = values.filter((p) => !counted.includes(p)).slice(0, MAX_WHERE).map((p) => ({ ...loc(p), label: p.label }));
    const extra = other.length ? { otherQuantity: other } : {};
    if (counted.length > 0) return { ...rest, found: true, status: 'found' as const, where: counted.slice(0, MAX_WHERE).map(loc), ...extra };
    return { ...rest, found: false, status: 'not found' as const, ...extra };
  }

  function derive(c: ExtractedClaim, r: Claim): Claim {
    if (c.uncertainty) return r;
    const { named, sentenceNames, keyNamed } = naming(c.sentence);
    for (const g of inputs) {
      const d = findDerived({ value: c.value, unit: c.unit, decimals: c.decimals, sentence: c.sentence }, g, rules, named, sentenceNames, stateOf, keyNamed);
      if (d) return { ...r, status: 'derived', derived: { op: d.op, value: d.value, sources: d.sources.map((n) => ({ ...loc(n), text: n.text, label: n.label })) } };
    }
    return r;
  }

  function naming(sentence: string) {
    const n = namingOf(sentence);
    const namedLabels = new Set([...labels].filter(([label, words]) => labelNamed(label, words, n)).map(([k]) => k));
    const keyNamed = (key: string) => labelKey(key).split(' ').every((w) => n.plain.has(w));
    return { named: (p: ProducedNumber) => namedLabels.has(p.label), sentenceNames: namedLabels.size > 0, keyNamed };
  }
}
