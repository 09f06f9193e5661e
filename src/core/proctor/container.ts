import { promises as fsp } from 'node:fs';
import * as path from 'node:path';
import type Docker from 'dockerode';
import { ExpBenchError } from '../errors';
import { SessionLayout } from '../layout';
import { log } from '../log';
import {
  type Bind, type Limits, WORKSPACE_MOUNT, assertBindSources, assertNotHostUid, clockPause, createContainer, dockerError, findWorkContainer, removeContainer,
  shareWorkspaceWithSolver, startContainer, statusOf, workContainerName,
} from '../sandbox';
import { writeJsonAtomic } from '../util/fs';
import { type EditorInstall, PROCTOR_MOUNTS, codeServerCommand } from './editor';
import { EditorSocket } from './editorSocket';
import { editorFolders, prepareEditorFolders } from './folders';

const logger = log('proctor');

/** Label on a proctored work container (its main process is the editor's server). */
export const LABEL_PROCTORED = 'expbench.proctored';

/** Options of {@link ensureProctoredContainer}. */
export interface ProctoredContainerOptions {
  /** The session folder (prepared: workspace/ and private/). */
  sessionDir: string;
  /** Task id. */
  task: string;
  /** Image tag (the manifest's). */
  image: string;
  editor: EditorInstall;
  /** The solver build of the extension (a folder with package.json and its main script), e.g. `dist/solver`. */
  solverExtension: string;
  /** CPU, memory and process limits; the network is always off. */
  limits?: Omit<Limits, 'network'>;
  /** Whether the session allows AI in the window (default false: see proctoredSettings). */
  aiAllowed?: boolean;
}

/** The proctored work container, running. */
export interface ProctoredContainer {
  container: Docker.Container;
  id: string;
  name: string;
  /** Host path of `<session>/channel/code-server.sock`. */
  editorSocket: string;
  /** The editor's socket and the channel folder's seal (editorSocket.ts): seal once the editor answers. */
  socket: EditorSocket;
  /** Whether an existing container of the same shape was reused. */
  reattached: boolean;
}

/**
 * The binds of the proctored work container, all of them (the mount contract, docs/architecture.md):
 * the workspace, the channel folder (the host's: its sockets), the editor's `User/` and `Machine/`
 * folders each a mount of its own (the solver's), the host's copies of the window's settings
 * read-only over `settings.json` in each, and the read-only editor, node and solver build. Each
 * session-side source is checked to pass through no symbolic link below the session folder
 * (`within`, assertBindSources).
 */
export function proctoredBinds(layout: SessionLayout, editor: EditorInstall): Bind[] {
  const f = editorFolders(layout);
  const within = layout.root;
  return [
    { hostPath: layout.workspace, containerPath: WORKSPACE_MOUNT, within },
    { hostPath: layout.channel, containerPath: PROCTOR_MOUNTS.channel, within },
    { hostPath: f.user, containerPath: PROCTOR_MOUNTS.user, within },
    { hostPath: f.machine, containerPath: PROCTOR_MOUNTS.machine, within },
    { hostPath: f.userSettings, containerPath: PROCTOR_MOUNTS.userSettings, readOnly: true, within },
    { hostPath: f.machineSettings, containerPath: PROCTOR_MOUNTS.machineSettings, readOnly: true, within },
    { hostPath: editor.codeServerDir, containerPath: PROCTOR_MOUNTS.editor, readOnly: true },
    { hostPath: editor.nodeBinary, containerPath: `${PROCTOR_MOUNTS.node}/bin/node`, readOnly: true },
    { hostPath: layout.editorExtensions, containerPath: PROCTOR_MOUNTS.extensions, readOnly: true, within },
  ];
}

/**
 * Makes the host side of the mounts: the editor's folders and the read-only settings
 * (prepareEditorFolders of folders.ts: no link followed, nothing walked that the solver can
 * write, the channel folder the host's), and `<session>/editor-extensions/` holding a copy of the
 * solver build as `<publisher>.<name>-<version>/` plus the `extensions.json` index code-server
 * reads (it cannot write one into a read-only folder). The copy is remade on every call (a
 * rebuilt solver extension is picked up); the editor's data (backups, state) is kept. Call only
 * while no work container of the session runs (ensureProctoredContainer stops or removes one first).
 * @throws ExpBenchError BAD_INPUT naming the solver build when its package.json is missing or not
 *   valid, or a folder of the session that cannot be made
 */
