import { createHash } from 'node:crypto';
import { promises as fsp } from 'node:fs';
import { ExpBenchError } from '../errors';
import type { JudgeRecord } from '../judge/types';
import { policyByName } from '../metrics/policies';
import { outcomeFromRecord, scoreTask } from '../metrics/scores';
import type { ClockState } from '../session/state';
import type { Phase } from '../steps/phases';
import type { SessionEvent } from '../steps/events';
import { writeAtomic } from '../util/fs';
import { writeZip } from './zip';

/**
 * This project's sessions (human or agent) written as an Inspect AI log, beside its reader
 * (inspect.ts, inspectSample.ts): the one place holding the writer's knowledge of the format.
 *
 * Rules from inspect_ai (github:UKGovernmentBEIS/inspect_ai at 499e615, 2026-08-22):
 * `log/_log.py` (EvalLog version 2, EvalSpec, EvalPlan, EvalResults, EvalStats, EvalSample),
 * `event/_span.py`, `_model.py`, `_tool.py`, `_sandbox.py`, `_score.py`, `_info.py` (events),
 * `log/_recorders/eval.py` (the `.eval` zip: `_journal/start.json`, `header.json` = the log
 * without samples, `samples/<id>_epoch_<n>.json`, `summaries.json`) and the published schema
 * `_view/inspect-openapi.json` (docs/trajectory-export.md lists what was checked field by field).
 *
 * One session is one sample (epoch 1) of a one-sample log. Its phases are spans
 * (`span_begin`/`span_end`, `type: "phase"`, `name` the phase); the agent's model calls are
 * `model` events (input by `input_refs` into the sample's message pool `events_data.messages`),
 * its tool calls `tool` events, the work container's runs (`reproduce_exp_bench.sh`, the person's
 * terminal commands) `sandbox` exec events, every other session event an `info` event whose
 * `source` is `expbench/<type>` and whose `data` is the event; the judge's verdicts are a `score`
 * event in a `scorer` span and the sample's `scores` (`expbench_judge`: D and I scores 0..1 and
 * the binary E, C, All, All·E under the `paper-likely` policy, src/core/metrics), the verifier's
 * `E_clean` a second score (`expbench_verify`, 1 or 0). Times: ISO 8601 UTC; `working_start` and
 * `working_time` in seconds of the session's working time (its clock); tokens are counts; cost USD.
 * The sample's `target` is empty: the task's ground truth is never written.
 */

export const INSPECT_LOG_VERSION = 2;
/** Span `type` of a phase band (a name of Inspect's own spans is never `phase`). */
export const PHASE_SPAN_TYPE = 'phase';
/** The metric policy of the judge's score (src/core/metrics/policies.ts). */
export const EXPORT_POLICY = 'paper-likely';

type Obj = Record<string, unknown>;

/** What {@link inspectLogOf} needs of one session (src/core/flows/exportInspect.ts gathers it). */
export interface InspectSessionInput {
  /** The session folder's name. */
  sessionId: string;
  taskId: string;
  /** The session's events (private/events.jsonl), in order. */
  events: SessionEvent[];
  clock: ClockState;
  /** The conclusion as saved (the sample's output). */
  conclusion: string;
  submitted: boolean;
  gaveUp: boolean;
  /** The public brief (question, method, instructions): the sample's input and the first user message. */
  brief: string;
  /** The built-in agent's system message, when the session is an agent's. */
  system?: string;
  /** The agent's tools (name, description, JSON Schema of the arguments). */
  tools?: Array<{ name: string; description: string; parameters: Record<string, unknown> }>;
  judge?: JudgeRecord;
  /** The verifier's latest record: `E_clean` and what it said. */
  verify?: { E_clean: boolean | null; summary?: string };
  /** The text of each script run's log, by run id (cut by the caller). */
  runLogs?: Record<string, string>;
  /**
   * What was frozen at submit: the harness answers (`private/answers.json`) and the patch
   * (`private/harness/patch.diff`), written as the sample's `metadata.expbench.answers` / `.patch`
   * so that `session import` of the log gets them back. Absent for a session not submitted.
   */
  submission?: { answers?: { design: string | string[]; conclusion: string }; patch?: string };
  /** This project's version (EvalSpec `packages`). */
  version?: string;
}

