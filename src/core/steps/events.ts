import { z } from 'zod';
import { DesignDraftSchema, PhaseSchema } from './phases';
import { errorMessage } from '../util/errors';

/**
 * The step / event model (room `steps`, low in the core's layer order, see docs/architecture.md):
 * what sessions record, and what the trajectory importers, the monitor and the agent read.
 *
 * The session's trajectory: JSON Lines at `private/events.jsonl`, one event per line, append-only,
 * schema version {@link EVENTS_VERSION}. Documented in docs/events.md (keep the two in step).
 * Every event has `v` (schema version), `at` (ISO 8601 UTC time of recording) and `type`.
 */
export const EVENTS_VERSION = 1;

/** Longest `diff` kept in a `file.edited` event, characters; longer diffs are cut and flagged. */
export const MAX_DIFF_CHARS = 200_000;
/** Longest `outputExcerpt` of a `command.run` event, characters (head and tail kept). */
export const MAX_EXCERPT_CHARS = 4_000;

const Iso = z.string().refine((s) => !Number.isNaN(Date.parse(s)), 'expected an ISO 8601 timestamp');
const base = { v: z.literal(EVENTS_VERSION), at: Iso };
const ev = <T extends string, S extends z.ZodRawShape>(type: T, shape: S) =>
  z.object({ ...base, type: z.literal(type), ...shape });
const ms = z.number().nonnegative();
const exitCode = z.number().int().nullable();
/** Outcome of an injected step (verifier, judge): what it returned, summarised, or why it failed. */
const stepOutcome = { ok: z.boolean(), summary: z.string().optional(), record: z.string().optional(), error: z.string().optional() };

