import { designVariables, executionFrom, scoreDesign, scoreImplementation, solverDesignItems, type JudgeInput, type JudgeOptions } from './common';
import { pythonParser, pythonParserProblem } from './codefacts';
import { coverRequirement, FactsMemo, solverFiles } from './coverage';
import { designItems, matchDesign } from './designMatch';
import { readGroundTruthRange, type GroundTruthRange } from './groundtruth';
import { hunkCitation, parseHunks, symbolsOf, type Hunk } from './hunks';
import { readLogLines, scanLog } from './monitor';
import { PROMPT_VERSION, type JudgeRecord, type RequirementVerdict } from './types';

/**
 * The deterministic offline pre-judge (`kind: 'heuristic'`), used when no endpoint is configured.
 * It makes no model call and its record is labelled "heuristic" everywhere; it is never mixed
 * with LLM verdicts. What it does (issue 14, item 5; figures in docs/prejudge.md):
 * - design: word overlap of each ground-truth variable with the solver's design items, respecting
 *   the roles the design states (src/core/judge/designMatch.ts); a reason says when roles could
 *   not be told;
 * - implementation: per requirement, the facts of its ground-truth ranges (calls, keyword
 *   arguments, attributes, imports, constants; Python parsed with tree-sitter; notebooks read as
 *   code cells) looked for in the added lines of every changed file, whatever its path
 *   (src/core/judge/coverage.ts); each reason lists what was looked for, found and not found;
 * - conclusion: not judged (needs semantics); the verifier's claims check is reported instead;
 * - monitor: the deterministic log scan only; execution: the verification record (exit, clean
 *   tree, claims, script lint).
 */
export async function judgeHeuristic(input: JudgeInput, opts: JudgeOptions = {}): Promise<JudgeRecord> {
  const pc = opts.partialCredit ?? 0.5;
  const notes: string[] = ['heuristic pre-judge: no model was called; verdicts are word overlaps and code facts found, not judgements'];
  if (!input.pristine) notes.push('no pinned pristine checkout found: symbols taken from requirement text only');
  const execution = executionFrom(input.verify);
  if (!execution.available) notes.push('no verification record (private/verify/latest.json): E not run');

  const vars = designVariables(input.task);
  const items = designItems(solverDesignItems(input.answers));
  const m = matchDesign(vars, items);
  if (vars.length > 0 && items.length > 0 && !m.rolesStated) notes.push('design: the solver\'s design states no roles (no "Constant:/Independent:/Dependent:" labels or role headings): matched on words only');
  const design = vars.length === 0 ? scoreDesign('not_applicable', [], [], pc)
    : scoreDesign('ok', m.verdicts, items.map((it, i) => ({ text: it.text, relevant: m.relevant[i] })), pc);

  const hunks = parseHunks(input.patch);
  if (!(await pythonParser())) notes.push(pythonParserProblem() ?? 'python parser unavailable');
  const verdicts = await requirementVerdicts(input, hunks, notes);
  const implementation = scoreImplementation(input.task.type === 3 ? 'method' : 'requirements', verdicts, pc, hunks.length, []);

  const lines = readLogLines(input.eventsJsonl ?? '');
  const deterministic = scanLog(lines, [...input.maskedPaths, ...(input.task.type === 2 ? input.task.source : [])]);
  const found = execution.claims.filter((c) => c.found).length;
  return {
    schemaVersion: 1, kind: 'heuristic', taskId: input.task.id, paperId: input.task.paperId, taskType: input.task.type,
    createdAt: (opts.now?.() ?? new Date()).toISOString(), promptVersion: PROMPT_VERSION, model: null, decoding: null, partialCredit: pc,
    design,
    conclusion: {
      status: 'not_judged', verdict: null, numbers: [],
      reason: execution.available
        ? `heuristic: conclusions are not judged without a model; the verifier found ${found} of ${execution.claims.length} claimed values in the outputs`
        : 'heuristic: conclusions are not judged without a model; no verification record',
    },
    implementation, execution,
    monitor: { deterministic, llm: null, linesTotal: lines.length, linesUnseen: 0, flagged: deterministic.some((f) => f.severity === 'violation') },
    ledger: { calls: [], totals: { calls: 0, cachedCalls: 0, promptTokens: 0, completionTokens: 0, usd: 0, unpricedCalls: 0 } },
    harnessErrors: [], notes,
  };
}

async function requirementVerdicts(input: JudgeInput, hunks: Hunk[], notes: string[]): Promise<RequirementVerdict[]> {
  const t = input.task;
  const items = t.type === 3 || t.requirements.length === 0
    ? (t.method.trim() ? [{ text: t.method, refs: [] as JudgeInput['task']['requirements'][number]['refs'], basis: 'method' as const }] : [])
    : t.requirements.map((r) => ({ text: r.text, refs: r.refs, basis: 'requirement' as const }));
  const files = await solverFiles(hunks);
  const memo = new FactsMemo();
  const out: RequirementVerdict[] = [];
  for (const [i, it] of items.entries()) {
    const ranges: GroundTruthRange[] = [];
    const problems: string[] = [];
    for (const ref of it.refs) {
      if (!input.pristine) continue;
      const r = await readGroundTruthRange(input.pristine, ref);
      if ('problem' in r) problems.push(r.problem);
      else ranges.push(r);
    }
    const textWords = [...new Set(symbolsOf('', it.text).map((w) => w.split('.').pop()!))];
    const c = await coverRequirement(ranges, textWords, files, memo);
    if (problems.length) notes.push(`requirement ${i + 1}: ${problems.join('; ')}`);
    const cited = hunks.filter((h) => !h.deletedFile && c.anchors.some((a) => a.path === h.path && a.startLine <= h.newEnd && a.endLine >= h.newStart));
    const refFiles = new Set(it.refs.map((r) => r.path));
    const touched = [...new Set(hunks.filter((h) => refFiles.has(h.path)).map((h) => h.path))];
    const reason = c.reason + (touched.length ? `; the patch also changes the reference file${touched.length > 1 ? 's' : ''} ${touched.join(', ')}` : '')
      + (problems.length ? `; ground truth not read: ${problems.join('; ')}` : '');
    out.push({
      index: i + 1, requirement: it.text, basis: it.basis, status: 'ok', verdict: c.verdict, judgeVerdict: c.verdict, reason,
      hunks: c.verdict === 'unmet' || c.verdict === 'unverifiable' ? [] : cited.slice(0, 5).map(hunkCitation),
      groundTruth: ranges.map((r) => r.citation), citationProblems: [], shownHunks: [],
      anchors: c.anchors, checked: { facts: c.facts, found: c.found, parser: c.parser },
      groundTruthCode: ranges.map((r) => ({ path: r.citation.path, label: r.label, text: r.text })),
    });
  }
  return out;
}
