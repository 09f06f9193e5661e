import { z } from 'zod';
import { DesignDraftSchema, PhaseSchema } from '../steps/phases';

/**
 * The session's working state, stored at `private/state.json` (see {@link SessionStore} in
 * `store.ts`): the phase, the drafts, the notes, the clock and the history of script runs.
 * Versioned: `version` is 1; a file with another version is refused, never reinterpreted.
 *
 * All timestamps are ISO 8601 strings in UTC (`new Date(ms).toISOString()`); durations are ms.
 */
export const STATE_VERSION = 1;

export { PHASES, PhaseSchema, DesignVariableSchema, DesignDraftSchema } from '../steps/phases';
export type { Phase, DesignVariableDraft, DesignDraft } from '../steps/phases';
const Iso = z.string().refine((s) => !Number.isNaN(Date.parse(s)), 'expected an ISO 8601 timestamp');

export const NoteSchema = z.object({ at: Iso, text: z.string() });
export type Note = z.infer<typeof NoteSchema>;

/**
 * A stretch of working time. `end` is absent while the clock runs; `lastBeat` is the last
 * heartbeat recorded while it ran (see clock.ts for the rule that uses it after a crash).
 */
export const ClockSegmentSchema = z.object({
  start: Iso,
  lastBeat: Iso,
  end: Iso.optional(),
  /** Why the segment ended: a pause by the user, an interruption (window killed), submit or give-up, or the clock handed to the other actor (no pause). */
  endReason: z.enum(['paused', 'interrupted', 'submitted', 'gave_up', 'handed_over']).optional(),
  /** The user's reason for the pause, when given. */
  pauseReason: z.string().optional(),
  /** Whose working time the segment is: the person's or an attached agent's (absent: the person's, as before agents). */
  actor: z.enum(['human', 'agent']).optional(),
});
export type ClockSegment = z.infer<typeof ClockSegmentSchema>;

export const ClockStateSchema = z.object({
  /** Working-time budget in ms; `null` = no budget. */
  budgetMs: z.number().int().positive().nullable(),
  /**
   * When true the budget is a limit, not a warning: working time never passes it (the open segment
   * counts at most up to the budget, the clock is paused there and cannot resume). A campaign's
   * `perPerson.hours` (docs/campaigns.md "Working-time budgets"); absent or false: warnings only.
   */
  budgetHard: z.boolean().optional(),
  segments: z.array(ClockSegmentSchema),
  /** When each budget warning was emitted (each is emitted once per session). */
  warned: z.object({ at80: Iso.optional(), at100: Iso.optional() }),
});
export type ClockState = z.infer<typeof ClockStateSchema>;

/** One run of `reproduce_exp_bench.sh` in the work container. `log` is relative to the session root. */
export const RunRecordSchema = z.object({
  id: z.string(),
  startedAt: Iso,
  exitCode: z.number().int().nullable(),
  durationMs: z.number().nonnegative(),
  log: z.string(),
  error: z.string().optional(),
});
export type RunRecord = z.infer<typeof RunRecordSchema>;

export const OutcomeSchema = z.object({
  at: Iso,
  /** Working time at the moment of submission / give-up, ms (pauses excluded). */
  workingMs: z.number().nonnegative(),
  reason: z.string().optional(),
});
export type Outcome = z.infer<typeof OutcomeSchema>;

export const SessionStateSchema = z.object({
  version: z.literal(STATE_VERSION),
  phase: PhaseSchema,
  design: DesignDraftSchema,
  conclusion: z.string(),
  notes: z.array(NoteSchema),
  clock: ClockStateSchema,
  runs: z.array(RunRecordSchema),
  submitted: OutcomeSchema.optional(),
  gaveUp: OutcomeSchema.optional(),
  /** Last change, ISO time. */
  updatedAt: Iso,
});
export type SessionState = z.infer<typeof SessionStateSchema>;

/** A fresh state: design phase, empty drafts, clock never started (paused), no budget. */
export function initialState(now: number, budgetMs: number | null = null): SessionState {
  return {
    version: STATE_VERSION,
    phase: 'design',
    design: { constants: [], independent: [], dependent: [], freeText: '' },
    conclusion: '',
    notes: [],
    clock: { budgetMs, segments: [], warned: {} },
    runs: [],
    updatedAt: new Date(now).toISOString(),
  };
}

/** True when the session was submitted or given up: the answers are frozen. */
export function isFinished(s: SessionState): boolean {
  return s.submitted !== undefined || s.gaveUp !== undefined;
}
