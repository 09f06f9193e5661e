import type { Task } from '../tasks/types';
import { hasLineTerminator, trimEndOf, trimStartOf } from '../untrusted';
import { extractClaims, matchesClaim, scanNumbers, type FoundNumber } from '../verify/claims';
import { wordsOf } from '../verify/produced';
import type { RepoSnapshot } from './snapshot';

/**
 * The numbers of an expected outcome that a kept file prints: the rule `leak-expected-number` of
 * the task lint (docs/curation.md). Pure over a snapshot's texts. Two kinds of claims of
 * `expected_outcome` (claims of the verifier's claims check, `extractClaims`; bare integers never):
 *
 * - **distinctive**: at least {@link DISTINCTIVE_DIGITS} significant digits once leading and
 *   trailing zeros are dropped (`93.12%`, `0.712`, `12.5`). One printed match anywhere in a kept
 *   file is a finding (by the claims check's rounding rule: `93.12%` matches `0.9312`), except a
 *   number inside a dotted version (`4.39` of `^4.39.1`) or an SVG image (geometry).
 * - **short**: fewer digits (`0.16`, `62%`, `2x`, `0.004`); 0, 1 and 100% are never counted (every
 *   file prints them). One such number proves nothing, so a short number counts only with company:
 *   within {@link WINDOW_LINES} lines either side of it in one kept file, either another short
 *   number of the same outcome (a different value), or at least {@link MIN_CONTEXT_WORDS} of its
 *   own context words (the outcome's words within {@link CONTEXT_SPAN} words of it in its sentence,
 *   generic words left out: "0.16 at 100 samples" → `samples`, and the quantity named before it).
 *   A short number matches a printed one by the same rounding rule, and also by its kind: `2x` only
 *   a printed factor (`2x`, `2.0×`), `62%` a printed percentage or fraction (`62%`, `62.3%`,
 *   `0.62`; never `62` or `62.0`, which are any quantity near 62), a plain decimal only a printed
 *   decimal without a unit (`0.16`, `0.1563`; never `16GB`) or a number of its own unit; not a number
 *   inside a name (`v0.5`, `lr0.1`) or a version. Lines holding more than
 *   {@link MAX_NUMBERS_PER_LINE} numbers are data (an SVG path, an array, a table of values), not a
 *   statement, and are not read for short numbers (the distinctive rule and `leak-result-file`
 *   cover data files); nor are tables of values (`csv`, `tsv`), the lines of source code and
 *   configuration other than comments with a word (their literals are parameters: `dropout=0.5`;
 *   a comment without a word is commented-out code), markup,
 *   styles and dependency manifests ({@link shortLines}).
 *
 * A number the task's brief states (question, method, agent instructions: what the solver is
 * given, `agentBrief`) is no secret: it is never a leak, of either kind ("with a 1e-5 learning
 * rate" in both the method and the outcome).
 */

/** Significant digits that make an outcome's number distinctive on its own. */
export const DISTINCTIVE_DIGITS = 3;
/** Lines either side of a short number where its company is looked for. */
export const WINDOW_LINES = 2;
/** Context words that let one short number count alone. */
export const MIN_CONTEXT_WORDS = 2;
/** Words either side of a short number in its sentence that are its context words. */
export const CONTEXT_SPAN = 5;
/** More numbers than this on one line make it data, not a statement. */
export const MAX_NUMBERS_PER_LINE = 8;
/** Locations kept per distinct distinctive claim (before a task's mask filters them). */
const MAX_HITS = 200;
/** Locations kept per distinct short claim. */
const MAX_SHORT_HITS = 20_000;
/** Longest line read (the rest of a longer line is not scanned). */
const MAX_LINE = 100_000;

export type OutcomeClaim = ReturnType<typeof extractClaims>[number];

/** A printed match of a claim: file, 1-based line, the text printed. */
export interface NumberHit { path: string; line: number; matched: string }

