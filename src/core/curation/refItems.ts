import { MAX_REF_CELL, MAX_REF_LINE } from '../tasks/limits';
import { trailingGroup } from '../tasks/refs';

/**
 * A lint's reading of the reference group at the end of a requirement (`(/workspace/a.py:3-9, b.py:4)`),
 * item by item, as written: what the loader's parser (tasks/refs.ts) reads silently in its own way
 * (a reversed range taken as its reverse, `/workspace/usage_instructions:example` taken as a file)
 * is said here. The grammar is the loader's; the checks are this module's.
 */
export type ItemIssue =
  | { kind: 'not-a-file'; item: string; pathShaped: boolean; why: string }
  | { kind: 'malformed-range'; item: string; why: string };

/** Task field names that requirements write as if they were files or sources. */
const FIELD_NAME = /^(usage_instructions|agent_instructions|expected_outcome|masked_source|source|method|requirements|readme|question|hypothesis)$/i;
/** The same names (and their spaced forms) inside prose items such as "implied in usage instructions". */
const FIELD_IN_PROSE = /\b(usage[_ ]instructions?|agent[_ ]instructions|expected[_ ]outcome|masked[_ ]source|source|method)\b/i;
const RANGE_SPEC = /^(\d+)(?:\s*-\s*(\d+))?(?:\s+in\s+cell\s+(\d+))?$/i;
const BARE_RANGE = /^(?:(lines?)\s+)?(\d+)(?:\s*-\s*(\d+))?$/i;

/**
 * The issues of one requirement's reference items.
 * @param text the requirement as written in the task file
 * @param hasDefaultPath true when the task has exactly one `source` file (a path-less `lines 7-28` goes to it)
 */
export function referenceItemIssues(text: string, hasDefaultPath: boolean): ItemIssue[] {
  const group = trailingGroup(text);
  if (group === undefined) return [];
  const issues: ItemIssue[] = [];
  let sawPath = false;
  for (const raw of group.split(/[,;]/)) {
    const item = raw.trim();
    if (item === '') continue;
    const p = pathItem(item);
    if (p && looksLikePath(p[1])) {
      const first = p[1].replace(/^\/workspace\/+/, '').split('/')[0];
      if (FIELD_NAME.test(first)) {
        issues.push({ kind: 'not-a-file', item, pathShaped: true, why: `"${first}" is a task field, not a file of the repository` });
        continue;
      }
      sawPath = true;
      if (p[2] === undefined) continue;
      const spec = RANGE_SPEC.exec(p[2].trim());
      if (!spec) {
        issues.push({ kind: 'malformed-range', item, why: `"${p[2].trim()}" is not a line range (N, N-M or N-M in cell C)` });
        continue;
      }
      const why = rangeProblem(spec[1], spec[2]) ?? (spec[3] !== undefined ? numberProblem(spec[3], MAX_REF_CELL, 'cell') : undefined);
      if (why) issues.push({ kind: 'malformed-range', item, why });
      continue;
    }
    const bare = BARE_RANGE.exec(item);
    if (bare) {
      if (!sawPath && bare[1] !== undefined && !hasDefaultPath) {
        issues.push({ kind: 'malformed-range', item, why: 'names no file, and the task does not have exactly one source file to take it from' });
        continue;
      }
      // a bare number with no path before it is prose (for example "(96, 192, 336, 720)")
      if (!sawPath && bare[1] === undefined) continue;
      const why = rangeProblem(bare[2], bare[3]);
      if (why) issues.push({ kind: 'malformed-range', item, why });
      continue;
    }
    const field = FIELD_IN_PROSE.exec(item);
    if (field) issues.push({ kind: 'not-a-file', item, pathShaped: false, why: `names the task's ${field[1]}, not a file` });
  }
  return issues;
}

/** True when a reference path's first segment is a task field name (`usage_instructions:example`, `/workspace/method`). */
export function isFieldPath(p: string): boolean {
  return FIELD_NAME.test(p.replace(/^\/workspace\/+/, '').split('/')[0].split(':')[0]);
}


function looksLikePath(p: string): boolean {
  if (p.startsWith('/workspace/')) return true;
  return /^[\w./*-]*[\w*-]\.[A-Za-z][A-Za-z0-9_]{0,9}$/.test(p) && !/^(e\.g|i\.e|etc|vs|cf)\.?$/i.test(p);
}

function rangeProblem(start: string, end: string | undefined): string | undefined {
  const s = numberProblem(start, MAX_REF_LINE, 'line');
  if (s) return s;
  if (end === undefined) return undefined;
  const e = numberProblem(end, MAX_REF_LINE, 'line');
  if (e) return e;
  if (Number(start) > Number(end)) return `range ${start}-${end} is reversed (the loader reads it as lines ${end}-${start})`;
  return undefined;
}

function numberProblem(digits: string, max: number, what: string): string | undefined {
  const n = Number(digits);
  if (!Number.isSafeInteger(n) || n > max) return `${what} ${digits.length > 24 ? digits.slice(0, 24) + '…' : digits} is beyond the limit of ${max}`;
  if (n < 1) return `${what} ${digits} is not ≥ 1 (lines and cells count from 1)`;
  return undefined;
}

const EXTENSION_END = /\.[A-Za-z][A-Za-z0-9_]{0,9}$/;

/**
 * An item read as `path` or `path:spec` (`a.py:3-9`, `/workspace/x:4`): `[item, path, spec]`, or
 * undefined. The path is the shortest prefix without spaces that ends in an extension (or, failing
 * that, `/workspace/` and at least one character) and is followed by `:` or the end; the spec is
 * what follows the `:`, spaces removed. What
 * `/^(\S*?\.[A-Za-z][A-Za-z0-9_]{0,9}|\/workspace\/\S+?)(?::\s*(.*))?$/` read, one `:` at a time.
 */
export function pathItem(item: string): [string, string, string | undefined] | undefined {
  const space = item.search(/\s/);
  const noSpaceUpTo = space < 0 ? item.length : space;
  const spec = (colon: number): string | undefined | null => {
    if (colon === item.length) return undefined;
    const rest = item.slice(colon + 1).replace(/^\s*/, '');
    return /[\n\r\u2028\u2029]/.test(rest) ? null : rest;
  };
  const ends = [...colons(item), item.length].filter((i) => i <= noSpaceUpTo);
  for (const at of ends) {
    const head = item.slice(Math.max(0, at - 11), at);
    if (at > 1 && EXTENSION_END.test(head) && head.lastIndexOf('.') >= 0) {
      const sp = spec(at);
      if (sp !== null) return [item, item.slice(0, at), sp];
    }
  }
  if (item.startsWith('/workspace/')) {
    for (const at of ends) {
      if (at < '/workspace/'.length + 1) continue;
      const sp = spec(at);
      if (sp !== null) return [item, item.slice(0, at), sp];
    }
  }
  return undefined;
}

function colons(s: string): number[] {
  const out: number[] = [];
  for (let i = s.indexOf(':'); i >= 0; i = s.indexOf(':', i + 1)) out.push(i);
  return out;
}
