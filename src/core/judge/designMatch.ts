import { distance } from 'fastest-levenshtein';
import type { RoleVar } from './common';
import type { DesignVerdict } from './types';
import { hasLineTerminator, isSpace, trimEndOf } from '../untrusted';

/**
 * The heuristic pre-judge's design matching (issue 14, item 5): word overlap that respects roles.
 *
 * Solver design items are read with their role when the design states one:
 * - the structured stepper design writes `Constant: name — description`, `Independent: …`,
 *   `Dependent: …` (src/core/session/design.ts);
 * - free text: an item starting with a role cue (`independent:`, `dependent variable:`, `IV:`,
 *   `DV:`, `control variable:`, `fixed:`), or a heading / bullet naming a role (`### Independent
 *   Variables`, `- **Dependent Variables**:`), which gives its role to the items under it until the
 *   next heading. Sub-bullets (deeper indentation) join their parent item.
 * An item of a stated role is never matched to a variable of another role; an item with no stated
 * role may match any variable, and the verdict's reason says the role could not be told.
 *
 * Scores: name = share of the variable name's words in the item's head (text before its first
 * `:` or `—`, or the whole item); description = share of the variable's description (and values)
 * words in the whole item, or, for an item of 3+ words, the share of the item's words in the
 * description, whichever is higher, and 0 unless at least two words are shared; words equal up to
 * one edit for words of 5+ letters. When the item's head
 * and the variable name are both single identifiers (`ece`, `ece_bins`), they must be equal for the
 * name score to count. Thresholds: {@link DESIGN_THRESHOLDS}, tuned on the non-held-out part of
 * test/data/prejudge-labels.json.
 */
export interface DesignItem {
  text: string;
  role: DesignVerdict['role'] | null;
  /** How the role was read: `label` (`Constant: …`), `section` (a heading above), or none. */
  roleSource: 'label' | 'section' | null;
}

export const DESIGN_THRESHOLDS = { nameMatched: 0.6, descMatched: 0.5, namePartial: 0.5, descPartial: 0.3 };

const ROLE_WORDS: Array<[RegExp, DesignVerdict['role']]> = [
  [/\b(independent|iv|manipulated)\b/i, 'independent'],
  [/\b(dependent|dv|response|outcome|measured)\b/i, 'dependent'],
  [/\b(constant|control(?:led)?|fixed|held[- ]constant)\b/i, 'constant'],
];

function roleOf(s: string): DesignVerdict['role'] | null {
  for (const [re, role] of ROLE_WORDS) if (re.test(s)) return role;
  return null;
}

const ROLE_LABEL = /^\W*(independent|dependent|constant|control(?:led)?|fixed|iv|dv)(?:\s+variables?)?/i;

/**
 * `Independent: x`, `Dependent variable - y`, `IV: z`, `Control variables: …` (bold stars allowed
 * around the separator): the role word and the rest, or undefined. The separator is `:`, `—`,
 * `–` or `- `. Read in one pass; the expression this replaces
 * (`…\s*\**\s*(?::|—|–|-\s)\s*\**\s*(.*)$`) tried every split of a long run of spaces between its
 * `\s*`s.
 */
export function roleLabel(t: string): { role: string; rest: string } | undefined {
  const m = ROLE_LABEL.exec(t);
  if (!m) return undefined;
  let i = skipRun(t, skipRun(t, skipRun(t, m[0].length, isSpace), (x) => x === '*'), isSpace);
  const c = t[i];
  if (c === ':' || c === '—' || c === '–') i += 1;
  else if (c === '-' && i + 1 < t.length && isSpace(t[i + 1])) i += 2;
  else return undefined;
  const rest = t.slice(skipRun(t, skipRun(t, skipRun(t, i, isSpace), (x) => x === '*'), isSpace));
  if (hasLineTerminator(rest)) return undefined;
  return { role: m[1], rest };
}

/**
 * A heading line: a markdown heading (`## Variables`), or a short line (title of 1 to 60
 * characters, after an optional bullet or number) that ends with `:` (bold stars allowed around
 * it): its title, or undefined. One pass over the line.
 */
