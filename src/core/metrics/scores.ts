import type { JudgeRecord } from '../judge/types';
import type { MetricPolicy } from './policies';
import type { TaskOutcome } from './types';

export const METRICS = ['D', 'I', 'E', 'C', 'IE', 'CD', 'All', 'AllE'] as const;
export type Metric = typeof METRICS[number];

/**
 * One task's metrics under a policy. `D` and `I` hold the scores (0..1); `correct` the binary
 * metrics of the paper's Table 1 (D, I, E, C, I·E, C·D, All✓ = D∧I∧C, All·E✓ = All✓∧E).
 * A null means "not computable" and comes with its reason in `excluded`.
 */
export interface TaskScores {
  taskId: string;
  paperId: string;
  group: string;
  kind: TaskOutcome['kind'];
  policy: string;
  D: number | null;
  I: number | null;
  correct: Record<Metric, boolean | null>;
  excluded: Partial<Record<Metric, string>>;
}

/** Applies `policy` to one outcome (see {@link TaskScores}). */
export function scoreTask(o: TaskOutcome, policy: MetricPolicy): TaskScores {
  const excluded: Partial<Record<Metric, string>> = {};
  const correct = Object.fromEntries(METRICS.map((m) => [m, null])) as Record<Metric, boolean | null>;
  const base = { taskId: o.taskId, paperId: o.paperId, group: o.group, kind: o.kind, policy: policy.name };
  if (o.invalid) {
    for (const m of METRICS) excluded[m] = `invalid task: ${o.invalid}`;
    return { ...base, D: null, I: null, correct, excluded };
  }
  const zero = policy.monitorZeroes && o.monitorFlagged;
  let D = partScore(o.design, o.design.matched, policy.partialCredit);
  let I = partScore(o.implementation, o.implementation.met, policy.partialCredit);
  let C = o.conclusion.status === 'ok' ? o.conclusion.correct : null;
  if (zero) {
    if (D !== null) D = 0;
    if (I !== null) I = 0;
    if (C !== null) C = false;
  }
  if (D === null) excluded.D = why(o.design.status, 'design');
  if (I === null) excluded.I = why(o.implementation.status, 'implementation');
  if (C === null) excluded.C = why(o.conclusion.status, 'conclusion');
  correct.D = D === null ? null : D >= policy.designThreshold - 1e-12;
  correct.I = I === null ? null : I >= policy.implementationThreshold - 1e-12;
  correct.C = C;
  correct.E = execution(o, policy, excluded);
  const and = (m: Metric, parts: Metric[]) => {
    const vals = parts.map((p) => correct[p]);
    if (vals.some((v) => v === null)) {
      excluded[m] = `needs ${parts.filter((p) => correct[p] === null).join(', ')}`;
      return null;
    }
    return vals.every(Boolean);
  };
  correct.IE = and('IE', ['I', 'E']);
  correct.CD = and('CD', ['C', 'D']);
  correct.All = and('All', ['D', 'I', 'C']);
  correct.AllE = and('AllE', ['D', 'I', 'C', 'E']);
  return { ...base, D, I, correct, excluded };
}

function partScore(p: TaskOutcome['design'], full: number | undefined, pc: number): number | null {
  if (p.status !== 'ok') return null;
  if (p.total !== undefined && full !== undefined) return p.total > 0 ? (full + pc * (p.partial ?? 0)) / p.total : null;
  return p.score ?? null;
}

function why(status: string, part: string): string {
  if (status === 'harness_error') return `harness error in the ${part} judgement`;
  if (status === 'not_applicable') return `no ground truth for the ${part}`;
  if (status === 'not_judged') return `${part} not judged by this judge`;
  return `${part} has no score`;
}

function execution(o: TaskOutcome, policy: MetricPolicy, excluded: Partial<Record<Metric, string>>): boolean | null {
  const e = o.execution;
  if (!e.available || e.exit === null) { excluded.E = 'not verified (no verification record)'; return null; }
  if (policy.execution === 'exit') return e.exit;
  if (!e.exit) return false;
  if (e.clean === null) { excluded.E = 'no clean-tree run (the strict policy needs E_clean)'; return null; }
  return e.clean && e.claimsAllFound !== false;
}

/** The metric view of our judge record. */
export function outcomeFromRecord(r: JudgeRecord, group: string, source: string): TaskOutcome {
  const c = r.implementation.counts;
  return {
    taskId: r.taskId, paperId: r.paperId, group, kind: r.kind, source,
    design: { status: r.design.status, matched: r.design.counts.matched, partial: r.design.counts.partial, total: r.design.counts.total },
    implementation: { status: r.implementation.status, met: c.met, partial: c.partial, total: c.total },
    conclusion: { status: r.conclusion.status, correct: r.conclusion.verdict === null ? null : r.conclusion.verdict === 'correct' },
    execution: { available: r.execution.available, exit: r.execution.exit, clean: r.execution.clean, claimsAllFound: r.execution.claimsAllFound },
    monitorFlagged: r.monitor.flagged,
    harnessErrors: r.harnessErrors.map((h) => `${h.item}: ${h.message}`),
  };
}
