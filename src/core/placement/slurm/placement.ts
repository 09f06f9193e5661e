import { randomBytes } from 'node:crypto';
import { promises as fsp } from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import type Docker from 'dockerode';
import { ExpBenchError } from '../../errors';
import { log } from '../../log';
import { connectDocker, listRunSetContainers, LABEL_UNIT, removeContainer } from '../../sandbox';
import { Emitter } from '../../util/emitter';
import { errorMessage } from '../../util/errors';
import { projectCli, type CliEntry } from '../cli';
import { shapeOf, unfit } from '../fit';
import { exitFileOf, tailFile } from '../local';
import type { Capacity, Placement, PlacementJob, PlacementRef, PlacementState, StopReport, SubmitOptions } from '../types';
import { runSlurm, runSlurmOk } from './commands';
import { readSubmission, writeSubmission, type Submission } from './journal';
import { lineOf, parseSacct, parseSinfo, parseSqueue, slurmState, SQUEUE_FORMAT, type SlurmJobLine } from './parse';
import { isEnvName, jobScript } from './script';
import type { SlurmPlacementSpec } from './spec';
import { isInside, stageCli, type StagedCli } from './stage';

const logger = log('slurm');

/** Options of {@link SlurmPlacement}. */
export interface SlurmPlacementOptions {
  spec: SlurmPlacementSpec;
  /** This machine's engine: containers of a run set left here are removed by label (default: the environment's). */
  docker?: Docker;
  /** How to start the CLI (default {@link projectCli}; `EXPBENCH_CLI` names another bundle, `EXPBENCH_NODE` the node program on the nodes). */
  cli?: CliEntry;
  /** The environment of Slurm's clients (`SLURM_CONF`) and where `passEnv` values come from (default `process.env`). */
  env?: NodeJS.ProcessEnv;
  /** How often the exit records of placed units are looked for, ms (a hint to poll the scheduler at once; default 250). */
  hintMs?: number;
}

interface ParsedRef { ref: PlacementRef; arrayJob: string; index: number; id: string }

const ACTIVE = ['PENDING', 'RUNNING', 'CONFIGURING', 'COMPLETING', 'SUSPENDED', 'REQUEUED', 'REQUEUE_HOLD', 'RESIZING', 'SIGNALING', 'STAGE_OUT', 'STOPPED'];

/**
 * The Slurm placement (docs/placement.md "Slurm"): one job array per run set, resource shape and
 * submission, `--array=0-N%k` with `k` the spec's concurrency, each element running one unit with
 * the project's CLI on the node it got (`runs exec DIR --unit KEY --try N`). A unit's ref is
 * `<array job id>_<index>`. State is read from the scheduler only: `squeue` (the controller, while
 * it holds the job: pending reasons, running, and ended jobs for MinJobAge) and `sacct` (the
 * accounting database, for ended jobs and exit codes), so any process (a restarted `runs
 * status`, `runs resume`, VS Code) re-attaches from the recorded refs ({@link outlivesSubmitter}).
 * Each try's submission is recorded beside its log before and after `sbatch`
 * (`<log>.slurm.json`), so a try is never queued twice, even when the submitter died in between.
 */
export class SlurmPlacement implements Placement {
  readonly kind = 'slurm';
  readonly outlivesSubmitter = true;
  private readonly changed = new Emitter<string>('slurm');
  readonly onDidChange = this.changed.event;
  private cap?: Promise<Capacity>;
  private docker?: Docker;
  private readonly env: NodeJS.ProcessEnv;
  /** Placed units whose exit record is looked for (a hint that their job ends now). */
  private readonly watched = new Map<string, ParsedRef>();
  private timer?: NodeJS.Timeout;
  private staged?: Promise<StagedCli>;
  private disposed = false;

  constructor(private readonly o: SlurmPlacementOptions) {
    this.env = o.env ?? process.env;
  }

  /**
   * The partition's nodes (`sinfo -N`): `perUnit` the most CPUs, memory and GPUs (gres `gpu`)
   * one node has, `total` all nodes together, `maxTimeSeconds` the partition's MaxTime.
   * @throws ExpBenchError SCHEDULER_FAILED when sinfo fails; BAD_INPUT when the partition has no node
   */
  capacity(): Promise<Capacity> {
    this.cap ??= this.readCapacity();
    this.cap.catch(() => { this.cap = undefined; });
    return this.cap;
  }

