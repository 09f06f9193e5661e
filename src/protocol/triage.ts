import * as z from 'zod/mini';

/**
 * The triage table's messages (webview panel `expbench.triage`: host
 * src/extension/trajectory/triagePanel.ts, webview webview-ui/src/triage/). Both sides validate
 * what crosses with these schemas.
 *
 * Flow: webview → `ready`; host → `rows` (every run, and again whenever a run changes); webview →
 * `open` (a row: the run at its first flagged step, or its start) and `refresh`.
 * Units: D and I are scores 0..1; tokens are counts; cost is US dollars; duration is ms.
 */


/** One run (src/core/viewer/triageTable.ts `TriageRow`). */
export const TriageRowSchema = z.object({
  run: z.string(),
  source: z.enum(['session', 'file']),
  id: z.string(),
  task: z.nullable(z.string()),
  agent: z.string(),
  model: z.nullable(z.string()),
  actor: z.enum(['human', 'agent']),
  D: z.nullable(z.number()),
  I: z.nullable(z.number()),
  E: z.nullable(z.boolean()),
  C: z.nullable(z.boolean()),
  AllE: z.nullable(z.boolean()),
  judge: z.nullable(z.enum(['llm', 'heuristic'])),
  policy: z.string(),
  excluded: z.record(z.string(), z.string()),
  monitorFlags: z.int(),
  monitorFlagged: z.boolean(),
  steps: z.int(),
  tokens: z.number(),
  costUsd: z.nullable(z.number()),
  durationMs: z.nullable(z.number()),
  firstFlaggedStep: z.nullable(z.int()),
  verified: z.boolean(),
  /** What could not be read of the run (a damaged file, state or judge record). */
  problems: z.optional(z.array(z.string())),
});

/** Host → webview: every run, scored under `policy`; `problems`: inputs that could not be read. */
export const TriageRowsMessageSchema = z.object({
  type: z.literal('rows'),
  policy: z.string(),
  rows: z.array(TriageRowSchema),
  problems: z.array(z.object({ file: z.string(), reason: z.string() })),
});
export type TriageRowsMessage = z.infer<typeof TriageRowsMessageSchema>;

/**
 * Host → webview: show only these runs (the runs behind a bar or cell of the Results view,
 * src/extension/results/), as the triage rows name them (`run`, or the file of `<file>#<id>`);
 * `label` says what they are. The webview offers to show every run again.
 */
export const TriageFocusMessageSchema = z.object({ type: z.literal('focus'), runs: z.array(z.string()), label: z.string() });
export type TriageFocusMessage = z.infer<typeof TriageFocusMessageSchema>;

/** Webview → host. `open`: `step` is the 0-based step to show (the first flagged one), absent for the start. */
export const TriageWebviewMessageSchema = z.discriminatedUnion('type', [
  z.object({ type: z.literal('ready') }),
  z.object({ type: z.literal('refresh') }),
  z.object({ type: z.literal('open'), run: z.string(), step: z.optional(z.int().check(z.nonnegative())) }),
]);
export type TriageWebviewMessage = z.infer<typeof TriageWebviewMessageSchema>;
