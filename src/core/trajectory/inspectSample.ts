import { PHASES, type Phase } from '../steps/phases';
import type { NewStep, StepExec, StepSource } from '../steps/step';
import { PHASE_SPAN_TYPE } from './inspectWrite';
import { finishTrajectory } from './finish';
import { spanTree } from './inspectSpans';
import { arr, asText, commandOf, contentText, count, editsOf, exitCodeOf, extra, isObj, num, obj, ptr, splitContent, stepTime, str, type Obj } from './json';
import { TrajectoryBuilder, type SourceUsage, type Trajectory, type TrajectoryFormat } from './types';

/**
 * One Inspect AI sample (`EvalSample`, inspect_ai `log/_log.py`) mapped onto steps. Events
 * (inspect_ai `event/_*.py`) give steps: `model` (a model call; the system/user messages of its
 * input not seen before give message steps first), `tool` (call + result), `sandbox` (an
 * environment exec/read/write), `score`, `error`, `info`, `logger`, `input`, `approval`,
 * `sample_init` (the task input), `sample_limit`, `subtask`. Structural events (`span_begin`,
 * `span_end`, `step`, `state`, `store`, `checkpoint`) give none. Message pools (`message_pool`,
 * or `events_data.messages`; `input_refs` are half-open ranges into it) and `attachment://<hash>`
 * references (the sample's `attachments`) are resolved. Spans of `type: "phase"` named after a
 * phase (`design`, `implementation`, `execution`, `conclusion`: this project's export,
 * inspectWrite.ts) give the steps inside them that phase, exactly; otherwise phases are inferred.
 */

const STRUCTURAL = new Set(['span_begin', 'span_end', 'step', 'state', 'store', 'checkpoint']);
const COMMON = ['event', 'timestamp', 'working_start', 'uuid', 'span_id', 'pending', 'metadata', 'id'];
const KNOWN: Record<string, Set<string>> = {
  model: new Set([...COMMON, 'model', 'input', 'input_refs', 'tools', 'tool_choice', 'config', 'output', 'call', 'completed', 'working_time', 'cache', 'retries', 'error', 'traceback', 'traceback_ansi', 'role']),
  tool: new Set([...COMMON, 'type', 'function', 'arguments', 'view', 'result', 'events', 'completed', 'working_time', 'error', 'truncated', 'agent', 'failed', 'message_id', 'internal', 'agent_span_id']),
  sandbox: new Set([...COMMON, 'action', 'cmd', 'options', 'file', 'input', 'result', 'output', 'completed']),
};

export interface InspectSampleContext {
  file: string;
  format: TrajectoryFormat;
  /** Zip entry the sample came from (`.eval`), or undefined for `.json` (pointer base then `/samples/<i>`). */
  entry?: string;
  /** JSON pointer of the sample in its document (`''` for a zip entry). */
  base: string;
  task?: string;
  /** Run metadata shared by every sample (model, task, status). */
  run?: Obj;
  /** The agent: the run's solver (`eval.solver`, else the plan's solver names). */
  agent?: string;
  /** The file's own token totals (`stats.model_usage` of the header), when it has them. */
  fileUsage?: SourceUsage;
}

