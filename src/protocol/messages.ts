import { z } from 'zod';

/**
 * The one typed message protocol between the extension host and the brief webview (webview-ui/).
 * Both sides validate what crosses the boundary with these schemas. Ground truth never crosses it:
 * {@link BriefView} has no design, requirements text with references, or expected outcome.
 *
 * Flow: webview → `ready`; host → `brief` (and later `state` updates); webview → requests such as
 * `openLink`, `openTask`, `command`. Errors travel as data (`error` message), never as exceptions.
 */

export const BriefViewSchema = z.object({
  taskId: z.string(),
  type: z.union([z.literal(1), z.literal(2), z.literal(3)]),
  paperTitle: z.string().optional(),
  paperUrl: z.string().optional(),
  pdfUrl: z.string().optional(),
  codeUrl: z.string().optional(),
  question: z.string(),
  method: z.string(),
  agentInstructions: z.string(),
  problems: z.array(z.object({ severity: z.string(), pointer: z.string(), message: z.string() })),
  /** Session folder when the brief belongs to an opened task session. */
  sessionDir: z.string().optional(),
});
export type BriefView = z.infer<typeof BriefViewSchema>;

/** UI-only state the webview persists with `setState` (restored after a reload). */
export const WebviewUiStateSchema = z.object({ taskId: z.string(), sessionDir: z.string().optional(), tab: z.string().optional(), scrollY: z.number().optional() });
export type WebviewUiState = z.infer<typeof WebviewUiStateSchema>;

/** Messages from the host to the webview. `extra` carries feature payloads (phases, verify, gaps) by key. */
export const HostMessageSchema = z.discriminatedUnion('type', [
  z.object({ type: z.literal('brief'), brief: BriefViewSchema }),
  z.object({ type: z.literal('section'), key: z.string(), payload: z.unknown() }),
  z.object({ type: z.literal('error'), message: z.string() }),
]);
export type HostMessage = z.infer<typeof HostMessageSchema>;

/** Messages from the webview to the host. */
export const WebviewMessageSchema = z.discriminatedUnion('type', [
  z.object({ type: z.literal('ready') }),
  z.object({ type: z.literal('openLink'), url: z.string() }),
  z.object({ type: z.literal('command'), command: z.string(), args: z.array(z.unknown()).optional() }),
  z.object({ type: z.literal('sectionAction'), key: z.string(), action: z.string(), payload: z.unknown().optional() }),
]);
export type WebviewMessage = z.infer<typeof WebviewMessageSchema>;

/** A design variable as edited in the Design phase (mirrors src/core/session/state.ts). */
const DesignVar = z.object({ name: z.string(), description: z.string(), values: z.array(z.string()).optional() });
export const DesignDraftViewSchema = z.object({ constants: z.array(DesignVar), independent: z.array(DesignVar), dependent: z.array(DesignVar), freeText: z.string() });
export type DesignDraftView = z.infer<typeof DesignDraftViewSchema>;

/**
 * Section `phases` (host → webview): the human-baseline session as the stepper shows it.
 * Sent whole on every change (small), or as `{kind: 'log', runId, text}` chunks while a run streams.
 */
export const PhasesViewSchema = z.object({
  kind: z.literal('state'),
  phase: z.enum(['design', 'implementation', 'execution', 'conclusion']),
  finished: z.enum(['submitted', 'gaveUp']).nullable(),
  clock: z.object({ status: z.string(), workingMs: z.number(), budgetMs: z.number().nullable(), text: z.string() }),
  design: DesignDraftViewSchema,
  conclusion: z.string(),
  notes: z.array(z.object({ at: z.string(), text: z.string() })),
  runs: z.array(z.object({ id: z.string(), startedAt: z.string(), exitCode: z.number().nullable(), durationMs: z.number(), error: z.string().optional() })),
  running: z.boolean(),
  container: z.object({ state: z.enum(['unknown', 'starting', 'ready', 'unavailable']), message: z.string().optional() }),
  patch: z.object({
    files: z.array(z.object({ path: z.string(), status: z.string(), additions: z.number(), deletions: z.number(), binary: z.boolean() })),
    additions: z.number(), deletions: z.number(), ignored: z.number(), error: z.string().optional(),
  }).nullable(),
  claims: z.array(z.object({ text: z.string(), found: z.boolean(), where: z.string().optional() })),
  results: z.array(z.object({ label: z.string(), value: z.string(), ok: z.boolean().nullable(), detail: z.string().optional() })),
});
export type PhasesView = z.infer<typeof PhasesViewSchema>;

