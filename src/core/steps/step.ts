import { z } from 'zod';
import { PHASES, PhaseSchema, type Phase } from './phases';
import type { SessionEvent } from './events';

/**
 * The step model (room `steps`): one step is one row a reviewer reads — a model call, a tool call
 * with its observation, a message, an environment event. Trajectory importers (every agent log
 * format) and this project's own sessions map onto it. Documented in docs/steps.md, schema version
 * {@link STEPS_VERSION} (keep the two in step).
 *
 * Units: times are milliseconds (absolute: Unix epoch ms, UTC; relative: ms after the trajectory's
 * first timed step); tokens are counts; cost is US dollars.
 */
export const STEPS_VERSION = 1;

export const ACTORS = ['agent', 'user', 'environment', 'tool', 'system'] as const;
export const ActorSchema = z.enum(ACTORS);
export type Actor = z.infer<typeof ActorSchema>;

/** What the row is, for a viewer's icon and filter. */
export const STEP_KINDS = ['model', 'tool', 'message', 'environment', 'edit', 'score', 'error'] as const;
export const StepKindSchema = z.enum(STEP_KINDS);
export type StepKind = z.infer<typeof StepKindSchema>;

export const StepTimeSchema = z.object({
  /** Absolute time, Unix epoch milliseconds (UTC). */
  ms: z.number(),
  /** Milliseconds after the trajectory's first timed step (≥ 0 unless the source is out of order). */
  relMs: z.number(),
  /** Duration of the step when the source says (model latency, command run time), ms. */
  durationMs: z.number().nonnegative().optional(),
});
export type StepTime = z.infer<typeof StepTimeSchema>;

export const StepActionSchema = z.object({
  /** Tool or action name as the source names it (`bash`, `str_replace_editor`, `run`, `TerminalAction`). */
  tool: z.string(),
  /** The arguments as the source gives them (object, or a string when the source has only text). */
  arguments: z.unknown().optional(),
  /** The shell command, when the action runs one (from `cmd`, `command`, …). */
  command: z.string().optional(),
  /** The source's id of the call (`tool_call_id`), to pair it with its observation. */
  callId: z.string().optional(),
});
export type StepAction = z.infer<typeof StepActionSchema>;

export const StepObservationSchema = z.object({
  /** The full text (never cut here: a display cut is the viewer's business). */
  text: z.string(),
  exitCode: z.number().int().nullable().optional(),
  /** True when the source marks the result as an error. */
  error: z.boolean().optional(),
});
export type StepObservation = z.infer<typeof StepObservationSchema>;

export const FileEditSchema = z.object({
  /** The path as the source names it (workspace-relative for this project's sessions). */
  path: z.string(),
  /** Unified diff, when the source has one. */
  diff: z.string().optional(),
  before: z.string().optional(),
  after: z.string().optional(),
  /** `create`, `delete`, `edit`, or the source's own word (`str_replace`, `insert`, …). */
  op: z.string().optional(),
});
export type FileEdit = z.infer<typeof FileEditSchema>;

/**
 * One model call's usage, per token kind, as Inspect's `ModelUsage` counts them: `inputTokens` are
 * the input tokens charged at the full rate (cache reads and writes apart); `outputTokens` include
 * the reasoning tokens (`reasoningTokens` says how many of them were reasoning); `totalTokens` is
 * the call's total as its source counts it (Inspect `total_tokens`; prompt + completion for
 * OpenAI-style sources, whose prompt count holds the cached tokens: an importer of such a source
 * subtracts the cache reads and writes from the prompt to get `inputTokens`). See
 * {@link callTokens}.
 */
export const ModelCallSchema = z.object({
  model: z.string().optional(),
  inputTokens: z.number().nonnegative().optional(),
  outputTokens: z.number().nonnegative().optional(),
  cacheReadTokens: z.number().nonnegative().optional(),
  cacheWriteTokens: z.number().nonnegative().optional(),
  /** Of `outputTokens`, those spent on reasoning. */
  reasoningTokens: z.number().nonnegative().optional(),
  /** The call's total as the source counts it (cache included); absent when the source gives none. */
  totalTokens: z.number().nonnegative().optional(),
  /** Cost of this call, US dollars, when the source says. */
  costUsd: z.number().nonnegative().optional(),
});
export type ModelCall = z.infer<typeof ModelCallSchema>;

/**
 * The tokens of one model call as its source counts them: `totalTokens` when the source gives it,
 * else input + output + cache read + cache write; undefined when the call has no count at all.
 */