/** What went into the log. */
export interface InspectExportCounts {
  events: number;
  spans: number;
  model: number;
  tool: number;
  sandbox: number;
  info: number;
  scores: number;
  messages: number;
}

/** A whole Inspect log (EvalLog as JSON) and what it holds. */
export interface InspectLog {
  log: Obj;
  sample: Obj;
  counts: InspectExportCounts;
}

const uuidOf = (...parts: Array<string | number>): string => createHash('sha256').update(parts.join('\u0000')).digest('base64url').slice(0, 22);

/** Working time in seconds at wall time `ms` (the clock's segments up to it). */
function workingAt(clock: ClockState, ms: number): number {
  let total = 0;
  for (const s of clock.segments) {
    const start = Date.parse(s.start);
    if (start >= ms) break;
    const end = s.end !== undefined ? Date.parse(s.end) : Date.parse(s.lastBeat);
    total += Math.max(0, Math.min(end, ms) - start);
  }
  return total / 1000;
}

/** Keys of Inspect's `JSONSchema` (tool/_tool_params.py); `default` is always written (null when unset), as Inspect writes it. */
const SCHEMA_KEYS = ['type', 'format', 'description', 'default', 'enum', 'items', 'properties', 'additionalProperties', 'anyOf', 'required', 'examples', 'pattern', 'minimum', 'maximum', 'minLength', 'maxLength'];

/** A JSON Schema of a tool argument in the form of Inspect's `JSONSchema` (other keywords left out). */
function inspectSchema(v: unknown): Obj {
  const o = (v !== null && typeof v === 'object' ? v : {}) as Obj;
  const r: Obj = { default: o.default ?? null };
  for (const k of SCHEMA_KEYS) {
    if (o[k] === undefined || k === 'default') continue;
    if (k === 'items' || (k === 'additionalProperties' && typeof o[k] === 'object')) r[k] = inspectSchema(o[k]);
    else if (k === 'properties') r[k] = Object.fromEntries(Object.entries(o[k] as Obj).map(([p, x]) => [p, inspectSchema(x)]));
    else if (k === 'anyOf') r[k] = (o[k] as unknown[]).map(inspectSchema);
    else r[k] = o[k];
  }
  return r;
}

const STOP: Record<string, string> = { stop: 'stop', tool_calls: 'tool_calls', length: 'max_tokens', content_filter: 'content_filter' };

function parseArgs(text: string): { args: Obj; error?: string } {
  try {
    const v = JSON.parse(text) as unknown;
    return v !== null && typeof v === 'object' && !Array.isArray(v) ? { args: v as Obj } : { args: {}, error: 'the arguments are not a JSON object' };
  } catch (e) {
    return { args: {}, error: `the arguments are not JSON: ${(e as Error).message}` };
  }
}

/** The session's model usage (ModelUsage per model) from its `agent.model_call` events. */
function modelUsage(events: SessionEvent[]): Record<string, Obj> {
  const by: Record<string, { input_tokens: number; output_tokens: number; total_tokens: number; input_tokens_cache_read: number; total_cost: number | null }> = {};
  for (const e of events) {
    if (e.type !== 'agent.model_call') continue;
    const u = by[e.model] ??= { input_tokens: 0, output_tokens: 0, total_tokens: 0, input_tokens_cache_read: 0, total_cost: null };
    // Inspect's input_tokens leave the cache reads out (ModelUsage); the agent's prompt count holds them
    u.input_tokens += e.inputTokens - (e.cachedTokens ?? 0); u.output_tokens += e.outputTokens; u.total_tokens += e.inputTokens + e.outputTokens;
    u.input_tokens_cache_read += e.cachedTokens ?? 0;
    if (e.costUsd !== null) u.total_cost = (u.total_cost ?? 0) + e.costUsd;
  }
  return by;
}

