import type { NewStep } from '../steps/step';
import { finishTrajectory } from './finish';
import { arr, asText, commandOf, contentText, count, editsOf, extra, obj, ptr, reasoningOf, stepTime, str, type Obj } from './json';
import { TrajectoryBuilder, type Trajectory } from './types';

/**
 * ATIF, the Agent Trajectory Interchange Format (harbor `docs/rfcs/0001-trajectory-format.md`,
 * v1.0–v1.7): `{schema_version: "ATIF-v1.x", session_id, agent: {name, version, model_name?},
 * steps: [{step_id, timestamp?, source: system|user|agent, message (text, or content parts from
 * v1.6), reasoning_content?, model_name?, tool_calls?: [{tool_call_id, function_name, arguments}],
 * observation?: {results: [{source_call_id, content, subagent_trajectory_ref?}]}, metrics?:
 * {prompt_tokens, completion_tokens, cached_tokens, cost_usd}, is_copied_context?, extra?}],
 * final_metrics?: {total_prompt_tokens, total_completion_tokens, total_cached_tokens,
 * total_cost_usd, total_steps}, continued_trajectory_ref?}`. ATIF's `prompt_tokens` include the
 * cached ones (the RFC; inspect_scout's ATIF reader subtracts them the same way). One ATIF step is
 * one row; each further tool call of a step is a row of its own, with the result whose
 * `source_call_id` names it.
 */
const KNOWN = new Set(['step_id', 'timestamp', 'source', 'message', 'reasoning_content', 'model_name', 'tool_calls', 'observation', 'metrics']);

export function atifToTrajectory(d: Obj, file: string): Trajectory {
  const b = new TrajectoryBuilder(str(d.session_id) ?? file, 'atif', file);
  const steps = arr(d.steps) ?? [];
  b.sourceEvents = steps.length;
  let task = false; let system = false;
  steps.forEach((raw, i) => {
    const s = obj(raw);
    const pointer = ptr('steps', i);
    if (!s) { b.problem(pointer, 'step is not an object'); return; }
    const source = str(s.source);
    const actor: NewStep['actor'] = source === 'system' ? 'system' : source === 'user' ? 'user' : source === 'agent' ? 'agent' : 'environment';
    if (!['system', 'user', 'agent'].includes(source ?? '')) b.problem(`${pointer}/source`, `unexpected source ${JSON.stringify(s.source)}`, {}, 'info');
    const calls = (arr(s.tool_calls) ?? []).map(obj).filter((x): x is Obj => !!x);
    const results = (arr(obj(s.observation)?.results) ?? []).map(obj).filter((x): x is Obj => !!x);
    const resultOf = (id: string | undefined) => results.find((r) => id !== undefined && str(r.source_call_id) === id);
    const metrics = obj(s.metrics);
    const time = stepTime(s.timestamp);
    const text = contentText(s.message);
    const reasoning = reasoningOf(str(s.reasoning_content));
    const x = extra(s, KNOWN);
    const prompt = count(metrics?.prompt_tokens); const completion = count(metrics?.completion_tokens); const cached = count(metrics?.cached_tokens);
    const model = metrics || s.model_name ? {
      ...(str(s.model_name) ? { model: str(s.model_name) } : {}),
      ...(prompt !== undefined ? { inputTokens: Math.max(0, prompt - (cached ?? 0)) } : {}),
      ...(completion !== undefined ? { outputTokens: completion } : {}),
      ...(cached ? { cacheReadTokens: cached } : {}),
      ...(prompt !== undefined || completion !== undefined ? { totalTokens: (prompt ?? 0) + (completion ?? 0) } : {}),
      ...(count(metrics?.cost_usd) !== undefined ? { costUsd: count(metrics?.cost_usd) } : {}),
    } : undefined;
    const purpose = source === 'user' && !task && !s.is_copied_context ? 'task' as const : source === 'system' && !system ? 'system-prompt' as const : undefined;
    if (purpose === 'task') { task = true; b.taskText = text; }
    if (purpose === 'system-prompt') system = true;
    const callStep = (call: Obj): Pick<NewStep, 'action' | 'edits' | 'observation'> => {
      const tool = str(call.function_name) ?? 'tool';
      const edits = editsOf(tool, call.arguments);
      const cmd = commandOf(tool, call.arguments);
      const r = resultOf(str(call.tool_call_id));
      return {
        action: { tool, arguments: call.arguments, ...(cmd !== undefined ? { command: cmd } : {}), ...(str(call.tool_call_id) ? { callId: str(call.tool_call_id) } : {}) },
        ...(edits ? { edits } : {}),
        ...(r ? { observation: { text: contentText(r.content) || asText(r.content ?? '') } } : {}),
      };
    };
    const first = calls[0] ? callStep(calls[0]) : undefined;
    // results no call names (a step without tool calls, or unmatched ids) are the first row's observation
    const unmatched = results.filter((r) => !calls.some((c) => str(c.tool_call_id) !== undefined && str(c.tool_call_id) === str(r.source_call_id)));
    const obsText = [first?.observation?.text, ...unmatched.map((r) => contentText(r.content) || asText(r.content ?? ''))].filter((t): t is string => t !== undefined).join('\n');
    b.add({
      ...(time ? { time } : {}), kind: first ? 'tool' : 'message', actor, text, ...(reasoning ? { reasoning } : {}), ...(purpose ? { purpose } : {}),
      ...(first ? { action: first.action, ...(first.edits ? { edits: first.edits } : {}) } : {}),
      ...(first?.observation || unmatched.length ? { observation: { text: obsText } } : {}),
      ...(model ? { model } : {}),
      source: { file, pointer, ...(s.step_id !== undefined ? { id: String(s.step_id) } : {}) },
      ...(x ? { extra: x } : {}),
    });
    for (let k = 1; k < calls.length; k++) {
      b.add({ ...(time ? { time } : {}), kind: 'tool', actor, ...callStep(calls[k]), source: { file, pointer: `${pointer}/tool_calls/${k}`, ...(s.step_id !== undefined ? { id: String(s.step_id) } : {}) } });
    }
    b.mappedEvents++;
  });
  b.metadata = Object.fromEntries(Object.entries(d).filter(([k]) => k !== 'steps'));
  const agent = obj(d.agent);
  if (str(agent?.name)) b.agent = `${str(agent?.name)}${str(agent?.version) ? ` ${str(agent?.version)}` : ''}`;
  if (str(agent?.model_name)) b.model = str(agent?.model_name);
  b.sample = { id: b.id };
  const fm = obj(d.final_metrics);
  if (fm) {
    const p = count(fm.total_prompt_tokens); const c = count(fm.total_completion_tokens); const cached = count(fm.total_cached_tokens);
    b.sourceUsage = {
      ...(p !== undefined ? { inputTokens: Math.max(0, p - (cached ?? 0)) } : {}), ...(c !== undefined ? { outputTokens: c } : {}),
      ...(cached !== undefined ? { cacheReadTokens: cached } : {}),
      ...(p !== undefined || c !== undefined ? { totalTokens: (p ?? 0) + (c ?? 0) } : {}),
      ...(count(fm.total_cost_usd) !== undefined ? { costUsd: count(fm.total_cost_usd) } : {}),
      from: 'final_metrics',
    };
  }
  if (!str(d.schema_version)?.startsWith('ATIF')) b.problem('/schema_version', `schema_version ${JSON.stringify(d.schema_version)} is not ATIF-v…; read as ATIF from its shape`, {}, 'info');
  if (steps.length === 0) b.problem('/steps', '`steps` is empty: the trajectory records no step', {}, 'warning');
  return finishTrajectory(b);
}
