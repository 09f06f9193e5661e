import { z } from 'zod';
import { DesignDraftSchema, PhaseSchema } from '../steps/phases';
import { LIMITS } from '../untrusted/limits';
import { hasControl } from '../untrusted/text';

/**
 * The host channel of a proctored window (issue 13): JSON Lines over the unix socket
 * `<session>/channel/session.sock` (mounted at `/expbench/channel/session.sock` in the work
 * container). The solver build of the extension (src/solver/, inside the container) is the client;
 * the host (src/core/flows/baselineChannel.ts) is the server and the only writer of `private/`.
 *
 * One request per line `{id, method, params}`; the host answers each with one line
 * `{id, result}` or `{id, error: {code, message}}`, in any order. `id` is chosen by the client,
 * unique across its lifetimes (a random prefix and a counter): a request sent twice (queued while
 * the host was away, then flushed after a reconnect) is done once and answered from memory.
 *
 * Nothing here carries ground truth: the brief is question, method and agent instructions only;
 * the submit result is "submitted" with no score, verdict or gap (as in Inspect's `human_cli`).
 * This file is bundled into dist/solver/extension.js: it imports only `zod` and the step model.
 */

/** Longest line either side accepts, characters (a design draft with long free text fits). */
export const MAX_LINE_CHARS = 1_000_000;

/** The rules the baseliner attests to before the clock can start (shown in the solver window, recorded verbatim). */
export const ATTESTATION_RULES = [
  'I have not read the paper of this task, its code beyond this workspace, or any write-up of its results.',
  'I have not seen other runs of this task (human or agent), their answers or their scores.',
  'I will not use AI assistants (chat, completions, agents, language-model tools) during this session unless this session allows it.',
] as const;

export const BriefSchema = z.object({
  taskId: z.string(),
  /** EXP-Bench task type (1, 2: scripts removed; 3: only the README removed). */
  type: z.union([z.literal(1), z.literal(2), z.literal(3)]),
  question: z.string(),
  method: z.string(),
  agentInstructions: z.string(),
});
export type ChannelBrief = z.infer<typeof BriefSchema>;

/** One run of reproduce_exp_bench.sh in the work container, done by the host (exit code null: killed or engine error). */
export const RunSummarySchema = z.object({ id: z.string(), startedAt: z.string(), exitCode: z.number().nullable(), durationMs: z.number(), error: z.string().optional() });
export type RunSummary = z.infer<typeof RunSummarySchema>;

/** The session as the solver window sees it: drafts, notes, clock, the attestation; never scores. Durations in ms. */
export const SolverStateSchema = z.object({
  phase: PhaseSchema,
  finished: z.enum(['submitted', 'gaveUp']).nullable(),
  clock: z.object({ status: z.enum(['not-started', 'running', 'paused', 'stopped']), workingMs: z.number(), budgetMs: z.number().nullable() }),
  design: DesignDraftSchema,
  conclusion: z.string(),
  notes: z.array(z.object({ at: z.string(), text: z.string() })),
  /** How many of the oldest notes are left out of `notes` to keep the line within {@link MAX_LINE_CHARS} (they stay on the host). */
  omittedNotes: z.number().int().nonnegative().optional(),
  /** Who attested and when (host time); null before the attestation. */
  attested: z.object({ baseliner: z.string(), at: z.string() }).nullable(),
  aiAllowed: z.boolean(),
  /** The runs of reproduce_exp_bench.sh so far, oldest first (their logs stay on the host). */
  runs: z.array(RunSummarySchema),
});
export type SolverState = z.infer<typeof SolverStateSchema>;

// A name shown on the organiser's board (terminal and VS Code): no control characters (src/core/untrusted/text.ts).
const Baseliner = z.string().trim().min(1, 'a name or id is needed').max(200).refine((s) => !hasControl(s), 'a name without control characters');

/** Methods: params and result of each (the client validates results, the host validates params). */
export const METHODS = {
  /** The first call of a connection: the brief, the state and whether AI is allowed. */
  hello: { params: z.object({ client: z.string().max(200).optional() }), result: z.object({ brief: BriefSchema, state: SolverStateSchema, aiAllowed: z.boolean(), rules: z.array(z.string()) }) },
  state: { params: z.object({}), result: SolverStateSchema },
  setPhase: { params: z.object({ phase: PhaseSchema }), result: SolverStateSchema },
  setDesign: { params: z.object({ design: DesignDraftSchema }), result: SolverStateSchema },
  setConclusion: { params: z.object({ text: z.string().max(LIMITS.conclusionChars, `the conclusion is over ${LIMITS.conclusionChars} characters: shorten it`) }), result: SolverStateSchema },
  addNote: { params: z.object({ text: z.string().max(LIMITS.noteChars, `a note is at most ${LIMITS.noteChars} characters: split it`) }), result: SolverStateSchema },
  clock: { params: z.object({ op: z.enum(['start', 'pause', 'resume']), reason: z.string().max(500).optional() }), result: SolverStateSchema },
  /** The baseliner's name or id and the rules they accepted (must be {@link ATTESTATION_RULES}, all of them). */
  attest: { params: z.object({ baseliner: Baseliner, rules: z.array(z.string()) }), result: SolverStateSchema },
  /** What the window says its AI settings are: the host reads the settings files itself and records that (`ai.settings`, `source: 'host'`), with this as `window`. */
  aiSettings: { params: z.object({ off: z.boolean(), settings: z.record(z.string(), z.unknown()) }), result: SolverStateSchema },
  /** Freezes the answers (the host's drafts); the host runs verifier and judge afterwards and tells the baseliner nothing of them. */
  submit: { params: z.object({}), result: z.object({ submitted: z.literal(true), at: z.string(), state: SolverStateSchema }) },
  giveUp: { params: z.object({ reason: z.string().max(2000).optional() }), result: SolverStateSchema },
  /** Runs reproduce_exp_bench.sh in the work container on the host's side, recorded (`script.run` and its log on the host); the last {@link RUN_LOG_TAIL_CHARS} characters of its output come back. */
  runScript: { params: z.object({}), result: z.object({ run: RunSummarySchema, logTail: z.string(), state: SolverStateSchema }) },
} as const;
/** How much of a run's output (its end) the runScript answer carries, characters. */
export const RUN_LOG_TAIL_CHARS = 4000;

export type ChannelMethod = keyof typeof METHODS;
export type ChannelParams<M extends ChannelMethod> = z.input<(typeof METHODS)[M]['params']>;
export type ChannelResult<M extends ChannelMethod> = z.infer<(typeof METHODS)[M]['result']>;
export const METHOD_NAMES = Object.keys(METHODS) as ChannelMethod[];

/**
 * Methods the solver may queue while the host is not reachable (kept in memory and in a file in
 * the channel folder, flushed in order on reconnect). `hello`, `state` and `submit` need the host.
 */
export const QUEUEABLE: ReadonlySet<ChannelMethod> = new Set(['setPhase', 'setDesign', 'setConclusion', 'addNote', 'clock', 'attest', 'aiSettings', 'giveUp']);

export const RequestSchema = z.object({
  id: z.string().min(1).max(100),
  method: z.enum(METHOD_NAMES as [ChannelMethod, ...ChannelMethod[]]),
  params: z.unknown().optional(),
});
export type ChannelRequest = z.infer<typeof RequestSchema>;

export const ErrorSchema = z.object({ code: z.string(), message: z.string() });
export const ResponseSchema = z.union([
  z.object({ id: z.string(), result: z.unknown() }),
  z.object({ id: z.string(), error: ErrorSchema }),
]);
export type ChannelResponse = z.infer<typeof ResponseSchema>;
