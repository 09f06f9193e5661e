import { existsSync, promises as fsp } from 'node:fs';
import { ExpBenchError } from '../errors';
import { log } from '../log';
import { createPlacement } from '../placement/spec';
import { unitArgs } from '../placement/cli';
import { unfit } from '../placement/fit';
import type { Capacity, Placement, PlacementJob, PlacementRef, PlacementState, Resources } from '../placement/types';
import { ownerToken } from '../sandbox/processes';
import { findTask, loadDatasets } from '../tasks/loader';
import { errorMessage } from '../util/errors';
import { applyRecord, foldRunSet, isFinal, type RunSetView, type UnitView } from './fold';
import { conflictError, keyConflicts } from './create';
import { RunSetLayout } from './layout';
import { takeRunSet } from './lock';
import { planUnit, specDatasets, type UnitPlan } from './plan';
import { readUnitResult, type UnitResult } from './result';
import { buildReport } from './report';
import { readSessionProgress, SessionProgressReader, unitOutcome } from './session';
import { RunSetSpecSchema, specDefaults, type RunSetSpec } from './spec';
import { readRunSet, RunSetLog, type NewRecord, type RunSetRecord } from './state';

const logger = log('runs');

/** Environment names a unit gets from the orchestrator's environment (docs/placement.md `passEnv`): endpoints, keys, datasets, caches. */
export const PASS_ENV = /^(EXPBENCH_AGENT_|EXPBENCH_JUDGE_|OPENAI_|EXPBENCH_DATASETS$|EXPBENCH_CLI$|XDG_CACHE_HOME$|HOME$|PATH$|DOCKER_HOST$)/;

/** Options of {@link orchestrate}. */
export interface OrchestrateOptions {
  dir: string;
  command: 'start' | 'resume';
  /** Default: the spec's (`createPlacement`). */
  placement?: Placement;
  env?: NodeJS.ProcessEnv;
  /** Stops the run: the units are stopped cleanly and recorded `cancelled` (resume continues them). */
  signal?: AbortSignal;
  /** Every record as it is appended, with the run set as it then stands (the board). */
  onRecord?: (r: RunSetRecord, view: RunSetView) => void;
  /** How often the engine is asked for the units' states, ms (default 1000; sooner when the placement signals a change). */
  pollMs?: number;
  /** How often a running unit's session is read for its progress, ms (default 3000). */
  progressMs?: number;
  /** SIGTERM → SIGKILL grace when stopping units, ms (default 30000). */
  graceMs?: number;
}

/** What {@link orchestrate} ended with. */
export interface OrchestrateResult {
  view: RunSetView;
  /** 0: every unit done; 1: some failed, wait for resources or were cancelled. */
  exitCode: number;
  /** The report table and where each failure's log is (also written to `report.txt`). */
  report: string;
}

/**
 * Runs a run set's units until none can go on (docs/runs.md): takes the run set (orchestrator.json;
 * refused while another live process holds it), checks every unit's key against the task files and
 * curation files as they are now (a changed one refuses the run, naming the units, before anything
 * is touched), reaps what a dead orchestrator left running (placement.reap: its unit processes and
 * their containers, by recorded pid and by label), rebuilds from the units' results and sessions
 * what the state missed, marks the units that can never fit the placement as waiting, then places
 * the others (at most the spec's concurrency at once, as their resources allow), reads their states
 * back from the engine, retries harness errors with backoff, requeues interruptions, follows the
 * running units' sessions for the board, and at the end removes the run set's containers (by label
 * only) and writes the report table.
 * @throws ExpBenchError BAD_INPUT when the folder is no run set, is held by a live process, or a unit's key changed
 */
export async function orchestrate(o: OrchestrateOptions): Promise<OrchestrateResult> {
  const layout = new RunSetLayout(o.dir);
  const lock = await takeRunSet(layout.orchestrator, o.command);
  try {
    return await new Orchestrator(layout, o).run();
  } finally {
    await lock.release();
  }
}

class Orchestrator {
  private view!: RunSetView;
  private spec!: RunSetSpec;
  private placement!: Placement;
  private readonly log: RunSetLog;
  private readonly readers = new Map<string, { reader: SessionProgressReader; at: number; last: string }>();
  private readonly lastReason = new Map<string, string>();
  private stopping: 'cancel' | 'signal' | undefined;
  /** What each unit needs now: its task's environment as it is when this run places it (the key holds no resources). */
  private readonly needs = new Map<string, Resources>();
  private wake?: () => void;

  constructor(private readonly layout: RunSetLayout, private readonly o: OrchestrateOptions) {
    this.log = new RunSetLog(layout.state);
  }