  async submit(jobs: PlacementJob[], opts: SubmitOptions): Promise<PlacementRef[]> {
    if (!Number.isInteger(opts.throttle) || opts.throttle < 1) throw new ExpBenchError('BAD_INPUT', `throttle ${opts.throttle}`, 'expected a whole number ≥ 1');
    if (!jobs.length) return [];
    const cap = await this.capacity();
    for (const job of jobs) {
      const why = unfit(job.resources, cap);
      if (why) throw new ExpBenchError('BAD_INPUT', job.name, `cannot run on ${cap.where}: ${why}`);
    }
    const refs = new Map<PlacementJob, PlacementRef>();
    // A try already handed to Slurm (by this or a dead process) is adopted, never queued again.
    const fresh: PlacementJob[] = [];
    const byName = new Map<string, Promise<string | undefined>>();
    for (const job of jobs) {
      const s = await readSubmission(job.logFile);
      let jobId = s?.jobId ?? undefined;
      if (s && !jobId) {
        if (!byName.has(s.name)) byName.set(s.name, this.findByName(s.name, s.at));
        jobId = await byName.get(s.name);
        if (jobId) await writeSubmission(job.logFile, { ...s, jobId });
      }
      if (s && jobId) {
        logger.info(`${job.name}: try already in Slurm as ${jobId}_${s.index} (adopted)`);
        refs.set(job, { kind: this.kind, unit: job.unit, id: `${jobId}_${s.index}`, logFile: job.logFile, submittedAt: s.at });
      } else {
        fresh.push(job);
      }
    }
    const groups = new Map<string, PlacementJob[]>();
    for (const job of fresh) {
      const key = JSON.stringify([job.runSet, shapeOf(job.resources), job.cwd ?? '', job.env ?? {}, [...job.passEnv].sort()]);
      groups.set(key, [...(groups.get(key) ?? []), job]);
    }
    for (const group of groups.values()) {
      const made = await this.submitArray(group, opts.throttle);
      group.forEach((job, i) => refs.set(job, made[i]));
    }
    const out = jobs.map((j) => refs.get(j)!);
    for (const r of out) this.watch(r);
    return out;
  }

  async poll(refs: PlacementRef[]): Promise<PlacementState[]> {
    const parsed = refs.map(parseRef);
    const arrays = [...new Set(parsed.filter((p): p is ParsedRef => !!p).map((p) => p.arrayJob))];
    const live = arrays.length ? await this.squeue(arrays) : new Map<string, SlurmJobLine>();
    // Ended or unknown to the controller: the accounting database says how it ended.
    const liveOf = (p: ParsedRef) => lineOf(live.values(), p.arrayJob, p.index);
    const needAcct = [...new Set(parsed.filter((p): p is ParsedRef => { if (!p) return false; const l = liveOf(p); return !l || slurmState(l.state).phase === 'ended'; }).map((p) => p.arrayJob))];
    const acct = needAcct.length ? await this.sacct(needAcct) : [];
    return refs.map((ref, i) => {
      const p = parsed[i];
      if (!p) return { unit: ref.unit, ref, phase: 'ended', end: 'lost', reason: `not a Slurm job id: ${ref.id}` };
      const state = this.stateOf(p, liveOf(p), lineOf(acct, p.arrayJob, p.index));
      if (state.phase === 'pending' || state.phase === 'running') this.watch(ref);
      return state;
    });
  }

  /**
   * Slurm's jobs outlive the process that submitted them ({@link outlivesSubmitter}): a
   * restarted orchestrator re-attaches to them, so there is nothing to reap. Only this machine's
   * containers of units that no longer run are removed.
   */
  async reap(runSet: string, refs: PlacementRef[]): Promise<StopReport> {
    const states = await this.poll(refs);
    const running = new Set(states.filter((s) => s.phase !== 'ended').map((s) => s.unit));
    return { stopped: [], containers: await this.cleanUp(runSet, running) };
  }

