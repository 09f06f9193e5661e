import type { NewStep, StepReasoning, StepSource } from '../steps/step';
import { addSubmission, finishTrajectory } from './finish';
import { arr, asText, commandOf, contentText, count, editsOf, exitCodeOf, extra, isObj, num, obj, ptr, reasoningOf, splitThink, stepTime, str, type Obj } from './json';
import { TrajectoryBuilder, type SourceUsage, type Trajectory, type TrajectoryFormat } from './types';

/**
 * OpenHands trajectories.
 *
 * V0 (openhands `events/serialization`): events `{id, timestamp, source, message, action, args}`
 * or `{id, timestamp, source, message, observation, content, extras, cause}`; an observation
 * whose `cause` is an action's `id` is merged into that action's step. Shapes: a JSON array (the
 * GUI's trajectory export, environment events included), an eval `output.jsonl` whose lines hold
 * `history`, and the legacy flat history of `[action, observation]` pairs.
 *
 * V1 (software-agent-sdk `event/`): kind-tagged events (`ActionEvent`, `ObservationEvent`,
 * `MessageEvent`, `SystemPromptEvent`, `AgentErrorEvent`, `UserRejectObservation`,
 * `ConversationStateUpdateEvent`, `PauseEvent`, `Condensation*`), one per line in `events.jsonl`
 * or in an eval `output.jsonl`'s `history`. An observation is merged into the action with its
 * `action_id` / `tool_call_id`. `TerminalAction` and its old name `ExecuteBashAction` carry a
 * `command`. Timestamps without a zone are read as UTC.
 */

/** An event and where it is: a JSON pointer into its document (`file` when it is a file of its own, as in an event folder), or a line of a JSON Lines file. */
export interface Located { value: unknown; pointer: string; line?: number; offset?: number; file?: string }

const V0_KNOWN = new Set(['id', 'timestamp', 'source', 'message', 'action', 'args', 'observation', 'content', 'extras', 'cause', 'tool_call_metadata', 'llm_metrics', 'timeout', 'success', 'hidden']);
const V1_KNOWN = new Set(['kind', 'id', 'timestamp', 'source', 'thought', 'reasoning_content', 'thinking_blocks', 'responses_reasoning_item', 'action', 'tool_name', 'tool_call_id', 'tool_call', 'llm_response_id', 'security_risk', 'summary', 'critic_result', 'observation', 'action_id', 'llm_message', 'system_prompt', 'tools', 'error', 'key', 'value', 'activated_skills', 'extended_content', 'sender', 'rejection_reason', 'metrics']);
const V1_KINDS = new Set(['ActionEvent', 'ObservationEvent', 'MessageEvent', 'SystemPromptEvent', 'AgentErrorEvent', 'UserRejectObservation', 'ConversationStateUpdateEvent', 'PauseEvent', 'Condensation', 'CondensationRequest', 'CondensationSummaryEvent', 'ConversationErrorEvent', 'TokenEvent', 'LLMCompletionLogEvent']);

/** True when `v` looks like a V1 SDK event (a `kind` naming an event class). */
export function isV1Event(v: unknown): boolean {
  const o = obj(v);
  return !!o && typeof o.kind === 'string' && (V1_KINDS.has(o.kind) || /(?:Event|Observation)$/.test(o.kind)) && ('id' in o || 'timestamp' in o);
}
/** True when `v` looks like a V0 event (`action` or `observation` string). */
export function isV0Event(v: unknown): boolean {
  const o = obj(v);
  return !!o && (typeof o.action === 'string' || typeof o.observation === 'string') && !('kind' in o);
}

function actorOf(source: unknown, fallback: NewStep['actor']): NewStep['actor'] {
  return source === 'user' ? 'user' : source === 'agent' ? 'agent' : source === 'environment' ? 'environment' : fallback;
}

/**
 * A model call's usage from an OpenAI-style usage object (litellm's, as OpenHands stores it:
 * `prompt_tokens` holds the cached tokens, `prompt_tokens_details.cached_tokens` /
 * `cache_read_input_tokens` / `cache_read_tokens` the cache reads, `cache_creation_input_tokens` /
 * `cache_write_tokens` the cache writes, `completion_tokens_details.reasoning_tokens` /
 * `reasoning_tokens` the reasoning): input = prompt − cache reads − cache writes, total = prompt +
 * completion (litellm's `total_tokens` when given).
 */