  async run(): Promise<OrchestrateResult> {
    const read = await readRunSet(this.layout.state);
    const view = read ? foldRunSet(read.records) : undefined;
    if (!view) throw new ExpBenchError('BAD_INPUT', this.layout.root, 'not a run set (no runset.jsonl with a runset.created record): start one with `runs start SPEC --out DIR`');
    this.view = view;
    this.spec = RunSetSpecSchema.parse(view.spec);
    await this.checkKeys();
    this.placement = this.o.placement ?? createPlacement(this.spec.placement ?? { kind: 'local' });
    const sub = this.placement.onDidChange(() => this.wake?.());
    const onAbort = () => { this.stopping ??= 'signal'; this.wake?.(); };
    this.o.signal?.addEventListener('abort', onAbort);
    try {
      const capacity = await this.placement.capacity();
      await this.append({ type: 'orchestrator.started', owner: ownerToken(), command: this.o.command, placement: this.placement.kind, capacity: capacity.where });
      await fsp.rm(this.layout.cancel, { force: true });
      await this.reap();
      await this.rebuild();
      await this.markWaiting(capacity);
      await this.loop();
      const removed = await this.placement.cleanUp(this.view.id).catch((e) => { logger.warn(`clean-up of run set ${this.view.id}: ${errorMessage(e)}`); return []; });
      if (removed.length) logger.info(`removed ${removed.length} container(s) of run set ${this.view.id}`);
      const report = await buildReport(this.layout, this.view);
      await fsp.writeFile(this.layout.report, report + '\n');
      const c = this.view.counts;
      const exitCode = c.done === this.view.units.length ? 0 : 1;
      await this.append({ type: 'orchestrator.finished', counts: { ...c }, report: 'report.txt', exitCode });
      return { view: this.view, exitCode, report };
    } finally {
      this.o.signal?.removeEventListener('abort', onAbort);
      sub.dispose();
      if (!this.o.placement) this.placement.dispose();
    }
  }

  private needsOf(u: UnitView): Resources {
    return this.needs.get(u.unit) ?? u.resources;
  }

  private async append(r: NewRecord): Promise<void> {
    const written = await this.log.append(r);
    applyRecord(this.view, written);
    this.o.onRecord?.(written, this.view);
  }

  /** Plans every unit again from the task files as they are now: a changed key refuses the run. */
  private async checkKeys(): Promise<void> {
    const loaded = await loadDatasets(specDatasets(this.spec, this.o.env));
    const plans: UnitPlan[] = [];
    const missing: Array<{ name: string; task: string; why: string }> = [];
    for (const u of this.view.units) {
      if (isFinal(u.status)) continue;
      const task = findTask(loaded, u.task);
      if (!task) { missing.push({ name: u.name, task: u.task, why: 'the task is no longer in the datasets' }); continue; }
      const p = await planUnit(this.spec, task, u.actor, u.attempt);
      plans.push(p);
      this.needs.set(u.unit, p.resources);
    }
    const conflicts = [...missing, ...keyConflicts({ ...this.view, units: this.view.units.filter((u) => !isFinal(u.status) && !missing.some((m) => m.name === u.name)) }, plans, false)];
    if (conflicts.length) throw conflictError(this.layout.root, conflicts, 'files');
  }

  /** Units a dead orchestrator left placed: reaped (local) or kept to re-attach (a placement that outlives its submitter). */
  private async reap(): Promise<void> {
    const placed = this.view.units.filter((u) => !isFinal(u.status) && u.ref);
    if (this.placement.outlivesSubmitter || !placed.length) return;
    const report = await this.placement.reap(this.view.id, placed.map((u) => u.ref!), { graceMs: this.o.graceMs });
    const swept = await this.placement.cleanUp(this.view.id).catch(() => []);
    await this.append({ type: 'orchestrator.reaped', stopped: report.stopped, containers: [...new Set([...report.containers, ...swept])] });
    // Each reaped unit is read as it ended (its result, if it wrote one) by the poll below.
  }

  /** Units whose try left a result (or whose session is complete) that the state does not hold yet. */
  private async rebuild(): Promise<void> {
    const d = specDefaults(this.spec);
    for (const u of this.view.units) {
      if (isFinal(u.status)) continue;
      if (u.try > 0 && u.ref && !this.placement.outlivesSubmitter) {
        const [s] = await this.placement.poll([u.ref]);
        if (s.phase === 'ended') await this.ended(u, s, true);
        continue;
      }
      if (u.try === 0 && existsSync(this.layout.session(u.dir))) {
        const p = await readSessionProgress(this.layout.session(u.dir)).catch(() => undefined);
        const complete = p && p.submitted && (!d.verify || (p.verify && !p.verify.error)) && (!d.judge || (p.judge && p.judge.ok));
        if (complete) {
          await this.append({ type: 'unit.finished', unit: u.unit, try: 0, status: 'done', message: 'finished (rebuilt from its session)', outcome: await unitOutcome(this.layout.session(u.dir), p), rebuilt: true });
        }
      }
    }
  }

