import type Docker from 'dockerode';
import { isExpBenchError } from '../errors';
import { log, redact } from '../log';
import { ToolChatClient, type ChatTool, type ToolChatMessage } from '../llm/chat';
import type { LlmEndpoint } from '../llm/endpoint';
import { Ledger, type LedgerTotals, type PriceTable } from '../llm/ledger';
import { excerpt, MAX_EXCERPT_CHARS } from '../steps/events';
import { errorMessage } from '../util/errors';
import type { AgentControl, ShellApproval } from './control';
import type { ResumedConversation } from './history';
import { briefMessage, NUDGE, systemPrompt, type AgentBrief } from './prompt';
import { runShell } from './shell';
import { phaseOf, runTool, toolSpecs, type AgentSession, type ToolContext } from './tools';

const logger = log('agent');

/** Limits of one agent run; each one reached stops the run cleanly with its {@link StopReason}. */
export interface AgentLimits {
  /** Model calls (steps); default 50. */
  maxSteps?: number;
  /** Input + output tokens of all model calls; the run stops before the next call once reached. */
  maxTokens?: number;
  /** USD (ledger prices); a call whose worst case could exceed it is not made (src/core/llm/ledger.ts guard). */
  budgetUsd?: number;
  /** Working time of the session (its clock), ms: also bounds each wait on the endpoint and each shell command. */
  maxWorkingMs?: number;
  /** Tool calls run in all; default {@link DEFAULT_MAX_TOOL_CALLS}. */
  maxToolCalls?: number;
}

/**
 * Tool calls of one reply that are run; the rest of a longer reply are dropped from the
 * conversation and the model is told (a reply may ask for any number: 10,000 were seen).
 */
export const MAX_TOOL_CALLS_PER_REPLY = 16;
/** Default limit of tool calls in one run (`maxToolCalls`). */
export const DEFAULT_MAX_TOOL_CALLS = 500;

/**
 * Why a run ended: `submitted` (the model called submit), `max_steps`, `max_tool_calls`,
 * `max_tokens`, `budget`, `max_time` (a limit; also reached while waiting on the endpoint), `model_error` (the endpoint failed after its retries, or refused the
 * request), `no_action` (three replies in a row without a tool call), `cancelled`, `session_lost`
 * (the session was taken over or finished by someone else), `error` (the container or the engine failed).
 */
export type StopReason = 'submitted' | 'max_steps' | 'max_tool_calls' | 'max_tokens' | 'budget' | 'max_time' | 'model_error' | 'no_action' | 'cancelled' | 'session_lost' | 'error';

/** Options of {@link runAgent}. */
export interface AgentOptions {
  session: AgentSession;
  container: Docker.Container;
  brief: AgentBrief;
  /** The agent's own endpoint (src/core/llm/endpoint.ts `endpointFromEnv('agent', env)`). */
  endpoint: LlmEndpoint;
  /** USD per 1M tokens by model (the `expbench.llm.prices` setting, `--prices FILE`). */
  prices?: PriceTable;
  limits?: AgentLimits;
  /** Largest timeout of one shell command, ms; default 600000. */
  shellTimeoutMs?: number;
  /** Characters of tool output told to the model per call; default 16000. */
  outputCap?: number;
  signal?: AbortSignal;
  /** Called after each recorded model call or tool call (live display). */
  onStep?: (s: { kind: 'model' | 'tool'; step: number; text: string }) => void;
  /** Pause and resume by the researcher (src/core/agent/control.ts). */
  control?: AgentControl;
  /** When set, every shell command waits for this approval; a refusal is told to the model. */
  approveShell?: (command: string) => Promise<ShellApproval>;
  /** Waits between retries of a failed request (tests pass a short one); default: real time. */
  sleep?: (ms: number, signal?: AbortSignal) => Promise<void>;
  /**
   * Goes on with an interrupted run's conversation (src/core/agent/history.ts
   * `conversationFromEvents`) instead of the brief alone: its steps, tokens and spending count
   * against the limits as if the run had never stopped.
   */
  resume?: ResumedConversation;
}

/** What a run did. */
export interface AgentResult {
  stop: StopReason;
  /** One line: why it stopped. */
  message: string;
  /** Model calls that got an answer. */
  steps: number;
  toolCalls: number;
  /** HTTP requests sent (failed attempts and retries included). */
  requests: number;
  ledger: LedgerTotals;
  /** True when the model called submit and the flow should submit. */
  submitRequested: boolean;
}