function significantDigits(c: OutcomeClaim): number {
  const exponent = /[eE][-+]?\d/.exec(c.text);
  const mantissa = exponent && !hasLineTerminator(c.text.slice(exponent.index)) ? c.text.slice(0, exponent.index) : c.text;
  return trimEndOf(trimStartOf(mantissa.replace(/[^\d]/g, ''), '0'), '0').length;
}

const bareInteger = (c: OutcomeClaim) => c.unit === undefined && /^[-+]?[\d,]+$/.test(c.text);

/** Distinctive numbers of an expected outcome (module docs): not bare integers, ≥ 3 significant digits. */
export function distinctiveClaims(expectedOutcome: string): OutcomeClaim[] {
  return extractClaims(expectedOutcome).filter((c) => !bareInteger(c) && significantDigits(c) >= DISTINCTIVE_DIGITS);
}

/** Short numbers of an expected outcome (module docs): not bare integers, fewer than 3 significant digits, not 0, 1 or 100%. */
export function shortClaims(expectedOutcome: string): OutcomeClaim[] {
  return extractClaims(expectedOutcome).filter((c) => !bareInteger(c) && !c.uncertainty && significantDigits(c) < DISTINCTIVE_DIGITS &&
    c.value !== 0 && !(c.unit !== '%' && Math.abs(c.value) === 1) && !(c.unit === '%' && c.value === 100));
}

/**
 * The context words of a short claim: the words of its sentence within {@link CONTEXT_SPAN}
 * words before or after it (numbers and generic words out; `wordsOf` of the claims check), of at
 * least 3 letters. A camelCase name is one word (`WikiText` = `wikitext`): it is one word of
 * context, however the kept file writes it.
 */
export function contextWords(c: OutcomeClaim): string[] {
  const at = c.sentence.indexOf(c.text);
  if (at < 0) return [];
  const before = c.sentence.slice(0, at).split(/\s+/).filter(Boolean).slice(-CONTEXT_SPAN).join(' ');
  const after = c.sentence.slice(at + c.text.length).split(/\s+/).filter(Boolean).slice(0, CONTEXT_SPAN).join(' ');
  return [...new Set(wordsOf(`${before} ${after}`, false).filter((w) => /^[a-z]{3,}$/.test(w) && !FUNCTION_WORDS.has(w)))];
}

/**
 * English words that carry no content (function words, hedges, the verbs of an expected outcome):
 * never context words. `wordsOf` already drops the field's generic words (test, mean, final…).
 */
const FUNCTION_WORDS = new Set(('about above across after again against almost along also although among approximately around because '
  + 'been being below between both but can could does done each either even every expect expected few for from further had has have '
  + 'here how however indicate indicating into just least less like likely many may might more most much must near nearly not now '
  + 'off once only other otherwise over own per perhaps rather roughly same should show showing shown shows similar since some such '
  + 'than that the their them then there these they this those though through thus too toward towards typical typically under until '
  + 'upon very via was were what when where whether which while who whose why will with within without would yet you your').split(' '));

/** A printed number that is part of a dotted version (`4.39` of `^4.39.1`, `2.45` of `2.45.0`): not a value. */
export function inVersion(row: string, n: FoundNumber): boolean {
  const end = n.index + n.text.length;
  return (row[end] === '.' && /\d/.test(row[end + 1] ?? '')) || /\d\.$/.test(row.slice(Math.max(0, n.index - 2), n.index)) ||
    (n.text.startsWith('.') && /\d/.test(row[n.index - 1] ?? '')); // the `.35` of `0.2.35`
}

/** True when `n`, printed in `row`, is a match of the short claim `c` (its value and its kind; module docs). */
export function shortMatch(c: OutcomeClaim, n: FoundNumber, row: string): boolean {
  if (!matchesClaim(c, n) || inVersion(row, n) || /[\p{L}_]/u.test(row[n.index - 1] ?? '')) return false;
  if (c.unit === 'x') return n.unit === 'x';
  if (n.bareInteger) return false;
  if (c.unit === '%') {
    if (n.unit === '%') return true;
    const tol = 0.5 * Math.pow(10, -c.decimals) * (1 + 1e-9) + 1e-12;
    return n.unit === undefined && Math.abs(n.value * 100 - c.value) <= tol; // 62% as the fraction 0.62, never as 62.0
  }
  return n.unit === c.unit;
}