/** The judge's and the verifier's scores (Inspect `Score` by scorer name). */
function scoresOf(input: InspectSessionInput): Record<string, Obj> {
  const out: Record<string, Obj> = {};
  if (input.judge) {
    const s = scoreTask(outcomeFromRecord(input.judge, 'export', 'private/judge/latest.json'), policyByName(EXPORT_POLICY));
    const bool = (b: boolean | null) => (b === null ? null : b);
    out.expbench_judge = {
      value: { D: s.D, I: s.I, E: bool(s.correct.E), C: bool(s.correct.C), All: bool(s.correct.All), AllE: bool(s.correct.AllE) },
      answer: input.conclusion || null,
      explanation: `${input.judge.kind} judge, policy ${EXPORT_POLICY}: design ${input.judge.design.status}, implementation ${input.judge.implementation.status}, conclusion ${input.judge.conclusion.status}${Object.keys(s.excluded).length ? `; not computable: ${Object.entries(s.excluded).map(([k, v]) => `${k} (${v})`).join(', ')}` : ''}`,
      metadata: { kind: input.judge.kind, model: input.judge.model, policy: EXPORT_POLICY, record: 'private/judge/latest.json', monitorFlagged: input.judge.monitor.flagged },
      history: [],
    };
  }
  if (input.verify && input.verify.E_clean !== null) {
    out.expbench_verify = { value: input.verify.E_clean ? 1 : 0, answer: null, explanation: input.verify.summary ?? null, metadata: { E_clean: input.verify.E_clean, record: 'private/verify/latest.json' }, history: [] };
  }
  return out;
}

/**
 * The session as an Inspect log (see the module comment for the mapping).
 * @throws ExpBenchError BAD_INPUT (input `events`) when the session has no events
 */
