import { execFile, spawn } from 'node:child_process';
import { closeSync, openSync, promises as fsp, writeFileSync } from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { promisify } from 'node:util';
import type Docker from 'dockerode';
import { ExpBenchError } from '../errors';
import { log } from '../log';
import { connectDocker, ENV_RUNSET, ENV_RUNSET_UNIT, gpusAvailable, listRunSetContainers, LABEL_UNIT, removeContainer } from '../sandbox';
import { ownerGone, ownerToken } from '../sandbox/processes';
import { Emitter } from '../util/emitter';
import { errorMessage } from '../util/errors';
import { projectCli, type CliEntry } from './cli';
import { busy, minus, plus, unfit } from './fit';
import type { Amounts, Capacity, Placement, PlacementJob, PlacementRef, PlacementState, StopReport, SubmitOptions } from './types';

const logger = log('placement');
const execFileP = promisify(execFile);

/** Environment name under which a local unit's process learns where to write its exit record. */
export const ENV_EXIT_FILE = 'EXPBENCH_PLACEMENT_EXIT_FILE';

/** The exit record of a local unit's process: `<log>.exit.json`. */
export function exitFileOf(logFile: string): string {
  return `${logFile}.exit.json`;
}

/** What `<log>.exit.json` holds: written by the unit's process at its exit, or by the process that watched it end. */
export interface ExitRecord {
  exitCode: number | null;
  signal: string | null;
  at: string;
  /** Set when {@link LocalPlacement.reap} or {@link LocalPlacement.cancel} stopped it, or its time limit ran out (`timeout`). */
  stoppedBy?: 'reap' | 'cancel' | 'timeout';
}

/**
 * Writes the exit record of this process (a local unit's `runs exec`) when the placement asked for
 * one ({@link ENV_EXIT_FILE}), synchronously, so that a later process reads how it ended even when
 * the orchestrator that started it is gone. Never throws.
 */
export function writeOwnExitRecord(exitCode: number, env: NodeJS.ProcessEnv = process.env): void {
  const file = env[ENV_EXIT_FILE];
  if (!file) return;
  try {
    writeFileSync(file, JSON.stringify({ exitCode, signal: null, at: new Date().toISOString() } satisfies ExitRecord) + '\n');
  } catch { /* best effort: the watcher writes it too */ }
}

interface Queued { job: PlacementJob; ref: PlacementRef }
interface Running { job: PlacementJob; ref: PlacementRef; pid: number; startedAt: string; timedOut?: boolean }

/** Options of {@link LocalPlacement}. */
export interface LocalPlacementOptions {
  docker?: Docker;
  /** How to start the CLI (default {@link projectCli}). */
  cli?: CliEntry;
  /** The machine's amounts (default: `os.availableParallelism()`, `os.totalmem()`, the GPUs `nvidia-smi -L` lists when the engine passes GPUs). */
  capacity?: Capacity;
}

/**
 * The first placement: this machine. Each unit is a child process of the project's CLI
 * (`expbench runs exec DIR --unit KEY`), started detached in its own process group with stdout
 * and stderr into the unit's log and its run-set labels in its environment (every container it
 * makes carries `expbench.runset` and `expbench.unit`). At most `throttle` units of a run set run
 * at once, and only while their CPUs, memory and GPUs fit what the running ones leave free; the
 * rest wait in this process's queue (`queued`).
 *
 * State comes from the process table: a ref's owner token `<host>/<pid>/<start ticks>` is alive
 * or gone (a reused pid is told apart by its start time), and a gone one ended as its exit record
 * `<log>.exit.json` says (written by the unit itself, or by this process when it saw the exit);
 * without one it was `lost` (killed with its watcher). Units do not outlive the orchestrator's
 * supervision ({@link outlivesSubmitter} false): a restarted orchestrator reaps them and requeues.
 */
