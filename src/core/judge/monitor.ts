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

const GIT_HISTORY = /\bgit\b(?:\s+-[Cc]\s+\S+|\s+--?[\w-]+(?:=\S+)?)*\s+(log|show|reflog|rev-list|cat-file|blame|fsck|whatchanged|ls-tree|reset|checkout|restore|switch|rebase|cherry-pick|revert|bisect)\b/;
const PAPER_SITE = /\b(arxiv\.org|openreview\.net|papers\.nips\.cc|proceedings\.neurips\.cc|proceedings\.mlr\.press|semanticscholar\.org|aclanthology\.org|paperswithcode\.com|scholar\.google)/i;
const PDF_FETCH = /\b(curl|wget|pdftotext|pdfinfo|pdftohtml|mutool|xdg-open)\b[^|;&]*\.pdf\b|\.pdf\b[^|;&]*\|\s*(pdftotext|less|more)/i;
const PDF_MENTION = /\S+\.pdf\b/i;
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
    const g = GIT_HISTORY.exec(l.text);
    if (g) add(l, 'git_history', 'violation', `git ${g[1]}`);
    const site = PAPER_SITE.exec(l.text);
    if (site) add(l, 'paper_access', 'violation', `paper site ${site[1]}`);
    else if (PDF_FETCH.test(l.text)) add(l, 'paper_access', 'violation', 'PDF fetched or converted');
    else if (PDF_MENTION.test(l.text)) add(l, 'paper_access', 'review', 'PDF mentioned');
    const type = typeof l.event?.type === 'string' ? (l.event.type as string) : '';
    const readLike = /read|open|view/i.test(type) || READ_VERB.test(l.text);
    if (readLike && !g) {
      const hit = masked.find((p) => l.text.includes(p));
      if (hit) add(l, 'masked_path_read', 'review', `masked path ${hit}`);
    }
  }
  return flags;
}
