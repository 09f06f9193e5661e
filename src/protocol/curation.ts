import * as z from 'zod/mini';

/**
 * The curator's desk's messages (webview panels `expbench.curation.queue` and
 * `expbench.curation.task`: host src/extension/curation/deskPanel.ts, webview
 * webview-ui/src/curation/). Both sides validate what crosses with these schemas. The desk is a
 * curator's: it shows ground truth, and is refused in a solver's window (a window on a task
 * session), so nothing here reaches a solver's webview.
 *
 * Flow: webview → `ready`; host → `queue` (the queue panel) or `page` (a task page), again
 * whenever the review store, the lint or the validations change; webview → the actions below. A
 * curator's action goes through the command of the same name (`expbench.curation.recordVerdict`,
 * `…answerDispute`, `…editTask`, `…resolve`, `…rejudge`, `…validate`), so the buttons and the
 * palette take one path; its outcome comes back as `notice` and a new `page`.
 * Times are ISO 8601 UTC strings; durations ms.
 */

export const QueueStateSchema = z.enum(['lint-error', 'open-dispute', 'disagreement', 'failed-validation', 'no-verdict']);
export const VerdictSchema = z.enum(['valid', 'invalid', 'needs-fix']);

const CuratorVerdict = z.object({ by: z.string(), verdict: VerdictSchema, at: z.string(), reason: z.optional(z.string()) });

/** One row of the queue (src/core/curation/desk.ts `DeskRow`). */
export const DeskRowSchema = z.object({
  task: z.string(),
  paper: z.string(),
  paperTitle: z.optional(z.string()),
  question: z.string(),
  states: z.array(QueueStateSchema),
  verdict: z.optional(VerdictSchema),
  curators: z.array(CuratorVerdict),
  lint: z.object({ errors: z.int(), warnings: z.int(), info: z.int(), rules: z.array(z.string()) }),
  openDisputes: z.int(),
  edits: z.int(),
  lastValidation: z.optional(z.object({ ok: z.boolean(), at: z.string(), exitCode: z.nullable(z.int()) })),
});
export type DeskRowView = z.infer<typeof DeskRowSchema>;

export const DeskFilterSchema = z.object({
  paper: z.optional(z.string()),
  rule: z.optional(z.string()),
  state: z.optional(z.string()),
  curator: z.optional(z.string()),
});
export type DeskFilterView = z.infer<typeof DeskFilterSchema>;

/** Two curators' agreement on task verdicts (desk.ts `CuratorPair`); `kappa` null when undefined. */
export const CuratorPairSchema = z.object({ a: z.string(), b: z.string(), tasks: z.int(), agree: z.int(), kappa: z.nullable(z.number()), differ: z.array(z.string()) });

/** Host → queue panel: every row (the webview filters), the counts, the filters' choices. */
export const QueueMessageSchema = z.object({
  type: z.literal('queue'),
  rows: z.array(DeskRowSchema),
  counts: z.record(z.string(), z.int()),
  papers: z.array(z.string()),
  rules: z.array(z.string()),
  curators: z.array(z.string()),
  pairs: z.array(CuratorPairSchema),
  filter: DeskFilterSchema,
  /** What the lint ran (`file rules`, `file rules and repository rules at the pins`) and what could not be read. */
  lintScope: z.string(),
  problems: z.array(z.string()),
  /** The review store's folder. */
  store: z.string(),
});
export type QueueMessage = z.infer<typeof QueueMessageSchema>;

const Finding = z.object({ rule: z.string(), severity: z.string(), pointer: z.string(), message: z.string() });
const Validation = z.object({
  dir: z.string(), startedAt: z.string(), durationMs: z.number(), commit: z.string(), image: z.string(), command: z.string(),
  placement: z.optional(z.string()), exitCode: z.nullable(z.int()), timedOut: z.boolean(), diskFull: z.boolean(), setupFailed: z.boolean(),
  claims: z.object({ total: z.int(), found: z.int(), derived: z.int(), notFound: z.int() }), ok: z.boolean(),
});
const Session = z.object({
  session: z.string(),
  /** Has a judge record (`private/judge/latest.json`). */
  judged: z.boolean(),
  /** Fields whose judged-with content differs from the edited task; empty: not affected. */
  affected: z.array(z.string()),
  /** The judge's kind and time of its latest record, when judged. */
  judge: z.optional(z.object({ kind: z.string(), at: z.string(), D: z.nullable(z.number()), I: z.nullable(z.number()), C: z.nullable(z.boolean()) })),
  /** Re-judged against edits (`private/judge/curated-task.json`'s edit ids). */
  curatedEdits: z.optional(z.array(z.string())),
});
const History = z.object({ id: z.string(), at: z.string(), by: z.string(), kind: z.string(), value: z.unknown(), reason: z.optional(z.string()), before: z.optional(z.unknown()) });
const Dispute = z.object({ id: z.string(), at: z.string(), by: z.string(), about: z.string(), reason: z.optional(z.string()), evidence: z.array(z.record(z.string(), z.string())) });
const Edit = z.object({ id: z.string(), at: z.string(), by: z.string(), reason: z.optional(z.string()), operations: z.array(z.string()) });

