import * as path from 'node:path';
import type { PriceTable } from '../../../core/llm/ledger';
import { callTokens, type Step } from '../../../core/steps/step';
import type { Trajectory, TrajProblem } from '../../../core/trajectory/types';
import { editDiffs } from '../../../core/viewer/diffs';
import type { Timeline } from '../../../core/viewer/timeline';
import { callCost, fileTotals, usageTotals } from '../../../core/viewer/usage';
import type { Cut, TrajDetail, TrajHeader, TrajJudgement, TrajPin, TrajRow, TrajSample, TrajScore } from '../../../protocol/trajectory';

/** Characters of a long text (observation, arguments, diff) the detail pane gets before "show all". */
export const DETAIL_CHARS = 6000;
/** Characters "show all" sends at most. */
export const FULL_CHARS = 2_000_000;
/** Problems listed by name in the header (all are counted). */
const PROBLEMS_LISTED = 50;

export function cut(text: string, limit: number): Cut {
  return { text: text.length > limit ? text.slice(0, limit) : text, total: text.length };
}

function json(v: unknown): string {
  if (typeof v === 'string') return v;
  try { return JSON.stringify(v, null, 2) ?? ''; } catch { return String(v); }
}

/** `<file>#step=N`, the copyable reference of a step (N 0-based, the step's index). */
export function stepRef(file: string, step: number): string {
  return `${file}#step=${step}`;
}

/** Splits a reference `<file>#step=N` (or a plain path) into file and step. */
export function parseStepRef(ref: string): { file: string; step?: number } {
  const m = /^(.*)#step=(\d+)$/.exec(ref);
  return m ? { file: m[1], step: Number(m[2]) } : { file: ref };
}

/**
 * A step's detail for the webview: long texts cut at `limit` characters, diffs made when the source
 * has none; the source's file as `shownFile` names it (default: as is; the panel shows it by the
 * window's folder, never the machine's path).
 */
export function stepDetail(file: string, tl: Timeline, index: number, opts: { limit: number; search?: string; pins: TrajPin[]; judgements: TrajJudgement[]; prices?: PriceTable; shownFile?: (file: string) => string }): TrajDetail {
  const s: Step = tl.trajectory.steps[index];
  const row = tl.rows[index];
  const { limit } = opts;
  const d: TrajDetail = {
    step: index, kind: s.kind, actor: s.actor, phase: s.phase, phaseInferred: s.phaseInferred,
    time: s.time, edits: editDiffs(s).map((e) => ({ path: e.path, op: e.op, diff: cut(e.diff, limit), made: e.made })),
    totalTokens: row.totalTokens, totalCostUsd: row.totalCostUsd,
    source: opts.shownFile ? { ...s.source, file: opts.shownFile(s.source.file) } : s.source, matches: [],
    pins: opts.pins, judgements: opts.judgements, ref: stepRef(file, index),
  };
  if (s.text !== undefined) d.text = cut(s.text, limit);
  if (s.reasoning) d.reasoning = { ...(s.reasoning.text ? { text: cut(s.reasoning.text, limit) } : {}), ...(s.reasoning.summary ? { summary: cut(s.reasoning.summary, limit) } : {}), ...(s.reasoning.redacted ? { redacted: true } : {}) };
  if (s.stage) d.stage = s.stage;
  if (s.purpose) d.purpose = s.purpose;
  const spans = tl.spanPath(index);
  if (spans.length) d.spans = spans.map((x) => ({ name: x.name, ...(x.type ? { type: x.type } : {}) }));
  const calls = Array.isArray(s.extra?.calls) ? (s.extra!.calls as Array<{ id?: string; tool?: string }>) : undefined;
  if (calls) d.calls = calls.map((c) => { const at = c.id ? tl.stepOfCall(c.id) : undefined; return { tool: c.tool ?? 'tool', ...(at !== undefined ? { step: at } : {}) }; });
  if (s.execs?.length) d.execs = s.execs.map((x) => ({ action: x.action, ...(x.command ? { command: x.command } : {}), ...(x.file ? { file: x.file } : {}), ...(x.exitCode !== undefined ? { exitCode: x.exitCode } : {}), ...(x.durationMs !== undefined ? { durationMs: x.durationMs } : {}), ...(x.output !== undefined ? { output: cut(x.output, limit) } : {}) }));
  let actionText = '';
  if (s.action) {
    const args = s.action.arguments !== undefined ? json(s.action.arguments) : undefined;
    actionText = actionDisplay(s.action.tool, s.action.command, s.action.arguments);
    d.action = { tool: s.action.tool, command: s.action.command, callId: s.action.callId, display: cut(actionText, limit), ...(args !== undefined ? { arguments: cut(args, limit) } : {}) };
  }
  if (opts.search) d.matches = findAll({ text: s.text ?? '', action: actionText, observation: s.observation?.text ?? '' }, opts.search);
  if (s.observation) d.observation = { text: cut(s.observation.text, limit), exitCode: s.observation.exitCode, error: s.observation.error };
  if (s.model) {
    const c = callCost(s.model, opts.prices);
    d.model = { ...s.model, ...(callTokens(s.model) !== undefined && s.model.totalTokens === undefined ? { totalTokens: callTokens(s.model) } : {}), ...(c.usd !== undefined && s.model.costUsd === undefined ? { costUsd: c.usd } : {}), ...(c.from ? { costFrom: c.from } : c.unpriced ? { costFrom: 'unpriced' } : {}) };
  }
  if (s.errors?.length) d.errors = s.errors;
  if (s.extra && Object.keys(s.extra).length) d.extra = cut(json(s.extra), limit);
  return d;
}

