import * as path from 'node:path';
import type Docker from 'dockerode';
import * as vscode from 'vscode';
import { log } from '../../core/log';
import { connectDocker, ensureEngine } from '../../core/sandbox/connection';
import type { Limits } from '../../core/sandbox/containers';
import { ensureImage } from '../../core/sandbox/images';
import { listProjectContainers, LABEL_SESSION } from '../../core/sandbox/containers';
import { ensureWorkContainer, findWorkContainer, removeDeadWorkContainers, removeWorkContainer } from '../../core/sandbox/work';
import type { SessionLayout } from '../../core/layout';
import { setting } from '../settings';
import { errorMessage } from '../../core/util/errors';
import { plural } from '../../core/util/plural';
import { IdleTracker } from './idle';

const logger = log('container');

/** Work-container settings (`expbench.image`, `expbench.container.*`). */
export function containerSettings(defaultImage: string): { image: string; limits: Limits } {
  const mem = setting('container.memoryMb');
  return {
    image: setting('image') || defaultImage,
    limits: {
      cpus: setting('container.cpus') || undefined,
      memoryBytes: mem > 0 ? mem * 1024 * 1024 : undefined,
      pids: setting('container.pids') || undefined,
      network: setting('container.network'),
    },
  };
}

export type ContainerState = { state: 'unknown' | 'starting' | 'ready' | 'unavailable'; message?: string };

/**
 * The session's long-lived work container: created on first use (or reattached after a reload),
 * workspace bind-mounted at /workspace, limits from settings. Failures (no engine, no image) are
 * kept as a state with a precise message; the workspace stays usable for editing.
 */
export class WorkContainerManager implements vscode.Disposable {
  private docker: Docker | undefined;
  private pending: Promise<Docker.Container> | undefined;
  private readonly changed = new vscode.EventEmitter<ContainerState>();
  readonly onDidChange = this.changed.event;
  state: ContainerState = { state: 'unknown' };

  constructor(private readonly layout: SessionLayout, private readonly taskId: string, readonly image: string) {}

  get sessionId(): string {
    return path.basename(this.layout.root);
  }

  /** The running container; creates or reattaches it. @throws the engine's or the image's ExpBenchError. */
  container(): Promise<Docker.Container> {
    if (!this.pending) {
      this.pending = this.start().catch((e) => {
        this.pending = undefined;
        this.set({ state: 'unavailable', message: errorMessage(e) });
        throw e;
      });
    }
    return this.pending;
  }

  private start(): Promise<Docker.Container> {
    return Promise.resolve(vscode.window.withProgress({ location: vscode.ProgressLocation.Window, title: 'EXP-Bench' }, (p) => this.startSteps((message) => {
      p.report({ message });
      this.set({ state: 'starting', message: `${message}…` });
    })));
  }

  private async startSteps(step: (message: string) => void): Promise<Docker.Container> {
    step('connecting to the Docker engine');
    const docker = (this.docker ??= connectDocker());
    await ensureEngine(docker);
    const { image, limits } = containerSettings(this.image);
    step(`checking the image ${image}`);
    await ensureImage(docker, image);
    step('starting the task container');
    const dead = await removeDeadWorkContainers(docker).catch((e: unknown) => {
      logger.warn(`orphan cleanup failed: ${errorMessage(e)}`);
      return [];
    });
    if (dead.length) logger.info(`removed ${plural(dead.length, 'work container')} of deleted sessions`);
    const r = await ensureWorkContainer(docker, { task: this.taskId, session: this.sessionId, workspaceDir: this.layout.workspace, image, limits });
    logger.info(`${r.reattached ? 'reattached to' : 'created'} work container ${r.id.slice(0, 12)} for ${this.sessionId}`);
    this.set({ state: 'ready' });
    return r.container;
  }

  /** Whether the session's container exists and runs (false when the engine does not answer). */
  async running(): Promise<boolean> {
    const found = await findWorkContainer(this.docker ?? connectDocker(), this.sessionId).catch(() => undefined);
    return found?.state === 'running';
  }

  /**
   * Stops the container (`docker stop`, 10 s grace), keeping it and the workspace: the next use
   * starts it again with what was installed in it. Not an error when there is none.
   */
  async stop(reason = 'stopped'): Promise<void> {
    this.pending = undefined;
    const found = await findWorkContainer(this.docker ??= connectDocker(), this.sessionId);
    if (found?.state === 'running') await found.container.stop({ t: 10 });
    this.stopped(reason);
  }

