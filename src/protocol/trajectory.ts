import * as z from 'zod/mini';

/**
 * The trajectory viewer's messages (custom editor `expbench.trajectory`: host
 * src/extension/trajectory/viewer/, webview webview-ui/src/trajectory/). Both sides validate what
 * crosses with these schemas. The host holds the steps; the webview gets row summaries in pages
 * (never every full step at once) and one step's detail when it is selected.
 *
 * Flow: webview → `ready`; host → `loaded` (header: file, samples, facets, totals, problems);
 * webview → `query` (filters + search, numbered `seq`) → host `view` (rows in the view, search hits
 * as view positions, phase bands); webview → `rows` (a page of the view) → host `rows`; webview →
 * `detail` → host `detail`. The host may post `select` (Go to Step, a `#step=N` link) and `loaded`
 * again (a live file grew, another sample picked). Replies to an older `seq` are dropped by the webview.
 * Units: tokens are counts, cost is US dollars, times are ms.
 */

/** A long text cut for display: `text` is the first part, `total` the whole length in characters. */
export const CutSchema = z.object({ text: z.string(), total: z.int() });
export type Cut = z.infer<typeof CutSchema>;

export const TrajRowSchema = z.object({
  step: z.int(),
  kind: z.string(),
  actor: z.string(),
  phase: z.string(),
  tool: z.optional(z.string()),
  text: z.string(),
  tokens: z.optional(z.number()),
  costUsd: z.optional(z.number()),
  totalTokens: z.number(),
  totalCostUsd: z.number(),
  relMs: z.optional(z.number()),
  durationMs: z.optional(z.number()),
  exitCode: z.optional(z.nullable(z.number())),
  error: z.optional(z.boolean()),
  edits: z.optional(z.int()),
  /** Not the agent's work (`setup`, `scoring`, `cleanup`, `harness`): shown in place of the phase. */
  stage: z.optional(z.string()),
  /** `task`, `system-prompt`, `demonstration`, `submission`. */
  purpose: z.optional(z.string()),
  /** Span depth (Inspect), for indentation. */
  depth: z.optional(z.int()),
  /** The spans that begin at this row in the view, outermost first (`solvers › generate`). */
  spanStart: z.optional(z.array(z.string())),
  /** The step holds the model's reasoning (a block of its own in the detail). */
  reasoning: z.optional(z.boolean()),
  /** Sandbox operations folded into this tool call. */
  execs: z.optional(z.int()),
  /** Labels of the pins on this step (verdicts, monitor flags). */
  pins: z.optional(z.array(z.string())),
  /** Human judgements on this step (comments, tags, scores, invalid marks). */
  judgements: z.optional(z.int()),
});
export type TrajRow = z.infer<typeof TrajRowSchema>;

export const TrajFilterSchema = z.object({
  kinds: z.optional(z.array(z.string())),
  actors: z.optional(z.array(z.string())),
  phases: z.optional(z.array(z.string())),
  stages: z.optional(z.array(z.string())),
  tools: z.optional(z.array(z.string())),
  pinned: z.optional(z.boolean()),
});
export type TrajFilter = z.infer<typeof TrajFilterSchema>;

const Counts = z.record(z.string(), z.int());

export const TrajPinSchema = z.object({
  step: z.int(), kind: z.string(), item: z.string(), label: z.string(), detail: z.string(),
  verdict: z.optional(z.string()), why: z.string(),
});
export type TrajPin = z.infer<typeof TrajPinSchema>;

export const TrajJudgementSchema = z.object({
  id: z.string(), at: z.string(), by: z.string(), kind: z.string(),
  /** The value as text (JSON for objects). */
  value: z.string(),
  reason: z.optional(z.string()),
  before: z.optional(z.string()),
});
export type TrajJudgement = z.infer<typeof TrajJudgementSchema>;

