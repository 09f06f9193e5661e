import { constants as fsc, promises as fsp } from 'node:fs';
import * as path from 'node:path';
import { ExpBenchError } from '../errors';
import type { SessionLayout } from '../layout';
import { log } from '../log';
import { SOLVER_GID, SOLVER_UID } from '../sandbox';
import { kindWords, entryKind } from '../untrusted';
import { errorMessage } from '../util/errors';
import { writeJsonAtomic } from '../util/fs';
import { PROCTOR_MOUNTS, proctoredSettings } from './editor';

const logger = log('proctor');

/** The host-side paths of the proctored window's editor folders (the sources of the contract's binds). */
export interface EditorFolders {
  /** `<session>/channel/editor`: the user data (the solver's). */
  userData: string;
  /** `<session>/channel/editor/User` and `…/Machine`: each a mount of its own. */
  user: string;
  machine: string;
  /** Where the read-only settings files land (empty files on the host: the mounts cover them in the container). */
  userMountPoint: string;
  machineMountPoint: string;
  /** The host's own copies (`<session>/editor-settings/…`), mounted read-only over the mount points. */
  userSettings: string;
  machineSettings: string;
}

/** The editor folders of a session (paths only; nothing is read or made). */
export function editorFolders(layout: SessionLayout): EditorFolders {
  const userData = path.join(layout.channel, 'editor');
  return {
    userData,
    user: path.join(userData, 'User'),
    machine: path.join(userData, 'Machine'),
    userMountPoint: path.join(userData, 'User', 'settings.json'),
    machineMountPoint: path.join(userData, 'Machine', 'settings.json'),
    userSettings: path.join(layout.editorSettings, 'User.settings.json'),
    machineSettings: path.join(layout.editorSettings, 'Machine.settings.json'),
  };
}

/** True when this process runs as root (it can chown; the container's uid then differs from the host's). */
function isRoot(): boolean {
  return process.getuid?.() === 0;
}

/**
 * Makes `dir` a real folder, never through a link: an entry there that is not a folder (a link the
 * solver planted when the channel folder was theirs, a file, a FIFO) is renamed aside as
 * `<name>.moved-<time>` (rename never follows a link, and nothing is lost) and a folder made in
 * its place. Its parent must already be a real folder this process made.
 * @returns true when the folder was made now
 */
async function realFolder(dir: string, mode: number): Promise<boolean> {
  const st = await fsp.lstat(dir).catch((e: NodeJS.ErrnoException) => { if (e.code === 'ENOENT') return undefined; throw e; });
  if (st?.isDirectory()) return false;
  if (st) {
    const aside = `${dir}.moved-${Date.now()}`;
    await fsp.rename(dir, aside);
    logger.warn(`${dir} was ${kindWords(entryKind(st))}, not a folder: moved aside to ${path.basename(aside)}`);
  }
  await fsp.mkdir(dir, { mode });
  return true;
}

/**
 * A regular file at `file` for a file mount to land on: made empty (exclusively, never through a
 * link, `note` as its text) when absent; an entry of another kind is moved aside first. An
 * existing regular file is left as it is (the read-only mount covers it in the container).
 */
async function mountPointFile(file: string, note: string): Promise<void> {
  const st = await fsp.lstat(file).catch((e: NodeJS.ErrnoException) => { if (e.code === 'ENOENT') return undefined; throw e; });
  if (st?.isFile()) return;
  if (st) {
    const aside = `${file}.moved-${Date.now()}`;
    await fsp.rename(file, aside);
    logger.warn(`${file} was ${kindWords(entryKind(st))}: moved aside to ${path.basename(aside)}`);
  }
  const fh = await fsp.open(file, fsc.O_WRONLY | fsc.O_CREAT | fsc.O_EXCL | fsc.O_NOFOLLOW, 0o644);
  try { await fh.writeFile(note); } finally { await fh.close(); }
}