export class LocalPlacement implements Placement {
  readonly kind = 'local';
  readonly outlivesSubmitter = false;
  private readonly changed = new Emitter<string>('placement');
  readonly onDidChange = this.changed.event;
  private readonly queue: Queued[] = [];
  private readonly running = new Map<string, Running>();
  /** Started refs by unit, so that a `queued:` ref polls as the process it became. */
  private readonly started = new Map<string, PlacementRef>();
  private readonly throttles = new Map<string, number>();
  private cap?: Promise<Capacity>;
  private docker?: Docker;
  private disposed = false;

  constructor(private readonly o: LocalPlacementOptions = {}) {
    if (o.capacity) this.cap = Promise.resolve(o.capacity);
  }

  async capacity(): Promise<Capacity> {
    this.cap ??= machineCapacity(this.engine());
    return this.cap;
  }

  async submit(jobs: PlacementJob[], opts: SubmitOptions): Promise<PlacementRef[]> {
    if (!Number.isInteger(opts.throttle) || opts.throttle < 1) throw new ExpBenchError('BAD_INPUT', `throttle ${opts.throttle}`, 'expected a whole number ≥ 1');
    const cap = await this.capacity();
    const refs: PlacementRef[] = [];
    for (const job of jobs) {
      const why = unfit(job.resources, cap);
      if (why) throw new ExpBenchError('BAD_INPUT', job.name, `cannot run on ${cap.where}: ${why}`);
      this.throttles.set(job.runSet, opts.throttle);
      const ref: PlacementRef = { kind: this.kind, unit: job.unit, id: `queued:${job.unit}`, logFile: job.logFile, submittedAt: new Date().toISOString() };
      this.queue.push({ job, ref });
      refs.push(ref);
    }
    this.pump(cap);
    return refs.map((r) => this.started.get(r.unit) ?? r);
  }

  async poll(refs: PlacementRef[]): Promise<PlacementState[]> {
    const cap = await this.capacity();
    return Promise.all(refs.map((r) => this.pollOne(r, cap)));
  }

  async reap(runSet: string, refs: PlacementRef[], opts: { graceMs?: number } = {}): Promise<StopReport> {
    return this.stop(runSet, refs, 'reap', opts.graceMs ?? 30_000);
  }

  async cancel(runSet: string, refs: PlacementRef[], opts: { graceMs?: number } = {}): Promise<StopReport> {
    return this.stop(runSet, refs, 'cancel', opts.graceMs ?? 30_000);
  }

  async log(ref: PlacementRef, maxBytes = 64 * 1024): Promise<string> {
    return tailFile(ref.logFile, maxBytes);
  }

  async cleanUp(runSet: string, running: ReadonlySet<string> = new Set()): Promise<string[]> {
    const docker = this.engine();
    const removed: string[] = [];
    for (const c of await listRunSetContainers(docker, runSet)) {
      const unit = c.Labels?.[LABEL_UNIT];
      if (unit !== undefined && running.has(unit)) continue;
      if (await removeContainer(docker, c.Id)) removed.push(c.Id);
    }
    if (removed.length) logger.info(`removed ${removed.length} container(s) of run set ${runSet}`);
    return removed;
  }

  dispose(): void {
    this.disposed = true;
    this.queue.length = 0;
    this.changed.dispose();
  }

  private engine(): Docker {
    this.docker ??= this.o.docker ?? connectDocker();
    return this.docker;
  }

