import { stripVTControlCharacters } from 'node:util';
import { scanNumbers, type FoundNumber } from './numbers';
import { quantitiesOf } from './quantities';
import { isSpace, trimEndOf, trimStartOf } from '../untrusted';

/**
 * The numbers a run produced, each with its label (rules below), and the word rules that decide
 * whether a label names the quantity a claim's sentence talks about. Pure; used by the claims
 * check (claims.ts) for the verifier, the Conclusion panel and Submit alike.
 *
 * ## A produced number (one line of an output at a time)
 * Every number of the line (scanNumbers, non-strict) except:
 * - a number inside a name: glued to a letter or `_` before it (`f1`, `layer3`, `x86`), or to a
 *   letter after it that is not a unit (`3rd`, `2D`);
 * - the value of an environment-variable assignment (a shell's or a tool's noise, never a result):
 *   after an upper-case name of 2+ characters glued to `=` (`PYDEVD_DISABLE_FILE_VALIDATION=1`,
 *   `CUDA_VISIBLE_DEVICES=0,1`) when the name holds a `_` or the value is a bare integer
 *   (`PYTHONHASHSEED=0`; `ECE=0.0123` is kept), or after `export NAME=` or a line's `env NAME=`;
 * - an identifier's index: a bare integer glued to `:` glued to a word (`cuda:0`,
 *   `localhost:8080`; `acc:0.93` is kept);
 * - a number inside a formula: next to `*`, `/` or `^`, or next to a binary `+`/`-` (an operand
 *   on both sides: `0.5 + 0.4*sin(…)`, `f + 0.2`); `=` and `:` do not make a formula.
 * A number after `±`, `+-` or `+/-` is the uncertainty of the number before it (`0.00331+-0.00043`
 * gives 0.00331 and the uncertainty 0.00043, never −0.00043).
 *
 * ANSI escape sequences (colour codes such as `\x1b[0;31m`) are removed from the text first
 * (Node's `util.stripVTControlCharacters`), so lines and labels are those of the text as shown.
 *
 * ## Its label
 * The words between the previous number (or a `,` `;` `|` tab separator, or the line start) and
 * the number: `ECE after scaling = 0.0123` → "ECE after scaling"; `"test_accuracy": 0.905` →
 * "test_accuracy"; at most its last 6 words. When that stretch has no word (`ECE: 0.0322 -> 0.0123`, an uncertainty), the
 * label of the previous number on the line is kept, or else the line's words before the number
 * (`control smECE (calibrated, 5 folds): 0.02459` → "control smECE (calibrated,  folds)"). Rows of a table without a header on the same
 * line have no label (a known miss: the header line is not read).
 *
 * ## Its line's keys (conditions)
 * Every number also carries its line's {@link LineKey}s: each value of the line under its key (the
 * label lower-cased, runs of characters other than letters and digits made one space; `#k` for
 * the k-th unlabelled number), the index numbers of `seed 3` and `epoch 12` included, so that two
 * numbers of one label can be told apart as two conditions (`n=100 mae=0.1563` and
 * `n=100000 mae=0.0041`) or two replicates (derived.ts). `arrow` marks a number printed after an
 * arrow from the previous one (`ECE: 0.0322 -> 0.0123`: a change, before and after).
 */

/** A number a run printed, with where and under which label. */
export interface ProducedNumber extends FoundNumber {
  source: string;
  /** 1-based line in `source`. */
  line: number;
  /** The label as written (may be empty). */
  label: string;
  /** Normalised words of the label (see {@link wordsOf}); generic words removed. */
  labelWords: string[];
  /** Output group (one run or record); derived claims combine numbers of one group only. */
  group: string;
  /** Every value of its line under its key (one array shared by the line's numbers; module docs). */
  keys?: LineKey[];
  /** Printed after `->`, `→` or `=>` from the previous number of its line. */
  arrow?: boolean;
}

/** One value of a line under its key (module docs, "Its line's keys"). */
export interface LineKey {
  key: string;
  /** The number as printed. */
  value: string;
}

