import { execFile } from 'node:child_process';
import * as fs from 'node:fs';
import { promisify } from 'node:util';
import type Docker from 'dockerode';
import { ExpBenchError } from '../errors';
import { log } from '../log';
import { SOLVER_GID, SOLVER_UID } from './copy';
import { withContainersPaused } from './pause';
import { errorMessage } from '../util/errors';

const run = promisify(execFile);
const logger = log('sandbox');

/**
 * How the container user gets write access to a bind-mounted session workspace.
 *
 * The image's user is `solver`, uid/gid 1000; the workspace on the host belongs to whoever
 * prepared it (root here, in CI, on servers). The rule (one, for every engine on Linux):
 *
 * 1. Owner uid 1000 (the usual desktop user): nothing to do; run as `solver`.
 * 2. Otherwise the workspace KEEPS its owner and is shared with the solver through its group:
 *    group 1000, group read/write (`g+rwX`), set-gid directories (new files stay in group 1000).
 *    Its `.git` (the solver's own repository, never used by the host) was written with
 *    `core.sharedRepository=group` by the preparation (git keeps objects and the index
 *    group-writable); nothing of it is changed or run here. Run as `solver`.
 *    Needs root, or an owner who is a member of group 1000.
 * 3. When 2 is not permitted: run as the owner's `uid:gid` (never as root: a root-owned workspace
 *    on a non-root host process cannot occur, since the process prepared it).
 *
 * Files and folders that a host process creates later (the researcher-mode editor, code-server
 * running as root with umask 022) get group 1000 from the set-gid bit and group write from the
 * default ACLs that step 2 also sets on every directory (`setfacl -m d:u::rwX,d:g::rwX,d:o::rX`;
 * a default ACL replaces the umask for new entries, POSIX.1e). Without `setfacl` (Debian package
 * `acl`, installed by scripts/setup-apt.sh) or on a file system without ACLs this part is skipped
 * with a warning, and such new files are readable, not writable, by the solver.
 *
 * The walk runs as this process (root on a server) over a tree the solver writes, with tools that
 * follow the links of the paths they are given (`find -exec chmod g+s {}`, `setfacl`: a folder
 * listed by find and then swapped for a link makes them change what the link names; coreutils
 * before 9.5 has the same race in `chmod -R`). So it runs while every project container that
 * mounts the workspace is held paused ({@link withContainersPaused}): a container that a dead
 * serve left running, or any other that mounts the workspace, cannot change the tree under it.
 *
 * Inside the image, git trusts every directory (`safe.directory=*`), so the solver's git works on a
 * workspace it does not own. Not applied on macOS/Windows, where Docker
 * Desktop maps ownership itself.
 * @returns the `User` to run the work container as: `solver` or `uid:gid`
 * @param o.docker the engine whose containers are paused (default: the shared connection)
 * @throws ExpBenchError BAD_INPUT naming the directory when it does not exist; CONTAINER_FAILED /
 *   DOCKER_UNAVAILABLE when a container that mounts it cannot be paused (nothing was changed then)
 */
export async function shareWorkspaceWithSolver(dir: string, o: { docker?: Docker } = {}): Promise<string> {
  const st = await fs.promises.stat(dir).catch(() => undefined);
  if (!st?.isDirectory()) throw new ExpBenchError('BAD_INPUT', dir, 'the session workspace does not exist or is not a directory');
  if (process.platform !== 'linux' || st.uid === SOLVER_UID) return 'solver';
  try {
    await withContainersPaused(dir, 'sharing the workspace with the container user', async () => {
      await run('chgrp', ['-R', String(SOLVER_GID), dir]);
      await run('chmod', ['-R', 'g+rwX', dir]);
      await run('find', [dir, '-type', 'd', '-exec', 'chmod', 'g+s', '{}', '+']);
      await setDefaultAcls(dir);
    }, o);
    logger.debug(`workspace ${dir} shared with group ${SOLVER_GID} (owner uid ${st.uid} kept)`);
    return 'solver';
  } catch (e) {
    if (e instanceof ExpBenchError) throw e; // the pause was refused: nothing was walked
    if (st.uid === 0) {
      throw new ExpBenchError('SESSION_INVALID', dir, `the workspace is owned by root and could not be shared with the container user (uid ${SOLVER_UID}): ${errorMessage(e)}`, { cause: e });
    }
    logger.warn(`could not share ${dir} with group ${SOLVER_GID} (${errorMessage(e)}); the container will run as ${st.uid}:${st.gid}`);
    return `${st.uid}:${st.gid}`;
  }
}

/** Default ACLs on every directory under `dir`, so new entries are group-writable whatever the umask; warns and returns when not possible. */
async function setDefaultAcls(dir: string): Promise<void> {
  try {
    await run('find', [dir, '-type', 'd', '-exec', 'setfacl', '-m', 'd:u::rwX,d:g::rwX,d:o::rX', '{}', '+']);
  } catch (e) {
    logger.warn(`no default ACLs on ${dir} (${errorMessage(e)}): folders the host's editor creates there will not be writable by the container user; install the Debian package acl`);
  }
}