  /** Someone else stopped the container: the next use starts it again. */
  stopped(reason: string): void {
    this.pending = undefined;
    this.set({ state: 'unknown', message: `container ${reason} (it starts again on the next run)` });
  }

  /** Stops and removes the container (the workspace is kept). */
  async remove(): Promise<void> {
    this.pending = undefined;
    const n = await removeWorkContainer(this.docker ?? connectDocker(), this.sessionId);
    this.set({ state: 'unknown', message: n ? 'removed' : undefined });
  }

  private set(s: ContainerState): void {
    this.state = s;
    this.changed.fire(s);
  }

  dispose(): void {
    this.changed.dispose();
  }
}

/**
 * Before the window leaves its session for `nextTaskId`: when the session's container runs, asks
 * (modal) whether to stop it. @returns false when the user cancelled the switch
 */
export async function offerToStopBeforeSwitch(manager: WorkContainerManager, taskId: string, nextTaskId: string): Promise<boolean> {
  if (!(await manager.running())) return true;
  const stop = 'Stop the Container';
  const keep = 'Keep It Running';
  const pick = await vscode.window.showWarningMessage(
    `EXP-Bench: the container of ${taskId} is still running. Stop it before opening ${nextTaskId}?`,
    { modal: true, detail: 'Its workspace and installed packages are kept; it starts again when you resume that session. Idle containers are stopped after expbench.container.idleStopMinutes anyway.' },
    stop, keep);
  if (!pick) return false;
  if (pick === stop) {
    await manager.stop('stopped when switching tasks').catch((e: unknown) => logger.warn(`could not stop the container of ${taskId}: ${errorMessage(e)}`));
  }
  return true;
}

/** How often {@link IdleContainerStopper} looks at the work containers, ms. */
export const IDLE_CHECK_MS = 60_000;

/**
 * Stops every running work container (this window's and other sessions') that has been idle for
 * `expbench.container.idleStopMinutes` (0: never): idle means no `docker exec` process runs in it
 * (see {@link IdleTracker}) and `active(session)` is false (an attached agent, between its
 * commands and while paused or taken over, counts as activity: src/extension/agent/agentCommands.ts),
 * checked every {@link IDLE_CHECK_MS}. A stopped container keeps its files and starts again on the
 * next use.
 */
export class IdleContainerStopper implements vscode.Disposable {
  private readonly tracker = new IdleTracker();
  private readonly timer: NodeJS.Timeout;
  private checking = false;

  constructor(private readonly own: () => WorkContainerManager | undefined, private readonly docker: () => Docker = connectDocker, everyMs = IDLE_CHECK_MS,
    private readonly active: (session: string) => boolean = () => false) {
    this.timer = setInterval(() => void this.check(), everyMs);
    this.timer.unref?.();
  }

  /**
   * One check (also called by tests: `only` limits it to the container of that session, leaving
   * other sessions' containers and their idle counts alone).
   * @returns the session ids whose containers were stopped
   */
  async check(now = Date.now(), only?: string): Promise<string[]> {
    const minutes = setting('container.idleStopMinutes');
    if (minutes <= 0 || this.checking) return [];
    this.checking = true;
    const stopped: string[] = [];
    try {
      const docker = this.docker();
      const running = (await listProjectContainers(docker, { role: 'work', ...(only ? { session: only } : {}) })).filter((c) => c.State === 'running');
      if (!only) this.tracker.keepOnly(running.map((c) => c.Id));
      for (const c of running) {
        const session = c.Labels?.[LABEL_SESSION] ?? c.Id.slice(0, 12);
        const busy = this.active(session) || await execRunning(docker, c.Id);
        if (!this.tracker.observe(c.Id, busy, now, minutes * 60_000)) continue;
        await docker.getContainer(c.Id).stop({ t: 10 });
        logger.info(`stopped the work container of session ${session}: idle for ${minutes} min (expbench.container.idleStopMinutes)`);
        const own = this.own();
        if (own?.sessionId === session) own.stopped(`stopped after ${minutes} min idle`);
        stopped.push(session);
      }
    } catch (e) {
      logger.debug(`idle check: ${errorMessage(e)}`);
    } finally {
      this.checking = false;
    }
    return stopped;
  }

  dispose(): void {
    clearInterval(this.timer);
  }
}

/** Whether any `docker exec` process still runs in container `id`. */
async function execRunning(docker: Docker, id: string): Promise<boolean> {
  const info = await docker.getContainer(id).inspect();
  for (const exec of info.ExecIDs ?? []) {
    const e = await docker.getExec(exec).inspect().catch(() => undefined);
    if (e?.Running) return true;
  }
  return false;
}
