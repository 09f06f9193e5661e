import { cohenKappa } from '../metrics/agreement';
import { compareJudgements, type Judgement, type TaskVerdictValue } from '../review';
import type { Task } from '../tasks/types';
import { applyEdits, editsOf } from './edits';
import type { LintFinding } from './types';
import type { ValidationRun } from './validations';
import { resolveVerdicts, type TaskVerdictState } from './verdicts';

/**
 * The curator's desk (docs/curation.md "The curator's desk"): the queue of tasks that need a
 * curator, and one task's page. Pure: the callers read the tasks, the lint, the review store's
 * judgements and the validation runs, and this joins them.
 */

/**
 * Why a task is in the queue, in the order the desk shows them: a lint error, a dispute no
 * resolution settled, curators whose latest verdicts differ, a latest validation run that did not
 * end well (an exit other than 0, a limit hit, a claim not found), no verdict yet.
 */
export const QUEUE_STATES = ['lint-error', 'open-dispute', 'disagreement', 'failed-validation', 'no-verdict'] as const;
export type QueueState = (typeof QUEUE_STATES)[number];

/** One task of the queue. */
export interface DeskRow {
  task: string;
  /** `<conference>/<paperId>`. */
  paper: string;
  paperTitle?: string;
  /** The question, at most 160 characters. */
  question: string;
  /** Why it needs a curator (empty: it does not). */
  states: QueueState[];
  /** The verdict that holds (resolveVerdicts); undefined while none or in disagreement. */
  verdict?: TaskVerdictValue;
  /** Each curator's latest verdict. */
  curators: { by: string; verdict: TaskVerdictValue; at: string; reason?: string }[];
  lint: { errors: number; warnings: number; info: number; rules: string[] };
  openDisputes: number;
  edits: number;
  /** The newest validation run. */
  lastValidation?: { ok: boolean; at: string; exitCode: number | null };
}

/** Two curators' agreement on the task verdicts both gave (each one's latest). */
export interface CuratorPair {
  a: string;
  b: string;
  /** Tasks both judged. */
  tasks: number;
  agree: number;
  /** Cohen's κ over those tasks; null when undefined (no tasks, or one class only). */
  kappa: number | null;
  /** The tasks where they differ. */
  differ: string[];
}

/** The whole queue and what its filters offer. */
export interface DeskQueue {
  rows: DeskRow[];
  /** Tasks per state; `attention`: tasks with any state; `total`: every task; per verdict. */
  counts: Record<QueueState | 'attention' | 'total' | TaskVerdictValue, number>;
  papers: string[];
  /** Lint rules that fired on some task, sorted. */
  rules: string[];
  curators: string[];
  pairs: CuratorPair[];
}

/** What the queue is narrowed to: every given member must match. */
export interface DeskFilter {
  paper?: string;
  rule?: string;
  /** A queue state, `attention` (any state: the default), `all`, or a verdict that holds. */
  state?: QueueState | 'attention' | 'all' | TaskVerdictValue;
  /** Tasks this curator gave a verdict (`by`). */
  curator?: string;
}

/** The paper of a task id (`iclr2024/18439/1` → `iclr2024/18439`). */
export function paperOf(task: string): string {
  return task.split('/').slice(0, 2).join('/');
}

/**
 * The queue over `tasks`: each task's states from the lint `findings` (those with its id), the
 * review store's `judgements` (verdicts, resolutions, disputes, edits) and its newest run of
 * `validations`. Rows are sorted by task id; every task of `tasks` has a row.
 */
export function buildQueue(o: { tasks: readonly Task[]; findings: readonly LintFinding[]; judgements: readonly Judgement[]; validations: readonly ValidationRun[] }): DeskQueue {
  const states = new Map(resolveVerdicts(o.judgements).map((s) => [s.task, s]));
  const findings = groupBy(o.findings.filter((f) => f.task !== undefined), (f) => f.task!);
  const newest = new Map<string, ValidationRun>();
  for (const v of o.validations) { const n = newest.get(v.task); if (!n || n.startedAt < v.startedAt) newest.set(v.task, v); }
  const rows = [...o.tasks].sort((a, b) => (a.id < b.id ? -1 : a.id > b.id ? 1 : 0)).map((t) => rowOf(t, findings.get(t.id) ?? [], states.get(t.id), newest.get(t.id)));
  const counts = Object.fromEntries([...QUEUE_STATES, 'attention', 'total', 'valid', 'invalid', 'needs-fix'].map((k) => [k, 0])) as DeskQueue['counts'];
  for (const r of rows) {
    counts.total++;
    if (r.states.length > 0) counts.attention++;
    for (const s of r.states) counts[s]++;
    if (r.verdict) counts[r.verdict]++;
  }
  const curators = [...new Set(rows.flatMap((r) => r.curators.map((c) => c.by)))].sort();
  return {
    rows, counts,
    papers: [...new Set(rows.map((r) => r.paper))].sort(),
    rules: [...new Set(rows.flatMap((r) => r.lint.rules))].sort(),
    curators, pairs: curatorPairs(rows, curators),
  };
}