export function openAiUsage(u: Obj | undefined, model?: string, costUsd?: number): NewStep['model'] | undefined {
  if (!u) return undefined;
  const prompt = count(u.prompt_tokens) ?? count(u.input_tokens);
  const completion = count(u.completion_tokens) ?? count(u.output_tokens);
  if (prompt === undefined && completion === undefined) return undefined;
  const cr = count(u.cache_read_input_tokens) ?? count(obj(u.prompt_tokens_details)?.cached_tokens) ?? count(u.cache_read_tokens);
  const cw = count(u.cache_creation_input_tokens) ?? count(u.cache_write_tokens);
  const rt = count(obj(u.completion_tokens_details)?.reasoning_tokens) ?? count(u.reasoning_tokens);
  const m: NonNullable<NewStep['model']> = {};
  if (model) m.model = model;
  if (prompt !== undefined) m.inputTokens = Math.max(0, prompt - (cr ?? 0) - (cw ?? 0));
  if (completion !== undefined) m.outputTokens = completion;
  if (cr) m.cacheReadTokens = cr;
  if (cw) m.cacheWriteTokens = cw;
  if (rt) m.reasoningTokens = rt;
  m.totalTokens = count(u.total_tokens) ?? (prompt ?? 0) + (completion ?? 0);
  if (costUsd !== undefined && costUsd > 0) m.costUsd = costUsd;
  return m;
}

/** OpenHands' accumulated usage (`Metrics.accumulated_token_usage` + `accumulated_cost`, V0 `llm_metrics` or V1 `stats`). */
interface Accumulated { prompt: number; completion: number; cacheRead: number; cacheWrite: number; reasoning: number; cost: number; model?: string }

function accumulatedOf(metrics: Obj | undefined): Accumulated | undefined {
  const a = obj(metrics?.accumulated_token_usage);
  if (!a) return undefined;
  return { prompt: count(a.prompt_tokens) ?? 0, completion: count(a.completion_tokens) ?? 0, cacheRead: count(a.cache_read_tokens) ?? 0, cacheWrite: count(a.cache_write_tokens) ?? 0, reasoning: count(a.reasoning_tokens) ?? 0, cost: count(metrics?.accumulated_cost) ?? 0, ...(str(a.model) && str(a.model) !== 'default' ? { model: str(a.model) } : str(metrics?.model_name) ? { model: str(metrics?.model_name) } : {}) };
}

/** The sum of V1's per-purpose metrics (`stats.usage_to_metrics`: the agent's, the condenser's, …). */
function accumulatedOfStats(value: unknown): Accumulated | undefined {
  const per = obj(obj(value)?.usage_to_metrics);
  if (!per) return undefined;
  let out: Accumulated | undefined;
  for (const m of Object.values(per)) {
    const a = accumulatedOf(obj(m));
    if (!a) continue;
    out = out ? { prompt: out.prompt + a.prompt, completion: out.completion + a.completion, cacheRead: out.cacheRead + a.cacheRead, cacheWrite: out.cacheWrite + a.cacheWrite, reasoning: out.reasoning + a.reasoning, cost: out.cost + a.cost, model: out.model ?? a.model } : a;
  }
  return out;
}

/** The usage of the calls between two accumulated snapshots, or undefined when none was made. */
function delta(now: Accumulated, before: Accumulated | undefined): NewStep['model'] | undefined {
  const b = before ?? { prompt: 0, completion: 0, cacheRead: 0, cacheWrite: 0, reasoning: 0, cost: 0 };
  const d = { prompt_tokens: now.prompt - b.prompt, completion_tokens: now.completion - b.completion, cache_read_tokens: now.cacheRead - b.cacheRead, cache_write_tokens: now.cacheWrite - b.cacheWrite, reasoning_tokens: now.reasoning - b.reasoning };
  if (d.prompt_tokens <= 0 && d.completion_tokens <= 0) return undefined;
  return openAiUsage(d, now.model, now.cost - b.cost);
}

/** The source's totals from an accumulated snapshot. */
export function usageOfAccumulated(a: Accumulated, from: string, calls?: number): SourceUsage {
  return { inputTokens: Math.max(0, a.prompt - a.cacheRead - a.cacheWrite), outputTokens: a.completion, cacheReadTokens: a.cacheRead, cacheWriteTokens: a.cacheWrite, ...(a.reasoning ? { reasoningTokens: a.reasoning } : {}), totalTokens: a.prompt + a.completion, costUsd: a.cost, ...(calls !== undefined ? { calls } : {}), from };
}