/** The key of a label (module docs): lower-cased, runs of other characters one space. */
export function labelKey(label: string): string {
  return label.toLowerCase().replace(/[^\p{L}\d]+/gu, ' ').trim();
}

/**
 * What a sentence of a conclusion names, for {@link labelNamed}: its normalised words
 * ({@link wordsOf}), its words in order ({@link wordSeq}), the quantities of the field's table it
 * names (quantities.ts, broader words included) and its plain lower-case words (for condition keys
 * such as `seed`, which {@link wordsOf} leaves out as generic).
 */
export interface Naming {
  words: Set<string>;
  seq: string[];
  quantities: Set<string>;
  plain: Set<string>;
}

/** The {@link Naming} of a sentence. */
export function namingOf(sentence: string): Naming {
  const plain = new Set(sentence.toLowerCase().split(/[^\p{L}\d]+/u).filter(Boolean).flatMap((w) => (w.length >= 4 && w.endsWith('s') ? [w, w.slice(0, -1)] : [w])));
  return { words: new Set(wordsOf(sentence)), seq: wordSeq(sentence), quantities: quantitiesOf(sentence, true), plain };
}

const labelQuantities = new Map<string, Set<string>>();

/** The quantities of the field's table a label names (memoised: labels repeat). */
export function quantitiesOfLabel(label: string): Set<string> {
  let q = labelQuantities.get(label);
  if (q === undefined) {
    if (labelQuantities.size > 10_000) labelQuantities.clear();
    labelQuantities.set(label, (q = quantitiesOf(label, false)));
  }
  return q;
}

/**
 * True when a printed label names what the sentence names: its own words (a shared word, a
 * prefix, an acronym: {@link namesSame}) or one quantity of the field's table (quantities.ts:
 * `mae` for "the error", `acc` for "accuracy", `ppl` for "perplexity").
 */
export function labelNamed(label: string, labelWords: string[], n: Naming): boolean {
  if (labelWords.length === 0 && label === '') return false;
  if (labelWords.length > 0 && namesSame(labelWords, n.words, n.seq, wordSeq(label))) return true;
  if (n.quantities.size === 0) return false;
  for (const q of quantitiesOfLabel(label)) if (n.quantities.has(q)) return true;
  return false;
}

/** True when two labels name one quantity: their words ({@link namesSame}) or one quantity of the field's table. */
export function labelsSame(a: { label: string; labelWords: string[] }, b: { label: string; labelWords: string[] }): boolean {
  if (a.labelWords.length > 0 && b.labelWords.length > 0 && namesSame(a.labelWords, new Set(b.labelWords), wordSeq(b.label), wordSeq(a.label))) return true;
  const qa = quantitiesOfLabel(a.label);
  if (qa.size === 0) return false;
  for (const q of quantitiesOfLabel(b.label)) if (qa.has(q)) return true;
  return false;
}

/** Words that do not name a quantity on their own (split, set, statistic or position words). */
const GENERIC = new Set(['test', 'train', 'training', 'val', 'valid', 'validation', 'dev', 'eval', 'evaluation', 'before', 'after',
  'mean', 'avg', 'average', 'std', 'stdev', 'sd', 'se', 'final', 'best', 'total', 'value', 'result', 'score', 'metric', 'overall',
  'new', 'old', 'current', 'epoch', 'step', 'seed', 'run', 'iter', 'iteration', 'fold', 'the', 'and', 'of', 'to', 'in', 'on', 'at',
  'is', 'was', 'for', 'with', 'from', 'by', 'an', 'a', 'we', 'it', 'its', 'this', 'that', 'are', 'were', 'be', 'as', 'or', 'vs',
  'set', 'split', 'data', 'model', 'per', 'all', 'stayed', 'reached', 'gave', 'got', 'has', 'have', 'our', 'than', 'while']);

