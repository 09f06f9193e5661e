import { ExpBenchError } from '../errors';

/**
 * Jupyter notebooks (nbformat 4, https://nbformat.readthedocs.io/en/latest/format_description.html)
 * read as cells, and EXP-Bench line references into them resolved onto cells.
 *
 * EXP-Bench writes `notebook.ipynb:N-M` references in two ways (measured on the real tasks, see
 * docs/prejudge.md, "Notebooks"): some count lines of the **raw JSON file** and land on the
 * `"source"` strings of a code cell (iclr2024/18439/0 and /2, `paper_experiments.ipynb:43-62` is
 * `def plot_compare…`); others count lines of the notebook **exported as a Python script**
 * (`jupyter nbconvert --to script`; iclr2024/18439/1, `demo.ipynb:11` is
 * `rp.config.use_tex_fonts = False`, which is line 11 of the export and `"output_type": "stream"`
 * in the raw JSON). A third form, `…ipynb:8-13 in cell 8`, counts lines inside one cell (cell
 * index 0-based over all cells). {@link resolveNotebookRange} tries the raw reading first and keeps it
 * when every line of the range is a code cell's source line; otherwise it uses the script export.
 */

/** One cell. `source` is the cell's text (nbformat's list of strings joined). */
export interface NotebookCell {
  /** 0-based position among all cells. */
  index: number;
  cellType: 'code' | 'markdown' | 'raw';
  source: string;
  /** `execution_count` of a code cell (null when never run or not a code cell). */
  executionCount: number | null;
  /**
   * 1-based line of the raw `.ipynb` file holding the cell's first source string, when the file is
   * pretty-printed with one source string per line (as Jupyter writes it); undefined otherwise.
   */
  rawFirstLine?: number;
}

export interface Notebook {
  nbformat: number;
  cells: NotebookCell[];
  /** `metadata.kernelspec.language` or `metadata.language_info.name` (e.g. `python`), when stated. */
  language?: string;
}

/** A span of lines inside one cell (1-based, inclusive, counted in the cell's source). */
export interface CellSpan {
  cell: number;
  startLine: number;
  endLine: number;
}

/** How a reference's line numbers were read (see the module comment). */
export type NotebookReading = 'raw-json' | 'script-export' | 'cell';

export interface ResolvedNotebookRange {
  reading: NotebookReading;
  spans: CellSpan[];
  /** The referenced source lines, in order (code only: markdown lines are left out). */
  text: string;
}

/** True for a path naming a Jupyter notebook (`.ipynb`, any case). */
export function isNotebookPath(p: string): boolean {
  return /\.ipynb$/i.test(p);
}

/**
 * Parses nbformat 4 JSON (nbformat 3's `worksheets` also read).
 * @throws ExpBenchError BAD_INPUT naming `input` when the text is not JSON or has no cell list.
 */
export function parseNotebook(text: string, input: string): Notebook {
  let j: any;
  try { j = JSON.parse(text); } catch (e) {
    throw new ExpBenchError('BAD_INPUT', input, `not a Jupyter notebook: not JSON (${(e as Error).message})`);
  }
  const rawCells = Array.isArray(j?.cells) ? j.cells : Array.isArray(j?.worksheets?.[0]?.cells) ? j.worksheets[0].cells : undefined;
  if (!rawCells) throw new ExpBenchError('BAD_INPUT', input, 'not a Jupyter notebook: no "cells" list (nbformat 4)');
  const cells: NotebookCell[] = rawCells.map((c: any, index: number) => {
    const src = c?.source ?? c?.input ?? '';
    const cellType = c?.cell_type === 'code' || c?.cell_type === 'markdown' ? c.cell_type : 'raw';
    return {
      index, cellType,
      source: Array.isArray(src) ? src.map(String).join('') : String(src),
      executionCount: typeof c?.execution_count === 'number' ? c.execution_count : null,
    };
  });
  locateRawLines(text, rawCells, cells);
  const language = j?.metadata?.kernelspec?.language ?? j?.metadata?.language_info?.name;
  return { nbformat: typeof j?.nbformat === 'number' ? j.nbformat : 4, cells, ...(typeof language === 'string' ? { language } : {}) };
}

