import { chmod, mkdir, rm } from 'node:fs/promises';
import * as net from 'node:net';
import * as path from 'node:path';
import { idOfHead, readLinesFrom, writeLine } from '../channel/lines';
import type Docker from 'dockerode';
import {
  ATTESTATION_RULES, MAX_LINE_CHARS, METHODS, RUN_LOG_TAIL_CHARS, RequestSchema, type ChannelBrief, type ChannelMethod, type ChannelResponse, type SolverState,
} from '../channel/protocol';
import { ExpBenchError } from '../errors';
import { endpointFromEnv } from '../llm/endpoint';
import { log } from '../log';
import { readEvents } from '../session/events';
import { readTaskSnapshot } from '../session/marker';
import type { WorkspaceRecorder } from '../session/recorder';
import { containerExec } from '../session/runs';
import { isFinished, type SessionState } from '../session/state';
import type { Task } from '../tasks/types';
import { WorkspaceWatcher } from '../session/watcher';
import { errorMessage } from '../util/errors';
import { judgeStepOffThread } from './judge';
import { SessionService, type SessionHandle } from './sessionService';
import type { SubmitFlowOptions, SubmitFlowResult } from './submit';
import { verifyStep } from './verify';
import { readAiSettingsOnHost } from '../proctor';
import { jsonLength } from '../untrusted';

const logger = log('baselineChannel');

/** The channel's client name in `session.opened` and `baseliner.attested`. */
export const CHANNEL_CLIENT = 'solver';

/** Options of {@link startBaselineChannel}. */
export interface BaselineChannelOptions {
  /** The session folder (holds workspace/ and private/; prepared, with its task snapshot private/task.json). */
  sessionDir: string;
  /** Where to listen: `<session>/channel/session.sock` (mounted at /expbench/channel in the work container). */
  socketPath: string;
  /** The host's session service, shared with a researcher's window in this process; default: one of its own. */
  service?: SessionService;
  /** Whether this session allows AI assistance in the proctored window (default false). */
  aiAllowed?: boolean;
  /**
   * The steps after submit. Default: the verifier (clean mode, the session's recorded limits) and
   * the judge (LLM with OPENAI_* / EXPBENCH_JUDGE_* in the environment, else the heuristic pre-judge).
   */
  steps?: Pick<SubmitFlowOptions, 'verify' | 'judge'>;
  /** Called on the host with the full result (scores, gaps) after a submission's flow ends. */
  onSubmitted?: (result: SubmitFlowResult) => void;
  /**
   * The session's work container, for `runScript` (reproduce_exp_bench.sh runs there, as in the
   * researcher window); asked at each run. Without it `runScript` is refused.
   */
  workContainer?: () => Promise<Docker.Container>;
  /** Quiet time of the workspace watcher before a batch of file events is recorded, ms (default: the watcher's). */
  watchDebounceMs?: number;
  /**
   * Called after the clock was paused (`true`) or started or resumed (`false`), before the answer
   * goes back: the proctored serve pauses the work container with the clock (docker pause). A
   * failure is logged; the clock's event stays recorded.
   */
  onClock?: (paused: boolean) => Promise<void>;
}

/** A running channel. */
export interface BaselineChannel {
  /** Stops listening, closes connections, waits for a submission in flight and releases the session. */
  dispose(): Promise<void>;
  /** The full result of the last submission's flow (host side only), once it ended; undefined before. */
  lastSubmit(): Promise<SubmitFlowResult | undefined>;
  /** Records the workspace changes seen so far (without the watcher's quiet time); resolves when they are on disk. */
  flushActivity(): Promise<void>;
  /** Whether the session's clock is paused now. */
  clockPaused(): boolean;
  /** Resumes a paused clock from the host (the forwarder's paused page), in the order of the channel's requests; then `onClock(false)`. */
  resumeClock(): Promise<void>;
  /**
   * Sets a hard working-time budget (ms, a positive whole number) on the session's clock, in the
   * order of the channel's requests, and keeps a heartbeat (every {@link BUDGET_BEAT_MS}) that
   * closes the clock when it is reached: then `onClock(true)` (the container is frozen). A clock
   * already past it is paused at once. A campaign's per-person hours (campaigns/budget.ts).
   */
  setBudget(budgetMs: number): Promise<void>;
}

