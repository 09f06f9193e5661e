import type { RequirementRef } from '../tasks/types';
import { isNotebookPath, notebookCode, parseNotebook, resolveNotebookRange, type Notebook } from '../util/notebook';
import { lineCount, type PristineSource } from './pristine';
import type { GroundTruthCitation } from './types';

/**
 * One requirement reference read from the pinned pristine checkout, as code: for a notebook the
 * referenced lines are resolved onto its cells (src/core/util/notebook.ts) and `text` is their
 * source, never the notebook's JSON.
 */
export interface GroundTruthRange {
  citation: GroundTruthCitation;
  /** The referenced source text. */
  text: string;
  /** The whole file as code (a notebook: its code cells), for names defined elsewhere in the file. */
  fileCode: string;
  python: boolean;
  /** A short place for reasons: `demo.ipynb cell 0 lines 8-9`, `src/a.py:4-9`. */
  label: string;
}

const notebooks = new WeakMap<PristineSource, Map<string, Notebook | undefined>>();

/**
 * Reads `ref` from `pristine`. A whole-file reference (no lines) reads the whole file.
 * @returns the range, or a sentence saying why there is none (file absent, range past the end,
 *   a notebook that is not nbformat JSON, lines that fall in no cell).
 */
export async function readGroundTruthRange(pristine: PristineSource, ref: RequirementRef): Promise<GroundTruthRange | { problem: string }> {
  const text = await pristine.read(ref.path);
  if (text === undefined) return { problem: `${ref.path} is not in the pristine checkout` };
  if (isNotebookPath(ref.path)) {
    let cache = notebooks.get(pristine);
    if (!cache) notebooks.set(pristine, cache = new Map());
    if (!cache.has(ref.path)) {
      try { cache.set(ref.path, parseNotebook(text, ref.path)); } catch { cache.set(ref.path, undefined); }
    }
    const nb = cache.get(ref.path);
    if (!nb) return { problem: `${ref.path} is not nbformat JSON` };
    const code = notebookCode(nb).text;
    const start = ref.startLine ?? 1;
    const end = ref.endLine ?? Number.MAX_SAFE_INTEGER;
    const r = ref.startLine === null && ref.cell === undefined
      ? { reading: 'script-export' as const, spans: nb.cells.filter((c) => c.cellType === 'code').map((c) => ({ cell: c.index, startLine: 1, endLine: Math.max(1, c.source.split('\n').length) })), text: code }
      : resolveNotebookRange(nb, start, end, ref.cell);
    if (!r) return { problem: `${ref.path}:${start}-${ref.endLine ?? start}${ref.cell !== undefined ? ` in cell ${ref.cell}` : ''} falls in no code cell` };
    const where = r.spans.map((s) => `cell ${s.cell} line${s.startLine === s.endLine ? ` ${s.startLine}` : `s ${s.startLine}-${s.endLine}`}`).join(', ');
    return {
      citation: { path: ref.path, startLine: start, endLine: ref.endLine ?? start, cells: r.spans, reading: r.reading },
      text: r.text, fileCode: code, python: true, label: `${ref.path.split('/').pop()} ${where}`,
    };
  }
  const n = lineCount(text);
  const start = ref.startLine ?? 1;
  const end = Math.min(ref.endLine ?? n, n);
  if (!Number.isSafeInteger(start) || start < 1 || start > end) return { problem: `${ref.path}:${start}-${ref.endLine ?? start} is outside the file (${n} lines)` };
  return {
    citation: { path: ref.path, startLine: start, endLine: end },
    text: text.split('\n').slice(start - 1, end).join('\n'), fileCode: text,
    python: /\.(py|pyw|pyi)$/i.test(ref.path), label: `${ref.path}:${start}${end !== start ? `-${end}` : ''}`,
  };
}