export function inspectSampleToTrajectory(sample: Obj, c: InspectSampleContext): Trajectory {
  const sid = sample.id === undefined ? '(no id)' : String(sample.id);
  const epoch = num(sample.epoch) ?? 1;
  const b = new TrajectoryBuilder(epoch > 1 ? `${sid}#${epoch}` : sid, c.format, c.file);
  if (c.task) b.task = c.task;
  // Inspect's own migration of older samples (log/_log.py `EvalSample.migrate_deprecated`): `transcript: {events, content}`
  // holds the events and the attachments, a single `score` is the scores of one unnamed scorer
  const transcript = obj(sample.transcript);
  const attachments = obj(sample.attachments) ?? obj(transcript?.content) ?? {};
  const hasAttachments = Object.keys(attachments).length > 0;
  const resolve = (v: unknown): unknown => {
    if (!hasAttachments && typeof v !== 'string') return v;
    if (typeof v === 'string') {
      if (!v.startsWith('attachment://')) return v;
      const hit = attachments[v.slice('attachment://'.length)];
      if (typeof hit === 'string') return hit;
      b.problem(c.base, `unresolved attachment reference ${v.slice(0, 60)}`, c.entry ? { entry: c.entry } : {});
      return v;
    }
    // in place: the parsed sample is ours, and most values hold no reference
    if (Array.isArray(v)) { for (let i = 0; i < v.length; i++) { const x = v[i]; if (x !== null && typeof x === 'object' || typeof x === 'string') { const y = resolve(x); if (y !== x) v[i] = y; } } return v; }
    if (isObj(v)) { for (const k in v) { const x = v[k]; if (x !== null && typeof x === 'object' || typeof x === 'string') { const y = resolve(x); if (y !== x) v[k] = y; } } return v; }
    return v;
  };
  const eventsData = obj(sample.events_data);
  const pool = arr(sample.message_pool) ?? arr(eventsData?.messages) ?? [];
  const seen = new Set<string>();
  const src = (pointer: string, e?: Obj): StepSource => {
    const out: StepSource = { file: c.file, pointer };
    if (c.entry) out.entry = c.entry;
    if (e && typeof e.uuid === 'string') out.id = e.uuid;
    if (e && typeof e.event === 'string') out.kind = e.event;
    return out;
  };

  const events = arr(sample.events) ?? arr(transcript?.events) ?? [];
  b.sourceEvents = events.length;
  const tree = spanTree(events);
  const unknownKinds = new Map<string, number>();
  const eventsBase = `${c.base}/events/`;
  const phaseSpans = new Map<string, Phase>();
  let spanPhase: Phase | undefined;
  /** Tool span id → the tool step made of its tool event. */
  const toolSteps = new Map<string, NewStep>();
  /** Sandbox operations of a tool span, until its tool step exists. */
  const execsOf = new Map<string, StepExec[]>();
  /** Tool-call ids of the tool events, to leave them off the model steps that made the calls. */
  const toolCallIds = new Set<string>();
  const modelSteps: Array<{ step: NewStep; calls: Obj[] }> = [];
  let taskStep: NewStep | undefined;
  let systemSeen = false;
  events.forEach((raw, i) => {
    const p = eventsBase + i;
    const e = obj(raw);
    if (!e) { b.problem(p, 'event is not an object', c.entry ? { entry: c.entry } : {}); return; }
    const kind = str(e.event) ?? '(none)';
    if (kind === 'span_begin' && str(e.type) === PHASE_SPAN_TYPE && (PHASES as readonly string[]).includes(str(e.name) ?? '')) {
      spanPhase = str(e.name) as Phase;
      phaseSpans.set(str(e.id) ?? '', spanPhase);
    }
    if (STRUCTURAL.has(kind)) { b.skippedEvents++; return; }
    const phase = phaseSpans.get(str(e.span_id) ?? '') ?? spanPhase;
    const added = b.steps.length;
    const time = stepTime(e.timestamp, e.completed, e.working_time);
    const stage = tree.stageOf(i);
    const shown = tree.shownSpan(i);
    const base: Pick<NewStep, 'time' | 'stage' | 'span' | 'source'> = { source: src(p, e) };
    if (time) base.time = time;
    if (stage) base.stage = stage;
    if (shown) base.span = { id: shown, depth: tree.spans.get(shown)!.depth };
    let mapped = true;
    switch (kind) {
      case 'sample_init': {
        const s = obj(e.sample) ?? {};
        for (const m of arr(obj(e.state)?.messages) ?? []) { const id = str(obj(m)?.id); if (id) seen.add(id); }
        taskStep = b.add({ ...base, kind: 'message', actor: 'user', purpose: 'task', text: contentText(resolve(s.input)), ...(s.target !== undefined ? { extra: { target: resolve(s.target) } } : {}) });
        break;
      }
      case 'model': {
        const input = resolvedInput(e, pool);
        for (const m of input) {
          const mo = obj(resolve(m));
          if (!mo) continue;
          const role = str(mo.role);
          const id = str(mo.id);
          if (role !== 'system' && role !== 'user') continue;
          if (id && seen.has(id)) continue;
          if (id) seen.add(id);
          const purpose = role === 'system' && !systemSeen ? 'system-prompt' : role === 'user' && !taskStep ? 'task' : undefined;
          if (role === 'system') systemSeen = true;
          const m2 = b.add({ ...base, kind: 'message', actor: role, ...(purpose ? { purpose } : {}), text: contentText(mo.content) });
          if (purpose === 'task') taskStep = m2;
        }
        const out = obj(e.output) ?? {};
        const msg = obj(resolve(obj(arr(out.choices)?.[0])?.message)) ?? {};
        if (str(msg.id)) seen.add(str(msg.id)!);
        const usage = obj(out.usage) ?? {};
        const calls = (arr(msg.tool_calls) ?? []).map(obj).filter((x): x is Obj => !!x);
        const first = calls[0];
        const tool = first ? str(first.function) ?? str(obj(first.function)?.name) ?? 'tool' : undefined;
        const args = first ? first.arguments ?? obj(first.function)?.arguments : undefined;
        const content = splitContent(msg.content);
        const step = b.add({
          ...base, kind: 'model', actor: 'agent', text: content.text || str(out.completion) || '',
          ...(content.reasoning ? { reasoning: content.reasoning } : {}),
          ...(first && tool ? { action: { tool, arguments: args, ...(commandOf(tool, args) ? { command: commandOf(tool, args) } : {}), ...(str(first.id) ? { callId: str(first.id) } : {}) } } : {}),
          model: clean({ model: str(e.model) ?? str(out.model), ...inspectUsage(usage) }),
          ...errs(e.error),
          ...withExtra(e, KNOWN.model, calls.length > 1 ? { tool_calls: calls.slice(1) } : undefined),
        });
        if (calls.length) modelSteps.push({ step, calls });
        break;
      }
      case 'tool': {
        const tool = str(e.function) ?? 'tool';
        const args = resolve(e.arguments);
        const result = resolve(e.result);
        const cmd = commandOf(tool, args);
        const edits = editsOf(tool, args);
        const err = obj(e.error);
        if (str(e.id)) toolCallIds.add(str(e.id)!);
        const step = b.add({
          ...base, kind: 'tool', actor: 'tool',
          action: { tool, arguments: args, ...(cmd !== undefined ? { command: cmd } : {}), ...(str(e.id) ? { callId: str(e.id) } : {}) },
          observation: { text: contentText(result), ...(err ? { error: true } : {}) },
          ...(edits ? { edits } : {}),
          ...(err ? { errors: [String(err.message ?? asText(err))] } : {}),
          ...withExtra(e, KNOWN.tool),
        });
        const span = tree.toolSpanOf.get(i);
        if (span) toolSteps.set(span, step);
        // older logs nest the tool call's own events in it (ToolEvent.events, before spans)
        const nested = (arr(e.events) ?? []).map(obj).filter((x): x is Obj => str(x?.event) === 'sandbox');
        if (nested.length) step.execs = nested.map((x, k) => clean({ action: str(x.action) ?? 'exec', command: str(x.cmd), file: str(x.file), exitCode: (str(x.action) ?? 'exec') === 'exec' ? exitCodeOf(x.result) : undefined, output: x.output === undefined ? undefined : asText(resolve(x.output)), pointer: `${p}/events/${k}` }));
        break;
      }
      case 'sandbox': {
        const action = str(e.action) ?? 'exec';
        const cmd = str(e.cmd);
        const rc = num(e.result);
        const owner = tree.owningToolSpan(str(e.span_id));
        if (owner) {
          // folded into the tool call that ran it: no row of its own
          const x: StepExec = clean({ action, command: cmd, file: str(e.file), exitCode: action === 'exec' ? exitCodeOf(rc) : undefined, output: e.output === undefined ? undefined : asText(resolve(e.output)), durationMs: time?.durationMs, pointer: p });
          execsOf.set(owner, [...(execsOf.get(owner) ?? []), x]);
          break;
        }
        b.add({
          ...base, kind: 'environment', actor: 'environment',
          action: { tool: `sandbox.${action}`, arguments: clean({ cmd, file: str(e.file), input: resolve(e.input) }), ...(cmd ? { command: cmd } : {}) },
          observation: { text: asText(resolve(e.output)), ...(action === 'exec' && exitCodeOf(rc) !== undefined ? { exitCode: exitCodeOf(rc) } : {}) },
          ...(action === 'write_file' && str(e.file) ? { edits: [{ path: str(e.file)!, op: 'write', ...(typeof resolve(e.input) === 'string' ? { after: resolve(e.input) as string } : {}) }] } : {}),
          ...withExtra(e, KNOWN.sandbox),
        });
        break;
      }
      case 'score': {
        const s = obj(resolve(e.score)) ?? {};
        b.add({ ...base, stage: 'scoring', kind: 'score', actor: 'system', text: `score ${asText(s.value)}${s.explanation ? `: ${asText(s.explanation)}` : ''}`, extra: clean({ score: s, target: e.target, intermediate: e.intermediate }) });
        break;
      }
      case 'error': {
        const er = obj(e.error) ?? {};
        b.add({ ...base, kind: 'error', actor: 'system', text: asText(er.message ?? er), errors: [asText(er.message ?? er)], ...(er.traceback ? { extra: { traceback: er.traceback } } : {}) });
        break;
      }
      case 'logger': {
        const m = obj(e.message) ?? {};
        b.add({ ...base, kind: 'environment', actor: 'system', text: `${str(m.level) ?? 'log'}: ${asText(resolve(m.message ?? m))}` });
        break;
      }
      case 'info': b.add({ ...base, kind: 'environment', actor: 'system', text: asText(resolve(e.data)), ...(str(e.source) ? { extra: { source: e.source } } : {}) }); break;
      case 'input': b.add({ ...base, kind: 'message', actor: 'user', text: asText(resolve(e.input)) }); break;
      case 'approval': b.add({ ...base, kind: 'environment', actor: 'user', text: `approval ${asText(e.decision)}: ${asText(e.message)}`, extra: clean({ approver: e.approver, call: e.call }) }); break;
      case 'sample_limit': b.add({ ...base, kind: 'error', actor: 'system', text: `limit ${asText(e.type)}: ${asText(e.message)}`, errors: [asText(e.message)] }); break;
      case 'subtask': b.add({ ...base, kind: 'environment', actor: 'agent', text: `subtask ${asText(e.name)}`, extra: clean({ input: resolve(e.input), result: resolve(e.result) }) }); break;
      default:
        mapped = false;
        unknownKinds.set(kind, (unknownKinds.get(kind) ?? 0) + 1);
    }
    if (mapped) b.mappedEvents++;
    if (phase) for (let k = added; k < b.steps.length; k++) b.steps[k].phase = phase;
  });
  // the sandbox operations into their tool calls; a span whose tool event never came keeps them as rows
  for (const [span, xs] of execsOf) {
    const step = toolSteps.get(span);
    if (step) step.execs = xs;
  }
  // a model step whose every call has a tool event leaves the call to that event's row (one row per tool call)
  for (const m of modelSteps) {
    const ids = m.calls.map((x) => str(x.id));
    if (ids.every((id) => id && toolCallIds.has(id))) {
      delete m.step.action;
      m.step.extra = { ...(m.step.extra ?? {}), calls: m.calls.map((x) => ({ id: str(x.id), tool: str(x.function) ?? str(obj(x.function)?.name) ?? 'tool' })) };
      delete m.step.extra.tool_calls;
    }
  }
  if (phaseSpans.size > 0) b.exactPhases = true;
  for (const [k, n] of unknownKinds) b.problem(`${c.base}/events`, `unknown event kind "${k}" (${n}×), kept out of the steps`, c.entry ? { entry: c.entry } : {}, 'info');
  if (events.length === 0 && arr(sample.messages)?.length) mapMessagesOnly(b, arr(sample.messages)!, resolve, c);
  b.scores = obj(sample.scores) ?? (obj(sample.score) ? { score: sample.score } : undefined);
  const md: Obj = { epoch, ...(c.run ?? {}) };
  for (const k of ['input', 'target', 'metadata', 'model_usage', 'total_time', 'working_time', 'error', 'limit', 'uuid', 'started_at', 'completed_at']) if (sample[k] !== undefined) md[k] = k === 'input' ? contentText(resolve(sample[k])) : sample[k];
  b.metadata = md;
  b.sample = { id: sid, epoch, status: sample.error ? 'error' : obj(sample.limit) ? `limit: ${asText(obj(sample.limit)!.type)}` : 'success' };
  b.taskText = contentText(resolve(sample.input));
  if (!taskStep) { const first = b.steps.find((s) => s.actor === 'user' && s.kind === 'message'); if (first) first.purpose = 'task'; }
  if (c.agent) b.agent = c.agent;
  const usage = usageOfModelUsage(sample.model_usage, 'sample model_usage');
  if (usage) b.sourceUsage = usage;
  if (c.fileUsage) b.fileUsage = c.fileUsage;
  b.model = str(c.run?.model) ?? (usage?.byModel ? Object.keys(usage.byModel)[0] : undefined);
  // every span (a claimed tool span's tool event is shown in the span's parent, as Inspect elevates it)
  const spans = [...tree.spans.values()];
  if (spans.length) b.spans = spans;
  submissionOf(b, obj(sample.metadata), c);
  if (sample.error) b.problem(c.base + '/error', `the sample ended in an error: ${asText(obj(sample.error)?.message ?? sample.error).slice(0, 200)}`, c.entry ? { entry: c.entry } : {}, 'info');
  return finishTrajectory(b);
}

