import pLimit from 'p-limit';
import type { LlmClient } from '../llm/client';
import type { Ledger } from '../llm/ledger';
import { checkCitations, finalVerdict } from './citations';
import {
  designVariables, executionFrom, scoreDesign, scoreImplementation, solverDesignItems,
  type JudgeInput, type JudgeOptions,
} from './common';
import { hunkCitation, parseHunks, selectHunks, symbolsOf, type Hunk } from './hunks';
import { readLogLines, scanLog } from './monitor';
import {
  ConclusionAnswer, DesignAnswer, ImplementationAnswer, MonitorAnswer,
  conclusionMessages, designMessages, implementationMessages, monitorMessages,
} from './prompts';
import { readGroundTruthRange } from './groundtruth';
import { lineCount, numberedLines } from './pristine';
import { isNotebookPath } from '../util/notebook';
import {
  PROMPT_VERSION, type ConclusionResult, type DesignResult, type JudgeRecord, type MonitorResult, type RequirementVerdict,
} from './types';

/**
 * The LLM judge: design (one call, a verdict per ground-truth variable), conclusion (one call),
 * implementation (one call per requirement, or one against `method` for type-3 tasks, each with
 * its own hunk selection), monitor (deterministic scan, then one call citing log lines).
 * Scores are computed in code from the verdicts. Items whose call failed are harness errors.
 *
 * Throws only BUDGET_EXCEEDED and CANCELLED (answers already obtained stay in the cache).
 */
export async function judgeWithModel(input: JudgeInput, client: LlmClient, ledger: Ledger, opts: JudgeOptions = {}): Promise<JudgeRecord> {
  const pc = opts.partialCredit ?? 0.5;
  const queue = pLimit(opts.concurrency ?? 4);
  // A call that throws (BUDGET_EXCEEDED, CANCELLED) ends the judgement: calls not yet started never start.
  const limit = <T>(f: () => Promise<T>) => queue(() => f().catch((e) => { queue.clearQueue(); throw e; }));
  const harnessErrors: JudgeRecord['harnessErrors'] = [];
  const notes: string[] = [];
  if (!input.pristine) notes.push('no pinned pristine checkout found: ground-truth text not shown and ground-truth citations cannot be verified');
  if (!input.answers) notes.push('no private/answers.json: design and conclusion scored as not submitted');
  const hunks = parseHunks(input.patch);
  const seen = new Set<string>();

  const [design, conclusion, verdicts, monitor] = await Promise.all([
    limit(() => judgeDesign(input, client, pc, harnessErrors, opts.signal)),
    limit(() => judgeConclusion(input, client, harnessErrors, opts.signal)),
    Promise.all(implementationItems(input).map((item) => limit(() => judgeRequirement(input, client, item, hunks, seen, harnessErrors, opts)))),
    limit(() => judgeMonitor(input, client, harnessErrors, notes, opts)),
  ]);
  const implementation = scoreImplementation(input.task.type === 3 ? 'method' : 'requirements', verdicts, pc, hunks.length,
    hunks.filter((h) => !seen.has(h.id)).map(hunkCitation));
  if (implementation.unseenHunks.length) notes.push(`${implementation.unseenHunks.length} of ${hunks.length} hunks were never shown to the judge`);
  const execution = executionFrom(input.verify);
  if (!execution.available) notes.push('no verification record (private/verify/latest.json): E not run');
  return {
    schemaVersion: 1, kind: 'llm', taskId: input.task.id, paperId: input.task.paperId, taskType: input.task.type,
    createdAt: (opts.now?.() ?? new Date()).toISOString(), promptVersion: PROMPT_VERSION,
    model: client.model, decoding: client.decoding(), partialCredit: pc,
    design, conclusion, implementation, execution, monitor,
    ledger: { calls: ledger.calls, totals: ledger.totals() }, harnessErrors, notes,
  };
}

async function judgeDesign(input: JudgeInput, client: LlmClient, pc: number, errors: JudgeRecord['harnessErrors'], signal?: AbortSignal): Promise<DesignResult> {
  const vars = designVariables(input.task);
  if (vars.length === 0) return scoreDesign('not_applicable', [], [], pc);
  const items = solverDesignItems(input.answers).map((text, i) => ({ id: `S${i + 1}`, text }));
  if (items.length === 0) {
    return scoreDesign('ok', vars.map((v) => ({ variable: v.name, role: v.role, verdict: 'missing', quote: '', reason: 'no design was submitted' })), [], pc);
  }
  const ids = new Set(vars.map((v) => v.id));
  const r = await client.structured({
    item: 'design', schemaName: 'design_verdicts', schema: DesignAnswer, messages: designMessages(vars, items),
    check: (a) => exactlyOnce(a.variables.map((v) => v.id), ids, 'variables')
      ?? exactlyOnce(a.solver_items.map((s) => s.id), new Set(items.map((s) => s.id)), 'solver_items')
      ?? a.solver_items.flatMap((s) => s.matches).filter((m) => !ids.has(m)).map((m) => `solver_items cites unknown variable ${m}`)[0],
  }, signal);
  if (!r.ok) {
    errors.push({ item: 'design', message: r.error });
    return scoreDesign('harness_error', [], [], pc, r.error);
  }
  const byId = new Map(r.value.variables.map((v) => [v.id, v]));
  const verdicts = vars.map((v) => {
    const a = byId.get(v.id)!;
    return { variable: v.name, role: v.role, verdict: a.verdict, quote: a.quote, reason: a.reason };
  });
  const solverItems = items.map((s) => ({ text: s.text, relevant: (r.value.solver_items.find((x) => x.id === s.id)?.matches.length ?? 0) > 0 }));
  return scoreDesign('ok', verdicts, solverItems, pc);
}

