import * as path from 'node:path';
import type { NewStep } from '../steps/step';
import { finishTrajectory } from './finish';
import { arr, asText, contentText, extra, num, obj, ptr, stepTime, str, type Obj } from './json';
import { TrajectoryBuilder, type Trajectory } from './types';

/**
 * SWE-agent `.traj` (sweagent `types.py`: `trajectory` of `{action, observation, response, thought,
 * state, execution_time, …}`, `history` of chat messages, `info` with `submission`, `exit_status`,
 * `model_stats`). 0.x stores `state` as a JSON string, 1.x as an object; a file with only
 * `history` maps its assistant messages (each with the tool/user message after it as observation).
 * SWE-agent records no timestamps.
 */
const TRAJ_KNOWN = new Set(['action', 'observation', 'response', 'thought', 'state', 'execution_time', 'messages', 'query', 'extra_info']);

export function sweAgentToTrajectory(d: Obj, file: string): Trajectory {
  const b = new TrajectoryBuilder(path.basename(file).replace(/\.traj(\.json)?$/, ''), 'swe-agent', file);
  const traj = arr(d.trajectory);
  const info = obj(d.info) ?? {};
  if (traj && traj.length > 0) {
    b.sourceEvents = traj.length;
    traj.forEach((raw, i) => {
      const t = obj(raw);
      const pointer = ptr('trajectory', i);
      if (!t) { b.problem(pointer, 'trajectory entry is not an object'); return; }
      let state: unknown = t.state;
      if (typeof state === 'string') {
        try { state = JSON.parse(state); } catch { b.problem(`${pointer}/state`, 'state is a string but not JSON (0.x stores it as JSON text)', {}, 'info'); }
      }
      const action = str(t.action) ?? '';
      const x = extra(t, TRAJ_KNOWN);
      const dur = num(t.execution_time);
      b.add({
        kind: 'tool', actor: 'agent', text: str(t.thought) ?? str(t.response) ?? '',
        action: { tool: action.trim().split(/\s+/)[0] || 'action', command: action.replace(/\n$/, ''), arguments: action },
        observation: { text: asText(t.observation) },
        source: { file, pointer },
        extra: { ...(state !== undefined ? { state } : {}), ...(dur !== undefined ? { executionTimeMs: dur * 1000 } : {}), ...(x ?? {}) },
      });
      b.mappedEvents++;
    });
  } else {
    const history = arr(d.history) ?? [];
    mapChat(b, history, 'history', file, history.some((m) => obj(m)?.role === 'tool') ? 'tool' : 'user');
  }
  if (typeof info.submission === 'string') b.patch = info.submission;
  b.scores = { ...(info.exit_status !== undefined ? { exit_status: info.exit_status } : {}), ...(info.resolved !== undefined ? { resolved: info.resolved } : {}) };
  b.metadata = { info: Object.fromEntries(Object.entries(info).filter(([k]) => k !== 'submission' && !/^edited_files/.test(k))), ...(d.environment !== undefined ? { environment: d.environment } : {}), ...(d.replay_config !== undefined ? { replay_config: d.replay_config } : {}) };
  if (!traj && !arr(d.history)) b.problem('', 'neither `trajectory` nor `history`: no steps');
  return finishTrajectory(b);
}

/**
 * mini-swe-agent `.traj.json` (minisweagent `run/utils/save.py`: `{info, messages, trajectory_format,
 * instance_id}`): system and user messages are message steps; each assistant message is a step whose
 * action is its ```bash block, with the user message after it (the command's output) as observation.
 */
export function miniSweAgentToTrajectory(d: Obj, file: string): Trajectory {
  const id = str(d.instance_id) ?? path.basename(file).replace(/\.traj(\.json)?$/, '');
  const b = new TrajectoryBuilder(id, 'mini-swe-agent', file);
  if (str(d.instance_id)) b.task = str(d.instance_id);
  mapChat(b, arr(d.messages) ?? [], 'messages', file, 'user');
  const info = obj(d.info) ?? {};
  if (typeof info.submission === 'string') b.patch = info.submission;
  b.scores = info.exit_status !== undefined ? { exit_status: info.exit_status } : undefined;
  b.metadata = { info: Object.fromEntries(Object.entries(info).filter(([k]) => k !== 'submission')), ...(d.trajectory_format !== undefined ? { trajectory_format: d.trajectory_format } : {}) };
  return finishTrajectory(b);
}

/** Chat messages → steps: an assistant message absorbs the next message of `obsRole` as its observation. */
function mapChat(b: TrajectoryBuilder, messages: unknown[], key: string, file: string, obsRole: 'tool' | 'user'): void {
  b.sourceEvents = messages.length;
  let last: NewStep | undefined;
  messages.forEach((raw, i) => {
    const m = obj(raw);
    const pointer = ptr(key, i);
    if (!m) { b.problem(pointer, 'message is not an object'); return; }
    const role = str(m.role) ?? 'user';
    const text = contentText(m.content);
    const mx = obj(m.extra);
    const time = stepTime(m.timestamp ?? mx?.timestamp);
    const t = time ? { time } : {};
    if (role === 'assistant') {
      const cmd = str(m.action) ?? bashBlock(text);
      const resp = obj(mx?.response);
      const usage = obj(resp?.usage);
      const model = resp ? {
        ...(str(resp.model) ? { model: str(resp.model) } : {}),
        ...(num(usage?.prompt_tokens) !== undefined ? { inputTokens: num(usage?.prompt_tokens) } : {}),
        ...(num(usage?.completion_tokens) !== undefined ? { outputTokens: num(usage?.completion_tokens) } : {}),
        ...(num(mx?.cost) !== undefined ? { costUsd: num(mx?.cost) } : {}),
      } : undefined;
      last = b.add({ ...t, kind: cmd !== undefined ? 'tool' : 'message', actor: 'agent', text: str(m.thought) ?? text,
        ...(cmd !== undefined ? { action: { tool: cmd.trim().split(/\s+/)[0] || 'bash', command: cmd } } : {}),
        ...(model ? { model } : {}), source: { file, pointer } });
      b.mappedEvents++;
      return;
    }
    if (last && !last.observation && role === obsRole && last.action && i > 0) {
      last.observation = { text };
      b.mappedEvents++;
      last = undefined;
      return;
    }
    last = undefined;
    b.add({ ...t, kind: role === 'tool' ? 'tool' : 'message', actor: role === 'system' ? 'system' : role === 'tool' ? 'tool' : 'user', text, source: { file, pointer } });
    b.mappedEvents++;
  });
}

/** The last ```bash (or ```sh) block of an assistant message. */
function bashBlock(text: string): string | undefined {
  const all = [...text.matchAll(/```(?:bash|sh|shell)?[^\S\n]*\n([\s\S]*?)```/g)];
  // blank lines right after the fence are not part of the block (the fence's `\s*\n`, read once here)
  return all.length ? all[all.length - 1][1].replace(/^\s*\n/, '').replace(/\n$/, '') : undefined;
}
