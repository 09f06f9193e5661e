import * as path from 'node:path';
import type { FileEdit, NewStep, Purpose } from '../steps/step';
import { addSubmission, finishTrajectory } from './finish';
import { arr, asText, contentText, count, exitCodeOf, extra, num, obj, ptr, splitThink, stepTime, str, type Obj } from './json';
import { openAiUsage } from './openhands';
import { TrajectoryBuilder, type Trajectory } from './types';

/**
 * SWE-agent `.traj` (sweagent `types.py`, `agent/agents.py` `save_trajectory`): `trajectory` of
 * `{action, observation, response, thought, state, execution_time, …}`, `history` of chat
 * messages (`role`, `content`, `thought`, `action`, `tool_calls`, `message_type`, `is_demo`),
 * `info` with `submission` (the final patch), `exit_status`, `model_stats` (`instance_cost`,
 * `tokens_sent`, `tokens_received`, `api_calls`), `replay_config`. 0.x stores `state` as JSON
 * text, 1.x as an object. Variants read: both `trajectory` and `history` (one step per
 * `trajectory` entry, the task and system prompt from `history`); only `trajectory`; only
 * `history` (the demonstration/replay form: each assistant message is a step, the message after
 * it its observation). SWE-agent records no timestamps and no per-call tokens.
 *
 * The task: `history`'s system prompt, its demonstrations (`is_demo`) and the first user message
 * that is no demonstration (the problem statement), as steps before the agent's. Edits: the
 * `str_replace_editor` tool's `old_str`/`new_str`/`file_text` (from the call's arguments), the
 * windowed `edit` tool's `search`/`replace`, and 0.x `edit N:M … end_of_edit` with the replaced
 * lines read from the last window of that file an observation showed (`N:text` lines), when it
 * showed them. The final patch is a step of its own.
 */
const TRAJ_KNOWN = new Set(['action', 'observation', 'response', 'thought', 'state', 'execution_time', 'messages', 'query', 'extra_info']);

export function sweAgentToTrajectory(d: Obj, file: string): Trajectory {
  const b = new TrajectoryBuilder(path.basename(file).replace(/\.traj(\.json)?$/, ''), 'swe-agent', file);
  const traj = arr(d.trajectory);
  const history = arr(d.history);
  const info = obj(d.info) ?? {};
  const windows = new WindowTracker();
  if (traj && traj.length > 0) {
    // the run's task from `history`: every message before the first action of the agent
    const calls: Array<Obj | undefined> = [];
    if (history) {
      let first = history.findIndex((m) => obj(m)?.role === 'assistant' && !obj(m)?.is_demo);
      if (first < 0) first = history.length;
      taskMessages(b, history.slice(0, first), 'history', file);
      for (const m of history.slice(first)) { const o = obj(m); if (o?.role === 'assistant' && !o.is_demo) calls.push(obj(arr(o.tool_calls)?.[0])); }
    }
    b.sourceEvents += traj.length;
    traj.forEach((raw, i) => {
      const t = obj(raw);
      const pointer = ptr('trajectory', i);
      if (!t) { b.problem(pointer, 'trajectory entry is not an object'); return; }
      let state: unknown = t.state;
      if (typeof state === 'string') {
        try { state = JSON.parse(state); } catch { b.problem(`${pointer}/state`, 'state is a string but not JSON (0.x stores it as JSON text)', {}, 'info'); }
      }
      const action = (str(t.action) ?? '').replace(/\n$/, '');
      const call = calls[i];
      const args = callArguments(call);
      const tool = str(obj(call?.function)?.name) ?? (action.trim().split(/\s+/)[0] || 'action');
      const openFile = str(obj(state)?.open_file);
      const edits = editsOfCall(tool, args, action, openFile, windows);
      const observation = asText(t.observation);
      windows.read(observation);
      const x = extra(t, TRAJ_KNOWN);
      const dur = num(t.execution_time);
      const text = str(t.thought) ?? str(t.response) ?? '';
      b.add({
        kind: 'tool', actor: 'agent', ...splitThink(text),
        action: { tool, command: action, arguments: args ?? action, ...(str(call?.id) ? { callId: str(call?.id) } : {}) },
        observation: { text: observation },
        ...(edits ? { edits } : {}),
        source: { file, pointer },
        extra: { ...(state !== undefined ? { state } : {}), ...(dur !== undefined ? { executionTimeMs: dur * 1000 } : {}), ...(x ?? {}) },
      });
      b.mappedEvents++;
    });
  } else if (history) {
    mapChat(b, history, 'history', file, history.some((m) => obj(m)?.role === 'tool') ? 'tool' : 'user', windows);
  }
  if (typeof info.submission === 'string') { b.patch = info.submission; addSubmission(b, info.submission, '/info/submission'); }
  b.scores = { ...(info.exit_status !== undefined ? { exit_status: info.exit_status } : {}), ...(info.resolved !== undefined ? { resolved: info.resolved } : {}) };
  b.metadata = { info: Object.fromEntries(Object.entries(info).filter(([k]) => k !== 'submission' && !/^edited_files/.test(k))), ...(d.environment !== undefined ? { environment: d.environment } : {}), ...(d.replay_config !== undefined ? { replay_config: d.replay_config } : {}) };
  b.agent = 'SWE-agent';
  const replay = typeof d.replay_config === 'string' ? safeParse(d.replay_config) : obj(d.replay_config);
  const model = str(obj(obj(obj(replay)?.agent)?.model)?.name);
  if (model) b.model = model;
  b.sample = { id: b.id, ...(info.exit_status !== undefined ? { status: asText(info.exit_status) } : {}) };
  const ms = obj(info.model_stats);
  if (ms) {
    const sent = count(ms.tokens_sent); const got = count(ms.tokens_received);
    b.sourceUsage = {
      ...(sent !== undefined ? { promptTokens: sent } : {}), ...(got !== undefined ? { outputTokens: got } : {}),
      ...(sent !== undefined || got !== undefined ? { totalTokens: (sent ?? 0) + (got ?? 0) } : {}),
      ...(count(ms.instance_cost) !== undefined ? { costUsd: count(ms.instance_cost) } : {}), ...(count(ms.api_calls) !== undefined ? { calls: count(ms.api_calls) } : {}),
      from: 'info.model_stats',
    };
  }
  if (!traj && !history) b.problem('', 'neither `trajectory` nor `history`: no steps', {}, 'warning');
  else if ((traj?.length ?? 0) === 0 && (history?.length ?? 0) === 0) b.problem('', `\`${traj ? 'trajectory' : 'history'}\` is empty: the run recorded no step`, {}, 'warning');
  return finishTrajectory(b);
}

