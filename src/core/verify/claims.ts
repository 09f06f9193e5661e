import type { Claim, ClaimLocation, ClaimsResult } from './record';

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
 * than the run printed it (`0.9312` vs `0.93`) is not found.
 */

const NUMBER = /[-+]?(?:\d{1,3}(?:,\d{3})+|\d+)?(?:\.\d+)?(?:[eE][-+]?\d+)?/y;
const UNIT_WORDS = ['seconds', 'minutes', 'hours', 'sec', 'min', 'ms', 'pp', 'GB', 'MB', 'KB', 'dB', 's', 'h'];
const REFERENCE_WORDS = /(?:figure|fig\.?|table|tab\.?|section|sec\.?|§|eq\.?|equation|appendix|algorithm|alg\.?|step|epoch|seed|run|version|ver\.?|line|chapter|no\.?|#)\s*$/i;

/** A number found in a text, with its precision. */
export interface FoundNumber {
  /** The characters as written, including the unit. */
  text: string;
  value: number;
  unit?: string;
  /** Decimal places written (negative for large exponents); governs the rounding tolerance. */
  decimals: number;
  /** Start offset in the text. */
  index: number;
  /** Bare integer: no decimal point, no exponent, no unit. */
  bareInteger: boolean;
}

function decimalsOf(numText: string): number {
  const m = /^[-+]?[\d,]*(?:\.(\d+))?(?:[eE]([-+]?\d+))?$/.exec(numText);
  if (!m) return 0;
  return (m[1]?.length ?? 0) - (m[2] ? parseInt(m[2], 10) : 0);
}

/**
 * Scans `text` for numbers (with units). `strict` applies the claim rules 1–4 above (used on the
 * conclusion); without it every number is returned (used on the run's outputs).
 */
export function scanNumbers(text: string, strict: boolean): FoundNumber[] {
  const out: FoundNumber[] = [];
  let i = 0;
  while (i < text.length) {
    const c = text[i];
    const startsNumber = /\d/.test(c) || ((c === '-' || c === '+' || c === '.') && /\d/.test(text[i + 1] ?? '') ) ||
      ((c === '-' || c === '+') && text[i + 1] === '.' && /\d/.test(text[i + 2] ?? ''));
    if (!startsNumber) { i++; continue; }
    NUMBER.lastIndex = i;
    const m = NUMBER.exec(text);
    if (!m || m[0] === '' || !/\d/.test(m[0])) { i++; continue; }
    let numText = m[0];
    let start = i;
    const prev = text[start - 1] ?? '';
    // A sign glued after a digit or letter is a range dash or hyphen, not a sign.
    if ((numText[0] === '-' || numText[0] === '+') && /[\p{L}\d_)]/u.test(prev)) {
      numText = numText.slice(1);
      start += 1;
    }
    const end = start + numText.length;
    i = Math.max(end, i + 1);
    const value = Number(numText.replace(/,/g, ''));
    if (!Number.isFinite(value)) continue;

    // Unit.
    let unit: string | undefined;
    let unitEnd = end;
    const rest = text.slice(end, end + 12);
    const pm = /^\s?(%|×|x(?![\p{L}\d]))/u.exec(rest);
    if (pm) { unit = pm[1] === '×' ? 'x' : pm[1]; unitEnd = end + pm[0].length; } else {
      for (const w of UNIT_WORDS) {
        const wm = new RegExp(`^\\s?${w}(?![\\p{L}\\d])`, 'u').exec(rest);
        if (wm) { unit = w; unitEnd = end + wm[0].length; break; }
      }
    }
    const next = text[unitEnd] ?? '';
    const bareInteger = unit === undefined && /^[-+]?[\d,]+$/.test(numText);
    if (strict) {
      if (/[\p{L}_]/u.test(prev)) continue; // v2, layer3, F1
      if (prev === '-' && /[\p{L}]/u.test(text[start - 2] ?? '')) continue; // GPT-4, CIFAR-10
      if (unit === undefined && /[\p{L}_]/u.test(next)) continue; // 2D, 3rd, 10k
      const lineStart = text.lastIndexOf('\n', start - 1) + 1;
      const atLineStart = /^\s*$/.test(text.slice(lineStart, start));
      if (bareInteger && atLineStart && /^[.)](\s|$)/.test(text.slice(end, end + 2))) continue; // "1. ", "2) "
      if (REFERENCE_WORDS.test(text.slice(Math.max(0, start - 14), start))) continue;
      const open = text.lastIndexOf('[', start);
      if (open >= 0 && text.indexOf(']', start) >= 0 && text.lastIndexOf(']', start) < open) continue;
    }
    out.push({
      text: text.slice(start, unitEnd), value, unit, decimals: decimalsOf(numText), index: start, bareInteger,
    });
  }
  return out;
}

/** The numeric claims of a conclusion, by the rules in this module's docstring. */
export function extractClaims(conclusion: string): Array<Omit<Claim, 'found' | 'where'> & { decimals: number }> {
  return scanNumbers(conclusion, true)
    .filter((n) => !(n.bareInteger && (Math.abs(n.value) < 10 || (n.value >= 1900 && n.value <= 2100))))
    .map((n) => ({
      text: n.text,
      value: n.value,
      ...(n.unit ? { unit: n.unit } : {}),
      decimals: n.decimals,
      context: contextOf(conclusion, n.index, n.text.length),
    }));
}

function contextOf(text: string, index: number, len: number): string {
  const from = Math.max(0, index - 40);
  const to = Math.min(text.length, index + len + 40);
  return ((from > 0 ? '…' : '') + text.slice(from, to) + (to < text.length ? '…' : '')).replace(/\s+/g, ' ').trim();
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
}

/** Max locations reported per claim. */
export const MAX_WHERE = 5;

/**
 * Checks each claim of `conclusion` against the run's outputs.
 * @returns claims with `found` and up to {@link MAX_WHERE} locations each (1-based lines).
 */
export function checkClaims(conclusion: string, outputs: OutputSource[]): ClaimsResult {
  const claims = extractClaims(conclusion);
  const where: ClaimLocation[][] = claims.map(() => []);
  for (const out of outputs) {
    const lines = out.text.split('\n');
    for (let li = 0; li < lines.length; li++) {
      const pending = claims.some((_, ci) => where[ci].length < MAX_WHERE);
      if (!pending) break;
      if (!/\d/.test(lines[li])) continue;
      const nums = scanNumbers(lines[li], false);
      for (let ci = 0; ci < claims.length; ci++) {
        if (where[ci].length >= MAX_WHERE) continue;
        if (nums.some((n) => matchesClaim(claims[ci], n))) where[ci].push({ source: out.source, line: li + 1 });
      }
    }
  }
  const result: Claim[] = claims.map((c, ci) => {
    const { decimals: _d, ...rest } = c;
    return where[ci].length > 0 ? { ...rest, found: true, where: where[ci] } : { ...rest, found: false };
  });
  return { claims: result, allFound: result.every((c) => c.found) };
}