/**
 * The submission this project's export writes (src/core/trajectory/inspectWrite.ts): the frozen
 * answers and patch in the sample's `metadata.expbench`, taken as the run's answers and final
 * patch (what `session import` applies and submits). Values of another shape are a problem, not used.
 */
function submissionOf(b: TrajectoryBuilder, metadata: Obj | undefined, c: InspectSampleContext): void {
  const x = obj(metadata?.expbench);
  if (!x) return;
  const where = `${c.base}/metadata/expbench`;
  if (x.patch !== undefined) {
    if (typeof x.patch === 'string') { b.patch = x.patch; } else b.problem(`${where}/patch`, 'the exported patch is not a text: not used', c.entry ? { entry: c.entry } : {});
  }
  if (x.answers !== undefined) {
    const a = obj(x.answers);
    const design = a?.design;
    const okDesign = typeof design === 'string' || (Array.isArray(design) && design.every((d) => typeof d === 'string'));
    if (a && okDesign && typeof a.conclusion === 'string') b.answers = { design: design as string | string[], conclusion: a.conclusion };
    else b.problem(`${where}/answers`, 'the exported answers are not {design, conclusion} texts: not used', c.entry ? { entry: c.entry } : {});
  }
}

/**
 * Inspect's `model_usage` (`{model: ModelUsage}`, inspect_ai `model/_model_output.py`) summed over
 * models as a {@link SourceUsage}; undefined when it is absent or empty.
 */
