import { cellLines, isNotebookPath, parseNotebook, type Notebook } from '../util/notebook';
import type { Hunk } from './hunks';
import { lineCount, type PristineSource } from './pristine';
import type { GroundTruthCitation, HunkCitation, ImplVerdictValue } from './types';

/**
 * Checks a requirement verdict's citations in code (issue 5, "Citations are checked in code"):
 * - each cited hunk range must lie inside a hunk of the patch with the same path (new side,
 *   1-based, inclusive), and that hunk must have been shown to the judge in this call;
 * - each cited ground-truth range must exist in the pinned pristine checkout (the file exists at
 *   the commit and 1 ≤ startLine ≤ endLine ≤ its line count; for a notebook citation with `cells`,
 *   each cell exists and its span lies inside the cell's source lines);
 * - `met` and `partial` must cite at least one hunk.
 *
 * @returns the problems found (empty = all citations verified). Any problem makes the verdict
 *   `unverifiable` (see {@link finalVerdict}).
 */
export async function checkCitations(
  verdict: ImplVerdictValue,
  hunks: HunkCitation[],
  groundTruth: GroundTruthCitation[],
  patch: Hunk[],
  shownIds: Set<string>,
  pristine: PristineSource | undefined,
): Promise<string[]> {
  const problems: string[] = [];
  for (const c of hunks) {
    const label = `hunk ${c.path}:${c.newStart}-${c.newEnd}`;
    if (c.newStart < 1 || c.newEnd < c.newStart) { problems.push(`${label} is not a valid line range`); continue; }
    const h = patch.find((x) => x.path === c.path && !x.deletedFile && x.newStart <= c.newStart && c.newEnd <= x.newEnd);
    if (!h) { problems.push(`${label} is not in the patch`); continue; }
    if (!shownIds.has(h.id)) problems.push(`${label} was not shown to the judge`);
  }
  for (const g of groundTruth) {
    const label = `ground truth ${g.path}:${g.startLine}-${g.endLine}`;
    if (!pristine) { problems.push(`${label} cannot be checked: no pristine checkout`); continue; }
    const text = await pristine.read(g.path);
    if (text === undefined) { problems.push(`${label}: file not in the pristine checkout`); continue; }
    if (g.cells && isNotebookPath(g.path)) {
      // a notebook reference resolved onto cells: each span must lie inside its cell's source
      let nb: Notebook | undefined;
      try { nb = parseNotebook(text, g.path); } catch { problems.push(`${label}: not nbformat JSON in the pristine checkout`); continue; }
      for (const s of g.cells) {
        const n = nb.cells[s.cell] ? cellLines(nb.cells[s.cell]).length : -1;
        if (n < 0) problems.push(`${label}: cell ${s.cell} does not exist (${nb.cells.length} cells)`);
        else if (s.startLine < 1 || s.endLine < s.startLine || s.endLine > n) problems.push(`${label}: cell ${s.cell} lines ${s.startLine}-${s.endLine} are outside the cell (${n} lines)`);
      }
      continue;
    }
    const n = lineCount(text);
    if (g.startLine < 1 || g.endLine < g.startLine || g.endLine > n) problems.push(`${label} is outside the file (${n} lines)`);
  }
  if ((verdict === 'met' || verdict === 'partial') && hunks.length === 0) problems.push(`a "${verdict}" verdict must cite at least one hunk`);
  return problems;
}

/** The verdict after the checks: unverifiable when any citation problem was found. */
export function finalVerdict(judgeVerdict: ImplVerdictValue, problems: string[]): ImplVerdictValue {
  return problems.length > 0 ? 'unverifiable' : judgeVerdict;
}