export const SessionEventSchema = z.discriminatedUnion('type', [
  ev('session.opened', {
    client: z.string(), restored: z.boolean(), taskId: z.string().optional(),
    /** The scheduler's job the opening process ran in (a Slurm array element: `id` `<array job>_<index>`). */
    job: z.object({ scheduler: z.string(), id: z.string(), jobId: z.string().optional(), node: z.string().optional(), cluster: z.string().optional() }).optional(),
  }),
  ev('phase.changed', { from: PhaseSchema, to: PhaseSchema }),
  ev('clock.started', { workingMs: ms }),
  ev('clock.paused', {
    workingMs: ms, reason: z.string().optional(),
    /** Set when the pause was not made by the user: the window died; time after `effectiveAt` is not counted. */
    interrupted: z.boolean().optional(), effectiveAt: Iso.optional(),
  }),
  ev('clock.resumed', { workingMs: ms, restored: z.boolean().optional() }),
  ev('clock.actor', { actor: z.enum(['human', 'agent']), workingMs: ms }),
  ev('budget.warning', { level: z.union([z.literal(80), z.literal(100)]), workingMs: ms, budgetMs: ms }),
  ev('file.edited', { path: z.string(), diff: z.string(), diffTruncated: z.boolean().optional() }),
  ev('file.created', { path: z.string() }),
  ev('file.deleted', { path: z.string() }),
  /**
   * A file's content changed on disk, seen by the workspace watcher (any writer: the editor, the
   * terminal, the work container; src/core/session/watcher.ts), debounced; caches and ignored files
   * are not recorded. `bytes`: its size after the change.
   */
  ev('file.changed', { path: z.string(), bytes: z.number().int().nonnegative() }),
  ev('command.run', { command: z.string(), exitCode, durationMs: ms, outputExcerpt: z.string(), cwd: z.string().optional() }),
  ev('script.run', { runId: z.string(), exitCode, durationMs: ms, log: z.string(), error: z.string().optional() }),
  ev('note.added', { text: z.string() }),
  ev('answers.saved', { design: DesignDraftSchema.optional(), conclusion: z.string().optional() }),
  ev('submitted', {
    workingMs: ms, answers: z.string(), design: z.string(), patch: z.string().nullable(),
    patchBytes: z.number().int().nonnegative(), script: z.string().nullable(),
    /** The frozen submission: the work tree's commit in the host repository (`refs/expbench/submitted`). */
    commit: z.string().optional(),
    /** Recorded by a later opener: the submitting process stopped after state.json said submitted (src/core/session/outcome.ts). */
    recovered: z.boolean().optional(),
  }),
  ev('gave_up', { workingMs: ms, reason: z.string().optional(), recovered: z.boolean().optional() }),
  /** A proctored window's baseliner: name or id and the rules accepted, before the clock can start (src/core/channel/protocol.ts). */
  ev('baseliner.attested', { baseliner: z.string(), rules: z.array(z.string()), aiAllowed: z.boolean(), client: z.string().optional() }),
  /** What a proctored window reported of its AI features (chat, inline completions, language-model tools): `off` true when all were off. */
  /**
   * The proctored window's AI settings. `source: 'host'`: `off` and `settings` are what the host read
   * itself from the settings files (`checked`; `on` names what is on), and `window` is what the window
   * said (recorded, not believed). Without `source`: the window's own report (sessions before issue 26).
   */
  ev('ai.settings', {
    off: z.boolean(), allowed: z.boolean(), settings: z.record(z.string(), z.unknown()),
    source: z.literal('host').optional(), on: z.array(z.string()).optional(), checked: z.array(z.string()).optional(),
    window: z.object({ off: z.boolean(), settings: z.record(z.string(), z.unknown()) }).optional(),
  }),
  ev('verify.finished', stepOutcome),
  ev('judge.finished', stepOutcome),
  /** One request of the built-in agent to its model (src/core/agent): a step of the agent's trajectory. */
  ev('agent.model_call', {
    model: z.string(), inputTokens: z.number().int().nonnegative(), outputTokens: z.number().int().nonnegative(),
    cachedTokens: z.number().int().nonnegative().optional(),
    /** USD from the price table; null when the model has no price. */
    costUsd: z.number().nonnegative().nullable(), durationMs: ms,
    /** `stop`, `tool_calls`, `length`, …; null when the request failed. */
    finishReason: z.string().nullable(),
    /** The assistant's text (excerpt) and the tools it asked for, in order. */
    text: z.string().optional(), toolCalls: z.array(z.string()).optional(),
    /** Set when the request failed (HTTP status and message); `retry` says whether it is tried again. */
    error: z.string().optional(), retry: z.boolean().optional(),
  }),
  /** One tool call of the built-in agent, done in the work container or on the session (phase tools). */
  ev('agent.tool_call', {
    tool: z.string(), callId: z.string().optional(),
    /** The arguments as the model sent them (JSON text, excerpt). */
    arguments: z.string(),
    /** What the model was told back (excerpt, {@link MAX_EXCERPT_CHARS}). */
    result: z.string(), exitCode: exitCode.optional(), durationMs: ms,
    /** Set when the call was refused or failed (bad arguments, unknown tool, path outside /workspace, …). */
    error: z.string().optional(),
    /** An outside agent's call (docs/outside-agents.md): its name (MCP `clientInfo.name`, or the LM tool's caller) and the way it came. Absent: the built-in agent. */
    client: z.string().optional(), via: z.enum(['mcp', 'lm']).optional(),
  }),
  /**
   * An outside agent attached to the session (docs/outside-agents.md): an MCP client (its
   * `clientInfo` from initialize) or a VS Code chat agent through the language-model tools.
   * `unconfined`: the agent keeps its own shell and files on the host, beside the task's tools.
   */
  ev('agent.attached', { client: z.string(), version: z.string().optional(), via: z.enum(['mcp', 'lm']), transport: z.string().optional(), unconfined: z.boolean() }),
  /** An agent's run brought in as this session (src/core/flows/importSession.ts): the files, the trajectory, what was found. */
  ev('trajectory.imported', {
    files: z.array(z.string()), trajectory: z.string(), format: z.string(), task: z.string().nullable(),
    steps: z.number().int().nonnegative(), problems: z.number().int().nonnegative(),
    /** The import record, relative to the session root (`private/import/record.json`). */
    record: z.string(),
  }),
  /** One step of an imported trajectory, in the step model (docs/steps.md), as the importer made it. */
  ev('trajectory.step', { trajectory: z.string(), step: z.record(z.string(), z.unknown()) }),
]);
export type SessionEvent = z.infer<typeof SessionEventSchema>;
export type SessionEventType = SessionEvent['type'];
type Distribute<E> = E extends unknown ? Omit<E, 'v' | 'at'> : never;
/** An event as given to {@link EventLog.append}: without `v` and `at`, which the log adds. */
export type NewSessionEvent = Distribute<SessionEvent>;

/** One line of events.jsonl as read: an event, an invalid line, or a torn (unterminated) last line. */
export type EventLine =
  | { kind: 'event'; line: number; offset: number; event: SessionEvent }
  | { kind: 'invalid'; line: number; offset: number; text: string; error: string }
  | { kind: 'torn'; line: number; offset: number; text: string };

/** Parses one line of events.jsonl (1-based `line`, first byte at `offset`) as an event or an invalid line. */
export function parseLine(text: string, line: number, offset: number): EventLine {
  let raw: unknown;
  try { raw = JSON.parse(text); } catch (e: any) {
    return { kind: 'invalid', line, offset, text, error: `not JSON: ${errorMessage(e)}` };
  }
  const parsed = SessionEventSchema.safeParse(raw);
  if (parsed.success) return { kind: 'event', line, offset, event: parsed.data };
  return { kind: 'invalid', line, offset, text, error: parsed.error.issues.slice(0, 3).map((i) => `${i.path.join('.') || '(root)'}: ${i.message}`).join('; ') };
}

/** `text` cut to `max` characters: the first quarter and the last three quarters, with a marker between. */
export function excerpt(text: string, max = MAX_EXCERPT_CHARS): string {
  if (text.length <= max) return text;
  const head = Math.floor(max / 4);
  const tail = max - head;
  return `${text.slice(0, head)}\n… [${text.length - max} characters omitted] …\n${text.slice(text.length - tail)}`;
}