/** Source code: its literals are parameters, not statements of results; only its comment lines are read for short numbers. */
const CODE = /\.(?:py|pyi|pyx|pxd|js|jsx|mjs|cjs|ts|tsx|java|kt|scala|go|rs|c|h|cc|cpp|cxx|hpp|hh|cu|cuh|m|mm|swift|rb|php|pl|pm|lua|r|jl|sh|bash|zsh|fish|ps1|bat|cmd|cmake|mk|gradle|proto|sql|yaml|yml|toml|cfg|ini|conf|gin|jsonnet)$|(?:^|\/)(?:Makefile|Dockerfile|CMakeLists\.txt|Jenkinsfile)$/i;
/** Markup, styles and dependency manifests: their numbers are coordinates, sizes and versions; not read for short numbers. */
const NOT_READ = /\.(?:svg|xml|html?|css|scss|less|lock|csv|tsv)$|(?:^|\/)(?:requirements[^/]*\.txt|package(?:-lock)?\.json|Pipfile|poetry\.lock|yarn\.lock|[^/]*\.lock)$/i;
/** A word of prose (three lower-case letters): a comment without one is commented-out code (`# (10, 0.2, 0.2),`), not a statement. */
const WORD = /\p{Ll}{3}/u;
/** Images drawn as text (SVG): their numbers are geometry; not read for numbers of either kind. */
const IMAGE = /\.svg$/i;
/** A comment line of source code: `#`, `//`, `/*`, `*`, `--`, `%`, `;`, `<!--` first. */
const COMMENT_LINE = /^\s*(?:#|\/\/|\/\*|\*|--|%|;|<!--)/;

/**
 * Which lines of a kept file are read for short numbers: `all` (prose, notes, logs, outputs,
 * notebooks, data), `comments` (source code and configuration: its comment lines), `none`
 * (markup, styles, dependency manifests). The distinctive rule reads every line of every text.
 */
export function shortLines(path: string): 'all' | 'comments' | 'none' {
  if (NOT_READ.test(path)) return 'none';
  return CODE.test(path) ? 'comments' : 'all';
}

export const claimKey = (c: OutcomeClaim): string => `${c.value}\0${c.unit ?? ''}\0${c.decimals}`;

/** Where each distinct claim of every task is printed in the snapshot's texts: one scan of every line. */
export interface NumberIndex {
  distinctive: Map<string, NumberHit[]>;
  short: Map<string, NumberHit[]>;
}

/** Builds the {@link NumberIndex} of `tasks`' outcomes over `snap`'s texts. */
export function numberIndex(tasks: Task[], snap: RepoSnapshot): NumberIndex {
  const distinct = new Map<string, OutcomeClaim>();
  const short = new Map<string, OutcomeClaim>();
  for (const t of tasks) {
    for (const c of distinctiveClaims(t.expectedOutcome)) distinct.set(claimKey(c), c);
    for (const c of shortClaims(t.expectedOutcome)) short.set(claimKey(c), c);
  }
  const index: NumberIndex = { distinctive: new Map([...distinct.keys()].map((k) => [k, []])), short: new Map([...short.keys()].map((k) => [k, []])) };
  if (distinct.size + short.size === 0) return index;
  const dl = [...distinct];
  const sl = [...short];
  for (const [p, text] of snap.texts) {
    if (IMAGE.test(p)) continue;
    const rows = text.split('\n');
    const which = shortLines(p);
    for (let i = 0; i < rows.length; i++) {
      const row = rows[i].length > MAX_LINE ? rows[i].slice(0, MAX_LINE) : rows[i];
      if (!/\d/.test(row)) continue;
      const nums = scanNumbers(row, false);
      if (nums.length === 0) continue;
      for (const [k, c] of dl) {
        const h = index.distinctive.get(k)!;
        if (h.length >= MAX_HITS) continue;
        const n = nums.find((x) => matchesClaim(c, x) && !inVersion(row, x));
        if (n) h.push({ path: p, line: i + 1, matched: n.text });
      }
      if (which === 'none' || nums.length > MAX_NUMBERS_PER_LINE || (which === 'comments' && !(COMMENT_LINE.test(row) && WORD.test(row)))) continue;
      for (const [k, c] of sl) {
        const h = index.short.get(k)!;
        if (h.length >= MAX_SHORT_HITS) continue;
        const n = nums.find((x) => shortMatch(c, x, row));
        if (n) h.push({ path: p, line: i + 1, matched: n.text });
      }
    }
  }
  return index;
}

/** One leaked number of an outcome: the claim, why it counts, and where. */
export interface NumberLeak {
  claim: OutcomeClaim;
  /** The claim's matches in kept files (all of them for a distinctive claim; the windows' for a short one). */
  hits: NumberHit[];
  /** For a short claim: the other short claims or the context words that made it count. */
  company?: { claims: OutcomeClaim[]; words: string[] };
}

/**
 * The leaked numbers of `t`'s expected outcome (module docs) in the files `kept(path)` says the
 * mask keeps. `lines(path)` gives a file's lines (for the context words of a short number).
 */
export function numberLeaks(t: Task, index: NumberIndex, kept: (path: string) => boolean, lines: (path: string) => string[]): NumberLeak[] {
  const out: NumberLeak[] = [];
  const given = extractClaims([t.question, t.method, t.agentInstructions].join('\n'));
  const secret = (c: OutcomeClaim) => !given.some((g) => g.unit === c.unit && matchesClaim(c, g) && matchesClaim(g, c));
  for (const c of distinctiveClaims(t.expectedOutcome).filter(secret)) {
    const hits = (index.distinctive.get(claimKey(c)) ?? []).filter((h) => kept(h.path));
    if (hits.length > 0) out.push({ claim: c, hits });
  }
  const shorts = uniqueBy(shortClaims(t.expectedOutcome).filter(secret), claimKey);
  const keptHits = new Map(shorts.map((c) => [c, (index.short.get(claimKey(c)) ?? []).filter((h) => kept(h.path))]));
  // per claim, per file: the lines it is printed on (for the window test)
  const linesOf = new Map(shorts.map((c) => {
    const byPath = new Map<string, Set<number>>();
    for (const h of keptHits.get(c) ?? []) (byPath.get(h.path) ?? byPath.set(h.path, new Set()).get(h.path)!).add(h.line);
    return [c, byPath];
  }));
  const printedNear = (o: OutcomeClaim, h: NumberHit) => {
    const at = linesOf.get(o)?.get(h.path);
    if (!at) return false;
    for (let d = -WINDOW_LINES; d <= WINDOW_LINES; d++) if (at.has(h.line + d)) return true;
    return false;
  };
  for (const c of shorts) {
    const words = contextWords(c);
    const hits: NumberHit[] = [];
    const withClaims = new Set<OutcomeClaim>();
    const withWords = new Set<string>();
    for (const h of keptHits.get(c) ?? []) {
      const near = shorts.filter((o) => o !== c && o.value !== c.value && printedNear(o, h));
      let found: string[] = [];
      if (near.length === 0 && words.length >= MIN_CONTEXT_WORDS) {
        const text = lines(h.path).slice(Math.max(0, h.line - 1 - WINDOW_LINES), h.line + WINDOW_LINES).join('\n');
        const seen = new Set(wordsOf(text, false));
        found = words.filter((w) => seen.has(w));
      }
      if (near.length === 0 && found.length < MIN_CONTEXT_WORDS) continue;
      hits.push(h);
      for (const o of near) withClaims.add(o);
      for (const w of found) withWords.add(w);
    }
    if (hits.length > 0) out.push({ claim: c, hits, company: { claims: [...withClaims], words: [...withWords] } });
  }
  return out;
}

function uniqueBy<T>(xs: T[], key: (x: T) => string): T[] {
  const seen = new Set<string>();
  return xs.filter((x) => (seen.has(key(x)) ? false : (seen.add(key(x)), true)));
}