/** Reasoning of an OpenAI/Anthropic-style message (`reasoning_content`, `thinking_blocks`, `responses_reasoning_item`). */
function reasoningOfMessage(m: Obj | undefined): StepReasoning | undefined {
  if (!m) return undefined;
  const parts: string[] = []; let redacted = false; const summaries: string[] = [];
  if (str(m.reasoning_content)?.trim()) parts.push(str(m.reasoning_content)!);
  else if (str(m.reasoning)?.trim()) parts.push(str(m.reasoning)!);
  for (const t of arr(m.thinking_blocks) ?? []) {
    const o = obj(t);
    if (str(o?.type) === 'redacted_thinking') redacted = true;
    else if (str(o?.thinking) && !parts.includes(str(o?.thinking)!)) parts.push(str(o?.thinking)!);
  }
  const item = obj(m.responses_reasoning_item);
  if (item) {
    for (const x of arr(item.summary) ?? []) { const t = str(x) ?? str(obj(x)?.text); if (t) summaries.push(t); }
    for (const x of arr(item.content) ?? []) { const t = str(x) ?? str(obj(x)?.text); if (t) parts.push(t); }
    if (str(item.encrypted_content)) redacted = true;
  }
  return reasoningOf(parts.join('\n\n'), summaries.join('\n\n'), redacted);
}

/** Maps a V0 event list (GUI export, or one instance's history) onto a builder. */
export function mapV0(b: TrajectoryBuilder, events: Located[], file: string): void {
  const byId = new Map<string, NewStep>();
  // usage: the deltas of the accumulated snapshots events carry (`llm_metrics`), else each
  // response's usage once (several actions of one response carry the same `model_response`)
  const snapshots = events.some((ev) => accumulatedOf(obj(obj(ev.value)?.llm_metrics)));
  let prev: Accumulated | undefined;
  const usedResponses = new Set<string>();
  const usageOf = (e: Obj): NewStep['model'] | undefined => {
    if (snapshots) {
      const now = accumulatedOf(obj(e.llm_metrics));
      if (!now) return undefined;
      const d = delta(now, prev);
      prev = now;
      return d;
    }
    const r = obj(obj(e.tool_call_metadata)?.model_response);
    const id = str(r?.id);
    if (!r || (id && usedResponses.has(id))) return undefined;
    if (id) usedResponses.add(id);
    return openAiUsage(obj(r.usage), str(r.model));
  };
  let taskSeen = false;
  for (const ev of events) {
    b.sourceEvents++;
    const src: StepSource = { file: ev.file ?? file, pointer: ev.pointer, ...(ev.line ? { line: ev.line } : {}), ...(ev.offset !== undefined ? { offset: ev.offset } : {}) };
    if (Array.isArray(ev.value) && ev.value.length === 2) {
      // legacy flat history: [action, observation]
      b.sourceEvents++;
      const a0 = obj(ev.value[0]) ?? {};
      const step = v0Action(a0, { ...src, pointer: `${ev.pointer}/0` }, usageOf(a0));
      if (step) { b.add(step); b.mappedEvents++; }
      const o = obj(ev.value[1]);
      if (o && step) { mergeV0Observation(step, o); b.mappedEvents++; }
      continue;
    }
    const e = obj(ev.value);
    if (!e) { b.problem(ev.pointer, 'event is not an object', ev.line ? { line: ev.line } : {}); continue; }
    if (str(e.id) ?? num(e.id) !== undefined) src.id = String(e.id);
    if (typeof e.action === 'string') {
      const step = v0Action(e, { ...src, kind: e.action }, usageOf(e));
      if (step) {
        if (!taskSeen && step.actor === 'user' && step.kind === 'message') { step.purpose = 'task'; taskSeen = true; }
        b.add(step); b.mappedEvents++; if (e.id !== undefined) byId.set(String(e.id), step);
      }
    } else if (typeof e.observation === 'string') {
      const target = e.cause !== undefined && e.cause !== null ? byId.get(String(e.cause)) : undefined;
      if (target) { mergeV0Observation(target, e); b.mappedEvents++; continue; }
      if (e.observation === 'null') { b.skippedEvents++; continue; }
      const time = stepTime(e.timestamp);
      const text = asText(e.content) || str(e.message) || '';
      const isErr = e.observation === 'error';
      const x = { ...(ex(e, V0_KNOWN).extra ?? {}), ...(obj(e.extras) && Object.keys(obj(e.extras)!).length ? { extras: e.extras } : {}) };
      // the runtime's bookkeeping (agent-state changes, recalled knowledge) is the harness's, not the agent's work
      const harness = e.observation === 'agent_state_changed' || e.observation === 'recall' || actorOf(e.source, 'environment') === 'environment';
      b.add({ ...(time ? { time } : {}), ...(harness && !isErr ? { stage: 'harness' as const } : {}), kind: isErr ? 'error' : 'environment', actor: actorOf(e.source, 'environment'),
        text: e.observation === 'agent_state_changed' ? `agent state: ${asText(obj(e.extras)?.agent_state)}` : text,
        ...(isErr ? { errors: [text] } : {}), source: { ...src, kind: e.observation }, ...(Object.keys(x).length ? { extra: x } : {}) });
      b.mappedEvents++;
    } else {
      b.problem(ev.pointer, 'event has neither `action` nor `observation`; kept out of the steps', ev.line ? { line: ev.line } : {}, 'info');
    }
  }
}