/** Tokens per kind (as the step model counts them) and cost, of a trajectory or a file. */
export const TrajUsageSchema = z.object({
  inputTokens: z.number(), outputTokens: z.number(), cacheReadTokens: z.number(), cacheWriteTokens: z.number(), reasoningTokens: z.number(),
  /** The log's own total when it states one, else the steps' sum. */
  totalTokens: z.number(),
  /** The steps' sum (per-step counts), beside the log's own total. */
  stepTokens: z.number(),
  /** Where the total comes from (`sample model_usage`, `metrics.accumulated_token_usage`, `the steps`, …). */
  from: z.string(),
  calls: z.int(),
  costUsd: z.nullable(z.number()),
  costFrom: z.nullable(z.string()),
  unpricedCalls: z.int(),
  /** The steps carry per-call counts (SWE-agent's do not). */
  perStep: z.boolean(),
  /** `inputTokens` hold the cache too: the log counts the prompt only (SWE-agent `tokens_sent`). */
  inputIncludesCache: z.optional(z.boolean()),
});
export type TrajUsage = z.infer<typeof TrajUsageSchema>;

/** One sample (or instance) of the file, for the sample list. */
export const TrajSampleSchema = z.object({
  key: z.string(), id: z.string(), steps: z.int(), task: z.optional(z.string()),
  epoch: z.optional(z.int()),
  /** How it ended (`success`, `error`, `limit: …`, the source's exit status). */
  status: z.optional(z.string()),
  /** Its scores, short (`includes C · model_graded_qa I`). */
  scores: z.optional(z.string()),
  tokens: z.number(),
  /** Working or total time, ms, when known. */
  timeMs: z.optional(z.number()),
  model: z.optional(z.string()),
});
export type TrajSample = z.infer<typeof TrajSampleSchema>;

/** One score of the trajectory shown (Inspect scorers, OpenHands test_result, harness judge). */
export const TrajScoreSchema = z.object({
  name: z.string(), value: z.string(),
  answer: z.optional(CutSchema), explanation: z.optional(CutSchema), metadata: z.optional(CutSchema),
});
export type TrajScore = z.infer<typeof TrajScoreSchema>;

export const TrajHeaderSchema = z.object({
  file: z.string(),
  name: z.string(),
  format: z.string(),
  /** The trajectory shown: `key` picks it among `samples`. */
  key: z.string(),
  id: z.string(),
  task: z.optional(z.string()),
  /** The agent (solver, agent class), the model most calls used. */
  agent: z.optional(z.string()),
  model: z.optional(z.string()),
  /** The task as the run was given it (Inspect input, OpenHands instruction, SWE-agent issue). */
  taskText: z.optional(CutSchema),
  /** The target, where the format has one (the viewer is a researcher's: the proctored window has no viewer). */
  target: z.optional(CutSchema),
  scores: z.array(TrajScoreSchema),
  usage: TrajUsageSchema,
  /** The whole file's own totals, when it states them (Inspect `stats.model_usage`) or it holds several trajectories. */
  fileUsage: z.optional(z.object({ totalTokens: z.number(), costUsd: z.nullable(z.number()), from: z.string() })),
  /** Widths of the timeline's columns, in characters (from the longest tool name and running total). */
  columns: z.object({ tool: z.int(), total: z.int(), lane: z.int(), tok: z.int() }),
  samples: z.array(TrajSampleSchema),
  /** The file is being written (it grew since it was opened): new steps appear. */
  live: z.boolean(),
  /** When the file last grew (ISO time), when live. */
  updatedAt: z.optional(z.string()),
  /** Only the first part of the file is imported yet (the rest is being read): rows, filters and search cover what is loaded. */
  loading: z.optional(z.boolean()),
  /** Source events, mapped and skipped (a row-less share is no silent cut). */
  sourceEvents: z.int(), mappedEvents: z.int(), skippedEvents: z.int(),
  problems: z.object({
    errors: z.int(), warnings: z.int(), infos: z.int(),
    /** The first problems (file, trajectory), each with where it is. */
    items: z.array(z.object({ severity: z.string(), where: z.string(), message: z.string() })),
  }),
  facets: z.object({ kinds: Counts, actors: Counts, phases: Counts, stages: Counts, tools: Counts }),
  totals: z.object({ steps: z.int(), tokens: z.number(), costUsd: z.number(), timed: z.int() }),
  /**
   * What the host can do besides showing: pins (pinsFor: verdicts and flags on steps), review (the
   * review store), the repository commands (repository at a step, its diff, compare), offered only
   * when they can work here; `repositoryWhy` says why not.
   */
  can: z.object({ pins: z.boolean(), review: z.boolean(), repository: z.boolean(), repositoryWhy: z.optional(z.string()) }),
  pinned: z.int(),
});
export type TrajHeader = z.infer<typeof TrajHeaderSchema>;