/**
 * mini-swe-agent `.traj.json` (minisweagent `run/utils/save.py`: `{info, messages,
 * trajectory_format, instance_id}`): system and user messages are message steps (the first user
 * message is the task); each assistant message is a step whose action is its ```bash block, with
 * the user message after it (the command's output) as observation. Usage per call from the
 * message's `extra.response.usage` (OpenAI-style, `cost` beside it); `info.model_stats` holds the
 * run's cost and calls, `info.submission` the final patch.
 */
export function miniSweAgentToTrajectory(d: Obj, file: string): Trajectory {
  const id = str(d.instance_id) ?? path.basename(file).replace(/\.traj(\.json)?$/, '');
  const b = new TrajectoryBuilder(id, 'mini-swe-agent', file);
  if (str(d.instance_id)) b.task = str(d.instance_id);
  const messages = arr(d.messages) ?? [];
  mapChat(b, messages, 'messages', file, messages.some((m) => obj(m)?.role === 'tool') ? 'tool' : 'user', new WindowTracker());
  const info = obj(d.info) ?? {};
  if (typeof info.submission === 'string') { b.patch = info.submission; addSubmission(b, info.submission, '/info/submission'); }
  b.scores = info.exit_status !== undefined ? { exit_status: info.exit_status } : undefined;
  b.metadata = { info: Object.fromEntries(Object.entries(info).filter(([k]) => k !== 'submission')), ...(d.trajectory_format !== undefined ? { trajectory_format: d.trajectory_format } : {}) };
  b.agent = `mini-swe-agent${str(info.mini_version) ? ` ${str(info.mini_version)}` : ''}`;
  const model = str(obj(obj(info.config)?.model)?.model_name);
  if (model) b.model = model;
  b.sample = { id, ...(info.exit_status !== undefined ? { status: asText(info.exit_status) } : {}) };
  const ms = obj(info.model_stats);
  if (ms) b.sourceUsage = { ...(count(ms.instance_cost) !== undefined ? { costUsd: count(ms.instance_cost) } : {}), ...(count(ms.api_calls) !== undefined ? { calls: count(ms.api_calls) } : {}), from: 'info.model_stats' };
  if ((arr(d.messages) ?? []).length === 0) b.problem('/messages', '`messages` is empty: the run recorded no step', {}, 'warning');
  return finishTrajectory(b);
}