export function callTokens(m: ModelCall | undefined): number | undefined {
  if (!m) return undefined;
  if (m.totalTokens !== undefined) return m.totalTokens;
  const parts = [m.inputTokens, m.outputTokens, m.cacheReadTokens, m.cacheWriteTokens];
  if (parts.every((x) => x === undefined)) return undefined;
  return parts.reduce<number>((n, x) => n + (x ?? 0), 0);
}

/**
 * A model's reasoning apart from its reply: the text when the provider gives it, `redacted` when
 * the provider sent it encrypted (Inspect `ContentReasoning.redacted`, Anthropic
 * `redacted_thinking`, OpenAI encrypted reasoning items), with the readable `summary` when any.
 */
export const StepReasoningSchema = z.object({
  text: z.string().optional(),
  summary: z.string().optional(),
  redacted: z.boolean().optional(),
});
export type StepReasoning = z.infer<typeof StepReasoningSchema>;

/**
 * Work of the run that is not the agent's: the harness's setup (Inspect's `init` span, setup
 * solvers), scoring (the `scorers` span, score events), cleanup after the agent, and the
 * harness's own bookkeeping (OpenHands agent-state changes). Such steps never move the inferred
 * phase, and a viewer shows the stage in place of a phase. Absent: the agent's work.
 */
export const STAGES = ['setup', 'scoring', 'cleanup', 'harness'] as const;
export const StageSchema = z.enum(STAGES);
export type Stage = z.infer<typeof StageSchema>;

/** A sandbox or runtime operation a tool call made, folded into the tool call's step (Inspect `sandbox` events in its span). */
export const StepExecSchema = z.object({
  /** `exec`, `read_file`, `write_file`, or the source's word. */
  action: z.string(),
  command: z.string().optional(),
  file: z.string().optional(),
  exitCode: z.number().int().nullable().optional(),
  /** The operation's output (full). */
  output: z.string().optional(),
  durationMs: z.number().nonnegative().optional(),
  /** RFC 6901 pointer of the source event. */
  pointer: z.string().optional(),
});
export type StepExec = z.infer<typeof StepExecSchema>;

/** What a step is for the run as a whole, when it is one of these: the task given, a system prompt, a demonstration, the final submission. */
export const PURPOSES = ['task', 'system-prompt', 'demonstration', 'submission'] as const;
export const PurposeSchema = z.enum(PURPOSES);
export type Purpose = z.infer<typeof PurposeSchema>;

export const StepSourceSchema = z.object({
  /** The file the step came from (as given to the importer). */
  file: z.string(),
  /** Zip entry (Inspect `.eval`), e.g. `samples/1_epoch_1.json`. */
  entry: z.string().optional(),
  /** RFC 6901 JSON pointer into the document (or into the line, for JSON Lines). */
  pointer: z.string().optional(),
  /** 1-based line number (JSON Lines, patches). */
  line: z.number().int().positive().optional(),
  /** Byte offset of the line or value in the file (or in the zip entry once decompressed). */
  offset: z.number().int().nonnegative().optional(),
  /** The source's own id of the event (`id`, `uuid`, `step_id`). */
  id: z.string().optional(),
  /** The source's event kind (`model`, `ActionEvent`, `run`, …). */
  kind: z.string().optional(),
});
export type StepSource = z.infer<typeof StepSourceSchema>;

export const StepSchema = z.object({
  /** 0-based position in the trajectory. */
  index: z.number().int().nonnegative(),
  kind: StepKindSchema,
  actor: ActorSchema,
  /** Absent when the source has no time for this step (the trajectory's `timed` says how many have one). */
  time: StepTimeSchema.optional(),
  phase: PhaseSchema,
  /** True when the phase was guessed from what the step does (agents); absent/false when recorded. */
  phaseInferred: z.boolean().optional(),
  /** Message or thought text (the reply; a model's reasoning is `reasoning`). */
  text: z.string().optional(),
  /** The model's reasoning, apart from its reply. */
  reasoning: StepReasoningSchema.optional(),
  action: StepActionSchema.optional(),
  observation: StepObservationSchema.optional(),
  edits: z.array(FileEditSchema).optional(),
  model: ModelCallSchema.optional(),
  errors: z.array(z.string()).optional(),
  /** Sandbox operations this tool call made (folded in, not rows of their own). */
  execs: z.array(StepExecSchema).optional(),
  /** Not the agent's work (setup, scoring, cleanup, the harness's bookkeeping); absent for the agent's. */
  stage: StageSchema.optional(),
  /** The task given, a system prompt, a demonstration or the final submission. */
  purpose: PurposeSchema.optional(),
  /** The innermost span (Inspect) the step ran in: its id in the trajectory's `spans`, and its depth (0 = top level). */
  span: z.object({ id: z.string(), depth: z.number().int().nonnegative() }).optional(),
  source: StepSourceSchema,
  /** Fields of the source event that the model has no place for, kept as they were. */
  extra: z.record(z.string(), z.unknown()).optional(),
});
export type Step = z.infer<typeof StepSchema>;
/** A step as an importer builds it: `index` and `phase` are filled in when the trajectory is finished. */
export type NewStep = Omit<Step, 'index' | 'phase'> & { phase?: Phase };

