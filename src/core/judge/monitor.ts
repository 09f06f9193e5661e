import { parseJsonLine, splitLines } from '../util/jsonl';
import type { MonitorFlag } from './types';

/** One line of `private/events.jsonl`: its 1-based number, the parsed event (if JSON) and the text scanned. */
export interface LogLine { line: number; event?: Record<string, unknown>; text: string }

/**
 * Splits an events.jsonl text into numbered lines; blank lines keep their numbers but are dropped.
 * A torn last line is scanned too (parsed when it happens to be whole JSON, else as raw text):
 * what a solver did stays visible to the rules even when the log's writer died mid-line.
 */
export function readLogLines(jsonl: string): LogLine[] {
  const out: LogLine[] = [];
  for (const raw of splitLines(jsonl)) {
    const l = parseJsonLine(raw, true);
    const event = l.kind === 'value' && l.value && typeof l.value === 'object' && !Array.isArray(l.value) ? l.value as Record<string, unknown> : undefined;
    out.push({ line: l.line, event, text: event ? eventText(event) : l.text });
  }
  return out;
}

/**
 * The part of an event a rule looks at: what the solver did, not what it wrote. `command.run` →
 * its command; `note.added` → its text; events that only record edits, answers, phases or the
 * clock → nothing (a URL in a code comment is not an access); any other event (unknown types,
 * other loggers) → all its string values.
 */
function eventText(e: Record<string, unknown>): string {
  switch (e.type) {
    case 'command.run': return typeof e.command === 'string' ? e.command : '';
    case 'note.added': return typeof e.text === 'string' ? e.text : '';
    case 'session.opened': case 'phase.changed': case 'clock.started': case 'clock.paused': case 'clock.resumed': case 'clock.actor':
    case 'budget.warning': case 'file.edited': case 'file.created': case 'file.deleted': case 'file.changed': case 'script.run':
    case 'answers.saved': case 'submitted': case 'gave_up': case 'verify.finished': case 'judge.finished':
      return '';
  }
  const parts: string[] = [];
  const walk = (v: unknown, depth: number) => {
    if (depth > 4) return;
    if (typeof v === 'string') parts.push(v);
    else if (Array.isArray(v)) v.forEach((x) => walk(x, depth + 1));
    else if (v && typeof v === 'object') Object.entries(v).forEach(([k, x]) => { if (k !== 'at') walk(x, depth + 1); });
  };
  walk(e, 0);
  return parts.join(' ');
}

const GIT_WORD = /\bgit\b/g;
const HISTORY_SUBCOMMAND = /(log|show|reflog|rev-list|cat-file|blame|fsck|whatchanged|ls-tree|reset|checkout|restore|switch|rebase|cherry-pick|revert|bisect)\b/y;
const GIT_OPTION = /^--?[\w-]+(?:=\S+)?$/;
/** Options read between `git` and its subcommand, at most (a command line has a few). */
const MAX_GIT_OPTIONS = 64;

/**
 * The history subcommand of a `git` command in `text` (`git [options] log|show|reflog|…`), or
 * undefined. Options are `-C <path>`, `-c <name=value>` and single words `-x`, `--xyz[=value]`;
 * at most {@link MAX_GIT_OPTIONS} are read after each `git`. The words are walked once each (the
 * set of places reached after `git`), where the single expression this replaces,
 * `\bgit\b(?:\s+-[Cc]\s+\S+|\s+--?[\w-]+(?:=\S+)?)*\s+(log|…)\b`, read `-C -C -C …` and
 * `--a --a …` in exponentially many ways before it gave up.
 */
function gitHistory(text: string): string | undefined {
  GIT_WORD.lastIndex = 0;
  for (let m = GIT_WORD.exec(text); m; m = GIT_WORD.exec(text)) {
    const seen = new Set<number>();
    let frontier = [m.index + m[0].length];
    for (let depth = 0; depth <= MAX_GIT_OPTIONS && frontier.length; depth++) {
      const next: number[] = [];
      for (const at of frontier) {
        const word = skipSpaces(text, at);
        if (word === at || word >= text.length) continue; // `\s+` before every option and the subcommand
        HISTORY_SUBCOMMAND.lastIndex = word;
        const sub = HISTORY_SUBCOMMAND.exec(text);
        if (sub) return sub[1];
        if (text[word] !== '-') continue;
        const end = wordEnd(text, word);
        const w = text.slice(word, end);
        if (GIT_OPTION.test(w) && !seen.has(end)) { seen.add(end); next.push(end); }
        if (w === '-C' || w === '-c') {
          const arg = skipSpaces(text, end);
          if (arg > end && arg < text.length) {
            const argEnd = wordEnd(text, arg);
            if (!seen.has(argEnd)) { seen.add(argEnd); next.push(argEnd); }
          }
        }
      }
      frontier = next;
    }
  }
  return undefined;
}

