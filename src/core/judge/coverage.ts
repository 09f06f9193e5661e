import { isNotebookPath, notebookCode, parseNotebook } from '../util/notebook';
import { codeFacts, isPythonPath, requirementFacts, showFact, type CodeFacts } from './codefacts';
import type { GroundTruthRange } from './groundtruth';
import type { Hunk } from './hunks';
import type { ImplVerdictValue, RequirementVerdict } from './types';

/**
 * Requirement coverage by content (issue 14, item 5): the facts of the ground-truth range (calls,
 * keyword arguments, attributes, imports, constants; src/core/judge/codefacts.ts) looked for in the
 * added lines of EVERY file the patch changes, whatever its path. A new file gets the same credit
 * as an edit of the reference file; local names do not count.
 *
 * Verdict: met when at least {@link COVERAGE_THRESHOLDS}.met of the facts are found, partial when at
 * least `.partial` are, unmet otherwise (thresholds tuned on the non-held-out part of
 * test/data/prejudge-labels.json); unverifiable when the ground truth could not be read and the
 * requirement text names no code to look for.
 */
export const COVERAGE_THRESHOLDS = { met: 0.82, partial: 0.25 };

/** One changed file as the judge compares it: its added lines as code, with their new-side line numbers. */
export interface SolverFile {
  path: string;
  facts: CodeFacts;
  /** For line i (1-based) of the text the facts were computed on: the file's new-side line. */
  lineOf: number[];
}

/**
 * The solver's changed files (deleted files left out). A notebook added whole is read as its code
 * cells (lines mapped back onto the `.ipynb` lines that hold them); a notebook edited in place is
 * read from the JSON strings of its added lines.
 */
