import * as z from 'zod/mini';

/**
 * Section `phases`: the human-baseline stepper of an opened task session (state host → webview,
 * actions webview → host). Registered in the section map (sections.ts).
 */

const PHASES = ['design', 'implementation', 'execution', 'conclusion'] as const;
const Phase = z.enum(PHASES);

/** A design variable as edited in the Design phase (mirrors src/core/session/state.ts). */
const DesignVar = z.object({ name: z.string(), description: z.string(), values: z.optional(z.array(z.string())) });
export const DesignDraftViewSchema = z.object({ constants: z.array(DesignVar), independent: z.array(DesignVar), dependent: z.array(DesignVar), freeText: z.string() });
export type DesignDraftView = z.infer<typeof DesignDraftViewSchema>;

/** The session as the stepper shows it, sent whole on every change (small). Durations in ms. */
export const PhasesViewSchema = z.object({
  kind: z.literal('state'),
  phase: Phase,
  finished: z.nullable(z.enum(['submitted', 'gaveUp'])),
  clock: z.object({
    status: z.string(), workingMs: z.number(), budgetMs: z.nullable(z.number()), text: z.string(),
    /** The working time split by whose it was (src/core/session/clock.ts `workingByActor`), ms. */
    byActor: z.optional(z.object({ human: z.number(), agent: z.number() })),
  }),
  design: DesignDraftViewSchema,
  conclusion: z.string(),
  notes: z.array(z.object({ at: z.string(), text: z.string() })),
  runs: z.array(z.object({ id: z.string(), startedAt: z.string(), exitCode: z.nullable(z.number()), durationMs: z.number(), error: z.optional(z.string()) })),
  running: z.boolean(),
  container: z.object({ state: z.enum(['unknown', 'starting', 'ready', 'unavailable']), message: z.optional(z.string()) }),
  patch: z.nullable(z.object({
    files: z.array(z.object({ path: z.string(), status: z.string(), additions: z.number(), deletions: z.number(), binary: z.boolean() })),
    additions: z.number(), deletions: z.number(), ignored: z.number(), error: z.optional(z.string()),
    /** What is not in the patch and why (src/core/workspace/patchRule.ts): ignored files, known caches; a folder ends with `/`. */
    leftOut: z.optional(z.array(z.object({ path: z.string(), reason: z.enum(['ignored', 'cache']), why: z.string() }))),
  })),
  claims: z.array(z.object({
    text: z.string(), found: z.boolean(), where: z.optional(z.string()),
    /** Computed from two printed numbers (src/core/verify/derived.ts): how, e.g. `percent change of 0.0123 and 0.0322`. */
    derived: z.optional(z.string()),
  })),
  results: z.array(z.object({ label: z.string(), value: z.string(), ok: z.nullable(z.boolean()), detail: z.optional(z.string()) })),
});
export type PhasesView = z.infer<typeof PhasesViewSchema>;

/** A chunk of a streaming run's log (`reset`: clear the log first). */
export const PhasesLogSchema = z.object({ kind: z.literal('log'), runId: z.string(), text: z.string(), reset: z.optional(z.boolean()) });
export type PhasesLog = z.infer<typeof PhasesLogSchema>;

/** What the host posts to section `phases`: the whole view, or a log chunk. */
export const PhasesStateSchema = z.discriminatedUnion('kind', [PhasesViewSchema, PhasesLogSchema]);
export type PhasesState = z.infer<typeof PhasesStateSchema>;

const none = z.optional(z.undefined());

/** Actions of section `phases` (webview → host). Actions without a payload carry none. */
export const PhasesActionSchema = z.discriminatedUnion('action', [
  z.object({ action: z.literal('setPhase'), payload: z.object({ phase: Phase }) }),
  z.object({ action: z.literal('setDesign'), payload: DesignDraftViewSchema }),
  z.object({ action: z.literal('setConclusion'), payload: z.object({ text: z.string() }) }),
  z.object({ action: z.literal('addNote'), payload: z.object({ text: z.string() }) }),
  z.object({ action: z.literal('clock'), payload: z.object({ op: z.enum(['start', 'pause', 'resume']), reason: z.optional(z.string()) }) }),
  z.object({ action: z.literal('runScript'), payload: none }),
  z.object({ action: z.literal('openScript'), payload: none }),
  z.object({ action: z.literal('openPatch'), payload: none }),
  z.object({ action: z.literal('openTerminal'), payload: none }),
  z.object({ action: z.literal('refreshPatch'), payload: none }),
  z.object({ action: z.literal('submit'), payload: none }),
  z.object({ action: z.literal('giveUp'), payload: none }),
]);
export type PhasesAction = z.infer<typeof PhasesActionSchema>;