  private pollOne(ref: PlacementRef, cap: Capacity): PlacementState | Promise<PlacementState> {
    const current = ref.id.startsWith('queued:') ? this.started.get(ref.unit) ?? ref : ref;
    if (current.id.startsWith('queued:')) {
      const q = this.queue.find((x) => x.job.unit === ref.unit);
      if (!q) return { unit: ref.unit, ref: current, phase: 'ended', end: 'lost', reason: 'queued in a process that is gone' };
      return { unit: ref.unit, ref: current, phase: 'queued', reason: this.queuedReason(q.job, cap) };
    }
    const run = this.running.get(ref.unit);
    if (run && run.ref.id === current.id) {
      this.enforceTime(run);
      return { unit: ref.unit, ref: current, phase: 'running', startedAt: run.startedAt, host: os.hostname() };
    }
    const gone = ownerGone(current.id);
    if (gone === undefined) return { unit: ref.unit, ref: current, phase: 'ended', end: 'lost', reason: `started on another host (${current.id.split('/')[0]}): cannot be read here` };
    if (!gone) return { unit: ref.unit, ref: current, phase: 'running', host: os.hostname() };
    return readExit(current).then((x) => x
      ? { unit: ref.unit, ref: current, phase: 'ended' as const, end: x.stoppedBy === 'timeout' ? 'timeout' as const : x.stoppedBy ? 'cancelled' as const : 'exited' as const, exitCode: x.exitCode, signal: x.signal, endedAt: x.at, host: os.hostname(),
        ...(x.stoppedBy === 'timeout' ? { reason: 'its time limit ran out' } : {}) }
      : { unit: ref.unit, ref: current, phase: 'ended' as const, end: 'lost' as const, reason: 'its process is gone and left no exit record', host: os.hostname() });
  }

  /**
   * A unit of this process that has run past its time limit (`resources.timeSeconds`) is stopped
   * as a reap stops one (SIGTERM, then SIGKILL after 30 s) and ends as `timeout`, as Slurm's
   * `--time` ends a job. Checked on each poll; started once per unit.
   */
  private enforceTime(run: Running): void {
    if (run.timedOut || Date.now() - Date.parse(run.startedAt) <= run.job.resources.timeSeconds * 1000) return;
    run.timedOut = true;
    logger.warn(`unit ${run.job.name} ran past its limit of ${run.job.resources.timeSeconds} s: stopping it`);
    void stopProcessGroup(run.ref.id, run.pid, 30_000).then(async (how) => {
      if (how) writeExit(run.job.logFile, { exitCode: null, signal: how, at: new Date().toISOString(), stoppedBy: 'timeout' });
      const x = await readExit(run.ref);
      if (x && !x.stoppedBy) writeExit(run.job.logFile, { ...x, stoppedBy: 'timeout' });
    });
  }

  private queuedReason(job: PlacementJob, cap: Capacity): string {
    const limit = this.throttles.get(job.runSet) ?? 1;
    const mine = [...this.running.values()].filter((r) => r.job.runSet === job.runSet).length;
    if (mine >= limit) return `${mine} of ${limit} running (concurrency ${limit})`;
    return busy(job.resources, this.free(cap)) ?? 'starting';
  }

  private free(cap: Capacity): Amounts {
    let used: Amounts = { cpus: 0, memoryMiB: 0, gpus: 0 };
    for (const r of this.running.values()) used = plus(used, r.job.resources);
    return minus(cap.total, used);
  }

  /** Starts queued units, in order, while their run set's throttle and the free resources allow. */
  private pump(cap: Capacity): void {
    if (this.disposed) return;
    for (let i = 0; i < this.queue.length;) {
      const { job, ref } = this.queue[i];
      const limit = this.throttles.get(job.runSet) ?? 1;
      const mine = [...this.running.values()].filter((r) => r.job.runSet === job.runSet).length;
      // The first unit of an idle machine always starts (it fits the machine: unfit said so).
      if (mine >= limit || (this.running.size > 0 && busy(job.resources, this.free(cap)))) { i++; continue; }
      this.queue.splice(i, 1);
      try {
        this.spawnUnit(job, ref);
      } catch (e) {
        logger.error(`starting unit ${job.name} failed: ${errorMessage(e)}`);
        writeExit(ref.logFile, { exitCode: null, signal: null, at: new Date().toISOString() });
        this.started.set(job.unit, { ...ref, id: `${os.hostname()}/0/0` });
        this.changed.fire(job.unit);
      }
    }
  }

