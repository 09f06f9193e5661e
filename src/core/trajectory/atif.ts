import type { NewStep } from '../steps/step';
import { finishTrajectory } from './finish';
import { arr, asText, commandOf, contentText, editsOf, extra, num, obj, ptr, stepTime, str, type Obj } from './json';
import { TrajectoryBuilder, type Trajectory } from './types';

/**
 * ATIF, the Agent Trajectory Interchange Format (harbor `docs/rfcs/0001-trajectory-format.md`):
 * `{schema_version: "ATIF-v1.x", session_id, agent, steps: [{step_id, timestamp?, source:
 * system|user|agent, message, reasoning_content?, model_name?, tool_calls?: [{tool_call_id,
 * function_name, arguments}], observation?: {results: [{source_call_id, content}]}, metrics?:
 * {prompt_tokens, completion_tokens, cached_tokens, cost_usd}}], final_metrics}`. One ATIF step is
 * one step; further tool calls of a step are kept in `extra.tool_calls`.
 */
const KNOWN = new Set(['step_id', 'timestamp', 'source', 'message', 'reasoning_content', 'model_name', 'tool_calls', 'observation', 'metrics']);

export function atifToTrajectory(d: Obj, file: string): Trajectory {
  const b = new TrajectoryBuilder(str(d.session_id) ?? file, 'atif', file);
  const steps = arr(d.steps) ?? [];
  b.sourceEvents = steps.length;
  steps.forEach((raw, i) => {
    const s = obj(raw);
    const pointer = ptr('steps', i);
    if (!s) { b.problem(pointer, 'step is not an object'); return; }
    const source = str(s.source);
    const actor: NewStep['actor'] = source === 'system' ? 'system' : source === 'user' ? 'user' : source === 'agent' ? 'agent' : 'environment';
    if (!['system', 'user', 'agent'].includes(source ?? '')) b.problem(`${pointer}/source`, `unexpected source ${JSON.stringify(s.source)}`, {}, 'info');
    const calls = (arr(s.tool_calls) ?? []).map(obj).filter((x): x is Obj => !!x);
    const first = calls[0];
    const tool = first ? str(first.function_name) ?? 'tool' : undefined;
    const results = (arr(obj(s.observation)?.results) ?? []).map(obj).filter((x): x is Obj => !!x);
    const metrics = obj(s.metrics);
    const time = stepTime(s.timestamp);
    const text = [contentText(s.message), str(s.reasoning_content) ?? ''].filter(Boolean).join('\n');
    const x = extra(s, KNOWN);
    const more = calls.length > 1 ? { tool_calls: calls.slice(1) } : undefined;
    const edits = first && tool ? editsOf(tool, first.arguments) : undefined;
    const cmd = first && tool ? commandOf(tool, first.arguments) : undefined;
    b.add({
      ...(time ? { time } : {}), kind: first ? 'tool' : 'message', actor, text,
      ...(first && tool ? { action: { tool, arguments: first.arguments, ...(cmd !== undefined ? { command: cmd } : {}), ...(str(first.tool_call_id) ? { callId: str(first.tool_call_id) } : {}) } } : {}),
      ...(results.length ? { observation: { text: results.map((r) => asText(r.content)).join('\n') } } : {}),
      ...(edits ? { edits } : {}),
      ...(metrics || s.model_name ? { model: {
        ...(str(s.model_name) ? { model: str(s.model_name) } : {}),
        ...(num(metrics?.prompt_tokens) !== undefined ? { inputTokens: num(metrics?.prompt_tokens) } : {}),
        ...(num(metrics?.completion_tokens) !== undefined ? { outputTokens: num(metrics?.completion_tokens) } : {}),
        ...(num(metrics?.cached_tokens) !== undefined ? { cacheReadTokens: num(metrics?.cached_tokens) } : {}),
        ...(num(metrics?.cost_usd) !== undefined ? { costUsd: num(metrics?.cost_usd) } : {}),
      } } : {}),
      source: { file, pointer, ...(s.step_id !== undefined ? { id: String(s.step_id) } : {}) },
      ...(x || more ? { extra: { ...(x ?? {}), ...(more ?? {}) } } : {}),
    });
    b.mappedEvents++;
  });
  b.metadata = Object.fromEntries(Object.entries(d).filter(([k]) => k !== 'steps'));
  if (!str(d.schema_version)?.startsWith('ATIF')) b.problem('/schema_version', `schema_version ${JSON.stringify(d.schema_version)} is not ATIF-v…; read as ATIF from its shape`, {}, 'info');
  return finishTrajectory(b);
}
