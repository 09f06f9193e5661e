import type { Phase } from '../steps/phases';
import { STEPS_VERSION, type NewStep, type Stage, type Step } from '../steps/step';
import type { Problem } from '../tasks/types';

/** The formats the importers read (docs/steps.md, "Formats"). */
export const FORMATS = [
  'inspect-eval', 'inspect-json', 'openhands-v0', 'openhands-v1', 'swe-agent', 'mini-swe-agent', 'atif',
  'exp-bench-harness', 'expbench-events',
] as const;
export type TrajectoryFormat = (typeof FORMATS)[number];

/**
 * An oddity found while importing, as for task files: the file, a JSON pointer (RFC 6901, `''` =
 * the whole document), and for line-based files the 1-based `line`; for zip files the `entry`.
 */
export interface TrajProblem extends Problem {
  line?: number;
  entry?: string;
  offset?: number;
}

/**
 * Token usage as a source states it for a whole trajectory or file: per kind as {@link ModelCall}
 * counts them (input at the full rate, cache reads and writes apart, reasoning inside output), the
 * total as the source counts it, the cost in US dollars, the model calls; `from` names the field
 * it was read from (`sample model_usage`, `metrics.accumulated_token_usage`, `info.model_stats`,
 * `final_metrics`, `header stats.model_usage`). A kind the source does not state is absent.
 */
export interface SourceUsage {
  /** Input tokens with the cached ones, when the source counts only that (SWE-agent `tokens_sent`). */
  promptTokens?: number;
  inputTokens?: number;
  outputTokens?: number;
  cacheReadTokens?: number;
  cacheWriteTokens?: number;
  reasoningTokens?: number;
  totalTokens?: number;
  costUsd?: number;
  calls?: number;
  /** Per model, when the source splits it so (Inspect `model_usage`). */
  byModel?: Record<string, Omit<SourceUsage, 'byModel' | 'from'>>;
  from: string;
}

/** An Inspect span (`span_begin` … `span_end`): the tree the steps' `span` ids point into. */
export interface TrajSpan {
  id: string;
  name: string;
  /** Inspect's span type: `init`, `solvers`, `solver`, `agent`, `tool`, `scorers`, `scorer`, `subtask`, `handoff`, … */
  type?: string;
  parent?: string;
  depth: number;
  /** When the span's steps are not the agent's work (see {@link Stage}). */
  stage?: Stage;
}

/** One agent run (one sample, one instance, one harness record) mapped onto steps. */
export interface Trajectory {
  /** Schema version of the step model ({@link STEPS_VERSION}). */
  version: number;
  /** The sample / instance / session id (`<sample id>#<epoch>` for Inspect), or the file's base name. */
  id: string;
  format: TrajectoryFormat;
  /** The file it came from; for a harness record, the first of its files. */
  file: string;
  /** Every file a grouped record was read from (harness records). */
  files?: string[];
  /** The task (`<conference>/<paperId>/<index>`, or the source's own task name) when known. */
  task?: string;
  steps: Step[];
  /** Events (lines, messages, entries) in the source for this trajectory. */
  sourceEvents: number;
  /** Of those, how many are represented by some step (merged observations count). */
  mappedEvents: number;
  /** Of those, how many carry no row by design (span markers, state snapshots, token-stat updates, empty observations). */
  skippedEvents: number;
  /** Steps that carry a time; 0 when the source has no timestamps. */
  timed: number;
  /** Secrets replaced by `[REDACTED:<kind>]`, summed over everything the trajectory holds. */
  redactions: number;
  /** Scores as the source gives them (Inspect scores, harness judge, OpenHands test_result). */
  scores?: Record<string, unknown>;
  /** Metadata of the run or sample (model, agent, config, instance), unknown fields kept. */
  metadata?: Record<string, unknown>;
  /** The final patch when the source has one (SWE-agent `submission`, OpenHands `git_patch`, harness `.patch`). */
  patch?: string;
  /** Harness answers `{design, conclusion}` when the source has them (`design` one text or its lines, as the harness's answers.json allows). */
  answers?: { design?: string | string[]; conclusion?: string };
  /** The sample (Inspect: id and epoch; others: the instance id) and how it ended (`success`, `error`, `limit: …`, the source's exit status). */
  sample?: { id: string; epoch?: number; status?: string };
  /** The agent (Inspect solver, the source's agent name) and the model most calls used, when known. */
  agent?: string;
  model?: string;
  /** The task as the run was given it (Inspect input, OpenHands instruction, SWE-agent problem statement), when known. */
  taskText?: string;
  /** The trajectory's own token totals as its source states them (none when it states none). */
  sourceUsage?: SourceUsage;
  /** The whole file's token totals as the file states them (Inspect `header stats.model_usage`), when it does. */
  fileUsage?: SourceUsage;
  /** Inspect spans, outermost first. */
  spans?: TrajSpan[];
  problems: TrajProblem[];
}

/**
 * Share of the source's events represented by steps, 0..1, leaving out those that carry no row by
 * design (`skippedEvents`); 1 when nothing is left. Rounded to 3 decimals.
 */
export function mappedShare(t: Pick<Trajectory, 'sourceEvents' | 'mappedEvents' | 'skippedEvents'>): number {
  const n = t.sourceEvents - t.skippedEvents;
  return n <= 0 ? 1 : Math.round((t.mappedEvents / n) * 1000) / 1000;
}

/** Collects one trajectory's steps and counts while an importer reads; {@link finishTrajectory} completes it. */
export class TrajectoryBuilder {
  readonly steps: NewStep[] = [];
  readonly problems: TrajProblem[] = [];
  sourceEvents = 0;
  mappedEvents = 0;
  skippedEvents = 0;
  task?: string;
  scores?: Record<string, unknown>;
  metadata?: Record<string, unknown>;
  patch?: string;
  answers?: { design?: string | string[]; conclusion?: string };
  sample?: Trajectory['sample'];
  agent?: string;
  model?: string;
  taskText?: string;
  sourceUsage?: SourceUsage;
  fileUsage?: SourceUsage;
  spans?: TrajSpan[];
  /** True for sources whose phases are recorded (this project's sessions). */
  exactPhases = false;

  constructor(readonly id: string, readonly format: TrajectoryFormat, readonly file: string) {}

  add(step: NewStep): NewStep { this.steps.push(step); return step; }
  problem(pointer: string, message: string, extra: Partial<TrajProblem> = {}, severity: TrajProblem['severity'] = 'warning'): void {
    this.problems.push({ file: this.file, pointer, severity, message, ...extra });
  }
}

/** Empty trajectory object with the version set (used by the builder and tests). */
export function emptyTrajectory(id: string, format: TrajectoryFormat, file: string): Trajectory {
  return { version: STEPS_VERSION, id, format, file, steps: [], sourceEvents: 0, mappedEvents: 0, skippedEvents: 0, timed: 0, redactions: 0, problems: [] };
}

export type { Phase };