  /**
   * `scancel` of every job of the run set still queued or running: the elements of `refs`, and
   * every job of this user named for the run set (a submission whose ref was never recorded);
   * Slurm sends each SIGTERM (the unit stops cleanly, its agent records `agent stopped:
   * cancelled` and removes its container) and SIGKILL after its KillWait. Waits until squeue shows
   * none of them active (at most `graceMs` + 60 s), then removes the run set's containers on this
   * machine's engine by label.
   */
  async cancel(runSet: string, refs: PlacementRef[], opts: { graceMs?: number } = {}): Promise<StopReport> {
    const report: StopReport = { stopped: [], containers: [] };
    const parsed = refs.map(parseRef).filter((p): p is ParsedRef => !!p);
    const arrays = [...new Set(parsed.map((p) => p.arrayJob))];
    const live = arrays.length ? await this.squeue(arrays) : new Map<string, SlurmJobLine>();
    const targets = new Map<string, string>();
    for (const p of parsed) {
      const l = lineOf(live.values(), p.arrayJob, p.index);
      if (l && ACTIVE.includes(l.state.split(/\s/)[0])) targets.set(p.id, p.ref.unit);
    }
    for (const l of await this.jobsOfRunSet(runSet)) if (!targets.has(l.id)) targets.set(l.id, '');
    if (targets.size) {
      await runSlurmOk('scancel', [...targets.keys()], this.env);
      for (const [id, unit] of targets) report.stopped.push({ unit, id, how: 'scancel' });
      logger.info(`run set ${runSet}: scancel of ${targets.size} job(s)`);
      const until = Date.now() + (opts.graceMs ?? 30_000) + 60_000;
      const ids = [...new Set([...targets.keys()].map((id) => id.split('_')[0]))];
      for (;;) {
        const now = await this.squeue(ids);
        const active = [...targets.keys()].filter((id) => { const [a, k] = id.split('_'); const l = k === undefined ? now.get(a) : lineOf(now.values(), a, Number(k)); return l && ACTIVE.includes(l.state.split(/\s/)[0]); });
        if (!active.length) break;
        if (Date.now() > until) { logger.warn(`run set ${runSet}: ${active.length} job(s) still active after scancel: ${active.join(' ')}`); break; }
        await new Promise((r) => setTimeout(r, 250));
      }
    }
    report.containers = await this.cleanUp(runSet);
    for (const p of parsed) this.watched.delete(p.ref.logFile);
    return report;
  }

  log(ref: PlacementRef, maxBytes = 64 * 1024): Promise<string> {
    return tailFile(ref.logFile, maxBytes);
  }

  /**
   * Removes the run set's containers on this machine's engine whose unit is not in `running`. On
   * a cluster the units' containers are on the nodes: each unit removes its own, and a unit whose
   * CLI was killed has its containers removed by its job script (docs/placement.md).
   */
  async cleanUp(runSet: string, running: ReadonlySet<string> = new Set()): Promise<string[]> {
    const removed: string[] = [];
    let docker: Docker;
    try {
      docker = this.engine();
      for (const c of await listRunSetContainers(docker, runSet)) {
        const unit = c.Labels?.[LABEL_UNIT];
        if (unit !== undefined && running.has(unit)) continue;
        if (await removeContainer(docker, c.Id)) removed.push(c.Id);
      }
    } catch (e) {
      logger.debug(`no containers of run set ${runSet} removed here: ${errorMessage(e)}`);
    }
    return removed;
  }

  dispose(): void {
    this.disposed = true;
    if (this.timer) clearInterval(this.timer);
    this.timer = undefined;
    this.watched.clear();
    this.changed.dispose();
  }

  private engine(): Docker {
    this.docker ??= this.o.docker ?? connectDocker();
    return this.docker;
  }