export function inspectLogOf(input: InspectSessionInput): InspectLog {
  const { events, clock } = input;
  if (events.length === 0) throw new ExpBenchError('BAD_INPUT', 'events', `session ${input.sessionId} has no events to export`);
  const counts: InspectExportCounts = { events: 0, spans: 0, model: 0, tool: 0, sandbox: 0, info: 0, scores: 0, messages: 0 };
  const agentModels = [...new Set(events.flatMap((e) => (e.type === 'agent.model_call' ? [e.model] : [])))];
  const isAgent = agentModels.length > 0;
  const model = agentModels[0] ?? 'none/human';
  const out: Obj[] = [];
  const pool: Obj[] = [];
  if (input.system) pool.push({ id: uuidOf(input.sessionId, 'system'), role: 'system', content: input.system, source: 'input' });
  pool.push({ id: uuidOf(input.sessionId, 'brief'), role: 'user', content: input.brief, source: 'input' });
  const tools = (input.tools ?? []).map((t) => ({
    name: t.name, description: t.description,
    parameters: {
      type: 'object', properties: Object.fromEntries(Object.entries((t.parameters.properties as Obj | undefined) ?? {}).map(([k, v]) => [k, inspectSchema(v)])),
      required: (t.parameters.required as string[] | undefined) ?? [], additionalProperties: false,
    },
  }));
  const at = (iso: string, minusMs = 0) => {
    const ms = Date.parse(iso) - minusMs;
    return { timestamp: new Date(ms).toISOString(), working_start: workingAt(clock, ms) };
  };
  let n = 0;
  const push = (e: Obj): void => { out.push({ ...e, uuid: uuidOf(input.sessionId, n++), metadata: (e.metadata as Obj | undefined) ?? null }); counts.events++; };

  // phase spans: `design` from the start, a new span at each phase.changed
  let phase: Phase = 'design';
  let span = '';
  let spanNo = 0;
  const open = (p: Phase, iso: string): void => {
    span = `phase-${++spanNo}-${p}`;
    push({ event: 'span_begin', id: span, parent_id: null, type: PHASE_SPAN_TYPE, name: p, span_id: span, ...at(iso) });
    counts.spans++;
  };
  const close = (iso: string): void => { push({ event: 'span_end', id: span, span_id: span, ...at(iso) }); };
  open(phase, events[0].at);

  // a model call's tool calls are the agent.tool_call events that follow it, as many as it asked for
  const callIds = new Map<number, string>();
  const callsOf = new Map<number, number[]>();
  let cur = -1;
  let left = 0;
  events.forEach((e, i) => {
    if (e.type === 'agent.model_call') { cur = i; left = e.error ? 0 : e.toolCalls?.length ?? 0; callsOf.set(i, []); return; }
    if (e.type !== 'agent.tool_call' || e.client || left === 0) return;
    const mine = callsOf.get(cur)!;
    callIds.set(i, e.callId ?? `call_${cur}_${mine.length}`);
    mine.push(i);
    left--;
  });
  const toolCallsOf = (i: number): Obj[] => (callsOf.get(i) ?? []).map((j) => {
    const t = events[j] as Extract<SessionEvent, { type: 'agent.tool_call' }>;
    const p = parseArgs(t.arguments);
    return { id: callIds.get(j)!, function: t.tool, arguments: p.args, type: 'function', ...(p.error ? { parse_error: p.error } : {}) };
  });

  let lastOutput: Obj | undefined;
  events.forEach((e, i) => {
    switch (e.type) {
      case 'phase.changed':
        close(e.at);
        phase = e.to;
        open(phase, e.at);
        return;
      case 'clock.started': case 'clock.paused': case 'clock.resumed': case 'clock.actor':
        return; // the clock's bookkeeping: in the working times
      case 'agent.model_call': {
        const calls = e.error ? [] : toolCallsOf(i);
        const message: Obj = { id: uuidOf(input.sessionId, 'msg', i), role: 'assistant', content: e.text ?? '', source: 'generate', model: e.model, tool_calls: calls.length ? calls : null };
        const output: Obj = {
          model: e.model,
          choices: e.error ? [] : [{ message, stop_reason: STOP[e.finishReason ?? ''] ?? 'unknown' }],
          completion: e.text ?? '',
          usage: { input_tokens: e.inputTokens - (e.cachedTokens ?? 0), output_tokens: e.outputTokens, total_tokens: e.inputTokens + e.outputTokens, ...(e.cachedTokens !== undefined ? { input_tokens_cache_read: e.cachedTokens } : {}), total_cost: e.costUsd },
          time: e.durationMs / 1000,
          ...(e.error ? { error: e.error } : {}),
        };
        push({
          event: 'model', model: e.model, input: [], input_refs: [[0, pool.length]], tools, tool_choice: 'auto', config: {}, output,
          ...(e.error ? { error: e.error } : {}), ...(e.retry !== undefined ? { metadata: { retried: e.retry } } : {}),
          ...at(e.at, e.durationMs), completed: new Date(Date.parse(e.at)).toISOString(), working_time: e.durationMs / 1000, span_id: span,
        });
        counts.model++;
        if (!e.error) { pool.push(message); lastOutput = output; }
        return;
      }
      case 'agent.tool_call': {
        const id = callIds.get(i) ?? e.callId ?? `call_${i}`;
        const p = parseArgs(e.arguments);
        push({
          event: 'tool', type: 'function', id, function: e.tool, arguments: p.args, result: e.result, events: [],
          error: e.error ? { type: 'unknown', message: e.error } : null,
          ...at(e.at, e.durationMs), completed: new Date(Date.parse(e.at)).toISOString(), working_time: e.durationMs / 1000, span_id: span,
          ...(e.client || p.error || e.exitCode !== undefined ? { metadata: { ...(e.exitCode !== undefined ? { exit_code: e.exitCode } : {}), ...(e.client ? { client: e.client, via: e.via ?? null } : {}), ...(p.error ? { arguments_text: e.arguments } : {}) } } : {}),
        });
        counts.tool++;
        if (callIds.has(i)) pool.push({ id: uuidOf(input.sessionId, 'msg', i), role: 'tool', content: e.result, tool_call_id: id, function: e.tool, source: 'input', ...(e.error ? { error: { type: 'unknown', message: e.error } } : {}) });
        return;
      }
      case 'script.run': case 'command.run': {
        const cmd = e.type === 'script.run' ? 'bash reproduce_exp_bench.sh' : e.command;
        const output = e.type === 'script.run' ? input.runLogs?.[e.runId] ?? `log: ${e.log}` : e.outputExcerpt;
        push({
          event: 'sandbox', action: 'exec', cmd, options: e.type === 'command.run' && e.cwd ? { cwd: e.cwd } : e.type === 'script.run' ? { cwd: '/workspace' } : null,
          result: e.exitCode, output, ...at(e.at, e.durationMs), completed: new Date(Date.parse(e.at)).toISOString(), span_id: span,
          metadata: e.type === 'script.run' ? { run_id: e.runId, log: e.log, ...(e.error ? { error: e.error } : {}) } : { actor: 'human' },
        });
        counts.sandbox++;
        return;
      }
      default: {
        const { v: _v, at: iso, ...data } = e;
        push({ event: 'info', source: `expbench/${e.type}`, data, ...at(iso), span_id: span });
        counts.info++;
      }
    }
  });
  const last = events[events.length - 1].at;
  close(last);

  const scores = scoresOf(input);
  if (Object.keys(scores).length) {
    const s = 'scorers';
    push({ event: 'span_begin', id: s, parent_id: null, type: 'scorers', name: 'scorers', span_id: s, ...at(last) });
    for (const [name, score] of Object.entries(scores)) {
      push({ event: 'score', score, target: null, intermediate: false, scorer: name, span_id: s, ...at(last) });
      counts.scores++;
    }
    push({ event: 'span_end', id: s, span_id: s, ...at(last) });
  }
  counts.messages = pool.length;

  const started = events[0].at;
  const usage = modelUsage(events);
  const workingS = workingAt(clock, Date.parse(last) + 1);
  const totalS = (Date.parse(last) - Date.parse(started)) / 1000;
  const byActor = { human: 0, agent: 0 };
  for (const seg of clock.segments) byActor[seg.actor ?? 'human'] += Math.max(0, (seg.end !== undefined ? Date.parse(seg.end) : Date.parse(seg.lastBeat)) - Date.parse(seg.start));
  const sampleMeta: Obj = {
    expbench: {
      session: input.sessionId, task: input.taskId, solver: isAgent ? 'agent' : 'human', submitted: input.submitted, gaveUp: input.gaveUp, workingMs: Math.round(workingS * 1000), byActorMs: byActor, phaseSpanType: PHASE_SPAN_TYPE,
      ...(input.submission?.answers ? { answers: input.submission.answers } : {}), ...(input.submission?.patch !== undefined ? { patch: input.submission.patch } : {}),
    },
  };
  const conclusionMsg: Obj = { id: uuidOf(input.sessionId, 'conclusion'), role: 'assistant', content: input.conclusion, source: 'generate', model, tool_calls: null };
  const output: Obj = lastOutput && !input.conclusion ? lastOutput : { model, choices: [{ message: conclusionMsg, stop_reason: 'stop' }], completion: input.conclusion, usage: null, time: null };
  const sample: Obj = {
    id: input.taskId, epoch: 1, input: input.brief, target: '', messages: pool, output, scores: Object.keys(scores).length ? scores : null,
    metadata: sampleMeta, store: {}, events: out, events_data: { messages: pool, calls: [] }, model_usage: usage, role_usage: {},
    total_time: totalS, working_time: workingS, uuid: uuidOf(input.sessionId, 'sample'), error: null, attachments: {}, limit: null,
    started_at: started, completed_at: last,
  };
  const status = input.submitted ? 'success' : input.gaveUp ? 'cancelled' : 'started';
  const spec: Obj = {
    eval_id: uuidOf(input.sessionId, 'eval'), run_id: uuidOf(input.sessionId, 'run'), created: started,
    task: input.taskId, task_id: uuidOf(input.taskId, 'task'), task_version: 0, task_display_name: input.taskId, task_attribs: {}, task_args: {}, task_args_passed: {},
    solver: isAgent ? 'expbench/agent' : 'expbench/human', solver_args: {},
    dataset: { name: input.taskId.split('/').slice(0, -1).join('/') || input.taskId, samples: 1, sample_ids: [input.taskId], shuffled: false },
    model, model_generate_config: {}, model_args: {}, config: {}, packages: { 'expbench-workbench': input.version ?? 'unknown' },
    metadata: { expbench: { session: input.sessionId, exporter: 'src/core/trajectory/inspectWrite.ts' } },
  };
  const metric = (name: string, value: number) => ({ name, value, params: {} });
  const results: Obj = {
    total_samples: 1, completed_samples: input.submitted ? 1 : 0,
    scores: Object.entries(scores).map(([name, s]) => {
      const v = s.value;
      const metrics: Record<string, Obj> = {};
      if (typeof v === 'number') metrics.value = metric('value', v);
      else for (const [k, x] of Object.entries(v as Obj)) if (typeof x === 'number' || typeof x === 'boolean') metrics[k] = metric(k, Number(x));
      return { name, scorer: name, params: {}, metrics, scored_samples: 1, unscored_samples: 0 };
    }),
  };
  const log: Obj = {
    version: INSPECT_LOG_VERSION, status, eval: spec,
    plan: { name: 'plan', steps: [{ solver: isAgent ? 'expbench/agent' : 'expbench/human', params: {}, params_passed: {} }], config: {} },
    results, stats: { started_at: started, completed_at: last, model_usage: usage, role_usage: {}, connection_limit_history: [] },
    invalidated: false, tags: [], metadata: {}, error: null, samples: [sample],
  };
  return { log, sample, counts };
}

