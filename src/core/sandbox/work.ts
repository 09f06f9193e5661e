import { createHash } from 'node:crypto';
import * as fs from 'node:fs';
import * as path from 'node:path';
import type Docker from 'dockerode';
import { ExpBenchError } from '../errors';
import { log } from '../log';
import { dockerError, isLocalEngine, statusOf } from './connection';
import { type Created, type Limits, LABEL_OWNER, LABEL_ROLE, LABEL_SESSION, LABEL_TASK, createContainer, listProjectContainers, removeContainer, removeOrphans, startContainer } from './containers';
import { ownerGone } from './processes';
import { shareWorkspaceWithSolver } from './ownership';
import { assertNotHostUid } from './binds';

const logger = log('sandbox');

/** Where the session workspace appears inside every container (image contract v1). */
export const WORKSPACE_MOUNT = '/workspace';

/** Options of {@link createWorkContainer}. */
export interface WorkContainerOptions {
  /** Task id `<conference>/<paperId>/<index>`. */
  task: string;
  /** Session id. */
  session: string;
  /** The session's `workspace/` folder on the host (SessionLayout.workspace); the only thing mounted. */
  workspaceDir: string;
  /** Image tag, e.g. DEFAULT_IMAGE. */
  image: string;
  limits: Limits;
  /** Extra environment (no secrets). */
  env?: Record<string, string>;
  /**
   * For a confined session (an agent's): what works there, for the message (`the agent`). The
   * container is then refused when it would run as this host process's uid (assertNotHostUid).
   */
  confined?: string;
  /**
   * The process that removes the container when it ends (`ownerToken()`, label `expbench.owner`):
   * set by a command that makes a work container for itself (`expbench agent run`), never by a
   * window (a reloaded window reattaches to its container). One whose owner is gone (killed) is
   * removed by {@link removeOwnerlessWorkContainers}.
   */
  owner?: string;
}

/** A found work container. */
export interface WorkContainer {
  container: Docker.Container;
  id: string;
  /** Engine state: `running`, `exited`, `created`… */
  state: string;
  /** The image the container was created from (tag as given at creation). */
  image: string;
}

/** Deterministic container name for a session's work container (one per session). */
export function workContainerName(session: string): string {
  const slug = session.replace(/[^a-zA-Z0-9_.-]+/g, '-').replace(/^[^a-zA-Z0-9]+/, '').slice(0, 40);
  const hash = createHash('sha256').update(session).digest('hex').slice(0, 8);
  return `expbench-work-${slug ? `${slug}-` : ''}${hash}`;
}

/**
 * Creates and starts the session's long-lived work container: the workspace bind-mounted at
 * /workspace, `sleep infinity` as main process (under docker-init), user `solver` (see
 * {@link shareWorkspaceWithSolver} for how the mount becomes writable), workdir /workspace,
 * NetworkMode `none` unless `limits.network`. Named {@link workContainerName}(session), so a second
 * create for the same session fails instead of making a twin: use {@link ensureWorkContainer}.
 * @throws ExpBenchError BAD_INPUT (workspace missing, bad limits), IMAGE_MISSING, DOCKER_UNAVAILABLE, CONTAINER_FAILED;
 *   SESSION_INVALID naming the uid for a `confined` session that would run as this process's uid
 */
export async function createWorkContainer(docker: Docker, opts: WorkContainerOptions): Promise<Created> {
  const workspaceDir = path.resolve(opts.workspaceDir);
  const user = await shareWorkspaceWithSolver(workspaceDir);
  if (opts.confined) assertNotHostUid(user, opts.confined);
  return createContainer(docker, {
    name: workContainerName(opts.session),
    hostname: 'task',
    image: opts.image,
    labels: { task: opts.task, session: opts.session, role: 'work' },
    binds: [{ hostPath: workspaceDir, containerPath: WORKSPACE_MOUNT }],
    limits: opts.limits,
    cmd: ['sleep', 'infinity'],
    user,
    workdir: WORKSPACE_MOUNT,
    env: { ...opts.env, HOME: user === 'solver' ? '/home/solver' : '/tmp' },
    ...(opts.owner ? { extraLabels: { [LABEL_OWNER]: opts.owner } } : {}),
  });
}

/**
 * Removes the work containers made by a process for itself (label `expbench.owner`, see
 * {@link WorkContainerOptions.owner}) whose process is gone: what a killed `expbench agent run`
 * left running. Containers without an owner (a window's) and those of live processes are kept.
 * @returns the sessions whose container was removed
 */