  private async readCapacity(): Promise<Capacity> {
    const p = this.o.spec.partition;
    const out = await runSlurmOk('sinfo', ['-h', '-N', ...(p ? ['-p', p] : []), '-o', '%N|%P|%c|%m|%G|%l|%t'], this.env);
    let nodes = parseSinfo(out);
    if (!p) nodes = nodes.filter((n) => n.isDefault);
    const names = [...new Set(nodes.map((n) => n.node))];
    if (!names.length) {
      const all = [...new Set(parseSinfo(await runSlurmOk('sinfo', ['-h', '-N', '-o', '%N|%P|%c|%m|%G|%l|%t'], this.env)).map((n) => n.partition))];
      throw new ExpBenchError('BAD_INPUT', p ? `partition ${p}` : 'the default partition', `has no node (sinfo lists the partitions ${all.join(', ') || 'none'})`);
    }
    const one = new Map(nodes.map((n) => [n.node, n]));
    const per = { cpus: 0, memoryMiB: 0, gpus: 0 };
    const total = { cpus: 0, memoryMiB: 0, gpus: 0 };
    for (const n of one.values()) {
      per.cpus = Math.max(per.cpus, n.cpus); per.memoryMiB = Math.max(per.memoryMiB, n.memoryMiB); per.gpus = Math.max(per.gpus, n.gpus);
      total.cpus += n.cpus; total.memoryMiB += n.memoryMiB; total.gpus += n.gpus;
    }
    const limits = nodes.map((n) => n.maxTimeSeconds);
    const maxTime = limits.some((t) => t === undefined) ? undefined : Math.max(...(limits as number[]));
    const part = p ?? nodes[0].partition;
    return {
      where: `Slurm partition ${part} (${one.size} node${one.size === 1 ? '' : 's'}, ${total.cpus} CPUs, ${(total.memoryMiB / 1024).toFixed(1)} GiB, ${total.gpus} GPUs)`,
      perUnit: per, total, ...(maxTime !== undefined ? { maxTimeSeconds: maxTime } : {}),
    };
  }

  /** One array for jobs of one run set and shape: records, script, sbatch, records with the id. */
  private async submitArray(jobs: PlacementJob[], throttle: number): Promise<PlacementRef[]> {
    const first = jobs[0];
    const spec = this.o.spec;
    const cwd = first.cwd ?? path.dirname(path.dirname(first.logFile));
    const cli = this.o.cli ?? projectCli(this.env);
    let script = cli.args[0];
    let cliSha256: string | undefined;
    if (spec.sharedDir) {
      if (!isInside(cwd, spec.sharedDir)) throw new ExpBenchError('BAD_INPUT', cwd, `the run set's folder is not inside the shared folder ${spec.sharedDir} (placement.sharedDir): the nodes could not see it; make the run set there`);
      this.staged ??= stageCli(cli, spec.sharedDir);
      ({ script, sha256: cliSha256 } = await this.staged);
    }
    const name = `expbench-${first.runSet}-${randomBytes(3).toString('hex')}`.replace(/[^\w.-]/g, '-');
    const at = new Date().toISOString();
    const dir = path.join(cwd, 'slurm');
    await fsp.mkdir(dir, { recursive: true });
    const passed = [...new Set(first.passEnv)].filter((k) => isEnvName(k) && this.env[k] !== undefined);
    const text = jobScript({
      name, runSet: first.runSet, title: `${jobs.length === 1 ? first.name : `${first.name} and ${jobs.length - 1} more`}, shape ${shapeOf(first.resources)}`,
      resources: first.resources, elements: jobs.map((j) => ({ unit: j.unit, args: j.args, logFile: j.logFile })), throttle,
      partition: spec.partition, account: spec.account, qos: spec.qos, exportNames: passed,
      env: { ...(first.env ?? {}), ...cli.env }, cwd, node: this.env.EXPBENCH_NODE || cli.exe, cliArgs: [script, ...cli.args.slice(1)], ...(cliSha256 ? { cliSha256 } : {}), container: spec.container,
    });
    const file = path.join(dir, `${name}.sh`);
    await fsp.writeFile(file, text, { mode: 0o644 });
    await Promise.all(jobs.map((j, index) => writeSubmission(j.logFile, { v: 1, name, jobId: null, index, at })));
    // The job's environment is sbatch's (--export=ALL), which holds only the passed names and Slurm's own
    // settings: values travel as environment only (never in sbatch's arguments or the script).
    const env = sbatchEnv(this.env, passed);
    const out = await runSlurmOk('sbatch', ['--parsable', `--output=${path.join(dir, `${name}-%a.out`)}`, '--open-mode=append', ...(spec.extraArgs ?? []), file], env);
    const jobId = /^(\d+)/.exec(out.trim())?.[1];
    if (!jobId) throw new ExpBenchError('SCHEDULER_FAILED', 'sbatch', `answered ${JSON.stringify(out.trim().slice(0, 200))}, not a job id`);
    await Promise.all(jobs.map((j, index) => writeSubmission(j.logFile, { v: 1, name, jobId, index, at } satisfies Submission)));
    logger.info(`submitted ${jobs.length} unit(s) of run set ${first.runSet} as array job ${jobId} (${shapeOf(first.resources)}, %${throttle}): ${file}`);
    return jobs.map((j, index) => ({ kind: this.kind, unit: j.unit, id: `${jobId}_${index}`, logFile: j.logFile, submittedAt: at }));
  }