/** The messages before the agent's first action: the system prompt, demonstrations, the task. */
function taskMessages(b: TrajectoryBuilder, messages: unknown[], key: string, file: string): void {
  let task = false; let system = false;
  messages.forEach((raw, i) => {
    const m = obj(raw);
    b.sourceEvents++;
    if (!m) { b.problem(ptr(key, i), 'message is not an object'); return; }
    const role = str(m.role) ?? 'user';
    const text = contentText(m.content);
    let purpose: Purpose | undefined;
    if (m.is_demo) purpose = 'demonstration';
    else if (role === 'system' && !system) { purpose = 'system-prompt'; system = true; } else if (role === 'user' && !task) { purpose = 'task'; task = true; b.taskText = text; }
    b.add({ kind: 'message', actor: role === 'system' ? 'system' : role === 'assistant' ? 'agent' : 'user', ...(purpose ? { purpose } : {}), text, source: { file, pointer: ptr(key, i) } });
    b.mappedEvents++;
  });
}

/** Chat messages → steps: an assistant message absorbs the next message of `obsRole` as its observation. */
function mapChat(b: TrajectoryBuilder, messages: unknown[], key: string, file: string, obsRole: 'tool' | 'user', windows: WindowTracker): void {
  b.sourceEvents += messages.length;
  let last: NewStep | undefined;
  let system = false; let task = false;
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
      const call = obj(arr(m.tool_calls)?.[0]);
      const args = callArguments(call);
      const cmd = str(m.action)?.replace(/\n$/, '') ?? bashBlock(text) ?? (args ? str(obj(args)?.command) : undefined);
      const tool = str(obj(call?.function)?.name) ?? (cmd !== undefined ? cmd.trim().split(/\s+/)[0] || 'bash' : undefined);
      const resp = obj(mx?.response);
      const msg = obj(obj(arr(resp?.choices)?.[0])?.message);
      const usage = openAiUsage(obj(resp?.usage), str(resp?.model), count(obj(resp?.usage)?.cost) ?? count(mx?.cost));
      const split = splitThink(str(m.thought) ?? text, str(msg?.reasoning) ?? str(msg?.reasoning_content) ? { text: str(msg?.reasoning) ?? str(msg?.reasoning_content) } : undefined);
      const edits = tool ? editsOfCall(tool, args, cmd ?? '', undefined, windows) : undefined;
      last = b.add({ ...t, kind: tool !== undefined ? 'tool' : 'message', actor: 'agent', ...(m.is_demo ? { purpose: 'demonstration' as const } : {}), text: split.text, ...(split.reasoning ? { reasoning: split.reasoning } : {}),
        ...(tool !== undefined ? { action: { tool, ...(cmd !== undefined ? { command: cmd } : {}), ...(args !== undefined ? { arguments: args } : {}), ...(str(call?.id) ? { callId: str(call?.id) } : {}) } } : {}),
        ...(edits ? { edits } : {}), ...(usage ? { model: usage } : {}), source: { file, pointer } });
      b.mappedEvents++;
      return;
    }
    if (last && !last.observation && role === obsRole && last.action && i > 0) {
      const rc = returnCode(text);
      last.observation = { text, ...(rc !== undefined ? { exitCode: rc } : {}) };
      windows.read(text);
      b.mappedEvents++;
      last = undefined;
      return;
    }
    last = undefined;
    let purpose: Purpose | undefined;
    if (m.is_demo) purpose = 'demonstration';
    else if (role === 'system' && !system) { purpose = 'system-prompt'; system = true; } else if (role === 'user' && !task) { purpose = 'task'; task = true; b.taskText = text; }
    b.add({ ...t, kind: role === 'tool' ? 'tool' : 'message', actor: role === 'system' ? 'system' : role === 'tool' ? 'tool' : 'user', ...(purpose ? { purpose } : {}), text, source: { file, pointer } });
    b.mappedEvents++;
  });
}

/** A tool call's arguments (`function.arguments`, JSON text in OpenAI's form), parsed when they are JSON. */
function callArguments(call: Obj | undefined): unknown {
  const a = obj(call?.function)?.arguments ?? call?.arguments;
  if (typeof a !== 'string') return a;
  const parsed = safeParse(a);
  return parsed ?? a;
}

function safeParse(t: string): Obj | undefined {
  try { return obj(JSON.parse(t)); } catch { return undefined; }
}

