import { promises as fsp } from 'node:fs';
import * as path from 'node:path';
import { ExpBenchError } from '../errors';
import { SOLVER_UID } from './copy';

/** A host directory (or file) mounted into a container. */
export interface Bind {
  hostPath: string;
  containerPath: string;
  readOnly?: boolean;
  /**
   * The folder from which down to `hostPath` no part may be a symbolic link (a session folder,
   * whose lower parts the solver could once write). Default: the source's own folder (only the
   * source itself is checked).
   */
  within?: string;
}

/**
 * Refuses a bind whose source is, or passes through, a symbolic link below its `within` folder,
 * and a source that does not exist. Docker resolves a link given as a bind source on the host:
 * a link planted where a bind source is expected would mount whatever it points at (`/`, the
 * Docker socket) into the container. Docker would also make a missing source folder itself.
 * Checked with lstat on each part, without following any.
 * @throws ExpBenchError BAD_INPUT naming the source and the link (or what is missing)
 */
export async function assertBindSources(binds: readonly Bind[]): Promise<void> {
  for (const b of binds) {
    const source = path.resolve(b.hostPath);
    const top = path.resolve(b.within ?? path.dirname(source));
    const rel = path.relative(top, source);
    if (rel.startsWith('..') || path.isAbsolute(rel)) {
      throw new ExpBenchError('BAD_INPUT', source, `a bind source must be inside ${top}`);
    }
    let at = top;
    for (const part of rel ? rel.split(path.sep) : []) {
      at = path.join(at, part);
      const st = await fsp.lstat(at).catch((e: NodeJS.ErrnoException) => {
        if (e.code === 'ENOENT') throw new ExpBenchError('BAD_INPUT', source, `the folder to mount at ${b.containerPath} does not exist (${at}); nothing was started`);
        throw new ExpBenchError('BAD_INPUT', source, `cannot check the folder to mount at ${b.containerPath}: ${e.message}`, { cause: e });
      });
      if (st.isSymbolicLink()) {
        throw new ExpBenchError('BAD_INPUT', source, `${at} is a symbolic link (to ${await fsp.readlink(at).catch(() => '?')}): Docker would mount what it points at into ${b.containerPath}; refused, nothing was started`);
      }
    }
  }
}

/** The uid a container's `User` runs as: `solver` is {@link SOLVER_UID}, `root` 0, `N` or `N:M` N; undefined for another name. */
export function uidOfUser(user: string): number | undefined {
  if (user === 'solver') return SOLVER_UID;
  if (user === 'root') return 0;
  const m = /^(\d+)(?::\d+)?$/.exec(user);
  return m ? Number(m[1]) : undefined;
}

/**
 * Refuses a confined container (a proctored window, an agent's work container) that would run as
 * this host process's own uid: its processes could then change every file the host process owns
 * through the mounts and their folders (the channel's sockets, the settings, the session's files).
 * @param what what the container is for, for the message (`the proctored window`, `the agent`)
 * @param hostUid this process's uid (default process.getuid())
 * @throws ExpBenchError SESSION_INVALID naming the uid
 */
export function assertNotHostUid(user: string, what: string, hostUid: number | undefined = process.getuid?.()): void {
  const uid = uidOfUser(user);
  if (hostUid === undefined || uid === undefined || uid !== hostUid) return;
  throw new ExpBenchError('SESSION_INVALID', `uid ${uid}`,
    `${what} would run in a container as uid ${uid}, which is this host process's own uid: the container could then change the host's files of the session. `
    + `Refused; run the host side (expbench) as root or as a user whose uid is not ${uid}${uid === SOLVER_UID ? ` (the image's container user solver has uid ${SOLVER_UID})` : ''}`);
}