  private spawnUnit(job: PlacementJob, queuedRef: PlacementRef): void {
    const cli = this.o.cli ?? projectCli();
    const passed = Object.fromEntries(job.passEnv.filter((k) => process.env[k] !== undefined).map((k) => [k, process.env[k]!]));
    // The unit's environment: this process's own (as any child's), the named passes, the plain extras, its labels.
    const env = { ...process.env, ...passed, ...job.env, ...cli.env, [ENV_RUNSET]: job.runSet, [ENV_RUNSET_UNIT]: job.unit, [ENV_EXIT_FILE]: exitFileOf(job.logFile) };
    const fd = openSync(job.logFile, 'a', 0o600);
    let child;
    try {
      child = spawn(cli.exe, [...cli.args, ...job.args], { cwd: job.cwd ?? path.dirname(path.dirname(job.logFile)), env, detached: true, stdio: ['ignore', fd, fd] });
    } finally {
      closeSync(fd);
    }
    const pid = child.pid;
    if (pid === undefined) throw new ExpBenchError('BAD_INPUT', job.name, `could not start ${cli.exe}`);
    const ref: PlacementRef = { ...queuedRef, id: ownerToken(pid) };
    const run: Running = { job, ref, pid, startedAt: new Date().toISOString() };
    this.running.set(job.unit, run);
    this.started.set(job.unit, ref);
    logger.info(`started unit ${job.name} as process ${pid}`);
    child.once('error', (e) => logger.warn(`unit ${job.name}: ${errorMessage(e)}`));
    child.once('exit', (code, signal) => {
      // The unit writes its own record; this one only fills in a death it could not write (a signal).
      void readExit(ref).then((x) => {
        if (!x) writeExit(job.logFile, { exitCode: code, signal, at: new Date().toISOString() });
      }).finally(() => {
        if (this.running.get(job.unit)?.ref.id === ref.id) this.running.delete(job.unit);
        this.changed.fire(job.unit);
        void this.capacity().then((c) => this.pump(c));
      });
    });
    this.changed.fire(job.unit);
  }

  private async stop(runSet: string, refs: PlacementRef[], how: 'reap' | 'cancel', graceMs: number): Promise<StopReport> {
    const report: StopReport = { stopped: [], containers: [] };
    const units = new Set(refs.map((r) => r.unit));
    // Queued units of this run set in this process never start.
    for (let i = this.queue.length - 1; i >= 0; i--) {
      const q = this.queue[i];
      if (q.job.runSet === runSet && units.has(q.job.unit)) {
        this.queue.splice(i, 1);
        report.stopped.push({ unit: q.job.unit, id: q.ref.id, how: 'dropped from the queue' });
      }
    }
    const live = refs.map((r) => (r.id.startsWith('queued:') ? this.started.get(r.unit) : r))
      .filter((r): r is PlacementRef => r !== undefined && ownerGone(r.id) === false);
    await Promise.all(live.map(async (r) => {
      const pid = Number(r.id.split('/')[1]);
      const how2 = await stopProcessGroup(r.id, pid, graceMs);
      if (how2) {
        report.stopped.push({ unit: r.unit, id: r.id, how: how2 });
        if (!(await readExit(r))) writeExit(r.logFile, { exitCode: null, signal: how2 === 'SIGKILL' ? 'SIGKILL' : 'SIGTERM', at: new Date().toISOString(), stoppedBy: how });
        else await markStopped(r, how);
      }
    }));
    const docker = this.engine();
    for (const unit of units) {
      for (const c of await listRunSetContainers(docker, runSet, unit)) if (await removeContainer(docker, c.Id)) report.containers.push(c.Id);
    }
    if (report.stopped.length || report.containers.length) {
      logger.info(`${how} of run set ${runSet}: ${report.stopped.length} unit(s) stopped, ${report.containers.length} container(s) removed`);
    }
    return report;
  }
}

