import type { NewStep, StepSource } from '../steps/step';
import { finishTrajectory } from './finish';
import { arr, asText, commandOf, contentText, editsOf, extra, isObj, num, obj, ptr, stepTime, str, type Obj } from './json';
import { TrajectoryBuilder, type Trajectory, type TrajectoryFormat } from './types';

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

export interface Located { value: unknown; pointer: string; line?: number; offset?: number }

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

function modelFromResponse(tcm: Obj | undefined, metrics: Obj | undefined): NewStep['model'] | undefined {
  const r = obj(tcm?.model_response);
  const u = obj(r?.usage) ?? obj(obj(metrics)?.accumulated_token_usage);
  if (!r && !u) return undefined;
  const m: NonNullable<NewStep['model']> = {};
  const model = str(r?.model) ?? str(obj(metrics)?.model_name);
  if (model) m.model = model;
  const i = num(u?.prompt_tokens); if (i !== undefined) m.inputTokens = i;
  const o = num(u?.completion_tokens); if (o !== undefined) m.outputTokens = o;
  const cr = num(u?.cache_read_input_tokens) ?? num(obj(u?.prompt_tokens_details)?.cached_tokens) ?? num(u?.cache_read_tokens); if (cr !== undefined) m.cacheReadTokens = cr;
  const cw = num(u?.cache_creation_input_tokens) ?? num(u?.cache_write_tokens); if (cw !== undefined) m.cacheWriteTokens = cw;
  return m;
}

/** Maps a V0 event list (GUI export, or one instance's history) onto a builder. */
export function mapV0(b: TrajectoryBuilder, events: Located[], file: string): void {
  const byId = new Map<string, NewStep>();
  for (const ev of events) {
    b.sourceEvents++;
    const src: StepSource = { file, pointer: ev.pointer, ...(ev.line ? { line: ev.line } : {}), ...(ev.offset !== undefined ? { offset: ev.offset } : {}) };
    if (Array.isArray(ev.value) && ev.value.length === 2) {
      // legacy flat history: [action, observation]
      b.sourceEvents++;
      const step = v0Action(obj(ev.value[0]) ?? {}, { ...src, pointer: `${ev.pointer}/0` });
      if (step) { b.add(step); b.mappedEvents++; }
      const o = obj(ev.value[1]);
      if (o && step) { mergeV0Observation(step, o); b.mappedEvents++; }
      continue;
    }
    const e = obj(ev.value);
    if (!e) { b.problem(ev.pointer, 'event is not an object', ev.line ? { line: ev.line } : {}); continue; }
    if (str(e.id) ?? num(e.id) !== undefined) src.id = String(e.id);
    if (typeof e.action === 'string') {
      const step = v0Action(e, { ...src, kind: e.action });
      if (step) { b.add(step); b.mappedEvents++; if (e.id !== undefined) byId.set(String(e.id), step); }
    } else if (typeof e.observation === 'string') {
      const target = e.cause !== undefined && e.cause !== null ? byId.get(String(e.cause)) : undefined;
      if (target) { mergeV0Observation(target, e); b.mappedEvents++; continue; }
      if (e.observation === 'null') { b.skippedEvents++; continue; }
      const time = stepTime(e.timestamp);
      const text = asText(e.content) || str(e.message) || '';
      const isErr = e.observation === 'error';
      const x = { ...(ex(e, V0_KNOWN).extra ?? {}), ...(obj(e.extras) && Object.keys(obj(e.extras)!).length ? { extras: e.extras } : {}) };
      b.add({ ...(time ? { time } : {}), kind: isErr ? 'error' : 'environment', actor: actorOf(e.source, 'environment'),
        text: e.observation === 'agent_state_changed' ? `agent state: ${asText(obj(e.extras)?.agent_state)}` : text,
        ...(isErr ? { errors: [text] } : {}), source: { ...src, kind: e.observation }, ...(Object.keys(x).length ? { extra: x } : {}) });
      b.mappedEvents++;
    } else {
      b.problem(ev.pointer, 'event has neither `action` nor `observation`; kept out of the steps', ev.line ? { line: ev.line } : {}, 'info');
    }
  }
}

