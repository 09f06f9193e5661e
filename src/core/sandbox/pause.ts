import * as fs from 'node:fs';
import * as path from 'node:path';
import type Docker from 'dockerode';
import { log } from '../log';
import { errorMessage } from '../util/errors';
import { connectDocker, dockerError, isEngineGone } from './connection';
import { LABEL_ROLE } from './containers';

const logger = log('sandbox.pause');

/**
 * One container's pause, shared by every holder in this process: `count` holders; `ours` when
 * this process paused it (a container found paused already, by the clock of another process or
 * by hand, is left paused at the end); `chain` orders the engine calls of one container.
 */
interface Hold { count: number; ours: boolean; chain: Promise<unknown>; ready: Promise<void> }
const holds = new Map<string, Hold>();

/** Gives a held pause back; the last holder's release unpauses (when this process paused it). Never throws. */
export type ReleasePause = () => Promise<void>;

/**
 * Holds `container` paused (`docker pause`: the cgroup freezer stops every process of it, its
 * `docker exec`s included, until `docker unpause`) until the returned release is called. Holds
 * are counted per container in this process: the first one pauses, the last release unpauses, so
 * overlapping or nested holders (a freeze inside a clock pause, two walks at once) never unpause
 * early. A container not running (stopped, created) runs nothing and is not touched; one paused
 * already by someone else stays paused after the last release.
 *
 * @param reason says in the log why (e.g. `freezing the submission`)
 * @throws ExpBenchError CONTAINER_FAILED / DOCKER_UNAVAILABLE when the engine refuses the pause
 *   (the hold is not taken then: nothing is left paused)
 */
export async function holdPaused(docker: Docker, container: Docker.Container, reason: string): Promise<ReleasePause> {
  const id = container.id;
  let h = holds.get(id);
  if (!h) { h = { count: 0, ours: false, chain: Promise.resolve(), ready: Promise.resolve() }; holds.set(id, h); }
  const hold = h;
  hold.count++;
  const pausing = hold.count > 1 ? hold.ready : hold.chain.then(async () => {
    if (hold.ours) return; // still paused by this process: the last release's unpause was skipped for this holder
    const info = await container.inspect();
    if (!info.State.Running || info.State.Paused) {
      hold.ours = false;
      logger.debug(`${id.slice(0, 12)} is ${info.State.Paused ? 'paused already' : 'not running'}: left as it is while ${reason}`);
      return;
    }
    await pauseWithRetries(container);
    hold.ours = true;
    logger.info(`work container ${id.slice(0, 12)} paused while ${reason}`);
  });
  if (hold.count === 1) { hold.ready = pausing; hold.chain = pausing.catch(() => undefined); }
  try {
    await pausing;
  } catch (e) {
    hold.count--;
    if (hold.count === 0) holds.delete(id);
    wake();
    throw dockerError(e, id.slice(0, 12), `pausing the work container (${reason})`, docker);
  }
  let released = false;
  return async () => {
    if (released) return;
    released = true;
    hold.count--;
    if (hold.count > 0) return;
    const unpausing = hold.chain.then(async () => {
      if (hold.count > 0 || !hold.ours) return; // a new holder came meanwhile, or we never paused it
      hold.ours = false;
      try {
        await container.unpause();
      } catch (e) {
        // once more, then say it loudly: a container left paused is a frozen window
        await new Promise((r) => setTimeout(r, 200));
        await container.unpause().catch((e2: unknown) => {
          logger.error(`work container ${id.slice(0, 12)} could NOT be unpaused after ${reason} (${errorMessage(e)}; ${errorMessage(e2)}): run docker unpause ${id.slice(0, 12)}`);
        });
        return;
      }
      logger.info(`work container ${id.slice(0, 12)} running again after ${reason}`);
    });
    hold.chain = unpausing.catch(() => undefined);
    await hold.chain;
    if (hold.count === 0 && holds.get(id) === hold) holds.delete(id);
    wake();
  };
}

/** Tries of a pause that the runtime refuses before giving up (see {@link pauseWithRetries}). */
export const PAUSE_TRIES = 5;

/**
 * `docker pause`, tried up to {@link PAUSE_TRIES} times, 100 ms × try apart: the runtime (runc)
 * gives up freezing a cgroup whose processes keep entering system calls in a tight loop
 * ("OCI runtime pause failed: unable to freeze"), and thaws it again; a later try usually holds.
 */
async function pauseWithRetries(container: Docker.Container): Promise<void> {
  for (let i = 1; ; i++) {
    try {
      await container.pause();
      return;
    } catch (e) {
      if (i >= PAUSE_TRIES || !/unable to freeze/i.test(errorMessage(e) + JSON.stringify((e as { json?: unknown })?.json ?? ''))) throw e;
      logger.warn(`work container ${container.id.slice(0, 12)}: the pause did not hold (${errorMessage(e)}); trying again (${i + 1}/${PAUSE_TRIES})`);
      await new Promise((r) => setTimeout(r, 100 * i));
    }
  }
}

let waiters: Array<() => void> = [];
function wake(): void {
  const w = waiters;
  waiters = [];
  for (const f of w) f();
}