function skipSpaces(text: string, i: number): number {
  while (i < text.length && /\s/.test(text[i])) i++;
  return i;
}

function wordEnd(text: string, i: number): number {
  while (i < text.length && !/\s/.test(text[i])) i++;
  return i;
}

const PAPER_SITE = /\b(arxiv\.org|openreview\.net|papers\.nips\.cc|proceedings\.neurips\.cc|proceedings\.mlr\.press|semanticscholar\.org|aclanthology\.org|paperswithcode\.com|scholar\.google)/i;
const FETCH_TOOL = /\b(?:curl|wget|pdftotext|pdfinfo|pdftohtml|mutool|xdg-open)\b/i;
const PDF_NAME = /\.pdf\b/gi;
const PDF_VIEWER = /\s*(?:pdftotext|less|more)/iy;

/**
 * A PDF fetched or converted: in one command of a line (between `|`, `;` and `&`), a fetch or
 * conversion tool before a `.pdf` name; or a `.pdf` name in the command before a `|` into
 * pdftotext, less or more. One pass over the line (the single expression this replaces,
 * `\b(curl|…)\b[^|;&]*\.pdf\b|\.pdf\b[^|;&]*\|\s*(…)`, scanned to the end of the line from each tool
 * name: quadratic on a long line of them).
 */
function pdfFetched(text: string): boolean {
  let start = 0;
  for (let i = 0; i <= text.length; i++) {
    const c = text[i];
    if (i < text.length && c !== '|' && c !== ';' && c !== '&') continue;
    const command = text.slice(start, i);
    const tool = FETCH_TOOL.exec(command);
    if (tool && hasPdfName(command.slice(tool.index + tool[0].length))) return true;
    if (c === '|' && hasPdfName(command)) {
      PDF_VIEWER.lastIndex = i + 1;
      if (PDF_VIEWER.test(text)) return true;
    }
    start = i + 1;
  }
  return false;
}

function hasPdfName(s: string): boolean {
  PDF_NAME.lastIndex = 0;
  return PDF_NAME.test(s);
}

/** A `.pdf` name with at least one character before it in its word (`/\S+\.pdf\b/i`, in one pass). */
function pdfMentioned(text: string): boolean {
  PDF_NAME.lastIndex = 0;
  for (let m = PDF_NAME.exec(text); m; m = PDF_NAME.exec(text)) if (m.index > 0 && !/\s/.test(text[m.index - 1])) return true;
  return false;
}
const READ_VERB = /\b(cat|less|more|head|tail|grep|rg|sed|awk|cp|diff|open|read|view)\b/i;

/**
 * Deterministic monitor: scans the session log for the reference harness's monitor categories
 * (paper access, git operations on history) and for reads of masked paths, with line numbers.
 *
 * Rules (severity): `git_history` (violation): a git subcommand that reads or rewrites history
 * (`log`, `show`, `reflog`, `rev-list`, `cat-file`, `blame`, `checkout`, `reset`, `restore`, …);
 * `paper_access` (violation): a paper site (arXiv, OpenReview, NeurIPS/PMLR proceedings, Semantic
 * Scholar, ACL Anthology, Papers with Code, Google Scholar) or a PDF fetched/converted;
 * `paper_access` (review): any other `.pdf` mention; `masked_path_read` (review): a read-like
 * command or event naming a masked path. Source: EXP-Bench harness monitor
 * (`paper_access`, `git_operations`), docs/exp-bench-harness.md.
 */
export function scanLog(lines: LogLine[], maskedPaths: string[]): MonitorFlag[] {
  const flags: MonitorFlag[] = [];
  const add = (l: LogLine, kind: MonitorFlag['kind'], severity: MonitorFlag['severity'], rule: string) =>
    flags.push({ kind, severity, line: l.line, text: l.text.slice(0, 240), rule });
  const masked = maskedPaths.filter((p) => p.length > 0);
  for (const l of lines) {
    if (l.text === '') continue;
    const g = gitHistory(l.text);
    if (g) add(l, 'git_history', 'violation', `git ${g}`);
    const site = PAPER_SITE.exec(l.text);
    if (site) add(l, 'paper_access', 'violation', `paper site ${site[1]}`);
    else if (pdfFetched(l.text)) add(l, 'paper_access', 'violation', 'PDF fetched or converted');
    else if (pdfMentioned(l.text)) add(l, 'paper_access', 'review', 'PDF mentioned');
    const type = typeof l.event?.type === 'string' ? (l.event.type as string) : '';
    const readLike = /read|open|view/i.test(type) || READ_VERB.test(l.text);
    if (readLike && !g) {
      const hit = masked.find((p) => l.text.includes(p));
      if (hit) add(l, 'masked_path_read', 'review', `masked path ${hit}`);
    }
  }
  return flags;
}