  private async markWaiting(capacity: Capacity): Promise<void> {
    for (const u of this.view.units) {
      if (isFinal(u.status)) continue;
      const why = unfit(this.needsOf(u), capacity);
      if (why && u.waiting !== why) await this.append({ type: 'unit.waiting', unit: u.unit, reason: why });
    }
  }

  private async loop(): Promise<void> {
    const d = specDefaults(this.spec);
    const pollMs = this.o.pollMs ?? 1000;
    for (;;) {
      if (!this.stopping && existsSync(this.layout.cancel)) this.stopping = 'cancel';
      if (this.stopping) { await this.stop(); return; }
      const now = Date.now();
      const ready = this.view.units.filter((u) => (u.status === 'pending' || u.status === 'cancelled') && !u.ref && !u.waiting && (!u.retryAfter || Date.parse(u.retryAfter) <= now));
      if (ready.length) await this.place(ready, d.concurrency);
      const placed = this.view.units.filter((u) => !isFinal(u.status) && u.ref);
      if (placed.length) {
        const states = await this.placement.poll(placed.map((u) => u.ref!));
        for (let i = 0; i < placed.length; i++) await this.observe(placed[i], states[i]);
      }
      await this.progress();
      const open = this.view.units.filter((u) => !isFinal(u.status) && !u.waiting && (u.ref || u.status === 'pending'));
      if (!open.length) return;
      const backoff = open.filter((u) => !u.ref && u.retryAfter).map((u) => Date.parse(u.retryAfter!) - Date.now());
      const wait = Math.max(20, Math.min(pollMs, ...backoff.filter((ms) => ms > 0)));
      await new Promise<void>((resolve) => {
        const t = setTimeout(resolve, wait);
        this.wake = () => { clearTimeout(t); resolve(); };
      });
      this.wake = undefined;
    }
  }

  private async place(units: UnitView[], throttle: number): Promise<void> {
    const jobs: PlacementJob[] = [];
    for (const u of units) {
      const attemptTry = u.try + 1;
      await fsp.mkdir(this.layout.exec(u.name), { recursive: true });
      jobs.push({
        runSet: this.view.id, unit: u.unit, name: `${u.task} ${u.actor.name} a${u.attempt}`, args: unitArgs(this.layout.root, u.unit, attemptTry),
        resources: this.needsOf(u), logFile: this.layout.log(u.name, attemptTry), cwd: this.layout.root,
        passEnv: Object.keys(this.o.env ?? process.env).filter((k) => PASS_ENV.test(k)),
      });
    }
    const refs = await this.placement.submit(jobs, { throttle });
    for (let i = 0; i < units.length; i++) await this.append({ type: 'unit.placed', unit: units[i].unit, try: units[i].try + 1, ref: refs[i] });
  }

  private async observe(u: UnitView, s: PlacementState): Promise<void> {
    if (s.phase === 'running') {
      if (u.status !== 'running' || u.ref?.id !== s.ref.id) await this.append({ type: 'unit.started', unit: u.unit, try: u.try, ref: s.ref, ...(s.host ? { host: s.host } : {}) });
      return;
    }
    if (s.phase === 'queued' || s.phase === 'pending') {
      const reason = s.reason ?? s.phase;
      if (this.lastReason.get(u.unit) !== reason) {
        this.lastReason.set(u.unit, reason);
        await this.append({ type: 'unit.pending', unit: u.unit, try: u.try, reason });
      }
      return;
    }
    await this.ended(u, s, false);
  }