/** How often a channel with a hard budget checks it (ms): the clock itself never counts past the budget. */
export const BUDGET_BEAT_MS = 5_000;

/**
 * Serves the host side of a proctored session on the unix socket `opts.socketPath` (protocol:
 * src/core/channel/protocol.ts). The host is the only writer of `private/`: every request is done
 * through the session service's handle, which stamps events with the host's clock. The socket is
 * made connectable by any local user (mode 0666) because the container's user is not the host's;
 * the folder holding it is the access boundary (only the work container mounts it).
 *
 * The host also watches the session's workspace for as long as the channel runs (the core's
 * {@link WorkspaceWatcher}, as the researcher window does: caches, `.git/` and ignored files
 * excluded) and records `file.created` / `file.changed` / `file.deleted` through the session's
 * handle: edits made in the proctored window reach the host through the work container's bind mount.
 *
 * Rules enforced here, not in the window: the clock does not start before `baseliner.attested`;
 * the attestation must accept every rule of {@link ATTESTATION_RULES}; a repeated request id is
 * done once; the submit answer says "submitted" and nothing of the verifier or the judge.
 * @throws ExpBenchError `TASK_NOT_FOUND` naming the session when it has no task snapshot; what
 *   SessionService.open throws; WorkspaceWatcher.start's `GIT_FAILED` when the workspace's files
 *   cannot be listed; the listen error (e.g. EADDRINUSE when another host serves it).
 */
export async function startBaselineChannel(opts: BaselineChannelOptions): Promise<BaselineChannel> {
  const sessionDir = path.resolve(opts.sessionDir);
  const task = await readTaskSnapshot(sessionDir);
  if (!task) throw new ExpBenchError('TASK_NOT_FOUND', sessionDir, 'the session has no task snapshot private/task.json: prepare it with `expbench prepare`');
  const service = opts.service ?? new SessionService();
  const handle = await service.open(sessionDir, { client: CHANNEL_CLIENT, taskId: task.id });
  let host: ChannelHost | undefined;
  try {
    host = new ChannelHost(handle, task, opts, await readAttestation(handle));
    await host.watchWorkspace();
    await host.listen(opts.socketPath);
    return host;
  } catch (e) {
    if (host) await host.dispose().catch(() => undefined);
    else await handle.release();
    throw e;
  }
}

async function readAttestation(handle: SessionHandle): Promise<SolverState['attested']> {
  let found: SolverState['attested'] = null;
  for (const e of (await readEvents(handle.layout.events)).events) {
    if (e.type === 'baseliner.attested') found = { baseliner: e.baseliner, at: e.at };
  }
  return found;
}

/** Room for the state in one answer line: the line limit less the envelope (id, `result`, `hello`'s rules). */
const STATE_BUDGET_CHARS = MAX_LINE_CHARS - 20_000;

/** Bounded memory of answered request ids (a flushed queue may repeat the last few). */
const SEEN_LIMIT = 10_000;

/**
 * The requests that change the session or its record. Once it is submitted or given up they are
 * all refused (`SESSION_INVALID`, saying when and how it ended): what was frozen, the per-phase
 * record included, does not change afterwards. `hello` and `state` read; `attest` then only opens
 * reading, recording nothing.
 */
const CHANGES_STATE: ReadonlySet<ChannelMethod> = new Set<ChannelMethod>(['setPhase', 'setDesign', 'setConclusion', 'addNote', 'clock', 'aiSettings', 'submit', 'giveUp', 'runScript']);

/** The answer to a state-changing request on a finished session. */
function finishedRefusal(s: SessionState, root: string, method: string): ExpBenchError {
  const how = s.submitted ? 'submitted' : 'given up';
  return new ExpBenchError('SESSION_INVALID', root,
    `${method} refused: the session was ${how} at ${(s.submitted ?? s.gaveUp)!.at}; nothing of it changes after that (phase, answers, notes, clock, AI settings and runs are frozen)`);
}

