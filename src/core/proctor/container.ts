import { promises as fsp } from 'node:fs';
import * as path from 'node:path';
import type Docker from 'dockerode';
import { ExpBenchError } from '../errors';
import { SessionLayout } from '../layout';
import { log } from '../log';
import { type Bind, type Limits, SOLVER_GID, SOLVER_UID, WORKSPACE_MOUNT, createContainer, dockerError, findWorkContainer, removeContainer, shareWorkspaceWithSolver, startContainer, workContainerName } from '../sandbox';
import { writeJsonAtomic } from '../util/fs';
import { type EditorInstall, PROCTOR_MOUNTS, codeServerCommand, proctoredSettings } from './editor';

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
  /** Whether an existing container of the same shape was reused. */
  reattached: boolean;
}

/** The binds of the proctored work container, all of them (the mount contract, docs/architecture.md). */
export function proctoredBinds(layout: SessionLayout, editor: EditorInstall): Bind[] {
  return [
    { hostPath: layout.workspace, containerPath: WORKSPACE_MOUNT },
    { hostPath: layout.channel, containerPath: PROCTOR_MOUNTS.channel },
    { hostPath: editor.codeServerDir, containerPath: PROCTOR_MOUNTS.editor, readOnly: true },
    { hostPath: editor.nodeBinary, containerPath: `${PROCTOR_MOUNTS.node}/bin/node`, readOnly: true },
    { hostPath: layout.editorExtensions, containerPath: PROCTOR_MOUNTS.extensions, readOnly: true },
  ];
}

/**
 * Makes the host side of the mounts: `<session>/channel/` (owned by the container user, uid/gid
 * 1000, when this process may chown; else mode 0777) with `editor/User/settings.json`
 * ({@link proctoredSettings}), and `<session>/editor-extensions/` holding a copy of the solver
 * build as `<publisher>.<name>-<version>/` plus the `extensions.json` index code-server reads (it
 * cannot write one into a read-only folder). The copy is remade on every call (a rebuilt solver
 * extension is picked up); the channel's editor data (backups, state) is kept.
 * @throws ExpBenchError BAD_INPUT naming the solver build when its package.json is missing or not valid
 */
export async function prepareProctorFolders(layout: SessionLayout, solverExtension: string, aiAllowed = false): Promise<void> {
  const pj = await fsp.readFile(path.join(solverExtension, 'package.json'), 'utf8').then((t) => JSON.parse(t) as Record<string, unknown>).catch((e: unknown) => {
    throw new ExpBenchError('BAD_INPUT', solverExtension, `not a built solver extension (package.json: ${(e as Error).message}); build it with npm run build`);
  });
  const { publisher, name, version } = pj;
  if (typeof publisher !== 'string' || typeof name !== 'string' || typeof version !== 'string') {
    throw new ExpBenchError('BAD_INPUT', path.join(solverExtension, 'package.json'), 'needs string fields publisher, name and version');
  }
  const userDir = path.join(layout.channel, 'editor', 'User');
  await fsp.mkdir(userDir, { recursive: true });
  await writeJsonAtomic(path.join(userDir, 'settings.json'), proctoredSettings(aiAllowed));
  await giveToSolver(layout.channel);

  const folder = `${publisher}.${name}-${version}`;
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

/** chown -R 1000:1000 when permitted, else chmod 0777 on the folder itself. */
async function giveToSolver(dir: string): Promise<void> {
  const walk = async (p: string): Promise<void> => {
    await fsp.lchown(p, SOLVER_UID, SOLVER_GID);
    const st = await fsp.lstat(p);
    if (st.isDirectory()) for (const e of await fsp.readdir(p)) await walk(path.join(p, e));
  };
  try {
    await walk(dir);
  } catch {
    await fsp.chmod(dir, 0o777);
  }
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
 * another shape (a researcher-mode one, another image or other mounts) is replaced; a stopped one
 * of this shape is started again (its file system, and the editor data in the channel, are kept).
 * @throws ExpBenchError from prepareProctorFolders and the sandbox (IMAGE_MISSING, DOCKER_UNAVAILABLE, CONTAINER_FAILED)
 */
export async function ensureProctoredContainer(docker: Docker, o: ProctoredContainerOptions): Promise<ProctoredContainer> {
  const layout = new SessionLayout(path.resolve(o.sessionDir));
  const session = path.basename(layout.root);
  await prepareProctorFolders(layout, o.solverExtension, o.aiAllowed);
  const binds = proctoredBinds(layout, o.editor);
  const name = workContainerName(session);
  const editorSocket = path.join(layout.channel, 'code-server.sock');
  const found = await findWorkContainer(docker, session);
  if (found) {
    const info = await found.container.inspect().catch((e: unknown) => { throw dockerError(e, found.id.slice(0, 12), 'inspecting the work container', docker); });
    const want = binds.map((b) => `${b.hostPath}:${b.containerPath}${b.readOnly ? ':ro' : ''}`).sort().join('\n');
    const same = info.Config.Labels?.[LABEL_PROCTORED] === '1' && found.image === o.image && [...(info.HostConfig.Binds ?? [])].sort().join('\n') === want;
    if (same) {
      await fsp.rm(editorSocket, { force: true });
      if (!info.State.Running) await startContainer(docker, found.container);
      logger.info(`reattached to proctored container ${found.id.slice(0, 12)} (session ${session})`);
      return { container: found.container, id: found.id, name, editorSocket, reattached: true };
    }
    logger.info(`replacing work container ${found.id.slice(0, 12)} by its proctored shape`);
    await removeContainer(docker, found.id);
  }
  await fsp.rm(editorSocket, { force: true });
  const user = await shareWorkspaceWithSolver(layout.workspace);
  const home = user === 'solver' ? '/home/solver' : '/tmp';
  const created = await createContainer(docker, {
    name, hostname: 'task', image: o.image,
    labels: { task: o.task, session, role: 'work' },
    extraLabels: { [LABEL_PROCTORED]: '1' },
    binds, limits: { ...o.limits, network: false },
    cmd: codeServerCommand(WORKSPACE_MOUNT), user, workdir: WORKSPACE_MOUNT,
    env: { HOME: home, XDG_CONFIG_HOME: `${home}/.config`, XDG_DATA_HOME: `${home}/.local/share`, SHELL: '/bin/bash' },
  });
  return { container: created.container, id: created.id, name, editorSocket, reattached: false };
}

/** Starts the proctored container again after it stopped (the forwarder's restart button). */
export async function restartProctoredContainer(docker: Docker, container: Docker.Container, editorSocket: string): Promise<void> {
  const info = await container.inspect().catch((e: unknown) => { throw dockerError(e, container.id.slice(0, 12), 'inspecting the work container', docker); });
  if (info.State.Running) return;
  await fsp.rm(editorSocket, { force: true });
  await startContainer(docker, container);
}
