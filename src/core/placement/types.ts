import type { Event } from '../util/emitter';

/**
 * The placement interface (docs/placement.md): where a run set's units run. A placement takes
 * units (each one command of the project's own CLI, `expbench runs exec DIR --unit KEY`), starts
 * them on a machine or a cluster as their resources allow, and reads their state back from the
 * engine that runs them (the process table and Docker for `local`, `sacct`/`squeue` for `slurm`),
 * never from timers of the process that asked: any process (a restarted `runs status`, `runs
 * resume`, VS Code) finds the units again from the {@link PlacementRef}s the run set recorded.
 */

/** What one unit needs. Whole CPUs, memory in MiB, whole GPUs, wall-clock seconds. */
export interface Resources {
  cpus: number;
  memoryMiB: number;
  gpus: number;
  timeSeconds: number;
}

/** Amounts of the three resources that are counted against a machine (time is a limit, not a share). */
export type Amounts = Pick<Resources, 'cpus' | 'memoryMiB' | 'gpus'>;

/** What a placement can give. */
export interface Capacity {
  /** Where: `this machine (2 CPUs, 23.4 GiB, 0 GPUs)`, `Slurm partition gpu (4 nodes)`. */
  where: string;
  /** The largest one unit can get (one machine, one node). A unit needing more waits for ever: {@link unfit}. */
  perUnit: Amounts;
  /** All units at once (the machine; the partition's nodes together). */
  total: Amounts;
  /** The longest a unit may run, seconds (a partition's MaxTime); undefined: no limit. */
  maxTimeSeconds?: number;
}

/** One unit handed to a placement. */
export interface PlacementJob {
  /** The run set's id: label `expbench.runset` on every container of the unit; Slurm job name prefix. */
  runSet: string;
  /** The unit's key (a content hash, docs/runs.md): label `expbench.unit`. */
  unit: string;
  /** A name for people: `fixture2026/90001/3 scripted a1` (logs, job names). */
  name: string;
  /** Arguments of the project's CLI (after the CLI itself): `['runs', 'exec', DIR, '--unit', KEY, '--try', '2']`. */
  args: string[];
  resources: Resources;
  /** Absolute path of the unit's log (stdout and stderr of its process); its folder exists. */
  logFile: string;
  /** Working directory of the unit's process (absolute; default the run set's folder, i.e. the log's grand-parent). */
  cwd?: string;
  /**
   * Names of environment variables the unit gets from the submitting process's environment (API
   * keys, endpoint URLs). Values are passed as environment only: never on a command line, in a job
   * script or in a file other than one of mode 0600.
   */
  passEnv: string[];
  /** Plain (non-secret) environment of the unit, on top of {@link passEnv}. */
  env?: Record<string, string>;
}

/**
 * Where a placement put a unit: what a later process needs to find it again. Recorded in the run
 * set's state (docs/runs.md `unit.placed`), so it is plain JSON.
 */
export interface PlacementRef {
  /** The placement kind (`local`, `slurm`). */
  kind: string;
  unit: string;
  /**
   * The engine's id of the unit's process or job: `local`: the owner token `<host>/<pid>/<start
   * ticks>` of the unit's process (src/core/sandbox/processes.ts); `slurm`: `<array job id>_<index>`.
   * `queued:<unit>` while the placement holds the unit in its own queue (local only).
   */
  id: string;
  /** The unit's log (absolute). */
  logFile: string;
  /** ISO 8601, when the placement accepted it. */
  submittedAt: string;
}

/**
 * How a unit stands in its engine:
 * - `queued`: held by this placement's own queue in this process (local: a slot or resources are busy); lost with the process, and then simply submitted again;
 * - `pending`: the engine has it and has not started it (`reason`: Slurm's `Resources`, `Priority`, `JobHeldUser`…);
 * - `running`;
 * - `ended`: see {@link PlacementState.end}.
 */
export type PlacementPhase = 'queued' | 'pending' | 'running' | 'ended';

/**
 * How a unit's process ended:
 * - `exited`: it exited by itself (`exitCode`; the unit's own result is in the run set, docs/runs.md);
 * - `cancelled`: stopped by {@link Placement.cancel} or {@link Placement.reap};
 * - `timeout`, `preempted`, `node_fail`: the engine ended it (Slurm TIMEOUT / PREEMPTED / NODE_FAIL); requeued and resumed from what the unit recorded;
 * - `lost`: the engine no longer knows it and nobody saw it end (its process killed with its watcher, a purged job); requeued likewise.
 */