  /** A try ended: its result decides (done, failed, retry, requeue, cancelled). */
  private async ended(u: UnitView, s: PlacementState, rebuilt: boolean): Promise<void> {
    const d = specDefaults(this.spec);
    await this.lastProgress(u);
    this.readers.delete(u.unit);
    this.lastReason.delete(u.unit);
    const result = await readUnitResult(this.layout.result(u.name, u.try));
    const log = this.layout.rel(this.layout.log(u.name, u.try));
    const stoppingNow = this.stopping !== undefined;
    const fin = (status: 'done' | 'failed', message: string, r?: UnitResult) =>
      this.append({ type: 'unit.finished', unit: u.unit, try: u.try, status, message, ...(r?.outcome ? { outcome: r.outcome } : {}), log, ...(rebuilt ? { rebuilt: true } : {}) });
    if (result?.status === 'done') return fin('done', result.message, result);
    if (result?.status === 'failed') return fin('failed', result.message, result);
    if (result?.status === 'retry' || (!result && s.end === 'exited')) {
      const reason = result?.message ?? `the unit's process exited with code ${s.exitCode ?? '?'}${s.signal ? ` (${s.signal})` : ''} and wrote no result: see ${log}`;
      if (stoppingNow) return this.append({ type: 'unit.cancelled', unit: u.unit, try: u.try });
      if (u.retries >= d.retries.max) return fin('failed', `out of retries (${d.retries.max}): ${reason}`, result);
      const waitS = Math.min(600, d.retries.backoffSeconds * 2 ** u.retries);
      return this.append({ type: 'unit.retry', unit: u.unit, try: u.try, reason, after: new Date(Date.now() + waitS * 1000).toISOString() });
    }
    // Interrupted: stopped by a signal (reap, cancel), the engine (timeout, preemption, node failure) or lost.
    if (stoppingNow) return this.append({ type: 'unit.cancelled', unit: u.unit, try: u.try });
    // A unit that only waited in a dead process's own queue never ran: placed again, not counted.
    if (!result && s.ref.id.startsWith('queued:')) return this.append({ type: 'unit.requeued', unit: u.unit, try: u.try, end: 'unstarted', ...(s.reason ? { reason: s.reason } : {}) });
    // The engine's word first (a timeout, a preemption, a node failure), else the unit's own (it was stopped), else lost.
    const end = s.end && s.end !== 'exited' && s.end !== 'cancelled' ? s.end : result?.status === 'interrupted' || s.end === 'cancelled' ? 'cancelled' : 'lost';
    if (u.requeues >= d.retries.requeues) return fin('failed', `interrupted ${u.requeues + 1} times (last: ${end}${s.reason ? `: ${s.reason}` : ''}): see ${log}`, result);
    return this.append({ type: 'unit.requeued', unit: u.unit, try: u.try, end, ...(s.reason ? { reason: s.reason } : {}) });
  }

  /** A try's last word on its session (its phase at the end, its tokens and cost), when it changed since the last reading: the board then shows where each finished unit ended. */
  private async lastProgress(u: UnitView): Promise<void> {
    if (!existsSync(this.layout.session(u.dir))) return;
    const r = this.readers.get(u.unit) ?? { reader: new SessionProgressReader(this.layout.session(u.dir)), at: 0, last: '' };
    const p = await r.reader.read().catch(() => undefined);
    if (!p) return;
    const rec = { phase: p.phase, steps: p.steps, tokens: p.tokens, costUsd: p.costUsd, workingMs: p.workingMs };
    if (JSON.stringify({ ...rec, workingMs: undefined }) === r.last) return;
    await this.append({ type: 'unit.progress', unit: u.unit, ...rec });
  }

  /** Reads each running unit's session (at most every `progressMs`) and records what changed. */
  private async progress(): Promise<void> {
    const every = this.o.progressMs ?? 3000;
    for (const u of this.view.units) {
      if (u.status !== 'running') continue;
      let r = this.readers.get(u.unit);
      if (!r) { r = { reader: new SessionProgressReader(this.layout.session(u.dir)), at: 0, last: '' }; this.readers.set(u.unit, r); }
      if (Date.now() - r.at < every) continue;
      r.at = Date.now();
      const p = await r.reader.read().catch(() => undefined);
      if (!p) continue;
      const rec = { phase: p.phase, steps: p.steps, tokens: p.tokens, costUsd: p.costUsd, workingMs: p.workingMs };
      const key = JSON.stringify({ ...rec, workingMs: undefined });
      if (key === r.last) continue;
      r.last = key;
      await this.append({ type: 'unit.progress', unit: u.unit, ...rec });
    }
  }

  /** Stops every placed unit cleanly and records it (a cancel, or the orchestrator's own signal). */
  private async stop(): Promise<void> {
    const placed = this.view.units.filter((u) => !isFinal(u.status) && u.ref);
    const refs: PlacementRef[] = placed.map((u) => u.ref!);
    if (refs.length) await this.placement.cancel(this.view.id, refs, { graceMs: this.o.graceMs });
    const states = refs.length ? await this.placement.poll(refs) : [];
    for (let i = 0; i < placed.length; i++) await this.ended(placed[i], states[i], false);
    if (this.stopping === 'cancel') {
      for (const u of this.view.units) if (u.status === 'pending' && !u.ref) await this.append({ type: 'unit.cancelled', unit: u.unit });
      await this.append({ type: 'runset.cancelled', by: 'runs cancel' });
    }
  }
}