function v0Action(e: Obj, source: StepSource, model: NewStep['model'] | undefined): NewStep | null {
  const action = str(e.action) ?? 'action';
  const args = obj(e.args) ?? {};
  const time = stepTime(e.timestamp);
  const tcm = obj(e.tool_call_metadata);
  const reasoning = reasoningOfMessage(obj(obj(arr(obj(tcm?.model_response)?.choices)?.[0])?.message)) ?? (str(args.reasoning_content) ? reasoningOf(str(args.reasoning_content)) : undefined);
  const thought = str(args.thought) ?? '';
  const actor = actorOf(e.source, 'agent');
  // the args a row without an action does not show are kept in `extra.args`
  const shown: Record<string, string[]> = { message: ['content'], system: ['content'], think: ['thought'], change_agent_state: ['agent_state', 'thought'] };
  const rest = shown[action] ? Object.fromEntries(Object.entries(args).filter(([k, v]) => !shown[action].includes(k) && v !== '' && v !== null && v !== undefined)) : {};
  const x = { ...(ex(e, V0_KNOWN).extra ?? {}), ...(Object.keys(rest).length ? { args: rest } : {}) };
  const base = { ...(time ? { time } : {}), source, ...(model ? { model } : {}), ...(reasoning ? { reasoning } : {}), ...(Object.keys(x).length ? { extra: x } : {}) };
  switch (action) {
    case 'message': return { ...base, kind: 'message', actor, text: str(args.content) ?? str(e.message) ?? '' };
    case 'system': return { ...base, kind: 'message', actor: 'system', purpose: 'system-prompt', text: str(args.content) ?? str(e.message) ?? '' };
    case 'think': return { ...base, kind: 'message', actor, text: thought || str(e.message) || '' };
    case 'finish': return { ...base, kind: 'message', actor, text: str(args.final_thought) || str(args.message) || (obj(args.outputs) && Object.keys(obj(args.outputs)!).length ? asText(args.outputs) : thought), action: { tool: 'finish', arguments: args } };
    case 'change_agent_state': return { ...base, stage: 'harness', kind: 'environment', actor: actorOf(e.source, 'environment'), text: `agent state → ${asText(args.agent_state)}` };
    case 'recall': return { ...base, stage: 'harness', kind: 'environment', actor: 'system', text: str(e.message) ?? 'recall', action: { tool: 'recall', arguments: args } };
    default: {
      const tool = str(tcm?.function_name) ?? action;
      const command = action === 'run' ? str(args.command) : action === 'run_ipython' ? str(args.code) : commandOf(tool, args);
      const path = str(args.path);
      const edits = action === 'edit' || action === 'write'
        ? [{ path: path ?? '(unknown)', op: action, ...(str(args.old_str) !== undefined ? { before: str(args.old_str) } : {}), ...((str(args.new_str) ?? str(args.file_text) ?? (str(args.content) || undefined)) !== undefined ? { after: str(args.new_str) ?? str(args.file_text) ?? str(args.content) } : {}) }]
        : editsOf(tool, args);
      return { ...base, kind: 'tool', actor, text: thought || undefined, action: { tool: action === tool ? tool : `${action} (${tool})`, arguments: args, ...(command !== undefined ? { command } : {}), ...(str(tcm?.tool_call_id) ? { callId: str(tcm?.tool_call_id) } : {}) }, ...(edits ? { edits } : {}) };
    }
  }
}