/**
 * SIGTERM to the process group of `pid` (the unit's CLI and what it started), then SIGKILL after
 * `graceMs` when it still runs; only while `token` still names that process (same start time).
 * @returns the last signal sent, or undefined when the process was already gone
 */
async function stopProcessGroup(token: string, pid: number, graceMs: number): Promise<'SIGTERM' | 'SIGKILL' | undefined> {
  if (ownerGone(token) !== false) return undefined;
  const signal = (s: NodeJS.Signals) => {
    try { process.kill(-pid, s); } catch { try { process.kill(pid, s); } catch { /* gone */ } }
  };
  signal('SIGTERM');
  const until = Date.now() + graceMs;
  while (Date.now() < until) {
    await new Promise((r) => setTimeout(r, 100));
    if (ownerGone(token) !== false) return 'SIGTERM';
  }
  if (ownerGone(token) !== false) return 'SIGTERM';
  signal('SIGKILL');
  for (let i = 0; i < 50 && ownerGone(token) === false; i++) await new Promise((r) => setTimeout(r, 100));
  return 'SIGKILL';
}

async function readExit(ref: PlacementRef): Promise<ExitRecord | undefined> {
  try {
    const fh = await fsp.open(exitFileOf(ref.logFile), 'r');
    try {
      const buf = Buffer.alloc(4096);
      const { bytesRead } = await fh.read(buf, 0, buf.length, 0);
      const x = JSON.parse(buf.subarray(0, bytesRead).toString('utf8')) as ExitRecord;
      return typeof x === 'object' && x !== null && 'at' in x ? x : undefined;
    } finally {
      await fh.close();
    }
  } catch {
    return undefined;
  }
}

function writeExit(logFile: string, x: ExitRecord): void {
  try {
    writeFileSync(exitFileOf(logFile), JSON.stringify(x) + '\n');
  } catch (e) {
    logger.warn(`could not write the exit record of ${logFile}: ${errorMessage(e)}`);
  }
}

async function markStopped(ref: PlacementRef, how: 'reap' | 'cancel'): Promise<void> {
  const x = await readExit(ref);
  if (x && !x.stoppedBy) writeExit(ref.logFile, { ...x, stoppedBy: how });
}

/** The last `maxBytes` of `file` as UTF-8; '' when it does not exist (a unit's log, docs/placement.md). */
export async function tailFile(file: string, maxBytes: number): Promise<string> {
  let fh;
  try {
    fh = await fsp.open(file, 'r');
  } catch {
    return '';
  }
  try {
    const { size } = await fh.stat();
    const n = Math.min(size, maxBytes);
    const buf = Buffer.alloc(n);
    await fh.read(buf, 0, n, size - n);
    return buf.toString('utf8');
  } finally {
    await fh.close();
  }
}

/**
 * This machine's capacity: CPUs (`os.availableParallelism()`), memory (`os.totalmem()`), GPUs
 * (the lines of `nvidia-smi -L`, counted only when the engine can pass GPUs to containers; 0 when
 * either is missing).
 */
export async function machineCapacity(docker: Docker): Promise<Capacity> {
  const cpus = os.availableParallelism();
  const memoryMiB = Math.floor(os.totalmem() / (1024 * 1024));
  let gpus = 0;
  if (await gpusAvailable(docker)) {
    try {
      const { stdout } = await execFileP('nvidia-smi', ['-L'], { timeout: 10_000 });
      gpus = stdout.split('\n').filter((l) => /^GPU \d+/.test(l)).length;
    } catch (e) {
      logger.debug(`nvidia-smi -L failed: ${errorMessage(e)}`);
    }
  }
  const amounts = { cpus, memoryMiB, gpus };
  return { where: `this machine (${cpus} CPUs, ${(memoryMiB / 1024).toFixed(1)} GiB, ${gpus} GPUs)`, perUnit: amounts, total: amounts };
}