export function usageOfModelUsage(v: unknown, from: string): SourceUsage | undefined {
  const mu = obj(v);
  if (!mu || Object.keys(mu).length === 0) return undefined;
  const out: SourceUsage = { from, byModel: {} };
  const add = (k: 'inputTokens' | 'outputTokens' | 'cacheReadTokens' | 'cacheWriteTokens' | 'reasoningTokens' | 'totalTokens' | 'costUsd', x: number | undefined, into: Omit<SourceUsage, 'from' | 'byModel'>) => {
    if (x === undefined) return;
    into[k] = (into[k] ?? 0) + x;
    out[k] = (out[k] ?? 0) + x;
  };
  for (const [model, raw] of Object.entries(mu)) {
    const u = obj(raw);
    if (!u) continue;
    const m: Omit<SourceUsage, 'from' | 'byModel'> = {};
    const k = inspectUsage(u);
    add('inputTokens', k.inputTokens, m); add('outputTokens', k.outputTokens, m);
    add('cacheReadTokens', k.cacheReadTokens, m); add('cacheWriteTokens', k.cacheWriteTokens, m);
    add('reasoningTokens', k.reasoningTokens, m); add('totalTokens', k.totalTokens, m); add('costUsd', k.costUsd, m);
    out.byModel![model] = m;
  }
  return out;
}

