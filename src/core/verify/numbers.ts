/**
 * The number scanner of the claims check (pure): numbers with their unit and precision, by the
 * rules documented in claims.ts (`strict` applies the claim rules to a conclusion; without it,
 * every number of a run's output). Uncertainties (`±`, `+-`, `+/-`) are flagged, never negative.
 */

const NUMBER = /[-+]?(?:\d{1,3}(?:,\d{3})+|\d+)?(?:\.\d+)?(?:[eE][-+]?\d+)?/y;
const UNIT_WORDS = ['seconds', 'minutes', 'hours', 'sec', 'min', 'ms', 'pp', 'GB', 'MB', 'KB', 'dB', 's', 'h'];
const UNIT_RES = UNIT_WORDS.map((w) => [w, new RegExp(`^\\s?${w}(?![\\p{L}\\d])`, 'u')] as const);
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
  /** Written after `±`, `+-` or `+/-`: the uncertainty of the number before it (its value is positive). */
  uncertainty?: boolean;
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
    // `±`, `+-`, `+/-` before a number make it an uncertainty, never a negative number (`0.00331+-0.00043`).
    let uncertainty = false;
    const lead = text.slice(Math.max(0, start - 4), start);
    if (numText[0] === '-' && /\+\/?\s*$/.test(lead)) { numText = numText.slice(1); start += 1; uncertainty = true; }
    else if (/(?:±|\+\/-|\+-)\s*$/.test(lead)) uncertainty = true;
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
      for (const [w, re] of UNIT_RES) {
        const wm = re.exec(rest);
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
      ...(uncertainty ? { uncertainty: true } : {}),
    });
  }
  return out;
}
