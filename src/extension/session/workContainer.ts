import * as path from 'node:path';
import type Docker from 'dockerode';
import * as vscode from 'vscode';
import { log } from '../../core/log';
import { connectDocker, ensureEngine } from '../../core/sandbox/connection';
import type { Limits } from '../../core/sandbox/containers';
import { ensureImage } from '../../core/sandbox/images';
import { ensureWorkContainer, removeDeadWorkContainers, removeWorkContainer } from '../../core/sandbox/work';
import type { SessionLayout } from '../../core/layout';
import { setting } from '../settings';
import { errorMessage } from '../../core/util/errors';

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

  private async start(): Promise<Docker.Container> {
    this.set({ state: 'starting', message: 'starting the task container…' });
    const docker = (this.docker ??= connectDocker());
    await ensureEngine(docker);
    const { image, limits } = containerSettings(this.image);
    await ensureImage(docker, image);
    const dead = await removeDeadWorkContainers(docker).catch((e: unknown) => {
      logger.warn(`orphan cleanup failed: ${errorMessage(e)}`);
      return [];
    });
    if (dead.length) logger.info(`removed ${dead.length} work container(s) of deleted sessions`);
    const r = await ensureWorkContainer(docker, { task: this.taskId, session: this.sessionId, workspaceDir: this.layout.workspace, image, limits });
    logger.info(`${r.reattached ? 'reattached to' : 'created'} work container ${r.id.slice(0, 12)} for ${this.sessionId}`);
    this.set({ state: 'ready' });
    return r.container;
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
