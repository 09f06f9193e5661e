import type { MetricPolicy } from '../metrics/policies';
import type { Metric, TaskScores } from '../metrics/scores';
import type { TaskOutcome } from '../metrics/types';

/** Failure categories in drawing order; `all correct` last of the scored ones. */
export const FAILURE_ORDER = ['zeroed by the monitor', 'failed first at D', 'failed first at C', 'failed first at I', 'failed first at E', 'all correct (All·E✓)'] as const;
/** Categories shown apart: never a failure, never a score. */
export const FAILURE_APART = ['harness error', 'not computable', 'invalid task'] as const;
export type FailureCategory = (typeof FAILURE_ORDER)[number] | (typeof FAILURE_APART)[number];

const STAGES: Metric[] = ['D', 'C', 'I', 'E'];

/**
 * The first stage of the funnel (D, then C, I, E: the order of src/core/figures/build.ts
 * `FUNNEL`) at which one task is not correct, from its scores under `policy` (the metrics room's
 * `scoreTask`): `failed first at X` at the first false; at a stage that is not computable before
 * any false, `harness error` when the metrics room names a harness error as the reason, else
 * `not computable` (not verified, not judged, no ground truth). An invalid task is `invalid task`;
 * a monitor flag that the policy lets zero D, I and C is `zeroed by the monitor`.
 */
export function failureCategory(s: TaskScores, o: TaskOutcome, policy: MetricPolicy): FailureCategory {
  if (o.invalid) return 'invalid task';
  if (policy.monitorZeroes && o.monitorFlagged && s.correct.D !== null) return 'zeroed by the monitor';
  for (const m of STAGES) {
    const v = s.correct[m];
    if (v === false) return `failed first at ${m as 'D' | 'C' | 'I' | 'E'}`;
    if (v === null) return /harness error/.test(s.excluded[m] ?? '') ? 'harness error' : 'not computable';
  }
  return 'all correct (All·E✓)';
}