/** Case-insensitive occurrences of `query` in each field's text (as {@link Timeline.matches}, over the texts as shown). */
function findAll(texts: Record<'text' | 'action' | 'observation', string>, query: string): TrajDetail['matches'] {
  const q = query.split('\u0000')[0].toLowerCase();
  const out: TrajDetail['matches'] = [];
  if (!q) return out;
  for (const field of ['text', 'action', 'observation'] as const) {
    const hay = texts[field].toLowerCase();
    for (let at = hay.indexOf(q); at >= 0; at = hay.indexOf(q, at + q.length)) out.push({ field, start: at, end: at + q.length });
  }
  return out;
}

/**
 * The action as the detail shows it: the tool; `$ command` when it runs one; then the arguments
 * one per line — `key: value` with strings as they are (never escaped), a multi-line string as a
 * block under its key (indented two spaces), any other value as pretty JSON — leaving out what
 * the command line already shows (the argument that holds the command, or arguments that are the
 * command's text itself, as SWE-agent's are).
 */
export function actionDisplay(tool: string, command: string | undefined, args: unknown): string {
  const lines = [tool];
  // a command that is the call written out (SWE-agent's `edit 'a' 'b' False` beside its arguments) is shown once, as the arguments
  const rendering = command !== undefined && args !== null && typeof args === 'object' && !Array.isArray(args)
    && command.trim().split(/\s+/)[0] === tool && !Object.values(args as Record<string, unknown>).includes(command);
  if (command !== undefined && command !== '' && !rendering) lines.push(`$ ${command}`);
  if (args === undefined || args === null) return lines.join('\n');
  if (typeof args === 'string') {
    if (args.trim() !== (command ?? '').trim()) lines.push(args);
    return lines.join('\n');
  }
  if (typeof args !== 'object' || Array.isArray(args)) { lines.push(json(args)); return lines.join('\n'); }
  for (const [k, v] of Object.entries(args as Record<string, unknown>)) {
    if (typeof v === 'string') {
      if (command !== undefined && v === command && (k === 'cmd' || k === 'command' || k === 'code')) continue;
      if (v.includes('\n')) lines.push(`${k}:`, ...v.split('\n').map((l) => `  ${l}`));
      else lines.push(`${k}: ${v}`);
    } else if (v === undefined || v === null) continue;
    else if (typeof v !== 'object') lines.push(`${k}: ${String(v)}`);
    else lines.push(`${k}: ${json(v).split('\n').join('\n  ')}`);
  }
  return lines.join('\n');
}

/** Rows `start`..`start+count` of a view (step indices), with their pins and judgement counts. */
export function viewRows(tl: Timeline, view: readonly number[], start: number, count: number, pins: ReadonlyMap<number, TrajPin[]>, judged: ReadonlyMap<number, number>): TrajRow[] {
  const out: TrajRow[] = [];
  for (let p = start; p < Math.min(view.length, start + count); p++) {
    const r = tl.row(view[p])!;
    const ps = pins.get(r.step);
    const j = judged.get(r.step);
    const opened = tl.spansOpening(view[p], p > 0 ? view[p - 1] : undefined);
    const execs = tl.trajectory.steps[r.step].execs?.length;
    out.push({ ...r, ...(opened.length ? { spanStart: opened } : {}), ...(execs ? { execs } : {}), ...(ps?.length ? { pins: ps.map((x) => x.label) } : {}), ...(j ? { judgements: j } : {}) });
  }
  return out;
}

