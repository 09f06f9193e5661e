import type Docker from 'dockerode';
import { ExpBenchError } from '../errors';
import { log } from '../log';
import { assertBindSources, type Bind } from './binds';
import { dockerError, engineMessage, statusOf } from './connection';
import { gpusAvailable } from './gpus';

const logger = log('sandbox');

/** Label keys put on EVERY container the project creates (docs/DEVELOPING.md, "Contracts"). */
export const LABEL_TASK = 'expbench.task';
export const LABEL_SESSION = 'expbench.session';
export const LABEL_ROLE = 'expbench.role';
/** The process that created the container (`ownerToken()` of processes.ts); set on verify containers. */
export const LABEL_OWNER = 'expbench.owner';
/** The run set (docs/runs.md) whose unit made the container: its id. */
export const LABEL_RUNSET = 'expbench.runset';
/** The run-set unit that made the container: its key. */
export const LABEL_UNIT = 'expbench.unit';
/**
 * The environment of a run set's unit process (docs/placement.md): every container that process
 * creates carries {@link LABEL_RUNSET} and {@link LABEL_UNIT} with these values, so a run set's
 * containers are found, and swept, by label only (work, verify, validation containers alike).
 */
export const ENV_RUNSET = 'EXPBENCH_RUNSET';
export const ENV_RUNSET_UNIT = 'EXPBENCH_RUNSET_UNIT';

/** The run-set labels of this process ({@link ENV_RUNSET}, {@link ENV_RUNSET_UNIT}); `{}` outside a unit. */
export function runSetLabels(env: NodeJS.ProcessEnv = process.env): Record<string, string> {
  const ok = (v: string | undefined): v is string => typeof v === 'string' && /^[\w.:-]{1,128}$/.test(v);
  const runSet = env[ENV_RUNSET];
  const unit = env[ENV_RUNSET_UNIT];
  return { ...(ok(runSet) ? { [LABEL_RUNSET]: runSet } : {}), ...(ok(runSet) && ok(unit) ? { [LABEL_UNIT]: unit } : {}) };
}

/** `work`: the solver's long-lived container; `verify`: a single-use clean run of the verifier. */
export type ContainerRole = 'work' | 'verify';

/** The project's labels, in typed form. */
export interface ContainerLabels {
  /** Task id `<conference>/<paperId>/<index>`. */
  task: string;
  /** Session id (stable for the life of a session folder). */
  session: string;
  role: ContainerRole;
}

/** Resource limits of one container. Undefined fields mean "no limit". */
export interface Limits {
  /** CPUs, fractional allowed (1.5 = one and a half cores); HostConfig.NanoCpus. */
  cpus?: number;
  /** Memory in bytes, swap included (HostConfig.Memory = MemorySwap). */
  memoryBytes?: number;
  /** Maximum number of processes/threads in the container (HostConfig.PidsLimit). */
  pids?: number;
  /** false: NetworkMode `none` (only `lo`); true: the engine's default bridge. */
  network: boolean;
  /** Ask for all GPUs (HostConfig.DeviceRequests); honoured only when the engine has GPU support. */
  gpus?: boolean;
}

export type { Bind } from './binds';

/** Options of {@link createContainer}. */
export interface CreateContainerOptions {
  /** Image tag or id. */
  image: string;
  labels: ContainerLabels;
  binds?: Bind[];
  limits: Limits;
  /** Main process; default `['sleep', 'infinity']` (a long-lived container to `exec` into). */
  cmd?: string[];
  /** `solver`, or `uid:gid`. */
  user: string;
  /** Working directory inside the container, e.g. `/workspace`. */
  workdir: string;
  /** Environment of the main process (and the default of every exec). Never put secrets here. */
  env?: Record<string, string>;
  /** Container name; default: the engine picks one. */
  name?: string;
  /** Host name inside the container (shown in shell prompts); default: the engine's (the short id). */
  hostname?: string;
  /** Start after creating (default true). Pass false to copy files in first. */
  start?: boolean;
  /**
   * Open the main process's stdin for one attach (OpenStdin + StdinOnce): it reads what the first
   * attached client writes, up to that client's end of input (default false: stdin is empty).
   */
  openStdin?: boolean;
  /** More labels (for example {@link LABEL_OWNER}); the project's three labels always win. */
  extraLabels?: Record<string, string>;
  /**
   * tmpfs mounts, container path → mount options (HostConfig.Tmpfs), e.g. `{ '/scratch': 'size=64m,exec,mode=1777' }`:
   * a folder whose size the kernel caps (the engine cannot cap a container's own disk here).
   */
  tmpfs?: Record<string, string>;
}