/**
 * Maps this project's session events (docs/events.md) onto steps, with exact phases (from
 * `phase.changed`; the session starts in `design`). Every event gives one step except the clock's
 * bookkeeping (`clock.*`), which has no row of its own; `null` for those.
 *
 * @param ev a parsed event; `source` says where it came from (file, line, offset)
 * @param phase the phase in effect before this event
 * @returns the step without `index`, and the phase in effect after the event
 */
export function stepFromSessionEvent(ev: SessionEvent, phase: Phase, source: StepSource): { step: NewStep | null; phase: Phase } {
  const ms = Date.parse(ev.at);
  const time = Number.isFinite(ms) ? { ms, relMs: 0 } : undefined;
  const base = { time, phase, phaseInferred: false, source: { ...source, kind: ev.type } };
  switch (ev.type) {
    case 'session.opened':
      return { step: { ...base, kind: 'environment', actor: 'system', text: `session opened by ${ev.client}${ev.restored ? ' (restored)' : ''}${ev.taskId ? ` for ${ev.taskId}` : ''}` }, phase };
    case 'phase.changed':
      return { step: { ...base, phase: ev.to, kind: 'environment', actor: 'user', text: `phase ${ev.from} → ${ev.to}` }, phase: ev.to };
    case 'clock.started': case 'clock.paused': case 'clock.resumed': case 'clock.actor':
      return { step: null, phase };
    case 'budget.warning':
      return { step: { ...base, kind: 'environment', actor: 'system', text: `time budget ${ev.level}% reached (${Math.round(ev.workingMs / 60000)} of ${Math.round(ev.budgetMs / 60000)} min)` }, phase };
    case 'file.edited':
      return { step: { ...base, kind: 'edit', actor: 'user', edits: [{ path: ev.path, diff: ev.diff, op: 'edit' }], ...(ev.diffTruncated ? { errors: ['diff cut at 200000 characters by the recorder'] } : {}) }, phase };
    case 'file.created':
      return { step: { ...base, kind: 'edit', actor: 'user', edits: [{ path: ev.path, op: 'create' }] }, phase };
    case 'file.deleted':
      return { step: { ...base, kind: 'edit', actor: 'user', edits: [{ path: ev.path, op: 'delete' }] }, phase };
    case 'file.changed':
      return { step: { ...base, kind: 'edit', actor: 'user', edits: [{ path: ev.path, op: 'edit' }] }, phase };
    case 'command.run':
      return { step: { ...base, kind: 'tool', actor: 'user', time: time && { ...time, durationMs: ev.durationMs },
        action: { tool: 'terminal', command: ev.command, arguments: ev.cwd ? { command: ev.command, cwd: ev.cwd } : { command: ev.command } },
        observation: { text: ev.outputExcerpt, exitCode: ev.exitCode } }, phase };
    case 'script.run':
      return { step: { ...base, kind: 'tool', actor: 'environment', time: time && { ...time, durationMs: ev.durationMs },
        action: { tool: 'script.run', command: 'bash reproduce_exp_bench.sh', arguments: { runId: ev.runId } },
        observation: { text: ev.log, exitCode: ev.exitCode }, ...(ev.error ? { errors: [ev.error] } : {}) }, phase };
    case 'note.added':
      return { step: { ...base, kind: 'message', actor: 'user', text: ev.text }, phase };
    case 'answers.saved':
      return { step: { ...base, kind: 'message', actor: 'user', text: [ev.design ? `design: ${ev.design.freeText}` : '', ev.conclusion ? `conclusion: ${ev.conclusion}` : ''].filter(Boolean).join('\n') || 'answers saved' }, phase };
    case 'submitted':
      return { step: { ...base, kind: 'environment', actor: 'user', text: `submitted after ${Math.round(ev.workingMs / 60000)} min of work${ev.patch ? `, patch ${ev.patchBytes} bytes` : ', no patch'}` }, phase };
    case 'gave_up':
      return { step: { ...base, kind: 'environment', actor: 'user', text: `gave up${ev.reason ? `: ${ev.reason}` : ''}` }, phase };
    case 'baseliner.attested':
      return { step: { ...base, kind: 'environment', actor: 'user', text: `baseliner ${ev.baseliner} attested to ${ev.rules.length} rules (AI ${ev.aiAllowed ? 'allowed' : 'not allowed'})` }, phase };
    case 'ai.settings':
      return { step: { ...base, kind: 'environment', actor: 'system', text: `AI features in the window: ${ev.off ? 'off' : 'NOT all off'} (${ev.allowed ? 'allowed' : 'not allowed'} in this session)` }, phase };
    case 'verify.finished': case 'judge.finished':
      return { step: { ...base, kind: 'score', actor: 'system', text: `${ev.type === 'verify.finished' ? 'verifier' : 'judge'}: ${ev.ok ? 'ok' : 'failed'}${ev.summary ? ` — ${ev.summary}` : ''}`,
        ...(ev.error ? { errors: [ev.error] } : {}), ...(ev.record ? { extra: { record: ev.record } } : {}) }, phase };
    case 'agent.model_call':
      return { step: { ...base, kind: 'model', actor: 'agent', time: time && { ...time, durationMs: ev.durationMs },
        // the agent's prompt count (OpenAI `prompt_tokens`) holds the cached tokens: input is the rest
        model: { model: ev.model, inputTokens: Math.max(0, ev.inputTokens - (ev.cachedTokens ?? 0)), outputTokens: ev.outputTokens, totalTokens: ev.inputTokens + ev.outputTokens,
          ...(ev.cachedTokens !== undefined ? { cacheReadTokens: ev.cachedTokens } : {}), ...(ev.costUsd !== null ? { costUsd: ev.costUsd } : {}) },
        ...(ev.text ? { text: ev.text } : {}), ...(ev.error ? { errors: [ev.error] } : {}) }, phase };
    case 'agent.tool_call':
      return { step: { ...base, kind: 'tool', actor: 'agent', time: time && { ...time, durationMs: ev.durationMs },
        action: { tool: ev.tool, arguments: ev.arguments, ...(ev.callId ? { callId: ev.callId } : {}) },
        observation: { text: ev.result, ...(ev.exitCode !== undefined ? { exitCode: ev.exitCode } : {}), ...(ev.error ? { error: true } : {}) },
        ...(ev.error ? { errors: [ev.error] } : {}), ...(ev.client ? { extra: { client: ev.client, ...(ev.via ? { via: ev.via } : {}) } } : {}) }, phase };
    case 'agent.attached':
      return { step: { ...base, kind: 'environment', actor: 'system', text: `outside agent ${ev.client}${ev.version ? ` ${ev.version}` : ''} attached through ${ev.via === 'mcp' ? 'MCP' : 'the language-model tools'}${ev.transport ? ` (${ev.transport})` : ''}${ev.unconfined ? '; unconfined: it keeps its own shell on the host' : ''}`,
        extra: { client: ev.client, via: ev.via, unconfined: ev.unconfined } }, phase };
    case 'trajectory.imported':
      return { step: { ...base, kind: 'environment', actor: 'system', text: `imported ${ev.format} trajectory ${ev.trajectory} (${ev.steps} steps, ${ev.problems} problems) from ${ev.files.length} file(s)`, extra: { record: ev.record } }, phase };
    case 'trajectory.step': {
      // The step as imported (its own time, phase and source); a step that no longer fits the model is shown as text.
      const s = StepSchema.safeParse({ index: 0, ...ev.step });
      if (!s.success) return { step: { ...base, kind: 'error', actor: 'system', text: `imported step of ${ev.trajectory} does not fit the step model`, errors: [s.error.issues[0]?.message ?? 'invalid'], extra: { step: ev.step } }, phase };
      const { index: _index, ...step } = s.data;
      return { step: { ...step, extra: { ...step.extra, importedFrom: step.source, trajectory: ev.trajectory }, source: { ...source, kind: ev.type } }, phase: step.phase };
    }
  }
}

/** The phases in order, re-exported for step readers that do not import `phases`. */
export const STEP_PHASES = PHASES;