/** Consecutive replies without a tool call after which the run stops (`no_action`). */
const MAX_IDLE_REPLIES = 3;

/**
 * The built-in agent: a tool-calling loop on an OpenAI-compatible endpoint (src/core/llm/chat.ts)
 * whose tools act in the session's work container only (src/core/agent/tools.ts) and on the
 * session through its handle. The prompt holds the brief only ({@link AgentBrief}). Every model
 * request is recorded as `agent.model_call` and every tool call as `agent.tool_call` in the
 * session's event log; the end of the run as a `note.added` event `agent stopped: <reason>: …`.
 * The session's clock runs during the run (started if needed, heartbeat every 15 s) and is paused
 * at the end unless the model submitted (the flow's submit stops it).
 *
 * Never throws for the model's doing (bad JSON, unknown tools, endpoint errors): those are told
 * to the model or end the run with a reason. Nothing is lost on a stop: drafts are in the session
 * state, the workspace in place, the events on disk.
 */
export async function runAgent(o: AgentOptions): Promise<AgentResult> {
  const limits = { maxSteps: 50, maxToolCalls: DEFAULT_MAX_TOOL_CALLS, ...o.limits };
  const ledger = new Ledger(o.prices ?? {}, limits.budgetUsd, o.resume?.spentUsd ?? 0);
  const tokensBefore = o.resume?.tokens ?? 0;
  const chat = new ToolChatClient(o.endpoint, ledger, o.sleep);
  const tools: ChatTool[] = toolSpecs();
  const messages: ToolChatMessage[] = o.resume ? [...o.resume.messages] : [
    { role: 'system', content: systemPrompt() },
    { role: 'user', content: briefMessage(o.brief) },
  ];
  const s = o.session;
  const ctx: ToolContext = {
    session: s, container: o.container, shellTimeoutMs: o.shellTimeoutMs ?? 600_000, outputCap: o.outputCap ?? 16_000, signal: o.signal,
    remainingMs: () => (limits.maxWorkingMs === undefined ? Infinity : limits.maxWorkingMs - s.workingMs()),
    approveShell: o.approveShell, brief: o.brief,
  };
  let steps = o.resume?.steps ?? 0;
  let toolCalls = o.resume?.toolCalls ?? 0;
  let idle = 0;
  /** Told to the model after the tool results of the reply that caused it (a capped reply). */
  let pendingNote: string | undefined;
  const timeMessage = () => `working-time limit reached (${Math.round(s.workingMs() / 1000)} s of ${Math.round(limits.maxWorkingMs! / 1000)} s)`;
  // Event appends are durable (fsync'd) and kept in order by the event log; the loop does not wait
  // for each one but goes on with the next request or tool, so the disk's time overlaps the work.
  // A failed append (the session taken over) stops the run at the next check.
  const pending = new Set<Promise<void>>();
  let appendError: unknown;
  const record = (e: Parameters<AgentSession['record']>[0]): void => {
    const p: Promise<void> = s.record(e).then(() => undefined, (err: unknown) => { appendError ??= err; }).finally(() => pending.delete(p));
    pending.add(p);
  };
  const finish = async (stop: StopReason, message: string): Promise<AgentResult> => {
    await Promise.all([...pending]);
    const r: AgentResult = { stop, message, steps, toolCalls, requests: chat.requestsSent, ledger: ledger.totals(), submitRequested: stop === 'submitted' };
    logger.info(`agent run on ${o.brief.taskId} stopped: ${stop}: ${message}`);
    try {
      await s.record({ type: 'note.added', text: `agent stopped: ${stop}: ${redact(message)}` });
      if (stop !== 'submitted') await s.pauseClock(`agent stopped: ${stop}`);
    } catch (e) {
      logger.warn(`recording the end of the agent run failed: ${errorMessage(e)}`);
    }
    return r;
  };

  await s.startClock();
  if (o.resume) {
    const r = o.resume;
    await s.record({ type: 'note.added', text: `agent resumed from the event log: ${r.steps} model calls and ${r.toolCalls} tool calls rebuilt${r.interrupted.length ? `; interrupted under ${r.interrupted.join(', ')}` : ''}${r.cut ? `; ${r.cut} recorded texts were excerpts` : ''}` });
  }
  const beat = s.startHeartbeat(15_000);
  try {
    for (;;) {
      if (appendError) throw appendError;
      if (o.signal?.aborted) return await finish('cancelled', 'cancelled by the user');
      if (s.state.submitted || s.state.gaveUp) return await finish('session_lost', 'the session was finished by another client');
      if (steps >= limits.maxSteps) return await finish('max_steps', `step limit reached (${limits.maxSteps} model calls)`);
      const t = ledger.totals();
      if (limits.maxTokens !== undefined && tokensBefore + t.promptTokens + t.completionTokens >= limits.maxTokens) {
        return await finish('max_tokens', `token limit reached (${tokensBefore + t.promptTokens + t.completionTokens} of ${limits.maxTokens} tokens)`);
      }
      if (ctx.remainingMs() <= 0) return await finish('max_time', timeMessage());
      if (toolCalls >= limits.maxToolCalls) return await finish('max_tool_calls', `tool-call limit reached (${limits.maxToolCalls} tool calls)`);

      if (o.control?.paused) {
        await Promise.all([...pending]);
        const told = await pausedTurn(o.control, s, o.container, o.signal);
        if (told) messages.push({ role: 'user', content: told });
        continue;
      }

      const item = `agent:${steps + 1}`;
      let outcome;
      try {
        outcome = await chat.chat(messages, tools, {
          item, signal: o.signal, timeLeftMs: ctx.remainingMs,
          onAttempt: (a) => {
            record({
              type: 'agent.model_call', model: a.model, inputTokens: a.inputTokens, outputTokens: a.outputTokens,
              ...(a.cachedTokens !== undefined ? { cachedTokens: a.cachedTokens } : {}), costUsd: a.costUsd, durationMs: Math.round(a.durationMs),
              finishReason: a.finishReason, ...(a.text ? { text: excerpt(redact(a.text), MAX_EXCERPT_CHARS) } : {}),
              ...(a.toolNames?.length ? { toolCalls: a.toolNames } : {}), ...(a.error ? { error: a.error, retry: a.retry ?? false } : {}),
            });
          },
        });
      } catch (e) {
        if (isExpBenchError(e, 'BUDGET_EXCEEDED')) return await finish('budget', e.message);
        if (isExpBenchError(e, 'CANCELLED')) return await finish('cancelled', 'cancelled by the user');
        throw e;
      }
      if (!outcome.ok) return await finish(outcome.timeUp ? 'max_time' : 'model_error', outcome.timeUp ? `${timeMessage()}: ${outcome.error}` : outcome.error);
      steps++;
      const { reply } = outcome;
      // A reply's tool calls past the cap (and past the run's tool-call limit) are not run; the
      // conversation sent back holds only those that run, each answered, and says so.
      // (At least one: the run stopped above when no tool call was left.)
      const room = Math.min(MAX_TOOL_CALLS_PER_REPLY, limits.maxToolCalls - toolCalls);
      const asked = reply.toolCalls.length;
      if (asked > room) {
        reply.toolCalls = reply.toolCalls.slice(0, room);
        const m = reply.message as { tool_calls: unknown[] };
        reply.message = { ...reply.message, tool_calls: m.tool_calls.slice(0, room) } as ToolChatMessage;
      }
      messages.push(reply.message);
      o.onStep?.({ kind: 'model', step: steps, text: reply.toolCalls.length ? `→ ${reply.toolCalls.map((c) => c.name).join(', ')}` : excerpt(reply.content, 200) });
      s.touch();

      if (asked > reply.toolCalls.length) {
        const why = `your reply asked for ${asked} tool calls; only the first ${reply.toolCalls.length} ${reply.toolCalls.length === 1 ? 'was' : 'were'} run (at most ${MAX_TOOL_CALLS_PER_REPLY} per reply${limits.maxToolCalls - toolCalls < MAX_TOOL_CALLS_PER_REPLY ? `, ${limits.maxToolCalls} in the run` : ''}); ask again for what is still needed`;
        record({ type: 'note.added', text: `agent: ${why.replace(/^your reply/, 'the model\'s reply')}` });
        pendingNote = `Note: ${why}.`;
      }
      if (!reply.toolCalls.length) {
        if (++idle >= MAX_IDLE_REPLIES) return await finish('no_action', `${MAX_IDLE_REPLIES} replies in a row without a tool call`);
        messages.push({ role: 'user', content: NUDGE });
        continue;
      }
      idle = 0;
      let submitted = false;
      for (const call of reply.toolCalls) {
        if (submitted) {
          messages.push({ role: 'tool', tool_call_id: call.id, content: 'not run: the work was submitted' });
          continue;
        }
        if (o.signal?.aborted) return await finish('cancelled', 'cancelled by the user');
        if (ctx.remainingMs() <= 0) return await finish('max_time', timeMessage());
        const t0 = performance.now();
        const phase = phaseOf(call.name);
        let r;
        try {
          if (phase && phase !== s.state.phase) await s.setPhase(phase);
          r = await runTool(ctx, call.name, call.arguments);
        } catch (e) {
          if (isExpBenchError(e, 'SESSION_INVALID')) return await finish('session_lost', errorMessage(e));
          if (o.signal?.aborted) return await finish('cancelled', 'cancelled by the user');
          return await finish('error', `tool ${call.name} failed: ${errorMessage(e)}`);
        }
        const durationMs = performance.now() - t0;
        toolCalls++;
        record({
          type: 'agent.tool_call', tool: call.name, callId: call.id, arguments: excerpt(redact(call.arguments), MAX_EXCERPT_CHARS),
          result: excerpt(redact(r.result), MAX_EXCERPT_CHARS), ...(r.exitCode !== undefined ? { exitCode: r.exitCode } : {}),
          durationMs: Math.round(durationMs), ...(r.error ? { error: redact(r.error) } : {}),
        });
        s.touch();
        o.onStep?.({ kind: 'tool', step: steps, text: `${call.name}${r.error ? ` ✗ ${excerpt(r.error, 160)}` : ''}` });
        messages.push({ role: 'tool', tool_call_id: call.id, content: r.result });
        if (r.submit) submitted = true;
      }
      if (submitted) return await finish('submitted', `submitted after ${steps} model calls and ${toolCalls} tool calls`);
      if (pendingNote) { messages.push({ role: 'user', content: pendingNote }); pendingNote = undefined; }
    }
  } catch (e) {
    if (isExpBenchError(e, 'SESSION_INVALID')) return await finish('session_lost', errorMessage(e));
    return await finish('error', errorMessage(e));
  } finally {
    beat.dispose();
  }
}