export type PlacementEnd = 'exited' | 'cancelled' | 'timeout' | 'preempted' | 'node_fail' | 'lost';

/** A unit's state as read from the engine. */
export interface PlacementState {
  unit: string;
  /** The current reference (a `queued:` local ref becomes the process's once it starts). */
  ref: PlacementRef;
  phase: PlacementPhase;
  /** Why it is not running yet, in the engine's words (`Resources`; `needs 2 CPUs, 1 free`; `2 of 2 running`). */
  reason?: string;
  end?: PlacementEnd;
  exitCode?: number | null;
  /** The signal that ended the process, when one did (`SIGKILL`). */
  signal?: string | null;
  /** ISO 8601 times, when the engine says. */
  startedAt?: string;
  endedAt?: string;
  /** The machine or node it runs or ran on. */
  host?: string;
}

/** What {@link Placement.reap} or {@link Placement.cancel} stopped and removed. */
export interface StopReport {
  /** Units whose process or job was signalled or cancelled (their refs' ids). */
  stopped: Array<{ unit: string; id: string; how: string }>;
  /** Containers removed (ids), found by label `expbench.runset` (and `expbench.unit`). */
  containers: string[];
}

/** Options of {@link Placement.submit}. */
export interface SubmitOptions {
  /** At most this many of the run set's units run at once (Slurm: the array's `%k`). */
  throttle: number;
}

/**
 * A placement. Implementations: `local` (src/core/placement/local.ts: child processes on this
 * machine, Docker); `slurm` (issue 28: one job array per run set and resource shape).
 *
 * Every method is safe to call from a process that did not submit the units: state comes from
 * the engine and the refs, never from memory (except `queued` local units, which exist only in
 * the submitting process's queue).
 */
export interface Placement {
  /** `local`, `slurm`. */
  readonly kind: string;
  /**
   * Whether a unit keeps running when the process that submitted it dies, supervised by the
   * engine (Slurm: true, a restarted orchestrator re-attaches to queued and running jobs); false
   * for `local`, where a dead orchestrator's units are {@link reap}ed and requeued, resumed from
   * what they recorded.
   */
  readonly outlivesSubmitter: boolean;
  /** What the placement can give (local: this machine; Slurm: the partition's nodes). */
  capacity(signal?: AbortSignal): Promise<Capacity>;
  /**
   * Hands units to the engine. Returns one ref per job, in order. The placement starts at most
   * `throttle` of one run set's units at once and only as resources allow; a job that can never
   * fit ({@link unfit}) is not submitted (the caller shows it as waiting).
   * @throws ExpBenchError BAD_INPUT for a job that can never fit, CONTAINER_FAILED / the engine's error when it refuses
   */
  submit(jobs: PlacementJob[], opts: SubmitOptions): Promise<PlacementRef[]>;
  /** Reads the state of each ref from the engine, in order. Never throws for one unit's state (an unknown unit is `ended`/`lost`). */
  poll(refs: PlacementRef[]): Promise<PlacementState[]>;
  /**
   * Stops units left running by an orchestrator that died (when ! {@link outlivesSubmitter}):
   * signals each ref's process (SIGTERM to its process group, SIGKILL after `graceMs`), only when
   * the ref still names the same process (pid and start time), then removes the containers labelled
   * with the run set and each unit. Units already ended are only swept of containers.
   */
  reap(runSet: string, refs: PlacementRef[], opts?: { graceMs?: number }): Promise<StopReport>;
  /** Cancels the run set's units (local: as {@link reap}; Slurm: `scancel` of its jobs), then removes their containers by label. */
  cancel(runSet: string, refs: PlacementRef[], opts?: { graceMs?: number }): Promise<StopReport>;
  /** The last `maxBytes` (default 64 KiB) of a unit's log; '' when it has none yet. */
  log(ref: PlacementRef, maxBytes?: number): Promise<string>;
  /**
   * Removes the run set's containers (label `expbench.runset`) that belong to no running unit of
   * `running` (unit keys); never another run set's or anyone else's.
   * @returns the removed containers' ids
   */
  cleanUp(runSet: string, running?: ReadonlySet<string>): Promise<string[]>;
  /** Fires when the placement saw a unit change (a local child exited or started): a hint to poll now. */
  readonly onDidChange: Event<string>;
  /** Stops the placement's own watchers and queue (queued units are dropped; running ones keep running). */
  dispose(): void;
}