/** A container this project created. */
export interface Created {
  container: Docker.Container;
  id: string;
  /** Whether GPUs were passed (asked for and available). */
  gpus: boolean;
}

/** Docker label map for `labels` (plus `extra`). */
export function toDockerLabels(labels: ContainerLabels, extra: Record<string, string> = {}): Record<string, string> {
  return { ...extra, [LABEL_TASK]: labels.task, [LABEL_SESSION]: labels.session, [LABEL_ROLE]: labels.role };
}

/** The engine's HostConfig for `limits`, `binds` and `gpus` (exported for tests and records). */
export function hostConfigFor(limits: Limits, binds: Bind[] = [], gpus = false): Docker.HostConfig {
  const hc: Docker.HostConfig = {
    Binds: binds.map((b) => `${b.hostPath}:${b.containerPath}${b.readOnly ? ':ro' : ''}`),
    NetworkMode: limits.network ? 'bridge' : 'none',
    Init: true, // docker-init (tini) as pid 1: reaps zombies, forwards signals
    SecurityOpt: ['no-new-privileges'],
  };
  if (limits.cpus !== undefined) hc.NanoCpus = Math.round(limits.cpus * 1e9);
  if (limits.memoryBytes !== undefined) {
    hc.Memory = limits.memoryBytes;
    hc.MemorySwap = limits.memoryBytes; // no swap beyond the limit
  }
  if (limits.pids !== undefined) hc.PidsLimit = limits.pids;
  if (gpus) hc.DeviceRequests = [{ Driver: '', Count: -1, DeviceIDs: [], Capabilities: [['gpu']], Options: {} }];
  return hc;
}

/**
 * Creates (and by default starts) a container with the project's labels and the given limits.
 * Validates limits (positive numbers) and the bind sources (no symbolic link, nothing missing:
 * assertBindSources) before talking to the engine.
 * @throws ExpBenchError BAD_INPUT for a bad limit or bind source; IMAGE_MISSING when the image is absent;
 *   DOCKER_UNAVAILABLE when the engine is gone; CONTAINER_FAILED otherwise (engine's message)
 */
export async function createContainer(docker: Docker, opts: CreateContainerOptions): Promise<Created> {
  validateLimits(opts.limits, opts.labels.session);
  await assertBindSources(opts.binds ?? []);
  const gpus = opts.limits.gpus ? await gpusAvailable(docker) : false;
  if (opts.limits.gpus && !gpus) logger.warn(`GPUs asked for session ${opts.labels.session} but the engine has no GPU support; running without`);
  const env = Object.entries(opts.env ?? {}).map(([k, v]) => `${k}=${v}`);
  let container: Docker.Container;
  try {
    container = await docker.createContainer({
      name: opts.name,
      Hostname: opts.hostname,
      Image: opts.image,
      Cmd: opts.cmd ?? ['sleep', 'infinity'],
      User: opts.user,
      WorkingDir: opts.workdir,
      Env: env,
      Labels: toDockerLabels(opts.labels, { ...runSetLabels(), ...opts.extraLabels, ...(gpus ? { 'expbench.gpus': 'all' } : {}) }),
      Tty: false,
      OpenStdin: opts.openStdin === true,
      StdinOnce: opts.openStdin === true,
      AttachStdin: opts.openStdin === true,
      StopTimeout: 2,
      HostConfig: { ...hostConfigFor(opts.limits, opts.binds, gpus), ...(opts.tmpfs ? { Tmpfs: opts.tmpfs } : {}) },
    });
  } catch (e) {
    if (statusOf(e) === 404 && /image/i.test(engineMessage(e))) {
      throw new ExpBenchError('IMAGE_MISSING', opts.image, `the Docker image is not present (${engineMessage(e)}); build it with: sudo bash sandbox/build-offline.sh`, { cause: e });
    }
    throw dockerError(e, opts.name ?? `${opts.labels.role} container of session ${opts.labels.session}`, 'creating the container', docker);
  }
  logger.info(`created ${opts.labels.role} container ${container.id.slice(0, 12)} (session ${opts.labels.session}, image ${opts.image})`);
  if (opts.start !== false) await startContainer(docker, container);
  return { container, id: container.id, gpus };
}

/** Starts `container`; a container already running is fine. @throws as {@link dockerError} */
export async function startContainer(docker: Docker, container: Docker.Container): Promise<void> {
  try {
    await container.start();
  } catch (e) {
    if (statusOf(e) === 304) return; // already started
    await removeContainer(docker, container.id).catch(() => undefined);
    throw dockerError(e, container.id.slice(0, 12), 'starting the container', docker);
  }
}

