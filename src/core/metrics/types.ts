/**
 * What the metrics need from one judged task, whichever judge produced it: our judge record
 * (src/core/judge/types.ts) or a reference-harness judge JSON file (src/core/interop/harnessIn.ts).
 */
export type OutcomeKind = 'llm' | 'heuristic';

export type PartStatus = 'ok' | 'harness_error' | 'not_applicable' | 'not_judged';

export interface TaskOutcome {
  taskId: string;
  /** Bootstrap resampling unit. */
  paperId: string;
  /** Table row: the DIR it was found in (one agent / one run). */
  group: string;
  kind: OutcomeKind;
  /** File it was read from. */
  source: string;
  /** Set when the task is invalid (for example a masked path missing): excluded from every metric. */
  invalid?: string;
  /** Per-variable counts (our records) or only `score` 0..1 (harness files: `design_score / 100`). */
  design: { status: PartStatus; matched?: number; partial?: number; total?: number; score?: number };
  /** Per-requirement counts (our records) or only `score` 0..1 (harness files: `setup_score / 100`). */
  implementation: { status: PartStatus; met?: number; partial?: number; total?: number; score?: number };
  conclusion: { status: PartStatus; correct: boolean | null };
  /** E signals; `available: false` when the task was never verified. */
  execution: { available: boolean; exit: boolean | null; clean: boolean | null; claimsAllFound: boolean | null };
  monitorFlagged: boolean;
  harnessErrors: string[];
}