/** Words whose label marks a position or index, not a measured quantity (`seed 3`, `epoch 12`); group 1 is the word. */
const INDEX_WORD = /(?:^|[\s[(])(seed|epoch|step|iter|iteration|fold|run|trial|batch|line|row|id|no)$/i;

/**
 * The word that marks a position or index at the end of `seg` (`seed 3`, `epoch: 12`, `[run=2`),
 * lower-cased as written, or undefined: the word, then spaces, an optional `:`, `=` or `#`,
 * spaces (`/(?:^|[\s[(])(seed|…)\s*[:=#]?\s*$/i`, read from the end in one pass; only the last
 * 12 characters can hold the word and the character before it).
 */
export function indexWordAtEnd(seg: string): string | undefined {
  let t = trimEndOf(seg, isSpace);
  if (t.endsWith(':') || t.endsWith('=') || t.endsWith('#')) t = trimEndOf(t.slice(0, -1), isSpace);
  return INDEX_WORD.exec(t.length > 12 ? t.slice(-12) : t)?.[1];
}

/** True when `seg` ends with an arrow and spaces (`0.0322 -> `): the number after it is the "after" of a change printed on one line. */
export function endsWithArrow(seg: string): boolean {
  const t = trimEndOf(seg, isSpace);
  return t.endsWith('->') || t.endsWith('→') || t.endsWith('=>');
}

/**
 * Normalised words of a text: split at characters other than letters and digits (words of digits
 * only dropped; `f1`, `r2` kept), snake_case and camelCase (`smECE` → sm, ece),
 * lower-cased, a plural `s` dropped (words of 4+ letters), generic words removed. With
 * `splitCamel` false a camelCase word stays one word (`WikiText` → wikitext, as `wikitext` is):
 * for comparing prose with prose, where one name is written either way.
 */
export function wordsOf(text: string, splitCamel = true): string[] {
  const parts = (splitCamel ? text.replace(/([a-z])([A-Z])/g, '$1 $2') : text).toLowerCase().split(/[^a-z0-9]+/);
  const out = new Set<string>();
  for (const p of parts) {
    if (p.length < 2 || /^\d+$/.test(p)) continue;
    const w = p.length >= 4 && p.endsWith('s') && !p.endsWith('ss') ? p.slice(0, -1) : p;
    if (!GENERIC.has(w) && !GENERIC.has(p)) out.add(w);
  }
  return [...out];
}

const initials = (ws: string[]) => ws.map((w) => w[0]).join('');

/**
 * True when the label's words and the sentence's words name the same quantity: a shared word, one
 * a prefix of the other (3+ letters: `acc`/`accuracy`), or an acronym of consecutive words of the
 * other side (`ece` = expected calibration error, `mse` = mean squared error), also at the end of
 * a word (`smece` ends with `ece`). `sentenceSeq` is the sentence's words in order (for acronyms).
 */
export function namesSame(labelWords: string[], sentenceWords: Set<string>, sentenceSeq: string[], labelSeq: string[] = labelWords): boolean {
  for (const l of labelWords) {
    for (const s of sentenceWords) {
      if (l === s) return true;
      const [a, b] = l.length <= s.length ? [l, s] : [s, l];
      if (a.length >= 3 && b.startsWith(a)) return true;
    }
    if (l.length >= 2 && l.length <= 6 && hasAcronym(l, sentenceSeq)) return true;
  }
  for (const s of sentenceWords) if (s.length >= 2 && s.length <= 6 && hasAcronym(s, labelSeq)) return true;
  return false;
}

function hasAcronym(word: string, seq: string[]): boolean {
  for (let k = 2; k <= Math.min(word.length, seq.length); k++) {
    const tail = word.slice(word.length - k);
    if (word.length - k > 0 && k < 3) continue; // a suffix acronym needs 3+ letters (smece → ece)
    for (let i = 0; i + k <= seq.length; i++) if (initials(seq.slice(i, i + k)) === tail) return true;
  }
  return false;
}

/** Words of `text` in order, generic words kept out (for acronyms). */
export function wordSeq(text: string): string[] {
  return text.replace(/([a-z])([A-Z])/g, '$1 $2').toLowerCase().split(/[^a-z]+/).filter((w) => w.length >= 1 && !GENERIC.has(w));
}

function nonSpace(text: string, from: number, step: 1 | -1): { ch: string; at: number } {
  let i = from;
  while (i >= 0 && i < text.length && /\s/.test(text[i])) i += step;
  return { ch: text[i] ?? '', at: i };
}

const OPERAND = /[\p{L}\d_)\]]/u;

