import * as z from 'zod/mini';

/**
 * The run-set board's messages (webview panel `expbench.runs.board`: host
 * src/extension/runs/boardPanel.ts, webview webview-ui/src/runs/). Both sides validate what crosses
 * with these schemas.
 *
 * Flow: webview → `ready`; host → `board` (the run set as its state file says, posted again each
 * time the file grows); webview → `open` (a row: the unit's session in the trajectory viewer),
 * `cancel`, `resume`, `refresh`; host → `busy` while a cancel or resume it started is under way,
 * `error` when one failed. Units: elapsed and limit are ms; tokens are counts; cost is US dollars.
 */

export const RunStatusSchema = z.enum(['pending', 'running', 'done', 'failed', 'cancelled']);

/** One unit (src/core/runs/status.ts `BoardRow`). */
export const BoardRowSchema = z.object({
  id: z.string(),
  unit: z.string(),
  name: z.string(),
  task: z.string(),
  actor: z.string(),
  attempt: z.int(),
  try: z.int(),
  status: RunStatusSchema,
  mark: z.enum(['✓', '✖', '·', 'error', '']),
  detail: z.string(),
  phase: z.nullable(z.string()),
  elapsedMs: z.nullable(z.number()),
  limitMs: z.number(),
  tokens: z.nullable(z.number()),
  costUsd: z.nullable(z.number()),
  E: z.nullable(z.boolean()),
  D: z.nullable(z.boolean()),
  I: z.nullable(z.boolean()),
  C: z.nullable(z.boolean()),
  AllE: z.nullable(z.boolean()),
  session: z.string(),
  log: z.nullable(z.string()),
  engine: z.optional(z.string()),
});

/** Host → webview: the whole board. */
export const RunsBoardMessageSchema = z.object({
  type: z.literal('board'),
  dir: z.string(),
  id: z.string(),
  name: z.string(),
  counts: z.record(z.string(), z.int()),
  /** The orchestrator the folder names: running or gone; null when no run was ever recorded in it. */
  orchestrator: z.nullable(z.object({ pid: z.int(), command: z.string(), since: z.string(), alive: z.nullable(z.boolean()) })),
  cancelled: z.boolean(),
  rows: z.array(BoardRowSchema),
  /** Lines of the state file that could not be read. */
  invalidLines: z.int(),
  /** When the host read the state, ISO 8601. */
  at: z.string(),
});
export type RunsBoardMessage = z.infer<typeof RunsBoardMessageSchema>;

export const RunsHostMessageSchema = z.discriminatedUnion('type', [
  RunsBoardMessageSchema,
  z.object({ type: z.literal('busy'), what: z.nullable(z.enum(['cancel', 'resume'])) }),
  z.object({ type: z.literal('error'), message: z.string() }),
]);
export type RunsHostMessage = z.infer<typeof RunsHostMessageSchema>;

/** Webview → host. */
export const RunsWebviewMessageSchema = z.discriminatedUnion('type', [
  z.object({ type: z.literal('ready') }),
  z.object({ type: z.literal('refresh') }),
  z.object({ type: z.literal('open'), unit: z.string() }),
  z.object({ type: z.literal('cancel') }),
  z.object({ type: z.literal('resume') }),
]);
export type RunsWebviewMessage = z.infer<typeof RunsWebviewMessageSchema>;
