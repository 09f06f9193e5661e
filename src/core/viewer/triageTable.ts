import type { Metric } from '../metrics/scores';

/** Who did the work of a run: a person in a session, or an agent (built-in, imported, or a trajectory file). */
export type RunActor = 'human' | 'agent';

/**
 * One row of the triage table (issue 17) and of `expbench report --runs`: a run (a session or one
 * trajectory of a file) with its scores under a metric policy. The scores are the metrics room's
 * (`scoreTask` of src/core/metrics/scores.ts on the run's judge record), the same numbers
 * `expbench report` counts; a run without a judge record has them null with the reason in `excluded`.
 * Documented in docs/triage.md.
 */
export interface TriageRow {
  /** What `expbench.trajectory.open` takes as `uri`: a session folder, a file, or `<file>#<trajectory id>`. */
  run: string;
  source: 'session' | 'file';
  /** The trajectory's id (session folder name, sample id). */
  id: string;
  task: string | null;
  agent: string;
  model: string | null;
  actor: RunActor;
  /** Design score 0..1 (after the policy's monitor rule); null when not computable. */
  D: number | null;
  /** Implementation score 0..1; null when not computable. */
  I: number | null;
  /** E✓, C✓ and All·E✓ of the paper's Table 1 under the policy; null when not computable. */
  E: boolean | null;
  C: boolean | null;
  AllE: boolean | null;
  /** `llm` or `heuristic` (who produced the verdicts); null when the run was never judged. */
  judge: 'llm' | 'heuristic' | null;
  policy: string;
  /** Why a metric is null (metrics room wording, or `not judged`). */
  excluded: Partial<Record<Metric, string>>;
  /** Monitor flags: deterministic flags (violation and review) + flags of a supported LLM monitor answer. */
  monitorFlags: number;
  /** True when the monitor's flags zero D, I and C (a violation, or a supported LLM flag). */
  monitorFlagged: boolean;
  steps: number;
  /** Input + output tokens over the run's model calls. */
  tokens: number;
  /** US dollars over the calls that carry a cost; null when none does (a person's session, unpriced models). */
  costUsd: number | null;
  /** Working time (the session's clock), else the span of the steps' times, ms; null when untimed. */
  durationMs: number | null;
  /** 0-based index of the first step a monitor flag points to (its log line, or the next step after it); null when none. */
  firstFlaggedStep: number | null;
  verified: boolean;
  /** What could not be read (a damaged file: `damaged zip archive …`, a damaged state or judge file); empty when none (always set by triageRow). */
  problems?: string[];
}

/**
 * What tells a run from the other runs of its task in the table: a session's folder name (Open
 * Task and run sets name each session apart), a file's name, with `#<trajectory id>` when the
 * file's trajectory id is not its name (a log of several samples).
 */
export function runLabel(r: Pick<TriageRow, 'run' | 'source' | 'id'>): string {
  if (r.source === 'session') return r.id;
  const file = r.run.replace(/#[^#/]*$/, '');
  const base = file.slice(file.lastIndexOf('/') + 1);
  return r.id && r.id !== base && !base.startsWith(`${r.id}.`) ? `${base}#${r.id}` : base;
}

/** The columns rows sort by (`id` shows {@link runLabel}). */
export const TRIAGE_COLUMNS = ['task', 'id', 'agent', 'model', 'actor', 'D', 'I', 'E', 'C', 'AllE', 'monitorFlags', 'steps', 'tokens', 'costUsd', 'durationMs'] as const;
export type TriageColumn = (typeof TRIAGE_COLUMNS)[number];

/**
 * Rows sorted by `column` (stable; ties keep their order): numbers and booleans (false < true)
 * by value, text by `localeCompare`; nulls always last, whichever the direction.
 */
export function sortRows(rows: readonly TriageRow[], column: TriageColumn, dir: 'asc' | 'desc' = 'asc'): TriageRow[] {
  const sign = dir === 'asc' ? 1 : -1;
  return rows.map((r, i) => ({ r, i })).sort((a, b) => {
    const x = a.r[column];
    const y = b.r[column];
    if (x === null || y === null) return x === y ? a.i - b.i : x === null ? 1 : -1;
    const c = typeof x === 'string' ? x.localeCompare(String(y)) : Number(x) - Number(y);
    return c !== 0 ? sign * c : a.i - b.i;
  }).map((e) => e.r);
}

/** What {@link filterRows} keeps: every given part must match (text parts: case-insensitive substrings). */
export interface TriageFilter {
  /** Matches task, agent, model or the run's id. */
  text?: string;
  task?: string;
  agent?: string;
  model?: string;
  actor?: RunActor;
  /** Only runs with a monitor flag. */
  flaggedOnly?: boolean;
}

/** The rows that match `f`. */
export function filterRows(rows: readonly TriageRow[], f: TriageFilter): TriageRow[] {
  const has = (v: string | null, q?: string) => !q || (v ?? '').toLowerCase().includes(q.toLowerCase());
  return rows.filter((r) => has(r.task, f.task) && has(r.agent, f.agent) && has(r.model, f.model)
    && (!f.actor || r.actor === f.actor) && (!f.flaggedOnly || r.monitorFlags > 0)
    && (!f.text || [r.task, r.agent, r.model, r.id].some((v) => has(v, f.text))));
}

/** `1h 02m`, `3m 05s`, `12s`; `-` for null. */
export function formatDuration(ms: number | null): string {
  if (ms === null) return '-';
  const s = Math.round(ms / 1000);
  if (s < 60) return `${s}s`;
  const m = Math.floor(s / 60);
  if (m < 60) return `${m}m ${String(s % 60).padStart(2, '0')}s`;
  return `${Math.floor(m / 60)}h ${String(m % 60).padStart(2, '0')}m`;
}