function v0Action(e: Obj, source: StepSource): NewStep | null {
  const action = str(e.action) ?? 'action';
  const args = obj(e.args) ?? {};
  const time = stepTime(e.timestamp);
  const tcm = obj(e.tool_call_metadata);
  const model = modelFromResponse(tcm, obj(e.llm_metrics));
  const thought = str(args.thought) ?? '';
  const actor = actorOf(e.source, 'agent');
  // the args a row without an action does not show are kept in `extra.args`
  const shown: Record<string, string[]> = { message: ['content'], system: ['content'], think: ['thought'], change_agent_state: ['agent_state', 'thought'] };
  const rest = shown[action] ? Object.fromEntries(Object.entries(args).filter(([k, v]) => !shown[action].includes(k) && v !== '' && v !== null && v !== undefined)) : {};
  const x = { ...(ex(e, V0_KNOWN).extra ?? {}), ...(Object.keys(rest).length ? { args: rest } : {}) };
  const base = { ...(time ? { time } : {}), source, ...(model ? { model } : {}), ...(Object.keys(x).length ? { extra: x } : {}) };
  switch (action) {
    case 'message': return { ...base, kind: 'message', actor, text: str(args.content) ?? str(e.message) ?? '' };
    case 'system': return { ...base, kind: 'message', actor: 'system', text: str(args.content) ?? str(e.message) ?? '' };
    case 'think': return { ...base, kind: 'message', actor, text: thought || str(e.message) || '' };
    case 'finish': return { ...base, kind: 'message', actor, text: str(args.final_thought) || str(args.message) || (obj(args.outputs) && Object.keys(obj(args.outputs)!).length ? asText(args.outputs) : thought), action: { tool: 'finish', arguments: args } };
    case 'change_agent_state': return { ...base, kind: 'environment', actor: actorOf(e.source, 'environment'), text: `agent state → ${asText(args.agent_state)}` };
    case 'recall': return { ...base, kind: 'environment', actor: 'system', text: str(e.message) ?? 'recall', action: { tool: 'recall', arguments: args } };
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
  step.observation = { text: step.observation ? `${step.observation.text}\n${text}` : text, ...(exit !== undefined ? { exitCode: Math.trunc(exit) } : {}), ...(isErr ? { error: true } : {}) };
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
  const unknown = new Map<string, number>();
  for (const ev of events) {
    b.sourceEvents++;
    const e = obj(ev.value);
    const src: StepSource = { file, pointer: ev.pointer, ...(ev.line ? { line: ev.line } : {}), ...(ev.offset !== undefined ? { offset: ev.offset } : {}) };
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
        const text = [contentText(e.thought), str(e.reasoning_content) && !contentText(e.thought).includes(str(e.reasoning_content)!.trim()) ? str(e.reasoning_content) : ''].filter(Boolean).join('\n');
        const edits = editsOf(`${tool} ${akind}`, a);
        const isFinish = /Finish/.test(akind) || tool === 'finish';
        const step = b.add({ ...base, kind: isFinish ? 'message' : 'tool', actor: actorOf(e.source, 'agent'), ...(text || isFinish ? { text: isFinish ? str(a.message) ?? text : text } : {}),
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
        const observation = { text, ...(exit !== undefined ? { exitCode: Math.trunc(exit) } : {}), ...(isErr ? { error: true } : {}) };
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
        b.add({ ...base, kind: 'message', actor: role === 'system' ? 'system' : actorOf(e.source, role === 'assistant' ? 'agent' : 'user'), text: contentText(m.content) });
        b.mappedEvents++;
        break;
      }
      case 'SystemPromptEvent':
        b.add({ ...base, kind: 'message', actor: 'system', text: contentText(obj(e.system_prompt)?.text ?? e.system_prompt) });
        b.mappedEvents++;
        break;
      case 'ConversationStateUpdateEvent':
        if (e.key === 'execution_status') { b.add({ ...base, kind: 'environment', actor: 'environment', text: `execution status: ${asText(e.value)}` }); b.mappedEvents++; } else b.skippedEvents++;
        break;
      case 'PauseEvent': case 'Condensation': case 'CondensationRequest': case 'CondensationSummaryEvent': case 'ConversationErrorEvent':
        b.add({ ...base, kind: kind === 'ConversationErrorEvent' ? 'error' : 'environment', actor: 'environment', text: kind === 'CondensationSummaryEvent' ? asText(e.summary) : kind });
        b.mappedEvents++;
        break;
      default:
        unknown.set(kind, (unknown.get(kind) ?? 0) + 1);
    }
  }
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
  const id = str(line.instance_id) ?? (num(line.instance_id) !== undefined ? String(line.instance_id) : `line ${lineNo}`);
  const b = new TrajectoryBuilder(id, format, file);
  b.task = id;
  const located = history.map((value, i) => ({ value, pointer: ptr('history', i), line: lineNo, offset }));
  if (v1) mapV1(b, located, file); else mapV0(b, located, file);
  for (const p of b.problems) if (p.line === undefined) p.line = lineNo;
  const tr = obj(line.test_result);
  if (tr) { b.scores = tr; const gp = str(tr.git_patch); if (gp !== undefined) b.patch = gp; }
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
  return finishTrajectory(b);
}

export { isObj };