export function headingTitle(raw: string): string | undefined {
  let i = 0;
  while (i < raw.length && isSpace(raw[i])) i++;
  const lead = i;
  // a markdown heading: 1 to 6 `#`, whitespace, then the title (what is left of the line)
  let h = i;
  while (h < raw.length && raw[h] === '#' && h - i < 7) h++;
  if (h > i && h - i <= 6 && h < raw.length && isSpace(raw[h]) && raw.length - h >= 2 && !hasLineTerminator(raw.slice(h + 1))) {
    return raw.slice(h + 1);
  }
  // a bullet or a number (tried with it first, then without), spaces and stars, the title up to
  // the first `:` or `*`, then only stars, spaces and one or two `:`
  let j = lead;
  if ('-*+'.includes(raw[j] ?? '\0')) j++;
  else {
    let d = j;
    while (d < raw.length && raw[d] >= '0' && raw[d] <= '9') d++;
    if (d > j && (raw[d] === '.' || raw[d] === ')')) j = d + 1;
  }
  return shortTitle(raw, lead, j) ?? (j > lead ? shortTitle(raw, lead, lead) : undefined);
}

/** The title of a short heading line whose title part (spaces and stars first) starts at `from`; see {@link headingTitle}. */
function shortTitle(raw: string, lead: number, from: number): string | undefined {
  let j = skipRun(raw, from, isSpace);
  const stars = j;
  j = skipRun(raw, j, (x) => x === '*');
  let k = j;
  while (k < raw.length && raw[k] !== ':' && raw[k] !== '*') k++;
  const title = raw.slice(j, k);
  if (hasLineTerminator(title)) return undefined;
  // the shortest title first (its trailing spaces then belong to the end), as the lazy `{1,60}?` did
  const bare = trimEndOf(title, isSpace);
  if (bare.length >= 1 && bare.length <= 60 && headingEnd(raw.slice(j + bare.length))) return bare;
  if (title.length >= 1 && title.length <= 60 && headingEnd(raw.slice(k))) return title;
  // a title of one space, given back by the spaces before the bullet or before the stars
  for (const p of [lead - 1, stars - 1]) if (p >= 0 && isSpace(raw[p]) && headingEnd(raw.slice(p + 1))) return '';
  return undefined;
}

/** The index after the run of characters that pass `test` from `i`. */
function skipRun(s: string, i: number, test: (c: string) => boolean): number {
  while (i < s.length && test(s[i])) i++;
  return i;
}

/** True when `s` is `\**\s*:?\**\s*:\s*\**\s*` (stars, spaces, an optional `:`, stars, spaces, `:`, stars, spaces). */
function headingEnd(s: string): boolean {
  // runs of one character class collapse to one (each part of the form is a run), so the form is checked on a short string
  let short = '';
  for (const c of s) {
    const k = c === ':' ? ':' : c === '*' ? '*' : isSpace(c) ? ' ' : undefined;
    if (k === undefined) return false;
    if (k === ':' || short[short.length - 1] !== k) short += k;
    if (short.length > 12) return false;
  }
  return /^\*? ?:?\*? ?: ?\*? ?$/.test(short);
}

