import { existsSync } from 'node:fs';
import * as path from 'node:path';
import type Docker from 'dockerode';
import { ExpBenchError } from '../errors';
import { SessionLayout } from '../layout';
import { log } from '../log';
import { packageRoot } from '../paths';
import {
  type EditorInstall, type Forwarder, type ProctoredContainer,
  ensureProctoredContainer, findEditorInstall, parseBind, pauseForClock, restartProctoredContainer, startForwarder, waitForEditor,
} from '../proctor';
import { connectDocker, ensureEngine, ensureImage } from '../sandbox';
import { MARKER_PATH, writeSessionMarker } from '../session/marker';
import type { Task } from '../tasks/types';
import { errorMessage } from '../util/errors';
import { readManifest } from '../workspace/manifest';
import { startBaselineChannel } from './baselineChannel';
import { claimServe } from './serveLock';
import { prepareTask } from './prepareTask';
import type { SubmitFlowResult } from './submit';

const logger = log('proctor');

/** Options of {@link startProctoredBaseline}. */
export interface ProctoredBaselineOptions {
  task: Task;
  /** The session folder: prepared here when it is empty or missing; a prepared session of this task is reused. */
  sessionDir: string;
  /** Passed to prepareTask when the session is prepared here. */
  source?: string;
  commit?: string;
  /** The image to prepare with (default: the task's, as prepareTask chooses). */
  image?: string;
  cacheDir?: string;
  /** `HOST:PORT`, `PORT` or `HOST` for the forwarder (default 127.0.0.1 and a free port). */
  bind?: string;
  /** The solver build of the extension (default `<package>/dist/solver`). */
  solverExtension?: string;
  /** The editor install (default: findEditorInstall()). */
  editor?: EditorInstall;
  /** Whether the session allows AI in the window (default false). */
  aiAllowed?: boolean;
  docker?: Docker;
  /** The session token (default: random). */
  token?: string;
  onProgress?: (message: string) => void;
  /** Called on the host with the full result of a submission (verifier and judge outcomes); the baseliner sees only "submitted". */
  onSubmitted?: (result: SubmitFlowResult) => void;
  signal?: AbortSignal;
}

/** A served proctored window. */
export interface ProctoredBaseline {
  /** The link to give the baseliner (holds the token once). */
  url: string;
  sessionDir: string;
  container: ProctoredContainer;
  forwarder: Forwarder;
  editor: EditorInstall;
  /** Closes the forwarder and the channel and stops the container (kept, with its file system; a later serve reattaches). */
  dispose(): Promise<void>;
}

/**
 * A proctored session's host side without a forwarder of its own (a campaign forwards many
 * sessions through one front door): the channel, the work container with its editor answering on
 * `container.editorSocket` (sealed), and what a forwarder needs of it.
 */
export interface ProctoredWork {
  sessionDir: string;
  container: ProctoredContainer;
  editor: EditorInstall;
  /** Starts the stopped container again (the stopped page's button); resolves when the editor answers (sealed again). */
  restart(): Promise<void>;
  /** Why the editor's socket must not be served now (EditorSocket.breach), or undefined. */
  guard(): Promise<string | undefined>;
  /** Whether the session's clock is paused (its container is then frozen). */
  paused(): boolean;
  /** Resumes the clock from the host (and thaws the container). */
  resume(): Promise<void>;
  /** Called when the clock pauses, before the container is frozen (a forwarder ends the window's WebSocket connections). */
  onPause(listener: () => void): void;
  /** Sets a hard working-time budget on the session's clock (ms; BaselineChannel.setBudget): reached, the clock pauses and the container is frozen. */
  setBudget(budgetMs: number): Promise<void>;
  /** Closes the channel and stops the container (kept, with its file system; a later start reattaches). */
  dispose(): Promise<void>;
}

/**
 * `expbench baseline serve`: prepares the task (unless the folder already holds a prepared session
 * of it), starts the host side of the session channel (`<session>/channel/session.sock`,
 * startBaselineChannel), the proctored work container (code-server inside, src/core/proctor) and
 * the forwarder with its token, and waits until the editor answers through it.
 * @throws ExpBenchError from prepareTask, findEditorInstall, the sandbox and the forwarder; on a
 *   failure after the channel started, what was started is stopped again
 */
export async function startProctoredBaseline(o: ProctoredBaselineOptions): Promise<ProctoredBaseline> {
  const bind = parseBind(o.bind);
  let setUrl: ((url: string) => Promise<void>) | undefined;
  const work = await startProctoredWork({ ...o, onClaim: (c) => { setUrl = c.setUrl; } });
  try {
    const forwarder = await startForwarder({
      socketPath: work.container.editorSocket, host: bind.host, port: bind.port, token: o.token,
      restart: () => work.restart(), guard: () => work.guard(), paused: () => work.paused(), resume: () => work.resume(),
    });
    work.onPause(() => forwarder.dropConnections());
    await setUrl?.(forwarder.url);
    logger.info(`the proctored window answers on ${forwarder.origin}`);
    o.onProgress?.(`the proctored window answers on ${forwarder.origin}`);
    return {
      url: forwarder.url, sessionDir: work.sessionDir, container: work.container, forwarder, editor: work.editor,
      dispose: async () => { await forwarder.close().catch(() => undefined); await work.dispose(); },
    };
  } catch (e) {
    await work.dispose();
    throw e;
  }
}