/** Lines of a session event log imported first (the first page is posted from them), before the whole file. */
export const HEAD_LINES = 2000;

const where = (p: TrajProblem) => `${p.file}${p.entry ? `!${p.entry}` : ''}${p.line ? `:${p.line}` : ''}${p.pointer ? `#${p.pointer}` : ''}`;

/** Characters of the task text and score texts the header carries (the rest: "show all" in the task panel is the first step). */
const HEADER_TEXT_CHARS = 4000;

/** The viewer's header for trajectory `key` of a file's list (problems of the file and of that trajectory, counted). */
export function header(file: string, name: string, list: Trajectory[], key: number, tl: Timeline | undefined, fileProblems: TrajProblem[], o: { live: boolean; loading?: boolean; updatedAt?: string; failure?: string; can: TrajHeader['can']; pinned: number; prices?: PriceTable }): TrajHeader {
  const t = list[key];
  const problems = [...fileProblems, ...(t?.problems ?? [])];
  if (o.failure && !problems.some((p) => p.severity === 'error')) problems.unshift({ file, pointer: '', severity: 'error', message: o.failure });
  const count = (sev: string) => problems.filter((p) => p.severity === sev).length;
  const u = t ? usageTotals(t, o.prices) : undefined;
  const usage = u ? { inputTokens: u.inputTokens, outputTokens: u.outputTokens, cacheReadTokens: u.cacheReadTokens, cacheWriteTokens: u.cacheWriteTokens, reasoningTokens: u.reasoningTokens,
    totalTokens: u.totalTokens, stepTokens: u.stepTokens, from: u.from, calls: u.calls, costUsd: u.costUsd, costFrom: u.costFrom, unpricedCalls: u.unpricedCalls,
    perStep: t!.steps.some((s) => callTokens(s.model) !== undefined), ...(u.inputIncludesCache ? { inputIncludesCache: true } : {}) }
    : { inputTokens: 0, outputTokens: 0, cacheReadTokens: 0, cacheWriteTokens: 0, reasoningTokens: 0, totalTokens: 0, stepTokens: 0, from: 'the steps', calls: 0, costUsd: null, costFrom: null, unpricedCalls: 0, perStep: false };
  const ft = list.length && (list.length > 1 || t?.fileUsage) ? fileTotals(list, o.prices) : undefined;
  const target = t?.metadata?.target;
  return {
    file, name, format: t?.format ?? 'unknown', key: String(key), id: t?.id ?? name, task: t?.task,
    ...(t?.agent ? { agent: t.agent } : {}), ...(t?.model ? { model: t.model } : {}),
    ...(t?.taskText ? { taskText: cut(t.taskText, HEADER_TEXT_CHARS) } : {}),
    ...(target !== undefined && target !== null && target !== '' ? { target: cut(typeof target === 'string' ? target : json(target), HEADER_TEXT_CHARS) } : {}),
    scores: t ? scoresOf(t) : [],
    usage,
    ...(ft ? { fileUsage: { totalTokens: ft.totalTokens, costUsd: ft.costUsd, from: ft.from } } : {}),
    columns: tl ? columnsOf(tl) : { tool: 8, total: 6, lane: 8, tok: 0 },
    samples: list.map((x, i) => sampleOf(x, i, o.prices)),
    live: o.live, updatedAt: o.updatedAt, ...(o.loading ? { loading: true } : {}),
    sourceEvents: t?.sourceEvents ?? 0, mappedEvents: t?.mappedEvents ?? 0, skippedEvents: t?.skippedEvents ?? 0,
    problems: {
      errors: count('error'), warnings: count('warning'), infos: count('info'),
      items: problems.slice(0, PROBLEMS_LISTED).map((p) => ({ severity: p.severity, where: where(p), message: p.message })),
    },
    facets: tl ? tl.facets() : { kinds: {}, actors: {}, phases: {}, stages: {}, tools: {} },
    totals: tl ? tl.totals : { steps: 0, tokens: 0, costUsd: 0, timed: 0 },
    can: o.can, pinned: o.pinned,
  };
}