export async function prepareProctorFolders(layout: SessionLayout, solverExtension: string, aiAllowed = false): Promise<void> {
  const pj = await fsp.readFile(path.join(solverExtension, 'package.json'), 'utf8').then((t) => JSON.parse(t) as Record<string, unknown>).catch((e: unknown) => {
    throw new ExpBenchError('BAD_INPUT', solverExtension, `not a built solver extension (package.json: ${(e as Error).message}); build it with npm run build`);
  });
  const { publisher, name, version } = pj;
  if (typeof publisher !== 'string' || typeof name !== 'string' || typeof version !== 'string') {
    throw new ExpBenchError('BAD_INPUT', path.join(solverExtension, 'package.json'), 'needs string fields publisher, name and version');
  }
  await prepareEditorFolders(layout, aiAllowed);

  // editor-extensions/ is the host's (mounted read-only): nothing of the solver's can be in it
  const folder = `${publisher}.${name}-${version}`;
  const ext = await fsp.lstat(layout.editorExtensions).catch(() => undefined);
  if (ext && !ext.isDirectory()) await fsp.rm(layout.editorExtensions, { force: true });
  await fsp.rm(layout.editorExtensions, { recursive: true, force: true });
  await fsp.mkdir(layout.editorExtensions, { recursive: true });
  await fsp.cp(solverExtension, path.join(layout.editorExtensions, folder), { recursive: true, dereference: true });
  await writeJsonAtomic(path.join(layout.editorExtensions, 'extensions.json'), [{
    identifier: { id: `${publisher}.${name}`.toLowerCase() },
    version,
    location: { $mid: 1, path: `${PROCTOR_MOUNTS.extensions}/${folder}`, scheme: 'file' },
    relativeLocation: folder,
    metadata: { installedTimestamp: 0, source: 'vsix', pinned: true },
  }]);
  await run755(layout.editorExtensions);
}

/** Everything readable by the container user (a copy keeps the build's modes; umask may have hidden some). */
async function run755(dir: string): Promise<void> {
  for (const e of await fsp.readdir(dir, { withFileTypes: true, recursive: true })) {
    const p = path.join(e.parentPath, e.name);
    await fsp.chmod(p, e.isDirectory() ? 0o755 : 0o644);
  }
  await fsp.chmod(dir, 0o755);
}

/**
 * Creates (or reattaches to) the session's work container in its proctored shape: named
 * workContainerName(session) like every work container (so runs of the session reuse it), labelled
 * {@link LABEL_PROCTORED}, NetworkMode none, ONLY the binds of {@link proctoredBinds}, code-server
 * as the main process (codeServerCommand) run as the container user. An existing work container of
 * another shape (a researcher-mode one, another image or other mounts) is removed first; one of
 * this shape is stopped (a serve that died may have left it running, paused or not) and started
 * again (its file system, and the editor data in the channel, are kept), so nothing of the
 * solver's runs while the host prepares the folders and the channel is open to the editor.
 * Refused before anything is made when the container would run as this process's uid
 * (assertNotHostUid). The caller seals the channel ({@link EditorSocket}.seal) once the editor answers.
 * @throws ExpBenchError from prepareProctorFolders and the sandbox (IMAGE_MISSING, DOCKER_UNAVAILABLE,
 *   CONTAINER_FAILED); SESSION_INVALID naming the uid (assertNotHostUid)
 */