/** True when the number at `n` is an operand of a formula (rules in the module docs). */
function inFormula(line: string, n: FoundNumber): boolean {
  const before = nonSpace(line, n.index - 1, -1);
  const after = nonSpace(line, n.index + n.text.length, 1);
  if ('*/^'.includes(before.ch) && before.ch !== '') return true;
  if ('*/^'.includes(after.ch) && after.ch !== '') return true;
  if (n.uncertainty) return false;
  if ((before.ch === '+' || before.ch === '-') && OPERAND.test(nonSpace(line, before.at - 1, -1).ch)) return true;
  if ((after.ch === '+' || after.ch === '-') && line.slice(after.at, after.at + 2) !== '+-' && line.slice(after.at, after.at + 3) !== '+/-') {
    const next = nonSpace(line, after.at + 1, 1).ch;
    if (next !== '' && /[\p{L}\d_(.]/u.test(next)) return true;
  }
  return false;
}

function inName(line: string, n: FoundNumber): boolean {
  const prev = line[n.index - 1] ?? '';
  const next = line[n.index + n.text.length] ?? '';
  return /[\p{L}_]/u.test(prev) || (n.unit === undefined && /[\p{L}_]/u.test(next));
}

const NAME_CHAR = /[A-Z0-9_]/;
const WORD_CHAR = /[\p{L}\d_$]/u;

/**
 * The environment variable whose value `head` ends in (`… CUDA_VISIBLE_DEVICES=`, `$X="`), or
 * undefined: `NAME=` (upper case, digits and `_`, at least two characters, first a letter),
 * optionally `$` before it, not glued to a word, and an optional quote after `=`. Read from the
 * end (`/(?:^|[^\p{L}\d_$])\$?([A-Z][A-Z0-9_]+)=["']?$/u`, without its retries at every start).
 */
function envNameAtEnd(head: string): string | undefined {
  let end = head.length;
  if (head[end - 1] === '"' || head[end - 1] === "'") end--;
  if (head[end - 1] !== '=') return undefined;
  end--;
  let start = end;
  while (start > 0 && NAME_CHAR.test(head[start - 1])) start--;
  const name = head.slice(start, end);
  if (name.length < 2 || !/[A-Z]/.test(name[0])) return undefined;
  let before = start - 1;
  if (head[before] === '$') before--;
  return before < 0 || !WORD_CHAR.test(head[before]) ? name : undefined;
}

/** True when `before` ends in an identifier's `name:` (a letter, then letters, digits, `_`, `.`, `-`): `/[\p{L}][\p{L}\d_.-]*:$/u` read from the end. */
function endsWithNameColon(before: string): boolean {
  if (!before.endsWith(':')) return false;
  for (let i = before.length - 2; i >= 0; i--) {
    const c = before[i];
    if (/\p{L}/u.test(c)) return true;
    if (!/[\d_.-]/.test(c)) return false;
  }
  return false;
}
const EXPORTED = /(?:(?:^|\s)export|^\s*(?:\$\s*)?env)\s+(?:[\w.-]+=\S*\s+)*[\p{L}_][\p{L}\d_]*=["']?$/u;

/**
 * True when the number at `n` is the value of an environment-variable assignment or an
 * identifier's index (rules in the module docs). Scans at most 200 characters back.
 */
function inAssignmentOrId(line: string, n: FoundNumber): boolean {
  const before = line.slice(Math.max(0, n.index - 200), n.index);
  // `CUDA_VISIBLE_DEVICES=0,1`: the numbers after the first are glued to `,` of the same value.
  const value = before.endsWith(',') ? before.slice(lastSpace(before) + 1) : '';
  const head = before.slice(0, before.length - value.length) + withoutNumberList(value);
  const env = envNameAtEnd(head);
  if (env && (env.includes('_') || n.bareInteger)) return true;
  if (EXPORTED.test(head)) return true;
  return n.bareInteger && endsWithNameColon(before);
}

/** The index of the last whitespace character of `s`, or -1. */
function lastSpace(s: string): number {
  for (let i = s.length - 1; i >= 0; i--) if (isSpace(s[i])) return i;
  return -1;
}

/** `value` without the list of numbers it ends in (`a=0,1,` → `a=`): `value.replace(/(?:[\d.]+,)+$/, '')` read from the end. */
function withoutNumberList(value: string): string {
  let i = value.length;
  while (i > 0 && value[i - 1] === ',') {
    let k = i - 1;
    while (k > 0 && /[\d.]/.test(value[k - 1])) k--;
    if (k === i - 1) break;
    i = k;
  }
  return value.slice(0, i);
}

/** Characters trimmed off a label's end and start (`acc: `, `("loss"=`). */
const LABEL_END = (c: string) => isSpace(c) || ':="\'(,'.includes(c);
const LABEL_START = (c: string) => isSpace(c) || '{[("\':,='.includes(c);

const NUMBER_TEXT = /(?<![\p{L}\d_.])[-+]?\d[\d.,eE+-]*/gu;

/** The words of `row` before `index`, numbers taken out ('' when there is no word). */
function linePrefix(row: string, index: number): string {
  const prefix = trimEndOf(row.slice(0, index).replace(NUMBER_TEXT, ' '), LABEL_END).trim();
  return wordsOf(prefix).length ? tail(prefix) : '';
}

/** The last {@link LABEL_WORDS} words of a label (a long line's prefix is not all label). */
function tail(label: string): string {
  const parts = label.split(/\s+/);
  return parts.length > LABEL_WORDS ? parts.slice(-LABEL_WORDS).join(' ') : label;
}

/** Words kept of a label, at most. */
export const LABEL_WORDS = 6;

/**
 * The produced numbers of one output text (rules in the module docs), line by line.
 * @param group the run or record the text belongs to (derived claims stay within one group)
 */
export function producedNumbers(source: string, text: string, group = ''): ProducedNumber[] {
  const out: ProducedNumber[] = [];
  const shown = text.includes('\x1b') || text.includes('\x9b') ? stripVTControlCharacters(text) : text;
  const lines = shown.split('\n');
  for (let li = 0; li < lines.length; li++) {
    const line = lines[li];
    if (!/\d/.test(line)) continue;
    const row = line.length > 20_000 ? line.slice(0, 20_000) : line;
    let prevEnd = 0;
    let prevLabel = '';
    let unlabelled = 0;
    const keys: LineKey[] = [];
    for (const n of scanNumbers(row, false)) {
      if (inName(row, n) || inFormula(row, n) || inAssignmentOrId(row, n)) continue; // part of the text of a label, not a value
      const seg = row.slice(prevEnd, n.index);
      prevEnd = n.index + n.text.length;
      const index = indexWordAtEnd(seg);
      if (index && n.bareInteger) { keys.push({ key: labelKey(index), value: n.text }); continue; }
      const rawLast = trimEndOf(trimStartOf(seg.split(/[,;|\t]|\s{3,}/).pop() ?? '', LABEL_START), LABEL_END).trim();
      const last = tail(rawLast);
      const lastWords = n.uncertainty ? [] : wordsOf(last);
      const label = lastWords.length === 0 ? (prevLabel || linePrefix(row, n.index)) : last;
      prevLabel = label;
      // built field by field: an object spread here costs ten times the scan
      const pn: ProducedNumber = { text: n.text, value: n.value, decimals: n.decimals, index: n.index, bareInteger: n.bareInteger,
        source, line: li + 1, label, labelWords: label === last ? lastWords : wordsOf(label), group, keys };
      if (n.unit !== undefined) pn.unit = n.unit;
      if (n.uncertainty) pn.uncertainty = true;
      if (endsWithArrow(seg)) pn.arrow = true;
      if (!n.uncertainty) keys.push({ key: labelKey(last) || labelKey(label) || `#${unlabelled++}`, value: n.text }); // `n=100`: key n, though a one-letter label names nothing
      out.push(pn);
    }
  }
  return out;
}