export const TrajDetailSchema = z.object({
  step: z.int(),
  kind: z.string(), actor: z.string(), phase: z.string(), phaseInferred: z.optional(z.boolean()),
  time: z.optional(z.object({ ms: z.number(), relMs: z.number(), durationMs: z.optional(z.number()) })),
  text: z.optional(CutSchema),
  /** The model's reasoning, apart from the reply (collapsed by default). */
  reasoning: z.optional(z.object({ text: z.optional(CutSchema), summary: z.optional(CutSchema), redacted: z.optional(z.boolean()) })),
  stage: z.optional(z.string()),
  purpose: z.optional(z.string()),
  /** The spans the step ran in, outermost first, with their Inspect types. */
  spans: z.optional(z.array(z.object({ name: z.string(), type: z.optional(z.string()) }))),
  /** The tool calls a model step made, each a row of its own (`step`: that row, when found). */
  calls: z.optional(z.array(z.object({ tool: z.string(), step: z.optional(z.int()) }))),
  /** Sandbox operations folded into this tool call. */
  execs: z.optional(z.array(z.object({ action: z.string(), command: z.optional(z.string()), file: z.optional(z.string()), exitCode: z.optional(z.nullable(z.number())), durationMs: z.optional(z.number()), output: z.optional(CutSchema) }))),
  /** `display`: the tool, `$ command`, then the arguments one per line (`key: value`, strings as text, multi-line strings as blocks, other values as pretty JSON), as shown; the action's matches are offsets into it. */
  action: z.optional(z.object({ tool: z.string(), command: z.optional(z.string()), arguments: z.optional(CutSchema), callId: z.optional(z.string()), display: CutSchema })),
  observation: z.optional(z.object({ text: CutSchema, exitCode: z.optional(z.nullable(z.number())), error: z.optional(z.boolean()) })),
  edits: z.array(z.object({ path: z.string(), op: z.optional(z.string()), diff: CutSchema, made: z.boolean() })),
  model: z.optional(z.object({
    model: z.optional(z.string()), inputTokens: z.optional(z.number()), outputTokens: z.optional(z.number()),
    cacheReadTokens: z.optional(z.number()), cacheWriteTokens: z.optional(z.number()), reasoningTokens: z.optional(z.number()),
    totalTokens: z.optional(z.number()), costUsd: z.optional(z.number()),
    /** `source` (the log's), `table` (the price table), or `unpriced`. */
    costFrom: z.optional(z.string()),
  })),
  totalTokens: z.number(), totalCostUsd: z.number(),
  errors: z.optional(z.array(z.string())),
  source: z.object({
    file: z.string(), entry: z.optional(z.string()), pointer: z.optional(z.string()), line: z.optional(z.int()),
    offset: z.optional(z.int()), id: z.optional(z.string()), kind: z.optional(z.string()),
  }),
  extra: z.optional(CutSchema),
  /** Where the search query occurs, per field, as offsets into the texts shown (`text`, `action.display`, `observation.text`, uncut). */
  matches: z.array(z.object({ field: z.enum(['text', 'action', 'observation']), start: z.int(), end: z.int() })),
  pins: z.array(TrajPinSchema),
  judgements: z.array(TrajJudgementSchema),
  /** `<file>#step=N` (N 0-based), to paste anywhere. */
  ref: z.string(),
});
export type TrajDetail = z.infer<typeof TrajDetailSchema>;