/** Sets `rawFirstLine` for cells whose `"source": [` list has one string per line of the file. */
function locateRawLines(text: string, rawCells: any[], cells: NotebookCell[]): void {
  const lines = text.split('\n');
  let cursor = 0;
  for (const [i, rc] of rawCells.entries()) {
    if (!Array.isArray(rc?.source) || rc.source.length === 0) continue;
    let at = -1;
    for (let k = cursor; k < lines.length; k++) if (/^\s*"source"\s*:\s*\[\s*$/.test(lines[k])) { at = k; break; }
    if (at < 0) return;
    const ok = rc.source.every((s: unknown, n: number) => {
      const raw = (lines[at + 1 + n] ?? '').trim().replace(/,$/, '');
      try { return JSON.parse(raw) === s; } catch { return false; }
    });
    cursor = at + 1 + rc.source.length;
    if (ok) cells[i].rawFirstLine = at + 2;
  }
}

/** A cell's source lines (split on `\n`; a trailing newline gives a last empty line, as nbformat does). */
export function cellLines(cell: NotebookCell): string[] {
  return cell.source === '' ? [] : cell.source.split('\n');
}

/** One line of the script export: its text and, for a cell's source line, where it comes from. */
export interface ScriptLine {
  text: string;
  cell?: number;
  /** 1-based line inside the cell. */
  cellLine?: number;
}

/**
 * The notebook as `jupyter nbconvert --to script` (nbconvert 6.5, Python template) writes it:
 * `#!/usr/bin/env python`, `# coding: utf-8`, a blank line; per code cell `# In[n]:`, two blank
 * lines, the source, a blank line; per markdown cell its lines commented (`# …`), a blank line;
 * raw cells left out. Line i of the result is line i+1 of the export.
 */
export function scriptExport(nb: Notebook): ScriptLine[] {
  const out: ScriptLine[] = [{ text: '#!/usr/bin/env python' }, { text: '# coding: utf-8' }, { text: '' }];
  for (const c of nb.cells) {
    if (c.cellType === 'code') {
      out.push({ text: `# In[${c.executionCount ?? ' '}]:` }, { text: '' }, { text: '' });
      cellLines(c).forEach((text, i) => out.push({ text, cell: c.index, cellLine: i + 1 }));
      out.push({ text: '' });
    } else if (c.cellType === 'markdown') {
      cellLines(c).forEach((text, i) => out.push({ text: `# ${text}`.trimEnd(), cell: c.index, cellLine: i + 1 }));
      out.push({ text: '' });
    }
  }
  return out;
}

/**
 * Resolves a reference's line range (1-based, inclusive) onto the notebook's cells.
 * `cell` given (`…:8-13 in cell 8`): lines inside that cell (0-based index over all cells), clamped
 * to the cell; a range past the cell's end gives the whole cell. Otherwise the raw JSON reading when
 * every line of the range is a code cell's source line, else the script-export reading.
 * @returns undefined when no line of the range falls in any cell.
 */
export function resolveNotebookRange(nb: Notebook, startLine: number, endLine: number, cell?: number): ResolvedNotebookRange | undefined {
  if (cell !== undefined) {
    const c = nb.cells[cell];
    if (!c) return undefined;
    const n = cellLines(c).length;
    if (n === 0) return undefined;
    const s = startLine > n ? 1 : Math.max(1, startLine);
    const e = startLine > n ? n : Math.min(n, endLine);
    return finish(nb, 'cell', [{ cell: c.index, startLine: s, endLine: e }]);
  }
  const raw = rawSpans(nb, startLine, endLine);
  if (raw) return finish(nb, 'raw-json', raw);
  const script = scriptExport(nb);
  const spans: CellSpan[] = [];
  for (let l = startLine; l <= Math.min(endLine, script.length); l++) {
    const sl = script[l - 1];
    if (sl.cell === undefined || nb.cells[sl.cell].cellType !== 'code') continue;
    addLine(spans, sl.cell, sl.cellLine!);
  }
  return spans.length ? finish(nb, 'script-export', spans) : undefined;
}

function rawSpans(nb: Notebook, startLine: number, endLine: number): CellSpan[] | undefined {
  const spans: CellSpan[] = [];
  for (let l = startLine; l <= endLine; l++) {
    const c = nb.cells.find((x) => x.cellType === 'code' && x.rawFirstLine !== undefined
      && l >= x.rawFirstLine && l < x.rawFirstLine + rawSourceCount(x));
    if (!c) return undefined;
    addLine(spans, c.index, l - c.rawFirstLine! + 1);
  }
  return spans.length ? spans : undefined;
}

/** Number of strings in the cell's nbformat `source` list (one per line, the last without `\n`). */
function rawSourceCount(c: NotebookCell): number {
  const lines = cellLines(c);
  return lines.length > 0 && lines[lines.length - 1] === '' ? lines.length - 1 : lines.length;
}

function addLine(spans: CellSpan[], cell: number, line: number): void {
  const last = spans[spans.length - 1];
  if (last && last.cell === cell && last.endLine === line - 1) last.endLine = line;
  else spans.push({ cell, startLine: line, endLine: line });
}

function finish(nb: Notebook, reading: NotebookReading, spans: CellSpan[]): ResolvedNotebookRange {
  const text = spans.map((s) => cellLines(nb.cells[s.cell]).slice(s.startLine - 1, s.endLine).join('\n')).join('\n');
  return { reading, spans, text };
}

/**
 * The code cells as one Python text (cells in order, IPython magics and shell escapes — lines
 * starting with `%` or `!` — turned into comments so that a Python parser accepts the text), with,
 * for each line of the result, the cell and the line inside it.
 */
export function notebookCode(nb: Notebook): { text: string; origin: { cell: number; cellLine: number }[] } {
  const lines: string[] = [];
  const origin: { cell: number; cellLine: number }[] = [];
  for (const c of nb.cells) {
    if (c.cellType !== 'code') continue;
    cellLines(c).forEach((l, i) => {
      lines.push(/^\s*[%!]/.test(l) ? `# ${l}` : l);
      origin.push({ cell: c.index, cellLine: i + 1 });
    });
  }
  return { text: lines.join('\n'), origin };
}

/**
 * The notebook as readable text, cells not JSON: each cell introduced by a `# %% [cell N] code`
 * (or `markdown`) line in the percent format that editors and jupytext read, followed by its source,
 * cells separated by a blank line. Cell numbers are 0-based indices over all cells (as in `… in cell N`
 * references). `firstLine[i]` is the 1-based line of cell i's first source line in `text`.
 */
export function notebookTextLayout(nb: Notebook): { text: string; firstLine: number[] } {
  const out: string[] = [];
  const firstLine: number[] = [];
  for (const c of nb.cells) {
    if (out.length) out.push('');
    out.push(`# %% [cell ${c.index}] ${c.cellType}${c.executionCount !== null ? ` (In[${c.executionCount}])` : ''}`);
    firstLine.push(out.length + 1);
    out.push(...cellLines(c));
  }
  return { text: out.join('\n'), firstLine };
}

/** {@link notebookTextLayout}'s text. */
export function notebookAsText(nb: Notebook): string {
  return notebookTextLayout(nb).text;
}