export async function solverFiles(hunks: Hunk[]): Promise<SolverFile[]> {
  const byPath = new Map<string, Hunk[]>();
  for (const h of hunks) if (!h.deletedFile) byPath.set(h.path, [...(byPath.get(h.path) ?? []), h]);
  const out: SolverFile[] = [];
  for (const [p, hs] of byPath) {
    const lines: string[] = [];
    const lineOf: number[] = [];
    for (const h of hs) {
      let n = h.newStart;
      for (const c of h.changes) {
        if (c.type === 'add') { lines.push(c.text); lineOf.push(n); }
        if (c.type !== 'del') n++;
      }
    }
    if (isNotebookPath(p)) {
      const nbText = notebookFromAdded(p, hs, lines, lineOf);
      out.push({ path: p, facts: await codeFacts(nbText.text, true), lineOf: nbText.lineOf });
      continue;
    }
    out.push({ path: p, facts: await codeFacts(lines.join('\n'), isPythonPath(p) || /^#!.*python/.test(lines[0] ?? '')), lineOf });
  }
  return out;
}

function notebookFromAdded(p: string, hs: Hunk[], lines: string[], lineOf: number[]): { text: string; lineOf: number[] } {
  const whole = hs.length === 1 && hs[0].oldLines === 0;
  if (whole) {
    try {
      const nb = parseNotebook(lines.join('\n'), p);
      const code = notebookCode(nb);
      return { text: code.text, lineOf: code.origin.map((o) => { const c = nb.cells[o.cell]; return c.rawFirstLine ? c.rawFirstLine + o.cellLine - 1 : 1; }) };
    } catch { /* not JSON: read the strings below */ }
  }
  const text: string[] = [];
  const map: number[] = [];
  lines.forEach((l, i) => {
    const t = l.trim();
    const m = /^("(?:[^"\\]|\\.)*"),?$/.exec(t.endsWith(',') ? `${t.slice(0, -1).trimEnd()},` : t);
    if (!m) return;
    try { text.push(String(JSON.parse(m[1])).replace(/\n$/, '')); map.push(lineOf[i]); } catch { /* not a string line */ }
  });
  return { text: text.join('\n'), lineOf: map };
}

/**
 * The facts of texts already parsed during one judgement (a reference file's whole code is read
 * once for each of its requirements: parsing it again each time was most of a heuristic
 * judgement's time, bench/judge.bench.ts). Facts are never changed after they are made.
 */
export class FactsMemo {
  private readonly memo = new Map<string, Promise<CodeFacts>>();

  of(text: string, python: boolean): Promise<CodeFacts> {
    const k = `${python ? 'p' : 't'}\0${text}`;
    let f = this.memo.get(k);
    if (f === undefined) this.memo.set(k, (f = codeFacts(text, python)));
    return f;
  }
}

export interface Coverage {
  verdict: ImplVerdictValue;
  facts: string[];
  found: string[];
  anchors: NonNullable<RequirementVerdict['anchors']>;
  reason: string;
  parser: string;
}

/**
 * Judges one requirement: `ranges` are its ground-truth ranges (already read), `textWords` code
 * words of the requirement text (used for names the requirement itself states, and alone when no
 * range could be read).
 */
export async function coverRequirement(ranges: GroundTruthRange[], textWords: string[], files: SolverFile[], memo: FactsMemo = new FactsMemo()): Promise<Coverage> {
  const wanted = new Set<string>();
  let parser = 'tokens';
  for (const r of ranges) {
    const facts = await memo.of(r.text, r.python);
    const whole = await memo.of(r.fileCode, r.python);
    if (facts.parser !== 'tokens') parser = facts.parser;
    const stated = new Set(textWords);
    const fileDefined = new Set([...whole.defined].filter((d) => !stated.has(d)));
    for (const f of requirementFacts(facts, fileDefined)) wanted.add(f);
    for (const d of facts.defined) if (stated.has(d)) wanted.add(`call:${d}`); // a name the requirement asks for
  }
  if (ranges.length === 0) for (const w of textWords) wanted.add(`call:${w}`);
  const facts = [...wanted];
  if (facts.length === 0) {
    return { verdict: 'unverifiable', facts, found: [], anchors: [], parser,
      reason: `heuristic: nothing to look for: ${ranges.length ? 'the ground-truth range has no calls, constants or imports' : 'no ground-truth range could be read and the requirement names no code'}` };
  }
  const found = new Set<string>();
  const anchors: Coverage['anchors'] = [];
  for (const f of files) {
    const hitLines = new Map<number, string[]>();
    for (const fact of facts) {
      const lines = f.facts.facts.get(fact) ?? (fact.startsWith('call:') && f.facts.defined.has(fact.slice(5)) ? [0] : undefined);
      if (!lines) continue;
      found.add(fact);
      for (const l of lines) if (l > 0) hitLines.set(f.lineOf[l - 1] ?? l, [...(hitLines.get(f.lineOf[l - 1] ?? l) ?? []), showFact(fact)]);
    }
    anchors.push(...runs(f.path, hitLines));
  }
  const share = found.size / facts.length;
  const t = COVERAGE_THRESHOLDS;
  const verdict: ImplVerdictValue = share >= t.met ? 'met' : share >= t.partial ? 'partial' : 'unmet';
  const where = ranges.length ? ranges.map((r) => r.label).join(', ') : 'the requirement text';
  const missing = facts.filter((f) => !found.has(f));
  const inFiles = [...new Set(anchors.map((a) => a.path))].map((p) => `${p} (lines ${anchors.filter((a) => a.path === p).map((a) => a.startLine === a.endLine ? a.startLine : `${a.startLine}-${a.endLine}`).join(', ')})`);
  const reason = `heuristic: looked for ${facts.length} fact${facts.length > 1 ? 's' : ''} of ${where} in the added lines of ${files.length} changed file${files.length === 1 ? '' : 's'}`
    + ` (${parser === 'tokens' ? 'token scan' : 'parsed as Python'}): found ${found.size}`
    + (found.size ? ` (${[...found].slice(0, 8).map(showFact).join(', ')}) in ${inFiles.join('; ')}` : '')
    + (missing.length ? `; not found: ${missing.slice(0, 8).map(showFact).join(', ')}${missing.length > 8 ? ` and ${missing.length - 8} more` : ''}` : '');
  return { verdict, facts: facts.map(showFact), found: [...found].map(showFact), anchors, reason, parser };
}

/** Matched lines of one file grouped into runs (lines at most 2 apart join one run). */
function runs(p: string, hitLines: Map<number, string[]>): Coverage['anchors'] {
  const lines = [...hitLines.keys()].sort((a, b) => a - b);
  const out: Coverage['anchors'] = [];
  for (const l of lines) {
    const last = out[out.length - 1];
    if (last && l - last.endLine <= 2) { last.endLine = l; last.symbols = [...new Set([...last.symbols, ...hitLines.get(l)!])]; }
    else out.push({ path: p, startLine: l, endLine: l, symbols: [...new Set(hitLines.get(l)!)] });
  }
  return out;
}