/** A sample's metadata as its summary holds it: the patch (any size) left out, its length said (the sample's own entry keeps it). */
function summaryMetadata(md: Obj): Obj {
  const x = md?.expbench as Obj | undefined;
  if (!x || typeof x.patch !== 'string') return md;
  const { patch, ...rest } = x;
  return { ...md, expbench: { ...rest, patchChars: patch.length } };
}

/** The `.eval` entry name of a sample (`samples/<id>_epoch_<n>.json`; characters other than letters, digits, `.`, `-`, `_` in the id become `_`, so that the entry stays flat). */
export function sampleEntryName(id: string, epoch: number): string {
  return `samples/${id.replace(/[^\w.-]/g, '_')}_epoch_${epoch}.json`;
}

/**
 * Writes `log` to `file`: `inspect-json` as one JSON document (Inspect's `.json` log),
 * `inspect-eval` as the zip of Inspect's eval recorder (`_journal/start.json`, `header.json`, one
 * entry per sample, `summaries.json`). The file is replaced whole (written beside it, renamed; on a
 * failure the old file stays and no temp file is left: util/fs.ts `writeAtomic`).
 * @returns the file's size, bytes
 * @throws ExpBenchError BAD_INPUT naming `file` when it cannot be written (the disk full, a folder, …)
 */
