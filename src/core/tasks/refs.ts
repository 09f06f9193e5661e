import { boundedLine, MAX_REF_CELL, MAX_REF_LINE } from './limits';
import type { RequirementRef } from './types';
import { trimEndOf } from '../untrusted';

/**
 * Parses the code references at the end of an EXP-Bench requirement string.
 *
 * The real files write references in a trailing parenthesised group, items separated by commas:
 * `(/workspace/a.py:139-143, 315-554)` (several ranges, the path carried over),
 * `(/workspace/a.py:1-21, /workspace/b.py:4)` (several files, single lines),
 * `(train.py:42, test.py:71)` (no `/workspace/`), `(/workspace/scripts/run.sh)` (a whole file),
 * `(/workspace/run_longExp.py:46, usage_instructions)` (non-reference items are ignored),
 * `(lines 7-28)` (no path: resolved to `defaultPath` when the task has exactly one source file).
 * A step with no such group has no references.
 *
 * Line numbers are positive integers up to {@link MAX_REF_LINE}, cells up to {@link MAX_REF_CELL}
 * (limits.ts); a reference past a limit is left out and said in `invalid`.
 *
 * @returns the references; the raw text of items that looked like references but could not be
 *   resolved (for example `lines 7-28` with no default path); and, for items left out because a
 *   number is out of bounds, a sentence each (`"a.py:99999999999999999999999": line … is beyond the
 *   limit of 10000000`), for the loader to report.
 */
export function parseRequirementRefs(text: string, defaultPath?: string): { refs: RequirementRef[]; unresolved: string[]; invalid: string[] } {
  const refs: RequirementRef[] = [];
  const unresolved: string[] = [];
  const invalid: string[] = [];
  const group = trailingGroup(text);
  if (group === undefined) return { refs, unresolved, invalid };
  let current: string | undefined;
  for (const rawItem of group.split(/[,;]/)) {
    const item = rawItem.trim();
    if (item === '') continue;
    const withPath = /^(\S*?\.[A-Za-z0-9_]+|\/workspace\/\S+?)(?::\s*(\d+)(?:\s*-\s*(\d+))?(?:\s+in\s+cell\s+(\d+))?)?$/i.exec(item);
    if (withPath && looksLikePath(withPath[1])) {
      current = normalisePath(withPath[1]);
      const ref = range(current, withPath[2], withPath[3]);
      // notebooks: "(…/paper_experiments.ipynb:8-13 in cell 8)": lines counted inside that cell
      const cell = withPath[4] === undefined ? undefined : boundedLine(withPath[4], MAX_REF_CELL, 'cell');
      if ('problem' in ref) invalid.push(`"${item}": ${ref.problem}`);
      else if (cell && 'problem' in cell) invalid.push(`"${item}": ${cell.problem}`);
      else refs.push(cell ? { ...ref, cell: cell.value } : ref);
      continue;
    }
    const bare = /^(?:lines?\s+)?(\d+)(?:\s*-\s*(\d+))?$/i.exec(item);
    if (bare) {
      const p = current ?? defaultPath;
      if (p !== undefined && (current !== undefined || /^lines?\s/i.test(item))) {
        const ref = range(p, bare[1], bare[2]);
        if ('problem' in ref) invalid.push(`"${item}": ${ref.problem}`);
        else refs.push(ref);
      } else if (/^lines?\s/i.test(item)) unresolved.push(item);
      // a bare number with no path before it is ordinary prose, e.g. "(96, 192, 336, 720)"
      continue;
    }
  }
  return { refs: dedupe(refs), unresolved, invalid };
}

/** Repository-relative form of a `/workspace/…` path (leading `./` and `/workspace/` removed). */
export function normalisePath(p: string): string {
  return p.replace(/^\/workspace\/+/, '').replace(/^\.\//, '').replace(/^\/+/, '');
}

/** The text inside the last balanced parenthesised group that ends the string (trailing `.;:` ignored). */
export function trailingGroup(text: string): string | undefined {
  const trimmed = trimEndOf(text.trimEnd(), '.;:');
  if (!trimmed.endsWith(')')) return undefined;
  let depth = 0;
  for (let i = trimmed.length - 1; i >= 0; i--) {
    const ch = trimmed[i];
    if (ch === ')') depth++;
    else if (ch === '(' && --depth === 0) return trimmed.slice(i + 1, -1);
  }
  return undefined;
}

/** Task field names that real files sometimes write as if they were paths (`/workspace/usage_instructions`). */
const FIELD_NAMES = /^(usage_instructions|agent_instructions|method|source|masked_source|readme)$/i;

function looksLikePath(p: string): boolean {
  if (FIELD_NAMES.test(p.replace(/^\/workspace\//, ''))) return false;
  // globs such as `/workspace/scripts/PDF/720/*.sh:1-7` are kept as references (path with `*`)
  if (p.startsWith('/workspace/')) return true;
  // "e.g." or "1.5x" are not paths: require a file name with a letter-led extension
  return /^[\w./-]*[\w-]\.[A-Za-z][A-Za-z0-9_]{0,9}$/.test(p) && !/^(e\.g|i\.e|etc)\.?$/i.test(p);
}

function range(path: string, start?: string, end?: string): RequirementRef | { problem: string } {
  if (start === undefined) return { path, startLine: null, endLine: null };
  const s = boundedLine(start, MAX_REF_LINE, 'line');
  if ('problem' in s) return s;
  const e = end === undefined ? s : boundedLine(end, MAX_REF_LINE, 'line');
  if ('problem' in e) return e;
  return { path, startLine: Math.min(s.value, e.value), endLine: Math.max(s.value, e.value) };
}

function dedupe(refs: RequirementRef[]): RequirementRef[] {
  const seen = new Set<string>();
  return refs.filter((r) => {
    const k = `${r.path}:${r.startLine}-${r.endLine}`;
    if (seen.has(k)) return false;
    seen.add(k);
    return true;
  });
}