/**
 * The part of {@link startProctoredBaseline} before the forwarder, for a campaign's sessions
 * (src/core/campaigns/serve.ts): the same claim of the session folder (one serve at a time),
 * preparation, channel, proctored container (every guard: no network, only the contract's mounts,
 * non-root, the channel sealed once the editor answers) and the clock's pause of the container.
 * @throws as startProctoredBaseline; on a failure what was started is stopped again
 */
export async function startProctoredWork(o: Omit<ProctoredBaselineOptions, 'bind' | 'token'> & { onClaim?: (claim: Awaited<ReturnType<typeof claimServe>>) => void }): Promise<ProctoredWork> {
  const sessionDir = path.resolve(o.sessionDir);
  const layout = new SessionLayout(sessionDir);
  const say = (m: string) => { logger.info(m); o.onProgress?.(m); };
  // one serve per session folder: a second is refused before it starts (or stops) anything
  const claim = await claimServe(layout);
  o.onClaim?.(claim);
  try {
    return await serve(o, layout, sessionDir, say, claim);
  } catch (e) {
    await claim.release();
    throw e;
  }
}

async function serve(o: Omit<ProctoredBaselineOptions, 'bind' | 'token'>, layout: SessionLayout, sessionDir: string, say: (m: string) => void,
  claim: Awaited<ReturnType<typeof claimServe>>): Promise<ProctoredWork> {
  const editor = o.editor ?? await findEditorInstall();
  const solverExtension = path.resolve(o.solverExtension ?? path.join(packageRoot(), 'dist', 'solver'));
  if (existsSync(path.join(layout.workspace, MARKER_PATH))) {
    say(`reusing the prepared session ${sessionDir}`);
  } else {
    say(`preparing ${o.task.id} in ${sessionDir}`);
    await prepareTask({
      task: o.task, source: o.source, commit: o.commit, ...(o.image ? { image: o.image } : {}), outDir: sessionDir, cacheDir: o.cacheDir, signal: o.signal,
      onProgress: (p) => say(`${p.step}: ${p.message}`),
    });
    await writeSessionMarker(sessionDir, o.task);
  }
  const manifest = await readManifest(sessionDir);
  const docker = o.docker ?? connectDocker();
  await ensureEngine(docker);
  await ensureImage(docker, manifest.image);

  const stops: Array<() => Promise<void>> = [() => claim.release()];
  const dispose = async () => {
    for (const stop of stops.reverse()) await stop().catch((e: unknown) => logger.warn(`stopping: ${errorMessage(e)}`));
    stops.length = 0;
  };
  const pauseListeners: Array<() => void> = [];
  try {
    say('starting the session channel');
    // reproduce_exp_bench.sh runs asked through the channel go to the proctored work container, once it is up.
    const work: { container?: Docker.Container } = {};
    const workContainer = async (): Promise<Docker.Container> => {
      if (!work.container) throw new ExpBenchError('SESSION_INVALID', sessionDir, 'the proctored work container is not started yet');
      return work.container;
    };
    // a paused clock freezes the work container (docker pause): no work happens off the clock
    const onClock = async (paused: boolean): Promise<void> => {
      if (!work.container) return;
      if (paused) for (const l of pauseListeners) l();
      await pauseForClock(docker, work.container, paused);
    };
    const channel = await startBaselineChannel({ sessionDir, socketPath: path.join(layout.channel, 'session.sock'), aiAllowed: o.aiAllowed, onSubmitted: o.onSubmitted, workContainer, onClock });
    stops.push(() => channel.dispose());
    say(`starting the proctored work container (${manifest.image}, no network)`);
    const container = await ensureProctoredContainer(docker, {
      sessionDir, task: o.task.id, image: manifest.image, editor, solverExtension, aiAllowed: o.aiAllowed,
      limits: manifest.environment?.limits?.memoryMiB ? { memoryBytes: manifest.environment.limits.memoryMiB * 1024 * 1024 } : {},
    });
    stops.push(async () => {
      await container.container.unpause().catch(() => undefined);
      await container.container.stop({ t: 5 }).catch(() => undefined);
    });
    await editorUp(container);
    work.container = container.container;
    // a session whose clock was paused when the last serve ended stays paused (the window offers to resume)
    if (channel.clockPaused()) await pauseForClock(docker, container.container, true);
    say('the proctored editor answers');
    return {
      sessionDir, container, editor,
      restart: async () => {
        await restartProctoredContainer(docker, container.container, { layout, socket: container.socket, aiAllowed: o.aiAllowed });
        await editorUp(container);
        if (channel.clockPaused()) await pauseForClock(docker, container.container, true);
      },
      guard: () => container.socket.breach(),
      paused: () => channel.clockPaused(),
      resume: () => channel.resumeClock(),
      onPause: (l) => { pauseListeners.push(l); },
      setBudget: (ms) => channel.setBudget(ms),
      dispose,
    };
  } catch (e) {
    await dispose();
    throw e;
  }
}

/** Waits until the editor answers on its socket, then seals the channel folder (the host's again: EditorSocket.seal). */
async function editorUp(container: ProctoredContainer): Promise<void> {
  await waitForEditor(container.editorSocket);
  await container.socket.seal();
}