/**
 * The host side of the proctored window's editor folders, made without following any link and
 * without walking a folder the solver can write:
 * - `<session>/channel/` the host's (root, 0755: {@link sealChannel}), so the solver can connect to
 *   its sockets but not remove or replace them, nor rename `editor/` away;
 * - `channel/editor/`, `editor/User/`, `editor/Machine/` real folders given to the container user
 *   (lchown of these three paths only, never recursive; mode 0777 when this process is not root),
 *   `User/` and `Machine/` being mounts of their own in the container (a mount point cannot be
 *   renamed or removed, so the read-only settings inside cannot be swapped for a new file);
 * - `User/settings.json` and `Machine/settings.json` empty regular files the read-only mounts land on;
 * - `<session>/editor-settings/` the host's alone (never mounted as a folder) with the settings the
 *   window reads: `User.settings.json` ({@link proctoredSettings}) and `Machine.settings.json`
 *   (the same: Machine settings win over User ones for what they may set).
 * An entry in the way that is not what it should be (a link, a file where a folder goes) is moved
 * aside, not followed and not deleted. Call only while no work container of the session runs in
 * another shape (ensureProctoredContainer removes one first).
 * @throws ExpBenchError BAD_INPUT naming a folder that cannot be made
 */
export async function prepareEditorFolders(layout: SessionLayout, aiAllowed = false): Promise<EditorFolders> {
  const f = editorFolders(layout);
  try {
    await realFolder(layout.channel, 0o755);
    await sealChannel(layout.channel);
    await realFolder(f.userData, 0o755);
    await realFolder(f.user, 0o755);
    await realFolder(f.machine, 0o755);
    const note = `// The proctored window reads the host's read-only copy mounted over this file (${path.relative(path.dirname(f.userMountPoint), layout.editorSettings)}/).\n`;
    await mountPointFile(f.userMountPoint, note);
    await mountPointFile(f.machineMountPoint, note);
    for (const dir of [f.userData, f.user, f.machine]) {
      if (isRoot()) await fsp.lchown(dir, SOLVER_UID, SOLVER_GID);
      else await fsp.chmod(dir, 0o777);
    }
    await realFolder(layout.editorSettings, 0o755);
    if (isRoot()) await fsp.lchown(layout.editorSettings, 0, 0);
    await fsp.chmod(layout.editorSettings, 0o755);
    const settings = proctoredSettings(aiAllowed);
    for (const file of [f.userSettings, f.machineSettings]) {
      await writeJsonAtomic(file, settings);
      await fsp.chmod(file, 0o644);
    }
  } catch (e) {
    if (e instanceof ExpBenchError) throw e;
    throw new ExpBenchError('BAD_INPUT', layout.channel, `cannot make the proctored window's folders: ${errorMessage(e)}`, { cause: e });
  }
  return f;
}

/**
 * The channel folder back to the host alone: owner this process (root: uid and gid 0), mode 0755.
 * The solver can then connect to `session.sock` and `code-server.sock` but not remove, rename or
 * replace them.
 */
export async function sealChannel(dir: string): Promise<void> {
  if (isRoot()) await fsp.lchown(dir, 0, 0);
  await fsp.chmod(dir, 0o755);
}

/**
 * Opens the channel folder to the container user while code-server makes its socket there (it
 * runs as that user): group {@link SOLVER_GID} may write (root), or everyone (mode 0777, when this
 * process cannot chown). Nothing of the solver's runs in the container at that time (code-server
 * runs nothing of the workspace before a browser connects, and the forwarder lets none in before
 * the folder is sealed again).
 */
export async function openChannelForEditor(dir: string): Promise<void> {
  if (isRoot()) {
    await fsp.lchown(dir, 0, SOLVER_GID);
    await fsp.chmod(dir, 0o775);
  } else {
    await fsp.chmod(dir, 0o777);
  }
}

/** The mount points of the editor's folders inside the container, for messages and tests. */
export const EDITOR_MOUNT_POINTS = [PROCTOR_MOUNTS.user, PROCTOR_MOUNTS.machine, PROCTOR_MOUNTS.userSettings, PROCTOR_MOUNTS.machineSettings] as const;