/**
 * Removes a container (force: running ones are killed; anonymous volumes too).
 * A container that is already gone, or being removed, is not an error.
 * @returns true when this call removed it
 * @throws ExpBenchError DOCKER_UNAVAILABLE when the engine is gone
 */
export async function removeContainer(docker: Docker, id: string): Promise<boolean> {
  try {
    await docker.getContainer(id).remove({ force: true, v: true });
    logger.debug(`removed container ${id.slice(0, 12)}`);
    return true;
  } catch (e) {
    const status = statusOf(e);
    if (status === 404) return false;
    if (status === 409 && /already in progress/i.test(engineMessage(e))) return false;
    throw dockerError(e, id.slice(0, 12), 'removing the container', docker);
  }
}

/**
 * Containers carrying the project's labels (all states), optionally of one session and role.
 * @throws ExpBenchError DOCKER_UNAVAILABLE when the engine is gone
 */
export async function listProjectContainers(docker: Docker, filter: { session?: string; role?: ContainerRole } = {}): Promise<Docker.ContainerInfo[]> {
  const label = [filter.session !== undefined ? `${LABEL_SESSION}=${filter.session}` : LABEL_SESSION];
  if (filter.role) label.push(`${LABEL_ROLE}=${filter.role}`);
  try {
    return await docker.listContainers({ all: true, filters: { label } });
  } catch (e) {
    throw dockerError(e, filter.session ?? 'all sessions', 'listing containers', docker);
  }
}

/**
 * Containers of a run set (label {@link LABEL_RUNSET}), all states, optionally of one unit
 * ({@link LABEL_UNIT}). Nothing else is listed: a run set never touches another's containers.
 * @throws ExpBenchError DOCKER_UNAVAILABLE when the engine is gone
 */
export async function listRunSetContainers(docker: Docker, runSet: string, unit?: string): Promise<Docker.ContainerInfo[]> {
  if (!runSet) throw new ExpBenchError('BAD_INPUT', '(empty)', 'a run set id is required');
  const label = [`${LABEL_RUNSET}=${runSet}`, ...(unit !== undefined ? [`${LABEL_UNIT}=${unit}`] : [])];
  try {
    return await docker.listContainers({ all: true, filters: { label } });
  } catch (e) {
    throw dockerError(e, `run set ${runSet}`, 'listing containers', docker);
  }
}

/**
 * Removes every project container whose session is not alive (crash leftovers), at start-up.
 * @param isAlive tells whether a session id is still in use; default: none is (remove all)
 * @returns ids of the removed containers
 */
export async function removeOrphans(docker: Docker, isAlive: (session: string, info: Docker.ContainerInfo) => boolean | Promise<boolean> = () => false): Promise<string[]> {
  const removed: string[] = [];
  for (const info of await listProjectContainers(docker)) {
    const session = info.Labels?.[LABEL_SESSION] ?? '';
    if (await isAlive(session, info)) continue;
    if (await removeContainer(docker, info.Id)) removed.push(info.Id);
  }
  if (removed.length) logger.info(`removed ${removed.length} orphan container(s)`);
  return removed;
}

/** Why a container stopped, in words (exit code, OOM kill), for CONTAINER_FAILED messages. */
export async function describeState(container: Docker.Container): Promise<string> {
  try {
    const s = (await container.inspect()).State;
    // A container being force-removed is still Running while the engine kills it: not running.
    if (s.Status === 'removing') return 'being removed';
    if (s.Running) return 'running';
    return `${s.Status}, exit code ${s.ExitCode}${s.OOMKilled ? ', killed for exceeding its memory limit (OOM)' : ''}${s.Error ? `, ${s.Error}` : ''}`;
  } catch (e) {
    if (statusOf(e) === 404) return 'removed';
    throw dockerError(e, container.id.slice(0, 12), 'inspecting the container');
  }
}

function validateLimits(l: Limits, input: string): void {
  const bad = (name: string, v: number | undefined, min: number) =>
    v !== undefined && (!Number.isFinite(v) || v < min) ? `${name}=${v} (must be ≥ ${min})` : undefined;
  const problems = [bad('cpus', l.cpus, 0.01), bad('memoryBytes', l.memoryBytes, 6 * 1024 * 1024), bad('pids', l.pids, 1)].filter(Boolean);
  if (l.pids !== undefined && !Number.isInteger(l.pids)) problems.push(`pids=${l.pids} (must be an integer)`);
  if (problems.length) throw new ExpBenchError('BAD_INPUT', input, `invalid container limits: ${problems.join(', ')}`);
}
