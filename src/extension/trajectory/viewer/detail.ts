import * as path from 'node:path';
import type { Step } from '../../../core/steps/step';
import type { Trajectory, TrajProblem } from '../../../core/trajectory/types';
import { editDiffs } from '../../../core/viewer/diffs';
import type { Timeline } from '../../../core/viewer/timeline';
import type { Cut, TrajDetail, TrajHeader, TrajJudgement, TrajPin, TrajRow } from '../../../protocol/trajectory';

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
export function stepDetail(file: string, tl: Timeline, index: number, opts: { limit: number; search?: string; pins: TrajPin[]; judgements: TrajJudgement[]; shownFile?: (file: string) => string }): TrajDetail {
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
  let actionText = '';
  if (s.action) {
    const args = s.action.arguments !== undefined ? json(s.action.arguments) : undefined;
    actionText = [s.action.tool, s.action.command ?? '', args ?? ''].filter(Boolean).join('\n');
    d.action = { tool: s.action.tool, command: s.action.command, callId: s.action.callId, display: cut(actionText, limit), ...(args !== undefined ? { arguments: cut(args, limit) } : {}) };
  }
  if (opts.search) d.matches = findAll({ text: s.text ?? '', action: actionText, observation: s.observation?.text ?? '' }, opts.search);
  if (s.observation) d.observation = { text: cut(s.observation.text, limit), exitCode: s.observation.exitCode, error: s.observation.error };
  if (s.model) d.model = s.model;
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

/** Rows `start`..`start+count` of a view (step indices), with their pins and judgement counts. */
export function viewRows(tl: Timeline, view: readonly number[], start: number, count: number, pins: ReadonlyMap<number, TrajPin[]>, judged: ReadonlyMap<number, number>): TrajRow[] {
  const out: TrajRow[] = [];
  for (let p = start; p < Math.min(view.length, start + count); p++) {
    const r = tl.row(view[p])!;
    const ps = pins.get(r.step);
    const j = judged.get(r.step);
    out.push({ ...r, ...(ps?.length ? { pins: ps.map((x) => x.label) } : {}), ...(j ? { judgements: j } : {}) });
  }
  return out;
}

/** Lines of a session event log imported first (the first page is posted from them), before the whole file. */
export const HEAD_LINES = 2000;

const where = (p: TrajProblem) => `${p.file}${p.entry ? `!${p.entry}` : ''}${p.line ? `:${p.line}` : ''}${p.pointer ? `#${p.pointer}` : ''}`;

/** The viewer's header for trajectory `key` of a file's list (problems of the file and of that trajectory, counted). */
export function header(file: string, name: string, list: Trajectory[], key: number, tl: Timeline | undefined, fileProblems: TrajProblem[], o: { live: boolean; loading?: boolean; updatedAt?: string; failure?: string; can: TrajHeader['can']; pinned: number }): TrajHeader {
  const t = list[key];
  const problems = [...fileProblems, ...(t?.problems ?? [])];
  if (o.failure && !problems.some((p) => p.severity === 'error')) problems.unshift({ file, pointer: '', severity: 'error', message: o.failure });
  const count = (sev: string) => problems.filter((p) => p.severity === sev).length;
  return {
    file, name, format: t?.format ?? 'unknown', key: String(key), id: t?.id ?? name, task: t?.task,
    samples: list.map((x, i) => ({ key: String(i), id: x.id, steps: x.steps.length, task: x.task })),
    live: o.live, updatedAt: o.updatedAt, ...(o.loading ? { loading: true } : {}),
    sourceEvents: t?.sourceEvents ?? 0, mappedEvents: t?.mappedEvents ?? 0, skippedEvents: t?.skippedEvents ?? 0,
    problems: {
      errors: count('error'), warnings: count('warning'), infos: count('info'),
      items: problems.slice(0, PROBLEMS_LISTED).map((p) => ({ severity: p.severity, where: where(p), message: p.message })),
    },
    facets: tl ? tl.facets() : { kinds: {}, actors: {}, phases: {}, tools: {} },
    totals: tl ? tl.totals : { steps: 0, tokens: 0, costUsd: 0, timed: 0 },
    can: o.can, pinned: o.pinned,
  };
}

/** The session folder of `<dir>/private/events.jsonl`, else undefined. */
export function sessionDirOf(file: string): string | undefined {
  return path.basename(file) === 'events.jsonl' && path.basename(path.dirname(file)) === 'private' ? path.dirname(path.dirname(file)) : undefined;
}