/** Reads the solver's design lines into items with roles (see the module comment). */
export function designItems(lines: string[]): DesignItem[] {
  const items: (DesignItem & { indent: number })[] = [];
  let section: DesignVerdict['role'] | null = null;
  let sectionIndent = -1;
  let firstInSection = 0; // items before this index belong to an earlier section: never parents
  const bullet = /^\s*(?:[-*+]|\d+[.)])\s/;
  for (const raw of lines.flatMap((l) => l.split(/\r?\n/))) {
    if (!raw.trim()) continue;
    const indent = raw.length - raw.trimStart().length;
    const label = roleLabel(raw.trim());
    if (label && label.rest.trim()) {
      items.push({ text: label.rest.trim(), role: roleOf(label.role), roleSource: 'label', indent });
      continue;
    }
    const heading = headingTitle(raw);
    if (heading !== undefined) {
      const title = heading.trim();
      const r = /variables?|factors?|metrics?|measures?/i.test(title) || label ? roleOf(title) : null;
      const markdown = /^#/.test(raw.trim());
      if (r || markdown || label) {
        section = r;
        sectionIndent = markdown ? -1 : indent;
        firstInSection = items.length;
        continue;
      }
    }
    const text = raw.trim().replace(/^(?:[-*+]|\d+[.)])\s+/, '').replace(/\*\*/g, '').trim();
    const parent = items.length > firstInSection ? items[items.length - 1] : undefined;
    if (parent && indent > parent.indent && bullet.test(raw)) {
      parent.text = /:$/.test(parent.text) ? `${parent.text} ${text}` : `${parent.text}; ${text}`;
      continue;
    }
    if (section !== null && indent <= sectionIndent) section = null; // back at the heading's level: its section ended
    if (section !== null && sectionIndent < 0 && !bullet.test(raw) && items.length > firstInSection) section = null; // prose after a markdown section's list
    items.push({ text, role: section, roleSource: section ? 'section' : null, indent });
  }
  return items.map(({ text, role, roleSource }) => ({ text, role, roleSource }));
}

const STOP = new Set(['the', 'and', 'for', 'with', 'from', 'that', 'this', 'are', 'was', 'were', 'each', 'into', 'over', 'such', 'their', 'its', 'use', 'used', 'using', 'e.g', 'i.e', 'etc', 'of', 'to', 'in', 'on', 'a', 'an', 'or', 'by', 'as', 'is', 'be', 'at', 'vs', 'via', 'variable', 'variables']);

/** The last texts split by {@link words} (each design item is compared with every ground-truth variable). */
const WORDS_SEEN = new Map<string, string[]>();

export function words(s: string): string[] {
  const seen = WORDS_SEEN.get(s);
  if (seen) return seen;
  const w = splitWords(s);
  if (WORDS_SEEN.size >= 256) WORDS_SEEN.delete(WORDS_SEEN.keys().next().value as string);
  WORDS_SEEN.set(s, w);
  return w;
}

function splitWords(s: string): string[] {
  return [...new Set(s.replace(/([a-z])([A-Z])/g, '$1 $2').toLowerCase().split(/[^a-z0-9]+/)
    .filter((w) => w.length >= 2 && !STOP.has(w)).map((w) => w.replace(/(?<=\w{3})s$/, '')))];
}

function near(w: string, h: string): boolean {
  // an edit distance of at most 1 needs lengths at most 1 apart: checked first (a 990,000-character word is never compared)
  return h === w || (w.length >= 5 && h.length >= 5 && Math.abs(w.length - h.length) <= 1 && distance(w, h) <= 1);
}

/** Share of `target` words found in `have`, and the words found. */
function coverage(target: string[], have: string[]): { score: number; hit: string[] } {
  if (target.length === 0) return { score: 0, hit: [] };
  const hit = target.filter((w) => have.some((h) => near(w, h)));
  return { score: hit.length / target.length, hit };
}

function head(item: string): string {
  const m = /^(.{1,80}?)\s*(?::|—|–|\s-\s)/.exec(item);
  return m ? m[1] : item;
}

const IDENT = /^[A-Za-z_][A-Za-z0-9_]*$/;

export interface PairScore {
  verdict: DesignVerdict['verdict'];
  name: number;
  desc: number;
  /** Why: the words found, or the role that ruled the item out. */
  why: string;
  roleConflict: boolean;
}

