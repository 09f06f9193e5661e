import * as z from 'zod/mini';

/**
 * The run-set board's messages (webview panel `expbench.runs.board`: host
 * src/extension/runs/boardPanel.ts, webview webview-ui/src/runs/). Both sides validate what crosses
 * with these schemas.
 *
 * Flow: webview → `ready`; host → `board` (the run set as its state file says, posted again each
 * time the file grows); webview → `open` (a row: the unit's session in the trajectory viewer),
 * `cancel`, `resume`, `refresh`, and for a campaign `person` (copy, re-issue or revoke a person's
 * link); host → `busy` while a cancel or resume it started is under way, `done` when a person's
 * action was done, `error` when one failed. Units: elapsed and limit are ms; tokens are counts; cost is US dollars.
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

/**
 * One row of a campaign's board: one person's assignment (src/core/campaigns/views.ts
 * `CampaignBoardRow`; `runs status DIR --json` prints the same rows). Working time is ms by the
 * host's clock; `outcome` only once submitted (E/D/I/C, All✓, All·E✓; null: not computable).
 */
export const CampaignRowSchema = z.object({
  person: z.string(),
  name: z.optional(z.string()),
  task: z.string(),
  session: z.string(),
  status: z.enum(['not started', 'working', 'paused', 'submitted', 'gave up']),
  opened: z.boolean(),
  phase: z.optional(z.string()),
  workingMs: z.number(),
  pauses: z.int(),
  paused: z.boolean(),
  submitted: z.boolean(),
  gaveUp: z.boolean(),
  attestedAs: z.optional(z.string()),
  aiOff: z.optional(z.boolean()),
  outcome: z.optional(z.object({
    submitted: z.boolean(),
    E: z.nullable(z.boolean()), D: z.nullable(z.boolean()), I: z.nullable(z.boolean()), C: z.nullable(z.boolean()),
    All: z.nullable(z.boolean()), AllE: z.nullable(z.boolean()),
  })),
});
export type CampaignRow = z.infer<typeof CampaignRowSchema>;

/** A person of a campaign: their link's state (campaign.jsonl; no token ever crosses) and their hours' use. */
export const CampaignPersonSchema = z.object({
  person: z.string(),
  name: z.optional(z.string()),
  /** The link's generation (re-issues) and whether it is revoked. */
  generation: z.int(),
  revoked: z.boolean(),
  /** The person's working time over their sessions, ms (host clock). */
  workingMs: z.number(),
});

/** A campaign's part of the board (docs/campaigns.md): people as rows. */
export const CampaignBoardSchema = z.object({
  people: z.array(CampaignPersonSchema),
  rows: z.array(CampaignRowSchema),
  /** `perPerson.hours` of the spec; null when unset. */
  hours: z.nullable(z.number()),
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
  /** A campaign's run set (its spec has `baseline`): its people and their sessions; absent for agents' run sets. */
  campaign: z.optional(CampaignBoardSchema),
});
export type RunsBoardMessage = z.infer<typeof RunsBoardMessageSchema>;

export const RunsHostMessageSchema = z.discriminatedUnion('type', [
  RunsBoardMessageSchema,
  z.object({ type: z.literal('busy'), what: z.nullable(z.enum(['cancel', 'resume'])) }),
  /** A person's action was done (the message says what, e.g. "link of ana copied"). */
  z.object({ type: z.literal('done'), message: z.string() }),
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
  /** A campaign's person: copy their link to the clipboard, re-issue it (the old one refused from then on) or revoke it. */
  z.object({ type: z.literal('person'), action: z.enum(['copyLink', 'reissue', 'revoke']), person: z.string() }),
]);
export type RunsWebviewMessage = z.infer<typeof RunsWebviewMessageSchema>;