export async function writeInspectLog(log: Obj, file: string, format: 'inspect-eval' | 'inspect-json'): Promise<number> {
  if (format === 'inspect-json') {
    await writeAtomic(file, JSON.stringify(log, null, 2) + '\n');
  } else {
    const { samples, ...header } = log as Obj & { samples: Obj[] };
    const json = (v: unknown) => Buffer.from(JSON.stringify(v), 'utf8');
    const summaries = samples.map((s) => ({
      id: s.id, epoch: s.epoch, input: s.input, target: s.target, metadata: summaryMetadata(s.metadata as Obj), scores: s.scores, model_usage: s.model_usage, role_usage: s.role_usage,
      total_time: s.total_time, working_time: s.working_time, uuid: s.uuid, error: null, limit: null, started_at: s.started_at, completed_at: s.completed_at,
      message_count: (s.messages as unknown[]).length, retries: 0, completed: true,
    }));
    await writeZip(file, [
      { name: '_journal/start.json', data: json({ version: header.version, eval: header.eval, plan: header.plan }) },
      ...samples.map((s) => ({ name: sampleEntryName(String(s.id), Number(s.epoch)), data: json(s) })),
      { name: 'summaries.json', data: json(summaries) },
      { name: 'header.json', data: json(header) },
    ]);
  }
  return (await fsp.stat(file)).size;
}