  /**
   * The array job id of a submission named `name`, from squeue, else sacct; undefined when Slurm
   * never had it. Only this user's jobs: the name is in the script and the record before sbatch
   * runs, and another user's job of that name must never be adopted.
   */
  private async findByName(name: string, at: string): Promise<string | undefined> {
    const q = await runSlurm('squeue', ['-h', '--me', '-t', 'all', '--name', name, '-o', '%F'], this.env);
    const fromQ = q.stdout.split('\n').map((l) => l.trim()).find((l) => /^\d+$/.test(l));
    if (fromQ) return fromQ;
    const since = new Date(Date.parse(at) - 3600_000).toISOString().slice(0, 19);
    const a = await runSlurm('sacct', ['-n', '-X', '-P', '-u', os.userInfo().username, '--name', name, '-S', since, '-o', 'JobID'], this.env);
    return a.stdout.split('\n').map((l) => /^(\d+)/.exec(l.trim())?.[1]).find((x): x is string => !!x);
  }

  /** squeue's lines of these array jobs (every element, every state the controller still holds), by element id. */
  private async squeue(arrays: string[]): Promise<Map<string, SlurmJobLine>> {
    const r = await runSlurm('squeue', ['-h', '-r', '-t', 'all', '-j', arrays.join(','), '-O', SQUEUE_FORMAT], this.env);
    // With no job it knows, squeue says "Invalid job id specified" and exits 1: none is live.
    if (r.code !== 0 && !/invalid job id/i.test(r.stderr)) throw new ExpBenchError('SCHEDULER_FAILED', 'squeue', r.stderr.trim().slice(0, 500) || `exited with status ${r.code}`);
    return new Map(parseSqueue(r.stdout).map((l) => [l.id, l]));
  }

  private async sacct(arrays: string[]): Promise<SlurmJobLine[]> {
    const r = await runSlurm('sacct', ['-n', '-X', '-P', '-j', arrays.join(','), '-o', 'JobID,State,ExitCode,NodeList,Start,End,Reason'], this.env);
    if (r.code !== 0) throw new ExpBenchError('SCHEDULER_FAILED', 'sacct', r.stderr.trim().slice(0, 500) || `exited with status ${r.code}`);
    return parseSacct(r.stdout);
  }

  /** This user's jobs (queued or running) whose name marks them as the run set's. */
  private async jobsOfRunSet(runSet: string): Promise<SlurmJobLine[]> {
    const prefix = `expbench-${runSet}-`.replace(/[^\w.-]/g, '-');
    const r = await runSlurm('squeue', ['-h', '-r', '--me', '-o', '%i|%T|%j'], this.env);
    if (r.code !== 0) return [];
    return r.stdout.split('\n').map((l) => l.split('|')).filter((f) => f.length >= 3 && f[2].trim().startsWith(prefix) && ACTIVE.includes(f[1].trim()))
      .map((f) => ({ id: f[0].trim(), state: f[1].trim() }));
  }