/**
 * The edits a SWE-agent tool call carries: `str_replace_editor` (`create` file_text, `str_replace`
 * old_str/new_str, `insert` new_str after a line), the windowed `edit` (search/replace on the open
 * file), 0.x `edit N:M` (the replaced lines from the last window shown, when it showed them).
 */
function editsOfCall(tool: string, args: unknown, action: string, openFile: string | undefined, windows: WindowTracker): FileEdit[] | undefined {
  const a = obj(args);
  if (a && /str_replace_editor|edit_tool|^edit$|file_editor/.test(tool)) {
    const p = str(a.path) ?? openFile;
    const cmd = str(a.command);
    if (p && cmd === 'create' && str(a.file_text) !== undefined) return [{ path: p, op: 'create', after: str(a.file_text) }];
    if (p && cmd === 'str_replace') return [{ path: p, op: 'str_replace', before: str(a.old_str) ?? '', after: str(a.new_str) ?? '' }];
    if (p && cmd === 'insert' && str(a.new_str) !== undefined) return [{ path: p, op: `insert after line ${asText(a.insert_line)}`, after: str(a.new_str) }];
    if (p && (str(a.search) !== undefined || str(a.replace) !== undefined)) return [{ path: p, op: 'edit', before: str(a.search) ?? '', after: str(a.replace) ?? '' }];
  }
  // 0.x: `edit N:M\n<text>\nend_of_edit` on the open file
  const m = /^edit\s+(\d+):(\d+)\n([\s\S]*?)\n?end_of_edit\s*$/.exec(action.trim());
  if (m) {
    const file = openFile ?? windows.current;
    const from = Number(m[1]); const to = Number(m[2]);
    const old = file ? windows.lines(file, from, to) : undefined;
    return [{ path: file ?? '(the open file)', op: `edit lines ${from}–${to}${old === undefined ? ' (the replaced lines are not in the log)' : ''}`, ...(old !== undefined ? { before: old } : {}), after: m[3] }];
  }
  return undefined;
}

/** The file windows SWE-agent's observations show (`[File: /path (N lines total)]` then `N:text` lines), to read replaced lines back. */
class WindowTracker {
  private readonly shown = new Map<string, Map<number, string>>();
  current?: string;

  read(observation: string): void {
    const head = /\[File: ([^\]\n]+?) \(\d+ lines total\)\]/.exec(observation);
    if (!head) return;
    const file = head[1];
    this.current = file;
    const lines = this.shown.get(file) ?? new Map<number, string>();
    for (const l of observation.slice(head.index).split('\n')) {
      const x = /^(\d+):(.*)$/.exec(l.replace(/\r$/, ''));
      if (x) lines.set(Number(x[1]), x[2]);
    }
    this.shown.set(file, lines);
  }

  /** Lines `from`..`to` of `file` as last shown, or undefined when a line was not shown. */
  lines(file: string, from: number, to: number): string | undefined {
    const m = this.shown.get(file) ?? [...this.shown.entries()].find(([k]) => k.endsWith(file) || file.endsWith(k))?.[1];
    if (!m) return undefined;
    const out: string[] = [];
    for (let n = from; n <= to; n++) { const l = m.get(n); if (l === undefined) return undefined; out.push(l); }
    return out.join('\n');
  }
}

/**
 * The command of an assistant message: its last ```bash / ```sh / ```mswea_bash_command block, or
 * a `<mswea_bash_command>` element (mini-swe-agent's `action_regex` variants, `models/*.py` and
 * `config/benchmarks/swebench_xml.yaml`).
 */
function bashBlock(text: string): string | undefined {
  const all = [...text.matchAll(/```(?:bash|sh|shell|mswea_bash_command)?[^\S\n]*\n([\s\S]*?)```/g)];
  // blank lines right after the fence are not part of the block
  if (all.length) return all[all.length - 1][1].replace(/^\s*\n/, '').replace(/\n$/, '');
  const xml = [...text.matchAll(/<mswea_bash_command>([\s\S]*?)<\/mswea_bash_command>/g)];
  return xml.length ? xml[xml.length - 1][1].trim() : undefined;
}

/** The exit code an observation states (`<returncode>N</returncode>`, mini-swe-agent's templates), or undefined. */
function returnCode(text: string): number | undefined {
  const m = /<returncode>\s*(-?\d+)\s*<\/returncode>/.exec(text.slice(0, 200));
  return m ? exitCodeOf(m[1]) : undefined;
}