/** Commands a step's detail can ask of the host; `acceptVerdict` / `flipVerdict` (a pin's judge item, `item`): a curator's review of the verdict (docs/review.md). */
export const TRAJ_COMMANDS = ['openRepositoryAtStep', 'compareSteps', 'showStepDiff', 'revealItem', 'acceptVerdict', 'flipVerdict', 'copyRef', 'copyLink', 'goToStep'] as const;
export const REVIEW_KINDS = ['comment', 'tag', 'score', 'invalid'] as const;

/** Host → webview. */
export const TrajHostMessageSchema = z.discriminatedUnion('type', [
  z.object({ type: z.literal('loaded'), header: TrajHeaderSchema, select: z.optional(z.int()) }),
  z.object({
    type: z.literal('view'), seq: z.int(), total: z.int(),
    /** View positions of the steps that match the search, ascending. */
    hits: z.array(z.int()), occurrences: z.int(), searchMs: z.number(),
    bands: z.array(z.object({ phase: z.string(), from: z.int(), to: z.int() })),
  }),
  z.object({ type: z.literal('rows'), seq: z.int(), start: z.int(), rows: z.array(TrajRowSchema) }),
  z.object({ type: z.literal('detail'), detail: TrajDetailSchema }),
  /** The answer to `prefetch`: the details of steps near the selection, for the webview's cache (drawn without a round trip). */
  z.object({ type: z.literal('details'), search: z.string(), details: z.array(TrajDetailSchema) }),
  z.object({ type: z.literal('raw'), step: z.int(), text: z.string(), cut: z.boolean(), where: z.string() }),
  /** Show step `step` (Go to Step, a link): `position` in the current view, or -1 when the filters hide it. */
  z.object({ type: z.literal('select'), step: z.int() }),
  z.object({ type: z.literal('reveal'), seq: z.int(), step: z.int(), position: z.int() }),
  z.object({ type: z.literal('notice'), message: z.string() }),
  z.object({ type: z.literal('error'), message: z.string() }),
]);
export type TrajHostMessage = z.infer<typeof TrajHostMessageSchema>;

/** Webview → host. */
export const TrajWebviewMessageSchema = z.discriminatedUnion('type', [
  z.object({ type: z.literal('ready') }),
  z.object({ type: z.literal('query'), seq: z.int(), filter: TrajFilterSchema, search: z.string() }),
  z.object({ type: z.literal('rows'), seq: z.int(), start: z.int().check(z.nonnegative()), count: z.int().check(z.positive(), z.maximum(1000)) }),
  z.object({ type: z.literal('detail'), step: z.int(), full: z.optional(z.boolean()), search: z.optional(z.string()) }),
  z.object({ type: z.literal('raw'), step: z.int() }),
  /** Details of these steps (neighbours of the selection, search hits) for the cache; at most 64. */
  z.object({ type: z.literal('prefetch'), steps: z.array(z.int()).check(z.maxLength(64)), search: z.string() }),
  z.object({ type: z.literal('sample'), key: z.string() }),
  /** The position of `step` in the view of query `seq`. */
  z.object({ type: z.literal('locate'), seq: z.int(), step: z.int() }),
  z.object({ type: z.literal('run'), command: z.enum(TRAJ_COMMANDS), step: z.int(), item: z.optional(z.string()) }),
  z.object({ type: z.literal('review'), step: z.int(), kind: z.enum(REVIEW_KINDS), value: z.string(), reason: z.optional(z.string()) }),
  /** What the webview shows now (the tests' hook; also kept as the panel's state). */
  z.object({ type: z.literal('rendered'), rows: z.int(), total: z.int(), first: z.optional(z.int()), selected: z.optional(z.int()), hits: z.optional(z.string()), detail: z.optional(z.int()),
    /** Key press → the next animation frame after the new detail was drawn, ms, for the last moves (newest last; at most 50). */
    moves: z.optional(z.array(z.number())) }),
]);
export type TrajWebviewMessage = z.infer<typeof TrajWebviewMessageSchema>;