async function judgeConclusion(input: JudgeInput, client: LlmClient, errors: JudgeRecord['harnessErrors'], signal?: AbortSignal): Promise<ConclusionResult> {
  if (input.task.expectedOutcome.trim() === '') return { status: 'not_applicable', verdict: null, reason: 'the task has no expected_outcome', numbers: [] };
  const conclusion = input.answers?.conclusion.trim() ?? '';
  if (conclusion === '') return { status: 'ok', verdict: 'incorrect', reason: 'no conclusion was submitted', numbers: [] };
  const r = await client.structured({
    item: 'conclusion', schemaName: 'conclusion_verdict', schema: ConclusionAnswer,
    messages: conclusionMessages(input.task.expectedOutcome, input.task.question, conclusion),
  }, signal);
  if (!r.ok) {
    errors.push({ item: 'conclusion', message: r.error });
    return { status: 'harness_error', verdict: null, reason: '', numbers: [], error: r.error };
  }
  return { status: 'ok', verdict: r.value.verdict, reason: r.value.reason, numbers: r.value.numbers };
}

export interface ImplItem { index: number; total: number; basis: 'requirement' | 'method'; text: string; refs: { path: string; startLine: number | null; endLine: number | null }[] }

function implementationItems(input: JudgeInput): ImplItem[] {
  const t = input.task;
  if (t.type === 3 || t.requirements.length === 0) {
    if (t.method.trim() === '') return [];
    return [{ index: 1, total: 1, basis: 'method', text: t.method, refs: [] }];
  }
  return t.requirements.map((r, i) => ({ index: i + 1, total: t.requirements.length, basis: 'requirement', text: r.text, refs: r.refs as ImplItem['refs'] }));
}

async function judgeRequirement(input: JudgeInput, client: LlmClient, item: ImplItem, hunks: Hunk[], seen: Set<string>,
  errors: JudgeRecord['harnessErrors'], opts: JudgeOptions): Promise<RequirementVerdict> {
  const base = { index: item.index, requirement: item.text, basis: item.basis, hunks: [], groundTruth: [], citationProblems: [], shownHunks: [] as string[] };
  const gt = await groundTruthFor(input, item, opts.groundTruthBudgetChars ?? 20_000);
  if (hunks.length === 0) return { ...base, status: 'ok', verdict: 'unmet', judgeVerdict: 'unmet', reason: 'the patch is empty' };
  const symbols = symbolsOf(gt.map((g) => g.numbered).join('\n'), item.text);
  const paths = [...new Set([...item.refs.map((r) => r.path), ...(item.refs.length === 0 && input.task.type !== 3 ? input.task.source : [])])];
  const budget = opts.hunkBudgetChars ?? 60_000;
  const shown = selectHunks(hunks, paths, symbols, budget);
  const shownIds = new Set(shown.map((h) => h.id));
  const label = `implementation:${item.index}`;
  const r = await client.structured({
    item: label, schemaName: 'requirement_verdict', schema: ImplementationAnswer,
    messages: implementationMessages({
      basis: item.basis, index: item.index, total: item.total, text: item.text, groundTruth: gt,
      hunks: shown.map((h) => ({ path: h.path, newStart: h.newStart, newEnd: h.newEnd, text: h.text })),
      omittedHunks: hunks.length - shown.length, hunkCharLimit: budget,
    }),
  }, opts.signal);
  if (!r.ok) {
    errors.push({ item: label, message: r.error });
    return { ...base, shownHunks: [...shownIds], status: 'harness_error', verdict: null, judgeVerdict: null, reason: '', error: r.error };
  }
  shown.forEach((h) => seen.add(h.id));
  const cites = r.value.hunks.map((h) => ({ path: h.path, newStart: h.new_start, newEnd: h.new_end }));
  const gtCites = r.value.ground_truth.map((g) => ({ path: g.path, startLine: g.start_line, endLine: g.end_line }));
  const problems = await checkCitations(r.value.verdict, cites, gtCites, hunks, shownIds, input.pristine);
  return {
    ...base, shownHunks: [...shownIds], status: 'ok', verdict: finalVerdict(r.value.verdict, problems), judgeVerdict: r.value.verdict,
    reason: r.value.reason, hunks: cites, groundTruth: gtCites, citationProblems: problems,
  };
}