class ChannelHost implements BaselineChannel {
  private server: net.Server | undefined;
  private readonly sockets = new Set<net.Socket>();
  private readonly seen = new Map<string, Promise<ChannelResponse>>();
  private submitFlow: Promise<SubmitFlowResult | undefined> = Promise.resolve(undefined);
  private serial: Promise<unknown> = Promise.resolve();
  private disposed = false;
  private readonly aiAllowed: boolean;
  private readonly recorder: WorkspaceRecorder;
  private watcher: WorkspaceWatcher | undefined;
  private running: { abort: AbortController; done: Promise<unknown> } | undefined;
  private budgetBeat: { dispose(): void } | undefined;

  constructor(private readonly handle: SessionHandle, private readonly task: Task, private readonly opts: BaselineChannelOptions,
    private attested: SolverState['attested']) {
    this.aiAllowed = opts.aiAllowed ?? false;
    this.recorder = handle.workspaceRecorder();
  }

  /** Starts the workspace watcher on the session's workspace (file events through the handle). */
  async watchWorkspace(): Promise<void> {
    this.watcher = await WorkspaceWatcher.start(this.handle.layout.workspace, this.recorder,
      this.opts.watchDebounceMs !== undefined ? { debounceMs: this.opts.watchDebounceMs } : {});
  }

  clockPaused(): boolean { return this.handle.clockStatus === 'paused'; }

  resumeClock(): Promise<void> {
    const run = async () => {
      if (this.handle.clockStatus === 'paused') await this.handle.resumeClock();
      await this.clockChanged();
    };
    const done = this.serial.then(run, run);
    this.serial = done.catch(() => undefined);
    return done;
  }

  setBudget(budgetMs: number): Promise<void> {
    const run = async () => {
      if (this.disposed) return;
      await this.handle.setBudget(budgetMs, { hard: true });
      this.budgetBeat ??= this.handle.startHeartbeat(BUDGET_BEAT_MS, (levels) => {
        if (!levels.includes(100)) return;
        const done = this.serial.then(() => this.clockChanged(), () => this.clockChanged());
        this.serial = done.catch(() => undefined);
      });
      await this.clockChanged();
    };
    const done = this.serial.then(run, run);
    this.serial = done.catch(() => undefined);
    return done;
  }

  /** Tells `onClock` the clock's state (paused or not) after a change. */
  private async clockChanged(): Promise<void> {
    await this.opts.onClock?.(this.handle.clockStatus === 'paused').catch((e: unknown) => logger.error(`the clock's container hook: ${errorMessage(e)}`));
  }

  async flushActivity(): Promise<void> {
    await this.watcher?.flush();
    await this.recorder.settled();
  }

