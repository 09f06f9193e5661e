import { createPatch } from 'rfc6902';
import { ExpBenchError } from '../errors';
import { PatchOperation } from '../review';
import { applyJsonPatch, deepEqual } from './jsonPatch';

/**
 * A curator's edit made on a scratch copy (docs/curation.md "The curator's desk", edits): the
 * task's entry with its earlier edits is written as JSON for the curator to change; the saved
 * text becomes the RFC 6902 operations (rfc6902's `createPatch`) that turn the entry into it,
 * each checked to give back exactly the saved entry with this room's own `applyJsonPatch` (the
 * one export applies). Nothing is stored here: the caller adds the `task-edit` with its reason.
 */

/** The text of a scratch copy: the entry as JSON, two-space indented, with a final newline. */
export function scratchText(entry: Record<string, unknown>): string {
  return `${JSON.stringify(entry, null, 2)}\n`;
}

/**
 * The operations that turn `before` into the entry `savedText` holds; empty when they are equal.
 * @param file names the scratch copy in errors
 * @throws ExpBenchError `BAD_INPUT` naming `file` when the text is not JSON or not an object, or
 *   when the operations would not give back the saved entry (never stored then)
 */
export function editFromScratch(before: Record<string, unknown>, savedText: string, file: string): PatchOperation[] {
  let after: unknown;
  try { after = JSON.parse(savedText); } catch (e) {
    throw new ExpBenchError('BAD_INPUT', file, `is not JSON: ${(e as Error).message}; fix it and save again (nothing was recorded)`);
  }
  if (after === null || typeof after !== 'object' || Array.isArray(after)) throw new ExpBenchError('BAD_INPUT', file, 'must hold the task entry as a JSON object (nothing was recorded)');
  const ops = createPatch(before, after).map((o) => PatchOperation.parse(o));
  if (!deepEqual(applyJsonPatch(before, ops, file), after)) throw new ExpBenchError('BAD_INPUT', file, 'the edit could not be expressed as RFC 6902 operations that give back the saved entry (nothing was recorded)');
  return ops;
}

/** One line per operation for a person: `replace /requirements/4: "…" → "…"`. */
export function describeOperations(before: Record<string, unknown>, ops: readonly PatchOperation[]): string[] {
  return ops.map((o) => {
    const was = o.op === 'replace' || o.op === 'remove' ? valueAt(before, o.path) : undefined;
    const show = (v: unknown) => { const s = JSON.stringify(v) ?? 'undefined'; return s.length > 200 ? `${s.slice(0, 199)}…` : s; };
    if (o.op === 'replace') return `replace ${o.path}: ${show(was)} → ${show(o.value)}`;
    if (o.op === 'add') return `add ${o.path}: ${show(o.value)}`;
    if (o.op === 'remove') return `remove ${o.path} (was ${show(was)})`;
    if (o.op === 'test') return `test ${o.path} is ${show(o.value)}`;
    return `${o.op} ${o.from} → ${o.path}`;
  });
}

function valueAt(doc: unknown, pointer: string): unknown {
  let cur = doc;
  for (const seg of pointer.split('/').slice(1).map((s) => s.replace(/~1/g, '/').replace(/~0/g, '~'))) {
    if (cur === null || typeof cur !== 'object') return undefined;
    cur = (cur as Record<string, unknown>)[seg];
  }
  return cur;
}