/** A sample of the file for the sample list. */
function sampleOf(t: Trajectory, i: number, prices?: PriceTable): TrajSample {
  const md = t.metadata ?? {};
  const secs = typeof md.working_time === 'number' ? md.working_time : typeof md.total_time === 'number' ? md.total_time : undefined;
  const timed = t.steps.filter((s) => s.time);
  const span = timed.length > 1 ? timed[timed.length - 1].time!.ms + (timed[timed.length - 1].time!.durationMs ?? 0) - timed[0].time!.ms : undefined;
  const scores = scoresOf(t).filter((s) => s.name !== 'git_patch').map((s) => `${s.name} ${s.value}`).join(' · ');
  return {
    key: String(i), id: t.id, steps: t.steps.length, ...(t.task ? { task: t.task } : {}),
    ...(t.sample?.epoch !== undefined ? { epoch: t.sample.epoch } : {}), ...(t.sample?.status ? { status: t.sample.status } : {}),
    ...(scores ? { scores: scores.slice(0, 200) } : {}),
    tokens: usageTotals(t, prices).totalTokens,
    ...(secs !== undefined ? { timeMs: secs * 1000 } : span !== undefined && span >= 0 ? { timeMs: span } : {}),
    ...(t.model ? { model: t.model } : {}),
  };
}

/**
 * The trajectory's scores for the scoring view: Inspect's `{scorer: {value, answer, explanation,
 * metadata}}` one each; any other source's scalar fields (`exit_status`, `resolved`, a judge's
 * `design_score`) one each, its objects as JSON; the final patch is left out (it is a step).
 */
export function scoresOf(t: Trajectory): TrajScore[] {
  const out: TrajScore[] = [];
  for (const [name, v] of Object.entries(t.scores ?? {})) {
    if (name === 'git_patch' || v === undefined) continue;
    if (v !== null && typeof v === 'object' && !Array.isArray(v) && 'value' in v) {
      const sc = v as Record<string, unknown>;
      out.push({ name, value: typeof sc.value === 'string' ? sc.value : json(sc.value).replace(/\s+/g, ' '),
        ...(sc.answer !== undefined && sc.answer !== null ? { answer: cut(typeof sc.answer === 'string' ? sc.answer : json(sc.answer), HEADER_TEXT_CHARS) } : {}),
        ...(sc.explanation !== undefined && sc.explanation !== null ? { explanation: cut(typeof sc.explanation === 'string' ? sc.explanation : json(sc.explanation), HEADER_TEXT_CHARS) } : {}),
        ...(sc.metadata && Object.keys(sc.metadata).length ? { metadata: cut(json(sc.metadata), HEADER_TEXT_CHARS) } : {}) });
    } else if (v === null || typeof v !== 'object') out.push({ name, value: String(v) });
    else out.push({ name, value: cut(json(v).replace(/\s+/g, ' '), 160).text });
  }
  return out;
}

/** Column widths (characters) that fit the trajectory: its longest tool name and running total, its longest lane label. */
function columnsOf(tl: Timeline): TrajHeader['columns'] {
  let tool = 4; let lane = 6; let tok = 0;
  for (const r of tl.rows) {
    if (r.tool && r.tool.length > tool) tool = r.tool.length;
    const l = (r.purpose === 'system-prompt' ? 'system prompt' : r.purpose ?? r.stage ?? r.phase).length;
    if (l > lane) lane = l;
    // "12.3k tok · $0.0042": the step's own tokens and cost
    const own = (r.tokens !== undefined ? formatTokens(r.tokens).length + 4 : 0) + (r.costUsd !== undefined ? 10 : 0);
    if (own > tok) tok = own;
  }
  const total = formatTokens(tl.totals.tokens).length + 2 + (tl.totals.costUsd ? 10 : 0);
  // the lane's label is set at 0.78em: its width in the row's ch is about 0.8 of its length
  return { tool: Math.min(tool, 16) + 1, total: Math.max(total, 6), lane: Math.min(Math.ceil(lane * 0.8), 12) + 2, tok: Math.min(tok, 22) };
}

/** Tokens as the webview writes them (webview-ui/src/trajectory/format.ts), for column widths. */
function formatTokens(n: number): string {
  if (n < 1000) return String(Math.round(n));
  if (n < 1_000_000) return `${(n / 1000).toFixed(n < 10_000 ? 2 : 1)}k`;
  return `${(n / 1_000_000).toFixed(2)}M`;
}

/** The session folder of `<dir>/private/events.jsonl`, else undefined. */
export function sessionDirOf(file: string): string | undefined {
  return path.basename(file) === 'events.jsonl' && path.basename(path.dirname(file)) === 'private' ? path.dirname(path.dirname(file)) : undefined;
}