function mergeV0Observation(step: NewStep, o: Obj): void {
  const extras = obj(o.extras) ?? {};
  const text = asText(o.content) || str(o.message) || '';
  if (o.observation === 'null') return;
  const exit = num(extras.exit_code) ?? num(obj(extras.metadata)?.exit_code);
  const isErr = o.observation === 'error' || o.success === false;
  step.observation = { text: step.observation ? `${step.observation.text}\n${text}` : text, ...(exitCodeOf(exit) !== undefined ? { exitCode: exitCodeOf(exit) } : {}), ...(isErr ? { error: true } : {}) };
  if (o.observation === 'edit' && step.edits?.[0] && !step.edits[0].diff) step.edits[0].diff = str(extras.diff) ?? text;
  if (isErr) (step.errors ??= []).push(text);
  const kept = Object.fromEntries(Object.entries(extras).filter(([k]) => k !== 'diff'));
  if (Object.keys(kept).length) step.extra = { ...(step.extra ?? {}), observationExtras: kept };
  const end = stepTime(o.timestamp);
  if (step.time && end && end.ms >= step.time.ms) step.time.durationMs = end.ms - step.time.ms;
}

/** Maps V1 SDK events onto a builder. */
export function mapV1(b: TrajectoryBuilder, events: Located[], file: string): void {
  const byAction = new Map<string, NewStep>();
  // usage: each `stats` update's accumulated totals; the calls since the last update go to the
  // next agent step of a new response before the next update, else to a model row of their own
  let prevStats: Accumulated | undefined;
  let pending: { model: NonNullable<NewStep['model']>; base: Pick<NewStep, 'time' | 'source'> } | undefined;
  const responses = new Set<string>();
  const flushPending = () => {
    if (!pending) return;
    b.add({ ...pending.base, kind: 'model', actor: 'agent', text: 'model call(s) recorded only in the conversation\'s stats (no event of their own)', model: pending.model });
    pending = undefined;
  };
  const claimUsage = (e: Obj): Pick<NewStep, 'model'> => {
    const rid = str(e.llm_response_id);
    if (!pending || (rid && responses.has(rid))) return {};
    if (rid) responses.add(rid);
    const m = pending.model; pending = undefined;
    return { model: m };
  };
  let taskSeen = false;
  const unknown = new Map<string, number>();
  for (const ev of events) {
    b.sourceEvents++;
    const e = obj(ev.value);
    const src: StepSource = { file: ev.file ?? file, pointer: ev.pointer, ...(ev.line ? { line: ev.line } : {}), ...(ev.offset !== undefined ? { offset: ev.offset } : {}) };
    if (!e) { b.problem(ev.pointer, 'event is not an object', ev.line ? { line: ev.line } : {}); continue; }
    const kind = str(e.kind) ?? '(none)';
    if (str(e.id)) src.id = str(e.id);
    src.kind = kind;
    const time = stepTime(e.timestamp);
    const base = { ...(time ? { time } : {}), source: src, ...ex(e, V1_KNOWN) };
    switch (kind) {
      case 'ActionEvent': {
        const a = obj(e.action) ?? {};
        const tc = obj(e.tool_call);
        let args: unknown = a;
        if (tc && typeof tc.arguments === 'string') { try { args = JSON.parse(tc.arguments); } catch { args = tc.arguments; } }
        const tool = str(e.tool_name) ?? str(a.kind) ?? 'action';
        const akind = str(a.kind) ?? '';
        const command = /^(TerminalAction|ExecuteBashAction|BashAction)$/.test(akind) ? str(a.command) : commandOf(tool, a);
        const { text, reasoning } = splitThink(contentText(e.thought), reasoningOfMessage(e));
        const edits = editsOf(`${tool} ${akind}`, a);
        const isFinish = /Finish/.test(akind) || tool === 'finish';
        const step = b.add({ ...base, ...claimUsage(e), ...(reasoning ? { reasoning } : {}), kind: isFinish ? 'message' : 'tool', actor: actorOf(e.source, 'agent'), ...(text || isFinish ? { text: isFinish ? str(a.message) ?? text : text } : {}),
          action: { tool: isFinish ? 'finish' : tool, arguments: args, ...(command !== undefined ? { command } : {}), ...(str(e.tool_call_id) ? { callId: str(e.tool_call_id) } : {}) },
          ...(edits ? { edits } : {}) });
        b.mappedEvents++;
        if (str(e.id)) byAction.set(str(e.id)!, step);
        if (str(e.tool_call_id)) byAction.set(str(e.tool_call_id)!, step);
        break;
      }
      case 'ObservationEvent': case 'UserRejectObservation': case 'AgentErrorEvent': {
        const target = byAction.get(str(e.action_id) ?? '') ?? byAction.get(str(e.tool_call_id) ?? '');
        const o = obj(e.observation) ?? {};
        const text = kind === 'ObservationEvent' ? (contentText(o.content) || str(o.output) || asText(o.text ?? '')) : kind === 'UserRejectObservation' ? `rejected: ${asText(e.rejection_reason)}` : asText(e.error);
        const exit = num(o.exit_code) ?? num(obj(o.metadata)?.exit_code);
        const isErr = kind !== 'ObservationEvent' || o.is_error === true || o.error === true;
        const observation = { text, ...(exitCodeOf(exit) !== undefined ? { exitCode: exitCodeOf(exit) } : {}), ...(isErr ? { error: true } : {}) };
        if (target) {
          target.observation = target.observation ? { ...observation, text: `${target.observation.text}\n${text}` } : observation;
          if (isErr) (target.errors ??= []).push(text);
          if (target.time && time && time.ms >= target.time.ms) target.time.durationMs = time.ms - target.time.ms;
        } else {
          b.add({ ...base, kind: isErr && kind === 'AgentErrorEvent' ? 'error' : 'tool', actor: 'tool', action: { tool: str(e.tool_name) ?? 'tool', ...(str(e.tool_call_id) ? { callId: str(e.tool_call_id) } : {}) }, observation, ...(isErr ? { errors: [text] } : {}) });
        }
        b.mappedEvents++;
        break;
      }
      case 'MessageEvent': {
        const m = obj(e.llm_message) ?? {};
        const role = str(m.role);
        const actor = role === 'system' ? 'system' : actorOf(e.source, role === 'assistant' ? 'agent' : 'user');
        const { text, reasoning } = splitThink(contentText(m.content), reasoningOfMessage(m));
        const purpose = actor === 'user' && !taskSeen ? 'task' as const : undefined;
        if (purpose) taskSeen = true;
        b.add({ ...base, ...(actor === 'agent' ? claimUsage(e) : {}), ...(reasoning ? { reasoning } : {}), ...(purpose ? { purpose } : {}), kind: 'message', actor, text });
        b.mappedEvents++;
        break;
      }
      case 'SystemPromptEvent':
        b.add({ ...base, kind: 'message', actor: 'system', purpose: 'system-prompt', text: contentText(obj(e.system_prompt)?.text ?? e.system_prompt) });
        b.mappedEvents++;
        break;
      case 'ConversationStateUpdateEvent':
        if (e.key === 'execution_status') { b.add({ ...base, stage: 'harness', kind: 'environment', actor: 'environment', text: `execution status: ${asText(e.value)}` }); b.mappedEvents++; } else if (e.key === 'stats' && accumulatedOfStats(e.value)) {
          const now = accumulatedOfStats(e.value)!;
          const d = delta(now, prevStats);
          prevStats = now;
          b.sourceUsage = usageOfAccumulated(now, 'the last stats update (usage_to_metrics)');
          if (d) { flushPending(); pending = { model: d, base: { ...(time ? { time } : {}), source: src } }; b.mappedEvents++; } else b.skippedEvents++;
        } else b.skippedEvents++;
        break;
      case 'PauseEvent': case 'Condensation': case 'CondensationRequest': case 'CondensationSummaryEvent': case 'ConversationErrorEvent':
        b.add({ ...base, ...(kind !== 'ConversationErrorEvent' ? { stage: 'harness' as const } : {}), kind: kind === 'ConversationErrorEvent' ? 'error' : 'environment', actor: 'environment', text: kind === 'CondensationSummaryEvent' ? asText(e.summary) : kind });
        b.mappedEvents++;
        break;
      default:
        unknown.set(kind, (unknown.get(kind) ?? 0) + 1);
    }
  }
  flushPending();
  for (const [k, n] of unknown) b.problem('', `unknown event kind "${k}" (${n}×), kept out of the steps`, {}, 'info');
}