/** Scores one ground-truth variable against one solver item. */
export function designPair(v: RoleVar, item: DesignItem): PairScore {
  const nameWords = words(v.name.replace(/_/g, ' '));
  const h = head(item.text).trim();
  let name = coverage(nameWords, words(h));
  if (IDENT.test(v.name) && IDENT.test(h) && h.toLowerCase() !== v.name.toLowerCase() && (h.includes('_') || v.name.includes('_'))) {
    name = { score: 0, hit: [] }; // `ece` is not `ece_bins`
  }
  const descText = `${v.description} ${(v.values ?? []).join(' ')}`;
  const itemWords = words(item.text);
  const descCov = coverage(words(descText), itemWords);
  // a description match needs two shared words; a short item may also be covered by a long description
  const itemCov = itemWords.length >= 3 ? coverage(itemWords, words(descText)).score : 0;
  const desc = descCov.hit.length >= 2 ? { score: Math.max(descCov.score, itemCov), hit: descCov.hit } : { score: 0, hit: descCov.hit };
  const t = DESIGN_THRESHOLDS;
  let verdict: DesignVerdict['verdict'] = name.score >= t.nameMatched || desc.score >= t.descMatched ? 'matched'
    : name.score >= t.namePartial || desc.score >= t.descPartial ? 'partial' : 'missing';
  const roleConflict = item.role !== null && item.role !== v.role;
  const hits = [...new Set([...name.hit, ...desc.hit])];
  let why = `${name.hit.length}/${nameWords.length} name words, ${desc.hit.length}/${words(descText).length} description words (${desc.hit.length}/${itemWords.length} of the item's)${hits.length ? ` (${hits.slice(0, 6).join(', ')})` : ''}`;
  if (roleConflict && verdict !== 'missing') {
    why = `${why}; the item is stated as ${item.role}, the variable is ${v.role}: not counted`;
    verdict = 'missing';
  }
  return { verdict, name: name.score, desc: desc.score, why, roleConflict };
}

function rank(k: DesignVerdict['verdict']): number {
  return k === 'matched' ? 2 : k === 'partial' ? 1 : 0;
}

/**
 * One verdict per ground-truth variable: the best item of a compatible role. Returns the verdicts
 * and, per item, whether it matched some variable (for precision).
 */
export function matchDesign(vars: RoleVar[], items: DesignItem[]): { verdicts: DesignVerdict[]; relevant: boolean[]; rolesStated: boolean } {
  const relevant = new Array(items.length).fill(false);
  const rolesStated = items.some((i) => i.role !== null);
  const verdicts = vars.map((v): DesignVerdict => {
    let best: { s: PairScore; i: number } | undefined;
    let conflict: { s: PairScore; i: number } | undefined;
    items.forEach((it, i) => {
      const s = designPair(v, it);
      if (s.roleConflict) {
        if (!conflict || s.name + s.desc > conflict.s.name + conflict.s.desc) conflict = { s, i };
        return;
      }
      if (s.verdict !== 'missing') relevant[i] = true;
      if (!best || rank(s.verdict) > rank(best.s.verdict) || (rank(s.verdict) === rank(best.s.verdict) && s.name + s.desc > best.s.name + best.s.desc)) best = { s, i };
    });
    const kind = best?.s.verdict ?? 'missing';
    const it = best ? items[best.i] : undefined;
    let reason: string;
    if (kind !== 'missing' && it) {
      const role = it.role ? `stated as ${it.role} (${it.roleSource === 'label' ? 'its label' : 'its section'}), as the variable` : 'role not stated in the design, so not checked';
      reason = `heuristic: ${kind} by word overlap with "${clip(it.text)}": ${best!.s.why}; role: ${role}`;
    } else {
      reason = `heuristic: no design item of a compatible role shares enough words (best: ${best ? best.s.why : 'no items'})`;
      if (conflict && (conflict.s.name + conflict.s.desc) > (best ? best.s.name + best.s.desc : 0)) {
        reason += `; "${clip(items[conflict.i].text)}" has more words in common but is stated as ${items[conflict.i].role}, the variable is ${v.role}`;
      }
      if (!rolesStated) reason += '; the design states no roles';
    }
    return { variable: v.name, role: v.role, verdict: kind, quote: kind === 'missing' || !it ? '' : it.text, reason };
  });
  return { verdicts, relevant, rolesStated };
}

function clip(s: string): string {
  return s.length > 80 ? `${s.slice(0, 77)}…` : s;
}