/**
 * One Inspect `ModelUsage` per token kind. Today's Inspect counts `input_tokens` without the cache
 * (`total_tokens` = input + output + cache read + cache write); older versions' OpenAI provider
 * counted them with it (`total_tokens` = input + output, `input_tokens_cache_read` inside
 * `input_tokens`: the shared browser log of inspect_ai 0.3.95). When the total says so, the cache
 * is taken out of the input, so every log's kinds mean the same; the total is the log's own.
 */
export function inspectUsage(u: Obj): { inputTokens?: number; outputTokens?: number; cacheReadTokens?: number; cacheWriteTokens?: number; reasoningTokens?: number; totalTokens?: number; costUsd?: number } {
  const input = count(u.input_tokens); const output = count(u.output_tokens);
  const cr = count(u.input_tokens_cache_read); const cw = count(u.input_tokens_cache_write); const total = count(u.total_tokens);
  const cache = (cr ?? 0) + (cw ?? 0);
  const inclusive = cache > 0 && input !== undefined && total !== undefined && input + (output ?? 0) === total && input >= cache;
  return {
    ...(input !== undefined ? { inputTokens: inclusive ? input - cache : input } : {}), ...(output !== undefined ? { outputTokens: output } : {}),
    ...(cr !== undefined ? { cacheReadTokens: cr } : {}), ...(cw !== undefined ? { cacheWriteTokens: cw } : {}),
    ...(count(u.reasoning_tokens) !== undefined ? { reasoningTokens: count(u.reasoning_tokens) } : {}),
    ...(total !== undefined ? { totalTokens: total } : {}), ...(count(u.total_cost) !== undefined ? { costUsd: count(u.total_cost) } : {}),
  };
}