  private stateOf(p: ParsedRef, live: SlurmJobLine | undefined, acctLine: SlurmJobLine | undefined): PlacementState {
    const base = { unit: p.ref.unit, ref: p.ref };
    const liveWords = live ? slurmState(live.state) : undefined;
    // The controller's word first while it holds the job; accounting lags behind it.
    if (live && liveWords && liveWords.phase !== 'ended') {
      const reason = liveWords.phase === 'pending' ? [live.reason, liveWords.note].filter(Boolean).join(', ') || undefined : liveWords.note;
      return { ...base, phase: liveWords.phase, ...(reason ? { reason } : {}), ...(live.node ? { host: live.node } : {}), ...(live.start && liveWords.phase === 'running' ? { startedAt: live.start } : {}) };
    }
    const acctWords = acctLine ? slurmState(acctLine.state) : undefined;
    const final = acctWords?.phase === 'ended' ? { line: acctLine!, words: acctWords } : live && liveWords ? { line: live, words: liveWords } : undefined;
    if (final) {
      const l = final.line;
      // Accounting's exit code, else the controller's (accounting may not have the job's end yet).
      const exit = acctWords?.phase === 'ended' ? acctLine : liveWords?.phase === 'ended' ? live : undefined;
      return {
        ...base, phase: 'ended', end: final.words.end ?? 'lost',
        ...(final.words.note ? { reason: final.words.note } : {}),
        ...(exit?.exitCode !== undefined ? { exitCode: exit.exitCode, signal: exit.signal ? `signal ${exit.signal}` : null } : {}),
        ...(l.node ? { host: l.node } : {}), ...(l.start ? { startedAt: l.start } : {}), ...(l.end ? { endedAt: l.end } : {}),
      };
    }
    if (acctLine && acctWords) {
      // Only accounting knows it, and not as ended: it lags behind a controller that has forgotten the job.
      return { ...base, phase: 'ended', end: 'lost', reason: `the controller no longer knows job ${p.id}; accounting last said ${acctLine.state}` };
    }
    return { ...base, phase: 'ended', end: 'lost', reason: `Slurm knows no job ${p.id} (squeue, sacct)` };
  }

  /** Looks for the exit record of a placed unit (written by its CLI as its last act) to poll at once when it ends. */
  private watch(ref: PlacementRef): void {
    const p = parseRef(ref);
    if (!p || this.disposed || this.watched.has(ref.logFile)) return;
    this.watched.set(ref.logFile, p);
    this.timer ??= setInterval(() => void this.lookForExits(), this.o.hintMs ?? 250);
    this.timer.unref();
  }

  private looking = false;

  private async lookForExits(): Promise<void> {
    if (this.looking || this.disposed) return;
    this.looking = true;
    try {
      for (const [logFile, p] of this.watched) {
        const st = await fsp.stat(exitFileOf(logFile)).catch(() => undefined);
        if (!st || st.mtimeMs < Date.parse(p.ref.submittedAt) - 1000) continue;
        // The CLI wrote its exit record: its job ends now. Tell the orchestrator once Slurm says so.
        for (let k = 0; k < 100 && !this.disposed; k++) {
          const l = lineOf((await this.squeue([p.arrayJob]).catch(() => new Map<string, SlurmJobLine>())).values(), p.arrayJob, p.index);
          if (!l || slurmState(l.state).phase === 'ended') break;
          await new Promise((r) => setTimeout(r, 50));
        }
        this.watched.delete(logFile);
        this.changed.fire(p.ref.unit);
      }
      if (!this.watched.size && this.timer) { clearInterval(this.timer); this.timer = undefined; }
    } finally {
      this.looking = false;
    }
  }
}

function parseRef(ref: PlacementRef): ParsedRef | undefined {
  const m = /^(\d{1,20})_(\d{1,9})$/.exec(ref.id);
  if (ref.kind !== 'slurm' || !m) return undefined;
  return { ref, arrayJob: m[1], index: Number(m[2]), id: ref.id };
}

/**
 * The environment sbatch runs with: the passed names' values, and the client settings of Slurm
 * (`SLURM_CONF`, `SLURM_CLUSTERS`, and sbatch's input variables `SBATCH_*`: sbatch(1) INPUT
 * ENVIRONMENT VARIABLES); nothing else of this process's environment reaches the job (the SLURM_*
 * of an allocation this process may run in stay out).
 */
export function sbatchEnv(env: NodeJS.ProcessEnv, passed: readonly string[]): NodeJS.ProcessEnv {
  const out: NodeJS.ProcessEnv = {};
  for (const [k, v] of Object.entries(env)) if (v !== undefined && (/^(SLURM_CONF|SLURM_CLUSTERS|SBATCH_\w+)$/.test(k) || passed.includes(k))) out[k] = v;
  return out;
}