export const PhasesLogSchema = z.object({ kind: z.literal('log'), runId: z.string(), text: z.string(), reset: z.boolean().optional() });
export type PhasesLog = z.infer<typeof PhasesLogSchema>;

/** Actions of section `phases` (webview → host, `sectionAction` with key `phases`). */
export const PhasesActionSchema = z.discriminatedUnion('action', [
  z.object({ action: z.literal('setPhase'), payload: z.object({ phase: z.enum(['design', 'implementation', 'execution', 'conclusion']) }) }),
  z.object({ action: z.literal('setDesign'), payload: DesignDraftViewSchema }),
  z.object({ action: z.literal('setConclusion'), payload: z.object({ text: z.string() }) }),
  z.object({ action: z.literal('addNote'), payload: z.object({ text: z.string() }) }),
  z.object({ action: z.literal('clock'), payload: z.object({ op: z.enum(['start', 'pause', 'resume']), reason: z.string().optional() }) }),
  z.object({ action: z.literal('runScript'), payload: z.unknown().optional() }),
  z.object({ action: z.literal('openScript'), payload: z.unknown().optional() }),
  z.object({ action: z.literal('openPatch'), payload: z.unknown().optional() }),
  z.object({ action: z.literal('openTerminal'), payload: z.unknown().optional() }),
  z.object({ action: z.literal('refreshPatch'), payload: z.unknown().optional() }),
  z.object({ action: z.literal('submit'), payload: z.unknown().optional() }),
  z.object({ action: z.literal('giveUp'), payload: z.unknown().optional() }),
]);
export type PhasesAction = z.infer<typeof PhasesActionSchema>;

/** A link of the gap report: runs a `gaps` section action on the host. */
export const GapsLinkSchema = z.object({
  label: z.string(),
  action: z.enum(['openDiff', 'revealHunk', 'showRequirement']),
  args: z.record(z.string(), z.union([z.string(), z.number()])),
});
export type GapsLink = z.infer<typeof GapsLinkSchema>;

/**
 * Section `gaps` (host → webview): the gap report of the session's latest judgement, per phase and
 * per item. Sent only once a judgement exists (after submission, or after "Run Judge and
 * Verifier"): it shows requirement texts, which the brief otherwise never receives.
 * `kind` is `heuristic` for the offline pre-judge, whose verdicts are labelled so everywhere.
 */
export const GapsViewSchema = z.object({
  kind: z.enum(['heuristic', 'llm']),
  /** `heuristic`, or the model that judged. */
  by: z.string(),
  createdAt: z.string(),
  /** True when the workspace's patch differs from the judged one (editor annotations are cleared). */
  stale: z.boolean(),
  summary: z.string(),
  notes: z.array(z.string()),
  phases: z.array(z.object({
    id: z.enum(['design', 'implementation', 'execution', 'conclusion', 'monitor']),
    title: z.string(),
    score: z.string(),
    items: z.array(z.object({
      label: z.string(),
      verdict: z.string(),
      tone: z.enum(['ok', 'warn', 'bad', 'muted']),
      reason: z.string(),
      links: z.array(GapsLinkSchema),
    })),
  })),
});
export type GapsView = z.infer<typeof GapsViewSchema>;

/** Actions of section `gaps` (webview → host, `sectionAction` with key `gaps`). */
export const GapsActionSchema = z.discriminatedUnion('action', [
  z.object({ action: z.literal('openDiff'), payload: z.object({ index: z.number().int(), hunk: z.number().int().optional() }) }),
  z.object({ action: z.literal('revealHunk'), payload: z.object({ path: z.string(), newStart: z.number().int(), newEnd: z.number().int() }) }),
  z.object({ action: z.literal('showRequirement'), payload: z.object({ index: z.number().int() }) }),
  z.object({ action: z.literal('rerun'), payload: z.unknown().optional() }),
]);
export type GapsAction = z.infer<typeof GapsActionSchema>;