/**
 * Old logs with no events (log version 1): each message is a step (the events count is the
 * messages count); an assistant message's first tool call is its action, a tool message the
 * call's result.
 */
function mapMessagesOnly(b: TrajectoryBuilder, messages: unknown[], resolve: (v: unknown) => unknown, c: InspectSampleContext): void {
  b.sourceEvents = messages.length;
  let systemSeen = false; let taskSeen = false;
  messages.forEach((m, i) => {
    const o = obj(resolve(m));
    if (!o) return;
    const role = str(o.role);
    const actor = role === 'assistant' ? 'agent' : role === 'tool' ? 'tool' : role === 'system' ? 'system' : 'user';
    const content = splitContent(o.content);
    const calls = (arr(o.tool_calls) ?? []).map(obj).filter((x): x is Obj => !!x);
    const first = calls[0];
    const tool = first ? str(first.function) ?? str(obj(first.function)?.name) ?? 'tool' : undefined;
    const args = first ? first.arguments ?? obj(first.function)?.arguments : undefined;
    const purpose = role === 'system' && !systemSeen ? 'system-prompt' : role === 'user' && !taskSeen ? 'task' : undefined;
    if (role === 'system') systemSeen = true;
    if (role === 'user') taskSeen = true;
    b.add({
      kind: role === 'tool' ? 'tool' : role === 'assistant' ? 'model' : 'message', actor, ...(purpose ? { purpose } : {}), text: content.text,
      ...(content.reasoning ? { reasoning: content.reasoning } : {}),
      ...(first && tool ? { action: { tool, arguments: args, ...(commandOf(tool, args) ? { command: commandOf(tool, args) } : {}), ...(str(first.id) ? { callId: str(first.id) } : {}) } } : {}),
      ...(role === 'tool' ? { action: { tool: str(o.function) ?? 'tool', ...(str(o.tool_call_id) ? { callId: str(o.tool_call_id) } : {}) }, observation: { text: content.text, ...(o.error ? { error: true } : {}) }, text: undefined } : {}),
      source: { file: c.file, ...(c.entry ? { entry: c.entry } : {}), pointer: `${c.base}${ptr('messages', i)}` },
    });
    b.mappedEvents++;
  });
}

function resolvedInput(e: Obj, pool: unknown[]): unknown[] {
  const inline = arr(e.input) ?? [];
  const refs = arr(e.input_refs);
  if (!refs || refs.length === 0) return inline;
  const out: unknown[] = [...inline];
  for (const r of refs) {
    const pair = arr(r);
    const s = num(pair?.[0]); const en = num(pair?.[1]);
    if (s === undefined || en === undefined) continue;
    out.push(...pool.slice(s, en));
  }
  return out;
}

/** `o` without its undefined members: a new object (deleting members would slow every later read of it). */
function clean<T extends Obj>(o: T): T {
  const out: Obj = {};
  for (const k in o) if (o[k] !== undefined) out[k] = o[k];
  return out as T;
}

/** A step's `errors` from an event's error field (absent when it has none). */
function errs(v: unknown): { errors?: string[] } {
  if (v === undefined || v === null) return {};
  const o = obj(v);
  return { errors: [o ? String(o.message ?? asText(o)) : asText(v)] };
}

function withExtra(e: Obj, known: Set<string> | undefined, add?: Obj): Pick<NewStep, 'extra'> {
  const x = known ? extra(e, known) : undefined;
  const all = x || add ? { ...(x ?? {}), ...(add ?? {}) } : undefined;
  return all ? { extra: all } : {};
}