  async listen(socketPath: string): Promise<void> {
    await mkdir(path.dirname(socketPath), { recursive: true });
    await rm(socketPath, { force: true }); // a stale socket of a host that died; a live one is refused below by the lock of the session (owner.json)
    const server = net.createServer((s) => this.accept(s));
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.listen(socketPath, () => { server.off('error', reject); resolve(); });
    });
    server.on('error', (e) => logger.error(`channel ${socketPath}: ${errorMessage(e)}`));
    this.server = server;
    await chmod(socketPath, 0o666);
    logger.info(`channel listening on ${socketPath}`);
  }

  private accept(socket: net.Socket): void {
    this.sockets.add(socket);
    socket.on('close', () => this.sockets.delete(socket));
    socket.on('error', (e) => logger.warn(`channel connection: ${errorMessage(e)}`));
    readLinesFrom(socket, (line) => {
      void this.answer(line).then((r) => { if (r) this.send(socket, r); });
    }, (head) => {
      const id = idOfHead(head);
      logger.warn(`channel connection sent a line over ${MAX_LINE_CHARS} characters${id ? ` (request ${id})` : ''}: dropped`);
      if (id) this.send(socket, { id, error: { code: 'BAD_INPUT', message: `the request is over the channel's limit of ${MAX_LINE_CHARS.toLocaleString('en-US')} characters: nothing was done; shorten it` } });
    });
  }

  /** Writes a response; one that would pass the line limit becomes an error saying so (never a line the window drops). */
  private send(socket: net.Socket, r: ChannelResponse): void {
    try {
      writeLine(socket, r);
    } catch (e) {
      writeLine(socket, { id: r.id, error: { code: 'BAD_INPUT', message: `the answer ${errorMessage(e)}` } });
    }
  }

  /** The response to one line, or undefined when it has no id to answer by. */
  private async answer(line: string): Promise<ChannelResponse | undefined> {
    let raw: unknown;
    try { raw = JSON.parse(line); } catch { return undefined; }
    const req = RequestSchema.safeParse(raw);
    if (!req.success) {
      const id = typeof (raw as { id?: unknown })?.id === 'string' ? (raw as { id: string }).id : undefined;
      return id ? { id, error: { code: 'BAD_INPUT', message: `bad request: ${req.error.issues.map((i) => `${i.path.join('.') || '(root)'}: ${i.message}`).join('; ')}` } } : undefined;
    }
    const { id, method, params } = req.data;
    const earlier = this.seen.get(id);
    if (earlier) return earlier;
    if (method === 'runScript') {
      // Not in the serial chain: edits, notes and the clock go on while the script runs.
      const response = this.run(id, method, params);
      this.seen.set(id, response);
      return response;
    }
    // One request at a time, in arrival order: a flushed queue's edits land in the order made.
    const response = (this.serial = this.serial.then(() => this.run(id, method, params), () => this.run(id, method, params))) as Promise<ChannelResponse>;
    if (method !== 'hello' && method !== 'state') {
      this.seen.set(id, response);
      if (this.seen.size > SEEN_LIMIT) this.seen.delete(this.seen.keys().next().value as string);
    }
    return response;
  }

  private async run(id: string, method: ChannelMethod, params: unknown): Promise<ChannelResponse> {
    try {
      const p = METHODS[method].params.safeParse(params ?? {});
      if (!p.success) throw new ExpBenchError('BAD_INPUT', `${method} params`, p.error.issues.map((i) => `${i.path.join('.') || '(root)'}: ${i.message}`).join('; '));
      if (this.disposed) throw new ExpBenchError('SESSION_INVALID', this.handle.layout.root, 'the host is closing this session');
      if (!this.attested && method !== 'hello' && method !== 'attest') {
        throw new ExpBenchError('BAD_INPUT', method, 'the baseliner has not attested yet: give a name or id and accept the rules first (before that the host answers only hello and attest)');
      }
      if (CHANGES_STATE.has(method) && isFinished(this.handle.state)) throw finishedRefusal(this.handle.state, this.handle.layout.root, method);
      return { id, result: await this.dispatch(method, p.data as never) };
    } catch (e) {
      const code = e instanceof ExpBenchError ? e.code : 'FAILED';
      return { id, error: { code, message: errorMessage(e) } };
    }
  }

  private async dispatch(method: ChannelMethod, p: Record<string, any>): Promise<unknown> {
    const h = this.handle;
    switch (method) {
      case 'hello': return { brief: this.brief(), state: this.state(), aiAllowed: this.aiAllowed, rules: [...ATTESTATION_RULES] };
      case 'state': return this.state();
      case 'setPhase': await h.setPhase(p.phase); break;
      case 'setDesign': h.setDesign(p.design); break;
      case 'setConclusion': h.setConclusion(p.text); break;
      case 'addNote': await h.addNote(p.text); break;
      case 'clock':
        if (p.op === 'start' && !this.attested) throw new ExpBenchError('BAD_INPUT', 'clock start', 'the baseliner has not attested yet: give a name or id and accept the rules first');
        if (p.op === 'start') await h.startClock();
        else if (p.op === 'pause') await h.pauseClock(p.reason);
        else await h.resumeClock();
        await this.clockChanged();
        break;
      case 'attest': {
        const missing = ATTESTATION_RULES.filter((r) => !p.rules.includes(r));
        if (missing.length) throw new ExpBenchError('BAD_INPUT', 'attestation', `every rule must be accepted; missing: ${missing.join(' | ')}`);
        if (isFinished(h.state)) {
          // A window reopened on a finished session: it may read the state; nothing is recorded after the outcome.
          this.attested = { baseliner: p.baseliner, at: new Date().toISOString() };
          break;
        }
        const e = await h.record({ type: 'baseliner.attested', baseliner: p.baseliner, rules: [...ATTESTATION_RULES], aiAllowed: this.aiAllowed, client: CHANNEL_CLIENT });
        this.attested = { baseliner: p.baseliner, at: e.at };
        await this.recordAiSettings();
        break;
      }
      case 'aiSettings': await this.recordAiSettings({ off: p.off, settings: p.settings }); break;
      case 'giveUp': await h.giveUp(p.reason); break;
      case 'submit': return this.submit();
      case 'runScript': return this.runScript();
    }
    return this.state();
  }

  /**
   * Starts the submit flow and answers once the answers are frozen (`submitted` recorded): the
   * verifier and the judge go on on the host, their results only in `private/` and `onSubmitted`.
   */
  private async submit(): Promise<unknown> {
    const h = this.handle;
    if (isFinished(h.state)) throw new ExpBenchError('SESSION_INVALID', h.layout.root, 'this session was already submitted or given up');
    const steps = this.opts.steps ?? defaultSteps(this.task);
    await this.flushActivity().catch((e) => logger.error(`recording workspace changes before submit: ${errorMessage(e)}`));
    let frozen!: (at: string) => void;
    const atFrozen = new Promise<string>((resolve) => { frozen = resolve; });
    const sub = h.onDidRecord((e) => { if (e.type === 'submitted') frozen(e.at); });
    const flow = h.submit({ design: h.state.design, conclusion: h.state.conclusion }, { ...steps, answersSource: 'the solver window' });
    this.submitFlow = flow.then((r) => {
      try { this.opts.onSubmitted?.(r); } catch (e) { logger.error(`onSubmitted: ${errorMessage(e)}`); }
      logger.info(`submitted; verify: ${r.verify?.summary ?? r.verify?.error ?? 'skipped'}; judge: ${r.judge?.summary ?? r.judge?.error ?? 'skipped'}`);
      return r;
    }, (e) => { logger.error(`submit flow: ${errorMessage(e)}`); return undefined; });
    try {
      const at = await Promise.race([atFrozen, flow.then(() => atFrozen)]);
      return { submitted: true, at, state: this.state() };
    } finally {
      sub.dispose();
    }
  }

  /** One run of reproduce_exp_bench.sh at a time, in the work container, recorded by the handle (`script.run`, private/runs/). */
  private async runScript(): Promise<unknown> {
    const h = this.handle;
    if (isFinished(h.state)) throw new ExpBenchError('SESSION_INVALID', h.layout.root, 'this session was already submitted or given up: no more runs');
    if (this.running) throw new ExpBenchError('BAD_INPUT', 'runScript', 'a run of reproduce_exp_bench.sh is going on: wait for it to end');
    if (h.clockStatus !== 'running') throw new ExpBenchError('BAD_INPUT', 'runScript', `the clock is ${h.clockStatus}: start or resume it first (no work happens off the clock)`);
    if (!this.opts.workContainer) throw new ExpBenchError('SESSION_INVALID', h.layout.root, 'the host has no work container for this session');
    const abort = new AbortController();
    let tail = '';
    const work = (async () => {
      await this.flushActivity().catch(() => undefined);
      const container = await this.opts.workContainer!();
      return h.runScript({
        exec: containerExec(container), signal: abort.signal,
        onOutput: (chunk) => { tail = (tail + chunk).slice(-RUN_LOG_TAIL_CHARS); },
      });
    })();
    this.running = { abort, done: work.catch(() => undefined) };
    try {
      const r = await work;
      const run = { id: r.id, startedAt: r.startedAt, exitCode: r.exitCode, durationMs: r.durationMs, ...(r.error ? { error: r.error } : {}) };
      return { run, logTail: tail, state: this.state() };
    } finally {
      this.running = undefined;
    }
  }

  private brief(): ChannelBrief {
    const t = this.task;
    return { taskId: t.id, type: t.type, question: t.question, method: t.method, agentInstructions: t.agentInstructions };
  }

  /**
   * The state as the window sees it, within the line limit: every answer carries it (and `hello` the
   * brief too), so the oldest notes (and the oldest runs) are left out, counted in `omittedNotes`,
   * once all of them would pass {@link STATE_BUDGET_CHARS}. They stay on the host; drafts are each
   * bounded by the session (LIMITS of src/core/untrusted) and are never cut.
   */
  private state(): SolverState {
    const h = this.handle;
    const s = h.state;
    const notes = s.notes.map((n) => ({ at: n.at, text: n.text }));
    const runs = s.runs.map((r) => ({ id: r.id, startedAt: r.startedAt, exitCode: r.exitCode, durationMs: r.durationMs, ...(r.error ? { error: r.error } : {}) }));
    const base = {
      phase: s.phase,
      finished: s.submitted ? 'submitted' as const : s.gaveUp ? 'gaveUp' as const : null,
      clock: { status: h.clockStatus, workingMs: h.workingMs(), budgetMs: s.clock.budgetMs },
      design: s.design, conclusion: s.conclusion,
      attested: this.attested, aiAllowed: this.aiAllowed,
    };
    const budget = STATE_BUDGET_CHARS - jsonLength(this.brief());
    let size = jsonLength(base) + jsonLength(notes) + jsonLength(runs);
    let dropNotes = 0;
    while (size > budget && dropNotes < notes.length) size -= jsonLength(notes[dropNotes++]) + 1;
    let dropRuns = 0;
    while (size > budget && dropRuns < runs.length) size -= jsonLength(runs[dropRuns++]) + 1;
    return { ...base, notes: notes.slice(dropNotes), ...(dropNotes ? { omittedNotes: dropNotes } : {}), runs: runs.slice(dropRuns) };
  }

  /**
   * Records `ai.settings` from the host's own reading of the window's settings files
   * (readAiSettingsOnHost), with what the window said as `window` (not believed).
   */
  private async recordAiSettings(window?: { off: boolean; settings: Record<string, unknown> }): Promise<void> {
    const r = await readAiSettingsOnHost(this.handle.layout);
    if (!r.off && !this.aiAllowed) logger.warn(`AI settings on in the proctored window although not allowed: ${r.on.join('; ')}`);
    if (window && window.off !== r.off) logger.warn(`the window says its AI settings are ${window.off ? 'off' : 'on'}; the host read ${r.off ? 'off' : 'on'} (recorded: the host's reading)`);
    await this.handle.record({ type: 'ai.settings', off: r.off, allowed: this.aiAllowed, settings: r.settings, source: 'host', on: r.on, checked: r.checked, ...(window ? { window } : {}) });
  }

  lastSubmit(): Promise<SubmitFlowResult | undefined> { return this.submitFlow; }

  async dispose(): Promise<void> {
    if (this.disposed) return;
    this.disposed = true;
    this.budgetBeat?.dispose();
    for (const s of this.sockets) s.destroy();
    await new Promise<void>((resolve) => (this.server ? this.server.close(() => resolve()) : resolve()));
    if (this.running) { this.running.abort.abort(); await this.running.done; }
    await this.submitFlow;
    await this.serial.catch(() => undefined);
    await this.watcher?.dispose().catch((e) => logger.error(`stopping the workspace watcher: ${errorMessage(e)}`));
    await this.recorder.settled().catch(() => undefined);
    await this.handle.release();
  }
}

/** The CLI's defaults (src/cli/commands/session.ts): verifier in clean mode, judge by the environment's endpoint or heuristic. */
function defaultSteps(task: Task): Pick<SubmitFlowOptions, 'verify' | 'judge'> {
  // the judge in a worker thread: the channel (and the forwarder beside it) keep answering meanwhile
  return { verify: verifyStep(), judge: judgeStepOffThread({ task, endpoint: endpointFromEnv('judge', process.env) }) };
}