export async function removeOwnerlessWorkContainers(docker: Docker): Promise<string[]> {
  const removed: string[] = [];
  for (const info of await listProjectContainers(docker, { role: 'work' })) {
    const owner = info.Labels?.[LABEL_OWNER];
    if (!owner || ownerGone(owner) !== true) continue;
    if (await removeContainer(docker, info.Id)) removed.push(info.Labels?.[LABEL_SESSION] ?? info.Id.slice(0, 12));
  }
  if (removed.length) logger.info(`removed the work containers of ${removed.join(', ')}: their process is gone`);
  return removed;
}

/**
 * The session's work container, if one exists (any state), for reattaching after a reload.
 * When several exist (should not happen), the newest is returned.
 * @throws ExpBenchError DOCKER_UNAVAILABLE when the engine is gone
 */
export async function findWorkContainer(docker: Docker, session: string): Promise<WorkContainer | undefined> {
  const found = await listProjectContainers(docker, { session, role: 'work' });
  if (!found.length) return undefined;
  const newest = found.sort((a, b) => b.Created - a.Created)[0];
  return { container: docker.getContainer(newest.Id), id: newest.Id, state: newest.State, image: newest.Image };
}

/**
 * Reattaches to the session's work container (starting it if stopped), or creates it.
 * A container made from another image or for another workspace is replaced.
 * @returns the running container and whether it was reattached (true) or created (false)
 */
export async function ensureWorkContainer(docker: Docker, opts: WorkContainerOptions): Promise<{ container: Docker.Container; id: string; reattached: boolean }> {
  const found = await findWorkContainer(docker, opts.session);
  if (found) {
    let info: Docker.ContainerInspectInfo;
    try {
      info = await found.container.inspect();
    } catch (e) {
      if (statusOf(e) !== 404) throw dockerError(e, found.id.slice(0, 12), 'inspecting the work container', docker);
      return { ...(await createWorkContainer(docker, opts)), reattached: false };
    }
    const mount = info.Mounts.find((m) => m.Destination === WORKSPACE_MOUNT)?.Source;
    const sameWorkspace = mount !== undefined && path.resolve(mount) === path.resolve(opts.workspaceDir);
    const sameTask = info.Config.Labels?.[LABEL_TASK] === opts.task;
    if (found.image === opts.image && sameWorkspace && sameTask) {
      if (opts.confined) assertNotHostUid(info.Config.User ?? '', opts.confined);
      if (!info.State.Running) await startContainer(docker, found.container);
      logger.info(`reattached to work container ${found.id.slice(0, 12)} (session ${opts.session})`);
      return { container: found.container, id: found.id, reattached: true };
    }
    logger.info(`replacing work container ${found.id.slice(0, 12)}: image, task or workspace changed`);
    await removeContainer(docker, found.id);
  }
  const created = await createWorkContainer(docker, opts);
  return { container: created.container, id: created.id, reattached: false };
}

/**
 * Stops and removes the session's work container(s). Not an error when there is none.
 * @returns how many were removed
 */
export async function removeWorkContainer(docker: Docker, session: string): Promise<number> {
  if (!session) throw new ExpBenchError('BAD_INPUT', '(empty)', 'a session id is required');
  let n = 0;
  for (const c of await listProjectContainers(docker, { session, role: 'work' })) if (await removeContainer(docker, c.Id)) n++;
  return n;
}

/**
 * Whether a project container still belongs to a session that exists: a work container whose
 * bind-mounted workspace folder is gone (the session was deleted) is not. Other roles are left to
 * their owners (the verifier sweeps its own stopped containers).
 */
export function workspaceStillExists(info: Docker.ContainerInfo): boolean {
  if (info.Labels?.[LABEL_ROLE] !== 'work') return true;
  const source = info.Mounts?.find((m) => m.Destination === WORKSPACE_MOUNT)?.Source;
  return source !== undefined && fs.existsSync(source);
}

/**
 * Start-up cleanup: removes work containers whose session workspace no longer exists on this
 * machine (crash or deleted-session leftovers). Does nothing when the engine is not local (a
 * remote engine's mount paths cannot be checked here).
 * @returns ids of the removed containers
 * @throws ExpBenchError DOCKER_UNAVAILABLE when the engine is gone
 */
export async function removeDeadWorkContainers(docker: Docker): Promise<string[]> {
  if (!isLocalEngine(docker)) return [];
  return removeOrphans(docker, (_session, info) => workspaceStillExists(info));
}