function ex(e: Obj, known: Set<string>): Pick<NewStep, 'extra'> {
  const x = extra(e, known);
  return x ? { extra: x } : {};
}

/** One eval `output.jsonl` line (`{instance_id, history, test_result, metadata, instruction, …}`) → a trajectory. */
export function evalOutputToTrajectory(line: Obj, file: string, lineNo: number, offset: number): Trajectory {
  const history = arr(line.history) ?? [];
  const v1 = history.some(isV1Event);
  const format: TrajectoryFormat = v1 ? 'openhands-v1' : 'openhands-v0';
  // OpenHands' resolver writes `issue: {owner, repo, number}` where the benchmarks write `instance_id`
  const issue = obj(line.issue);
  const id = str(line.instance_id) ?? (num(line.instance_id) !== undefined ? String(line.instance_id) : issue && str(issue.repo) ? `${str(issue.owner) ?? ''}/${str(issue.repo)}#${asText(issue.number)}` : `line ${lineNo}`);
  const b = new TrajectoryBuilder(id, format, file);
  b.task = id;
  const located = history.map((value, i) => ({ value, pointer: ptr('history', i), line: lineNo, offset }));
  if (v1) mapV1(b, located, file); else mapV0(b, located, file);
  for (const p of b.problems) if (p.line === undefined) p.line = lineNo;
  const tr = obj(line.test_result);
  if (tr) b.scores = tr;
  const gp = str(tr?.git_patch) ?? str(line.git_patch);
  if (gp !== undefined) { b.patch = gp; addSubmission(b, gp, str(tr?.git_patch) !== undefined ? '/test_result/git_patch' : '/git_patch'); }
  if (typeof line.success === 'boolean') b.scores = { ...(b.scores ?? {}), success: line.success, ...(line.result_explanation !== undefined ? { result_explanation: line.result_explanation } : {}) };
  const instruction = str(line.instruction);
  if (instruction !== undefined) {
    b.taskText = instruction;
    // the instruction is the task; when the history has no user message holding it, it is a step of its own, first
    if (!b.steps.some((s) => s.purpose === 'task')) {
      b.steps.unshift({ kind: 'message', actor: 'user', purpose: 'task', text: instruction, source: { file, pointer: '/instruction', line: lineNo, offset } });
      b.sourceEvents++; b.mappedEvents++;
    }
  }
  const metrics = obj(line.metrics);
  const acc = accumulatedOf(metrics);
  if (acc) b.sourceUsage = usageOfAccumulated(acc, 'metrics.accumulated_token_usage', arr(metrics?.token_usages)?.length);
  const agent = str(obj(line.metadata)?.agent_class);
  if (agent) b.agent = agent;
  const llm = obj(obj(line.metadata)?.llm_config);
  if (str(llm?.model)) b.model = str(llm?.model);
  b.sample = { id, ...(line.error ? { status: 'error' } : tr && typeof tr.resolved === 'boolean' ? { status: tr.resolved ? 'resolved' : 'not resolved' } : typeof line.success === 'boolean' ? { status: line.success ? 'success' : 'failure' } : {}) };
  const md: Obj = {};
  for (const [k, v] of Object.entries(line)) if (k !== 'history' && k !== 'test_result') md[k] = v;
  b.metadata = md;
  if (line.error) b.problem('/error', `the run ended in an error: ${asText(line.error).slice(0, 200)}`, { line: lineNo }, 'info');
  return finishTrajectory(b);
}

/** A whole list of events (GUI export array or V1 events.jsonl) → one trajectory. */
export function eventListToTrajectory(events: Located[], file: string, format: 'openhands-v0' | 'openhands-v1', id: string): Trajectory {
  const b = new TrajectoryBuilder(id, format, file);
  if (format === 'openhands-v1') mapV1(b, events, file); else mapV0(b, events, file);
  if (!b.sourceUsage) {
    // a V0 export's last snapshot is its own total
    let last: Accumulated | undefined;
    for (const ev of events) last = accumulatedOf(obj(obj(ev.value)?.llm_metrics)) ?? last;
    if (last) b.sourceUsage = usageOfAccumulated(last, 'the last event\'s llm_metrics');
  }
  return finishTrajectory(b);
}

export { isObj };