function rowOf(t: Task, findings: LintFinding[], s: TaskVerdictState | undefined, v: ValidationRun | undefined): DeskRow {
  const count = (sev: string) => findings.filter((f) => f.severity === sev).length;
  const lint = { errors: count('error'), warnings: count('warning'), info: count('info'), rules: [...new Set(findings.map((f) => f.rule))].sort() };
  const states: QueueState[] = [];
  if (lint.errors > 0) states.push('lint-error');
  if (s && s.openDisputes.length > 0) states.push('open-dispute');
  if (s?.disagreement) states.push('disagreement');
  if (v && !v.ok) states.push('failed-validation');
  if (!s || s.byCurator.length === 0) states.push('no-verdict');
  const q = t.question.replace(/\s+/g, ' ').trim();
  return {
    task: t.id, paper: paperOf(t.id), ...(t.paper?.title ? { paperTitle: t.paper.title } : {}),
    question: q.length > 160 ? `${q.slice(0, 159)}…` : q, states,
    ...(s?.verdict ? { verdict: s.verdict } : {}),
    curators: (s?.byCurator ?? []).map((j) => ({ by: j.by, verdict: j.value as TaskVerdictValue, at: j.at, ...(j.reason ? { reason: j.reason } : {}) })),
    lint, openDisputes: s?.openDisputes.length ?? 0, edits: s?.edits.length ?? 0,
    ...(v ? { lastValidation: { ok: v.ok, at: v.startedAt, exitCode: v.exitCode } } : {}),
  };
}

/** Every pair of curators, over the tasks both gave a latest verdict. */
function curatorPairs(rows: readonly DeskRow[], curators: readonly string[]): CuratorPair[] {
  const out: CuratorPair[] = [];
  for (let i = 0; i < curators.length; i++) {
    for (let k = i + 1; k < curators.length; k++) {
      const a = curators[i]; const b = curators[k];
      const both = rows.flatMap((r) => {
        const va = r.curators.find((c) => c.by === a); const vb = r.curators.find((c) => c.by === b);
        return va && vb ? [{ task: r.task, reference: va.verdict as string, other: vb.verdict as string }] : [];
      });
      if (both.length === 0) continue;
      out.push({ a, b, tasks: both.length, agree: both.filter((p) => p.reference === p.other).length, kappa: cohenKappa(both), differ: both.filter((p) => p.reference !== p.other).map((p) => p.task) });
    }
  }
  return out;
}

/** The rows of `q` that `f` lets through (default state: `attention`). */
export function filterQueue(q: DeskQueue, f: DeskFilter = {}): DeskRow[] {
  const state = f.state ?? 'attention';
  return q.rows.filter((r) => (f.paper === undefined || r.paper === f.paper)
    && (f.rule === undefined || r.lint.rules.includes(f.rule))
    && (f.curator === undefined || r.curators.some((c) => c.by === f.curator))
    && (state === 'all' ? true : state === 'attention' ? r.states.length > 0
      : (QUEUE_STATES as readonly string[]).includes(state) ? r.states.includes(state as QueueState) : r.verdict === state));
}

/** One entry of a task's history of judgements. */
export interface HistoryEntry {
  id: string;
  at: string;
  by: string;
  kind: string;
  value: unknown;
  reason?: string;
  /** The value it replaced (the same curator's or anyone's latest of that kind: the store's `before`). */
  before?: unknown;
}

/** The history of a task: its task judgements (verdicts, resolutions, disputes, edits), oldest first. */
export function taskHistory(all: readonly Judgement[], task: string): HistoryEntry[] {
  return all.filter((j) => j.subject.kind === 'task' && j.subject.task === task).slice().sort(compareJudgements)
    .map((j) => ({ id: j.id, at: j.at, by: j.by, kind: j.kind, value: j.value, ...(j.reason ? { reason: j.reason } : {}), ...(j.before !== undefined ? { before: j.before } : {}) }));
}

/**
 * The task's entry with its edits applied, and the first edit that does not apply (the entry is
 * then the one before it, as the export does).
 */
export function editedEntry(task: Task, all: readonly Judgement[]): { entry: Record<string, unknown>; failed?: { id: string; message: string } } {
  const edits = editsOf(all, task.id);
  let entry = task.raw;
  for (const e of edits) {
    try { entry = applyEdits(entry, [e], task.id); } catch (err) {
      return { entry, failed: { id: e.id, message: err instanceof Error ? err.message : String(err) } };
    }
  }
  return { entry };
}

function groupBy<T>(xs: readonly T[], key: (x: T) => string): Map<string, T[]> {
  const m = new Map<string, T[]>();
  for (const x of xs) { const k = key(x); const l = m.get(k); if (l) l.push(x); else m.set(k, [x]); }
  return m;
}