const PAUSE_MARK = '/tmp/.expbench-agent-paused';

/**
 * A pause by the researcher: the clock paused, `agent paused` / `agent resumed` notes in the log,
 * and on resume the message for the model: the files changed in /workspace while it waited (newer
 * than the pause, found in the container; deletions are not listed) and the researcher's notes.
 * Undefined when the run was stopped meanwhile.
 */
async function pausedTurn(control: AgentControl, s: AgentSession, container: Docker.Container, signal?: AbortSignal): Promise<string | undefined> {
  await s.record({ type: 'note.added', text: 'agent paused by the researcher' });
  await s.pauseClock('agent paused by the researcher');
  await runShell(container, `touch ${PAUSE_MARK}`, { timeoutMs: 10_000, outputCap: 1000 });
  const { notes } = await control.gate(signal);
  if (signal?.aborted) return undefined;
  await s.resumeClock();
  const found = await runShell(container, `find /workspace -path /workspace/.git -prune -o -type f -newer ${PAUSE_MARK} -print | sed 's|^/workspace/||' | sort | head -200`,
    { timeoutMs: 30_000, outputCap: 8000 });
  const changed = found.exitCode === 0 ? found.output.split('\n').filter(Boolean) : [];
  await s.record({ type: 'note.added', text: `agent resumed${changed.length ? `; changed while paused: ${changed.join(', ')}` : ''}${notes.length ? `; note: ${notes.join(' ')}` : ''}` });
  return [
    'The researcher paused you, and you go on now.',
    changed.length ? `Files changed in /workspace while you were paused (read them before relying on what you knew): ${changed.join(', ')}.` : 'No file in /workspace changed while you were paused.',
    ...notes.map((n) => `The researcher's note: ${n}`),
  ].join('\n');
}