export async function ensureProctoredContainer(docker: Docker, o: ProctoredContainerOptions): Promise<ProctoredContainer> {
  const layout = new SessionLayout(path.resolve(o.sessionDir));
  const session = path.basename(layout.root);
  const user = await shareWorkspaceWithSolver(layout.workspace);
  assertNotHostUid(user, 'the proctored window');
  const binds = proctoredBinds(layout, o.editor);
  const name = workContainerName(session);
  const socket = new EditorSocket(layout.channel);
  const found = await findWorkContainer(docker, session);
  let reuse: Docker.Container | undefined;
  if (found) {
    const info = await found.container.inspect().catch((e: unknown) => { throw dockerError(e, found.id.slice(0, 12), 'inspecting the work container', docker); });
    const want = binds.map((b) => `${b.hostPath}:${b.containerPath}${b.readOnly ? ':ro' : ''}`).sort().join('\n');
    const same = info.Config.Labels?.[LABEL_PROCTORED] === '1' && found.image === o.image && [...(info.HostConfig.Binds ?? [])].sort().join('\n') === want
      && info.Config.User === user;
    if (same) {
      await stopContainer(docker, found.container, info);
      reuse = found.container;
    } else {
      logger.info(`replacing work container ${found.id.slice(0, 12)} by its proctored shape`);
      await removeContainer(docker, found.id);
    }
  }
  await prepareProctorFolders(layout, o.solverExtension, o.aiAllowed);
  await assertBindSources(binds);
  await socket.openForEditor();
  if (reuse && found) {
    await startContainer(docker, reuse);
    logger.info(`reattached to proctored container ${found.id.slice(0, 12)} (session ${session})`);
    return { container: reuse, id: found.id, name, editorSocket: socket.path, socket, reattached: true };
  }
  const home = user === 'solver' ? '/home/solver' : '/tmp';
  const created = await createContainer(docker, {
    name, hostname: 'task', image: o.image,
    labels: { task: o.task, session, role: 'work' },
    extraLabels: { [LABEL_PROCTORED]: '1' },
    binds, limits: { ...o.limits, network: false },
    cmd: codeServerCommand(WORKSPACE_MOUNT), user, workdir: WORKSPACE_MOUNT,
    env: { HOME: home, XDG_CONFIG_HOME: `${home}/.config`, XDG_DATA_HOME: `${home}/.local/share`, SHELL: '/bin/bash' },
  });
  return { container: created.container, id: created.id, name, editorSocket: socket.path, socket, reattached: false };
}

/** Stops a container (unpaused first: the clock's pause, pauseForClock); resolves when it is not running. */
async function stopContainer(docker: Docker, container: Docker.Container, info: Docker.ContainerInspectInfo): Promise<void> {
  if (info.State.Paused) await container.unpause().catch((e: unknown) => { throw dockerError(e, container.id.slice(0, 12), 'unpausing the work container', docker); });
  if (info.State.Running) await container.stop({ t: 5 }).catch((e: unknown) => { if (statusOf(e) !== 304) throw dockerError(e, container.id.slice(0, 12), 'stopping the work container', docker); });
}

/**
 * Starts the proctored container again after it stopped (the forwarder's restart button): the
 * editor's folders are made again (nothing of the solver's runs while the container is stopped)
 * and the channel opened to the editor; the caller seals it once the editor answers.
 */
export async function restartProctoredContainer(docker: Docker, container: Docker.Container, o: { layout: SessionLayout; socket: EditorSocket; aiAllowed?: boolean }): Promise<void> {
  const info = await container.inspect().catch((e: unknown) => { throw dockerError(e, container.id.slice(0, 12), 'inspecting the work container', docker); });
  if (info.State.Running) return;
  await prepareEditorFolders(o.layout, o.aiAllowed);
  await o.socket.openForEditor();
  await startContainer(docker, container);
}

/**
 * The clock's pause of a proctored session (issue 26): `docker pause` freezes every process of the
 * work container (the editor, the terminal, anything started there), so no work happens off the
 * clock; `resume` thaws them. The clock is one counted holder of the container's pause
 * (src/core/sandbox/pause.ts, `clockPause`), beside the host's walks of the workspace (the
 * snapshot Submit freezes, the live patch): a clock resumed during a walk leaves the container
 * paused until the walk ends. Already in the state asked for: nothing is done.
 * @throws ExpBenchError CONTAINER_FAILED (dockerError) when the engine refuses
 */
export async function pauseForClock(docker: Docker, container: Docker.Container, paused: boolean): Promise<void> {
  const info = await container.inspect().catch((e: unknown) => { throw dockerError(e, container.id.slice(0, 12), 'inspecting the work container', docker); });
  if (!info.State.Running) return;
  await clockPause(docker, container, paused).catch((e: unknown) => {
    throw dockerError(e, container.id.slice(0, 12), paused ? 'pausing the work container for the clock' : 'unpausing the work container', docker);
  });
  logger.info(`work container ${container.id.slice(0, 12)} ${paused ? 'paused with the clock' : 'running again with the clock'}`);
}
