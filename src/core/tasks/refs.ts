import type { RequirementRef } from './types';

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
 * @returns the references and the raw text of items that looked like references but could not be
 *   resolved (for example `lines 7-28` with no default path), for the loader to report.
 */
export function parseRequirementRefs(text: string, defaultPath?: string): { refs: RequirementRef[]; unresolved: string[] } {
  const refs: RequirementRef[] = [];
  const unresolved: string[] = [];
  const group = trailingGroup(text);
  if (group === undefined) return { refs, unresolved };
  let current: string | undefined;
  for (const rawItem of group.split(/[,;]/)) {
    const item = rawItem.trim();
    if (item === '') continue;
    const withPath = /^(\S*?\.[A-Za-z0-9_]+|\/workspace\/\S+?)(?::\s*(\d+)(?:\s*-\s*(\d+))?(?:\s+in\s+cell\s+(\d+))?)?$/i.exec(item);
    if (withPath && looksLikePath(withPath[1])) {
      current = normalisePath(withPath[1]);
      const ref = range(current, withPath[2], withPath[3]);
      // notebooks: "(…/paper_experiments.ipynb:8-13 in cell 8)": lines counted inside that cell
      if (withPath[4] !== undefined) ref.cell = Number(withPath[4]);
      refs.push(ref);
      continue;
    }
    const bare = /^(?:lines?\s+)?(\d+)(?:\s*-\s*(\d+))?$/i.exec(item);
    if (bare) {
      const p = current ?? defaultPath;
      if (p !== undefined && (current !== undefined || /^lines?\s/i.test(item))) refs.push(range(p, bare[1], bare[2]));
      else if (/^lines?\s/i.test(item)) unresolved.push(item);
      // a bare number with no path before it is ordinary prose, e.g. "(96, 192, 336, 720)"
      continue;
    }
  }
  return { refs: dedupe(refs), unresolved };
}

/** Repository-relative form of a `/workspace/…` path (leading `./` and `/workspace/` removed). */
export function normalisePath(p: string): string {
  return p.replace(/^\/workspace\/+/, '').replace(/^\.\//, '').replace(/^\/+/, '');
}

function trailingGroup(text: string): string | undefined {
  const trimmed = text.trimEnd().replace(/[.;:]+$/, '');
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

function range(path: string, start?: string, end?: string): RequirementRef {
  if (start === undefined) return { path, startLine: null, endLine: null };
  const s = Number(start);
  const e = end === undefined ? s : Number(end);
  return { path, startLine: Math.min(s, e), endLine: Math.max(s, e) };
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