/**
 * Resolves once this process holds no walk's pause of the container `containerId` (the clock's
 * hold, {@link clockPause}, does not count): `docker exec` into a paused container is refused by
 * the engine, so an exec asked for during a host walk (a run, an agent's command) waits for the
 * walk (seconds at most) instead of failing.
 */
export async function walksDone(containerId: string): Promise<void> {
  while (pauseHolders(containerId) - (clockHolds.has(containerId) ? 1 : 0) > 0) {
    await new Promise<void>((r) => waiters.push(r));
  }
}

/**
 * Runs `fn` with `containers` held paused ({@link holdPaused}), and releases them afterwards,
 * whatever `fn` does (try/finally: a thrown or cancelled `fn` never leaves a container paused).
 * @throws what `fn` throws; the pause's ExpBenchError before `fn` runs when a container cannot be paused
 */
export async function pauseDuring<T>(docker: Docker, containers: Docker.Container[], reason: string, fn: () => Promise<T>): Promise<T> {
  const releases: ReleasePause[] = [];
  try {
    for (const c of containers) releases.push(await holdPaused(docker, c, reason));
    return await fn();
  } finally {
    for (const r of releases.reverse()) await r();
  }
}

/** How many holders this process has on a container's pause now (0: none); for tests and logs. */
export function pauseHolders(containerId: string): number {
  return holds.get(containerId)?.count ?? 0;
}

/**
 * The running (or paused) project containers (label `expbench.role`) that mount `dir`, a folder
 * of this machine, or a folder above or below it, writable: the containers whose processes can change
 * what is in `dir`. Empty when no Docker engine answers on its socket (then no container runs:
 * nothing of a container can change the folder).
 * @throws ExpBenchError DOCKER_UNAVAILABLE / CONTAINER_FAILED when an engine answers with an error
 */
export async function containersMounting(docker: Docker, dir: string): Promise<Docker.Container[]> {
  let infos: Docker.ContainerInfo[];
  try {
    infos = await docker.listContainers({ filters: { label: [LABEL_ROLE], status: ['running', 'paused'] } });
  } catch (e) {
    if (isEngineGone(e)) {
      logger.debug(`no Docker engine answers (${errorMessage(e)}): no container can change ${dir}`);
      return [];
    }
    throw dockerError(e, dir, 'listing the containers that mount the workspace', docker);
  }
  const real = realOr(dir);
  const related = (src: string) => {
    const s = realOr(src);
    return s === real || real.startsWith(s.endsWith(path.sep) ? s : s + path.sep) || s.startsWith(real + path.sep);
  };
  // a read-only mount changes nothing (a curation file's data folders of a verification)
  return infos.filter((i) => (i.Mounts ?? []).some((m) => m.RW !== false && m.Source && related(m.Source))).map((i) => docker.getContainer(i.Id));
}

/**
 * Runs `fn` (a host walk of the live folder `dir`: git's `add` of a session's workspace…) while
 * nothing of a container can change `dir`: every running project container that mounts it is
 * held paused ({@link containersMounting}, {@link pauseDuring}). So a solver's process cannot swap
 * a folder for a link (or anything else) between git's `lstat` and its `open`: the host reads the
 * folder as it stood when the pause began. Without a Docker engine, `fn` runs as it is (no
 * container runs; a researcher's own processes on the host are not the proctored case).
 * @throws the pause's ExpBenchError (nothing was walked then), or what `fn` throws
 */
export async function withContainersPaused<T>(dir: string, reason: string, fn: () => Promise<T>, o: { docker?: Docker } = {}): Promise<T> {
  const docker = o.docker ?? sharedDocker();
  const containers = await containersMounting(docker, dir);
  if (!containers.length) return fn();
  return pauseDuring(docker, containers, reason, fn);
}

let shared: Docker | undefined;
function sharedDocker(): Docker {
  shared ??= connectDocker();
  return shared;
}

function realOr(p: string): string {
  try { return fs.realpathSync(p); } catch { return path.resolve(p); }
}

const clockHolds = new Map<string, ReleasePause>();

/**
 * The proctored clock's pause as one holder among the others ({@link holdPaused}): `paused`
 * true takes the clock's hold (once; asking again does nothing), false gives it back and wants
 * the container running: it is unpaused now when no walk holds it (even when another process,
 * an earlier serve of the session, paused it), else by the last walk's release. So a clock
 * resumed while the host walks the workspace leaves the container paused until the walk ends,
 * and a walk that ends while the clock is paused leaves it paused.
 * @throws as {@link holdPaused}; CONTAINER_FAILED when the unpause is refused
 */
export async function clockPause(docker: Docker, container: Docker.Container, paused: boolean): Promise<void> {
  const id = container.id;
  const held = clockHolds.get(id);
  if (paused) {
    if (held) return;
    clockHolds.set(id, await holdPaused(docker, container, 'the clock is paused'));
    return;
  }
  if (held) {
    clockHolds.delete(id);
    await held();
  }
  const walking = holds.get(id);
  if (walking && walking.count > 0) { walking.ours = true; return; } // the last walk's release unpauses it
  const info = await container.inspect().catch((e: unknown) => { throw dockerError(e, id.slice(0, 12), 'inspecting the work container', docker); });
  if (info.State.Running && info.State.Paused) {
    await container.unpause().catch((e: unknown) => { throw dockerError(e, id.slice(0, 12), 'unpausing the work container', docker); });
  }
}