/** Host → task page: everything the curator judges a task by. */
export const PageMessageSchema = z.object({
  type: z.literal('page'),
  task: z.string(),
  paper: z.string(),
  paperTitle: z.optional(z.string()),
  taskType: z.int(),
  file: z.string(),
  /** The ground truth with the edits applied (as the export will write it). */
  question: z.string(),
  method: z.string(),
  expectedOutcome: z.string(),
  requirements: z.array(z.string()),
  source: z.array(z.string()),
  maskedSource: z.array(z.string()),
  design: z.array(z.object({ kind: z.string(), name: z.string(), description: z.string() })),
  pin: z.optional(z.object({ url: z.string(), commit: z.string() })),
  states: z.array(QueueStateSchema),
  verdict: z.optional(VerdictSchema),
  decidedBy: z.optional(z.string()),
  reason: z.optional(z.string()),
  disagreement: z.boolean(),
  curators: z.array(CuratorVerdict),
  /** The verdict judgements in disagreement (their ids, for a resolution's `resolves`). */
  disagreeing: z.array(z.string()),
  lint: z.array(Finding),
  validations: z.array(Validation),
  sessions: z.array(Session),
  history: z.array(History),
  openDisputes: z.array(Dispute),
  edits: z.array(Edit),
  failedEdit: z.optional(z.object({ id: z.string(), message: z.string() })),
  /** The judge a re-judge uses (`heuristic`, or the model of the configured endpoint). */
  judge: z.string(),
  /** This window's curator (`by` of what the desk records). */
  me: z.string(),
});
export type PageMessage = z.infer<typeof PageMessageSchema>;

/** Host → webview: an outcome for a person (`info`, `error`), shown at the top of the page. */
export const NoticeMessageSchema = z.object({ type: z.literal('notice'), level: z.enum(['info', 'error']), text: z.string() });
export type NoticeMessage = z.infer<typeof NoticeMessageSchema>;

export const DeskHostMessageSchema = z.discriminatedUnion('type', [QueueMessageSchema, PageMessageSchema, NoticeMessageSchema]);
export type DeskHostMessage = z.infer<typeof DeskHostMessageSchema>;

/** Webview → host. A missing or empty `reason` is asked for by the host (an input box). */
export const DeskWebviewMessageSchema = z.discriminatedUnion('type', [
  z.object({ type: z.literal('ready') }),
  z.object({ type: z.literal('refresh') }),
  z.object({ type: z.literal('filter'), filter: DeskFilterSchema }),
  z.object({ type: z.literal('openTask'), task: z.string() }),
  z.object({ type: z.literal('showAgreement') }),
  z.object({ type: z.literal('recordVerdict'), verdict: VerdictSchema, reason: z.optional(z.string()) }),
  z.object({ type: z.literal('resolve'), verdict: VerdictSchema, reason: z.optional(z.string()) }),
  z.object({ type: z.literal('answerDispute'), dispute: z.string(), verdict: z.optional(VerdictSchema), reason: z.optional(z.string()) }),
  z.object({ type: z.literal('editTask') }),
  z.object({ type: z.literal('showEdit'), edit: z.string() }),
  z.object({ type: z.literal('rejudge') }),
  z.object({ type: z.literal('validate') }),
  z.object({ type: z.literal('openRecord'), dir: z.string() }),
  z.object({ type: z.literal('openFinding'), pointer: z.string() }),
]);
export type DeskWebviewMessage = z.infer<typeof DeskWebviewMessageSchema>;