/**
 * Ground-truth ranges of an item read from the pristine checkout, as the LLM judge's prompt shows
 * them (whole file for a reference without lines; a notebook as its code cells, never its JSON).
 * `budget` is in characters. Exported for tests.
 */
export async function groundTruthFor(input: Pick<JudgeInput, 'pristine' | 'task'>, item: ImplItem, budget: number) {
  const out: { path: string; startLine: number; endLine: number; numbered: string }[] = [];
  if (!input.pristine) return out;
  const refs = item.refs.length > 0 || item.basis === 'method' ? item.refs : input.task.source.map((p) => ({ path: p, startLine: null, endLine: null }));
  let used = 0;
  for (const ref of refs) {
    let numbered: string;
    let start: number;
    let end: number;
    if (isNotebookPath(ref.path)) {
      // A notebook is shown as its code cells, never its JSON (docs/prejudge.md, "Notebooks").
      const r = await readGroundTruthRange(input.pristine, ref);
      if ('problem' in r) continue;
      start = r.citation.startLine;
      end = r.citation.endLine;
      numbered = `(${r.label}; code cells of the notebook, reading: ${r.citation.reading ?? 'raw'})\n${r.text}`;
    } else {
      const text = await input.pristine.read(ref.path);
      if (text === undefined) continue;
      start = ref.startLine ?? 1;
      end = Math.min(ref.endLine ?? lineCount(text), lineCount(text));
      numbered = numberedLines(text, start, end);
    }
    if (used + numbered.length > budget) numbered = numbered.slice(0, Math.max(0, budget - used)) + '\n[... truncated]';
    used += numbered.length;
    out.push({ path: ref.path, startLine: start, endLine: end, numbered });
    if (used >= budget) break;
  }
  return out;
}

async function judgeMonitor(input: JudgeInput, client: LlmClient, errors: JudgeRecord['harnessErrors'], notes: string[], opts: JudgeOptions): Promise<MonitorResult> {
  const lines = readLogLines(input.eventsJsonl ?? '');
  const masked = [...input.maskedPaths, ...(input.task.type === 2 ? input.task.source : [])];
  const deterministic = scanLog(lines, masked);
  const detFlag = deterministic.some((f) => f.severity === 'violation');
  if (input.eventsJsonl === undefined) {
    notes.push('no private/events.jsonl: the monitor had no log to scan');
    return { deterministic, llm: null, linesTotal: 0, linesUnseen: 0, flagged: detFlag };
  }
  const budget = opts.logBudgetChars ?? 60_000;
  const flaggedLines = new Set(deterministic.map((f) => f.line));
  const pick = [...lines.filter((l) => flaggedLines.has(l.line)), ...lines.filter((l) => !flaggedLines.has(l.line))];
  const chosen: typeof lines = [];
  let used = 0;
  for (const l of pick) {
    const t = `${l.line}: ${l.text.slice(0, 2000)}`;
    if (used + t.length > budget) continue;
    chosen.push(l);
    used += t.length + 1;
  }
  chosen.sort((a, b) => a.line - b.line);
  const r = await client.structured({
    item: 'monitor', schemaName: 'monitor_flags', schema: MonitorAnswer,
    messages: monitorMessages(chosen.map((l) => `${l.line}: ${l.text.slice(0, 2000)}`).join('\n'), lines.length - chosen.length),
  }, opts.signal);
  const linesUnseen = lines.length - chosen.length;
  if (!r.ok) {
    errors.push({ item: 'monitor', message: r.error });
    return {
      deterministic, linesTotal: lines.length, linesUnseen, flagged: detFlag,
      llm: { status: 'harness_error', paperAccess: false, gitOperations: false, fakedOrNonexperimentalData: false, reason: '', citedLines: [], invalidLines: [], unsupported: false, error: r.error },
    };
  }
  const valid = new Set(chosen.map((l) => l.line));
  const cited = r.value.cited_lines.filter((n) => valid.has(n));
  const invalid = r.value.cited_lines.filter((n) => !valid.has(n));
  const raised = r.value.paper_access || r.value.git_operations || r.value.faked_or_nonexperimental_data;
  const unsupported = raised && cited.length === 0;
  return {
    deterministic, linesTotal: lines.length, linesUnseen, flagged: detFlag || (raised && !unsupported),
    llm: {
      status: 'ok', paperAccess: r.value.paper_access, gitOperations: r.value.git_operations,
      fakedOrNonexperimentalData: r.value.faked_or_nonexperimental_data, reason: r.value.reason,
      citedLines: cited, invalidLines: invalid, unsupported,
    },
  };
}

function exactlyOnce(got: string[], want: Set<string>, field: string): string | undefined {
  const missing = [...want].filter((id) => !got.includes(id));
  const unknown = got.filter((id) => !want.has(id));
  const dup = got.filter((id, i) => got.indexOf(id) !== i);
  if (missing.length) return `${field} is missing ${missing.join(', ')}`;
  if (unknown.length) return `${field} has unknown ids ${unknown.join(', ')}`;
  if (dup.length) return `${field} repeats ${dup.join(', ')}`;
  return undefined;
}
