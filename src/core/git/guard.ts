import * as fs from 'node:fs';
import * as path from 'node:path';
import { ExpBenchError } from '../errors';
import { SOLVER_GID, SOLVER_UID } from '../layout';

/**
 * The refusal of a git folder the solver can write (issue 26): git reads a repository's
 * configuration, hooks, attributes and alternates from its git folder, so a git folder that a
 * work container (user `solver`, uid/gid 1000) or anyone else but the host can change is never
 * run in. Checked before every call of the layer (run.ts), on the git folder after resolving its
 * links (`realpath`), on each of its parent folders, and on the entries of it that git reads
 * (`config`, `info/`, `objects/`, `objects/info/`, `refs/`).
 *
 * A folder is refused when:
 * - it lies in a session's `workspace/` or `channel/` (the folders a work container mounts; told
 *   by `private/manifest.json` beside them), whoever owns it: this also holds where the host user
 *   is uid 1000 itself and ownership tells nothing;
 * - it belongs to uid {@link SOLVER_UID} (unless the host runs as that uid), or is writable by
 *   group {@link SOLVER_GID}, or by everyone — for a parent folder, group or world write is
 *   harmless when the folder has the sticky bit (`/tmp`): nobody else can rename what is in it.
 *
 * - it is the git folder itself and belongs to another uid than this process's (or root's): git's
 *   own ownership check ("dubious ownership") does not apply to a git folder named with
 *   `--git-dir`, so the layer makes it. A user's `--source` checkout, which may belong to another
 *   uid, is not run in this way: it is a `checkout` call (run.ts), trusted for its own path only.
 *
 * @throws ExpBenchError `GIT_FAILED` naming the git folder: which folder is writable by whom, and
 *   that nothing was run; or that it does not exist.
 */
export function assertHostGitDir(gitDir: string): void {
  let real: string;
  try {
    real = fs.realpathSync(gitDir);
  } catch (e) {
    throw new ExpBenchError('GIT_FAILED', gitDir, `no such git repository (${(e as NodeJS.ErrnoException).code ?? String(e)})`);
  }
  const problem = gitDirProblem(real);
  if (problem) {
    throw new ExpBenchError('GIT_FAILED', gitDir,
      `refused to run git here: ${problem}. Its configuration, hooks and attributes could then be the solver's; nothing was run`);
  }
}

/**
 * The same check for a folder a repository is about to be made in (`git init`, `clone`): `dir` and
 * its parents as parent folders of a git folder.
 * @throws ExpBenchError `GIT_FAILED` naming `dir`
 */
export function assertHostFolder(dir: string): void {
  const real = fs.realpathSync(dir);
  for (let d = real; ; d = path.dirname(d)) {
    const w = writableBySolver(fs.statSync(d), true);
    const mounted = mountedFolder(d);
    if (w || mounted) {
      throw new ExpBenchError('GIT_FAILED', dir, `refused to make a repository here: ${mounted ? `it is inside ${mounted}, which a work container mounts` : `${d} ${w}`}; nothing was run`);
    }
    if (path.dirname(d) === d) return;
  }
}

const uid = typeof process.getuid === 'function' ? process.getuid() : -1;

/** Entries of a git folder that git reads and that must be as safe as the folder itself. */
const READ_ENTRIES = ['config', 'info', 'objects', path.join('objects', 'info'), 'refs', 'commondir'];

/** Why the git folder `real` (no links in it) is not the host's alone, or undefined. */
export function gitDirProblem(real: string): string | undefined {
  for (const entry of READ_ENTRIES) {
    const p = path.join(real, entry);
    const st = fs.lstatSync(p, { throwIfNoEntry: false });
    if (!st) continue;
    if (st.isSymbolicLink()) return `${p} is a symbolic link`;
    const w = writableBySolver(st, false);
    if (w) return `${p} ${w}`;
  }
  for (let d = real, first = true; ; first = false) {
    const st = fs.statSync(d);
    const w = writableBySolver(st, !first);
    if (w) return `${d === real ? 'the git folder' : `its parent folder ${d}`} ${w}`;
    if (first && st.uid !== uid && st.uid !== 0 && uid !== -1) return `the git folder belongs to uid ${st.uid}, not to this process's user (uid ${uid})`;
    const mounted = mountedFolder(d);
    if (mounted) return `it is inside ${mounted}, which a work container mounts`;
    const up = path.dirname(d);
    if (up === d) return undefined;
    d = up;
  }
}

/** How the solver could write a file or folder with these stats, or undefined. */
function writableBySolver(st: fs.Stats, parent: boolean): string | undefined {
  const sticky = parent && st.isDirectory() && (st.mode & 0o1000) !== 0;
  if (st.uid === SOLVER_UID && uid !== SOLVER_UID) return `belongs to uid ${SOLVER_UID} (the work container's user)`;
  if (st.gid === SOLVER_GID && (st.mode & 0o020) && !sticky) return `is writable by group ${SOLVER_GID} (the work container's user)`;
  if ((st.mode & 0o002) && !sticky) return 'is writable by everyone';
  return undefined;
}

/**
 * The session folder (`workspace/` or `channel/`, which a work container mounts) that `real` (a
 * path without links) lies in, or undefined.
 */
export function insideMountedFolder(real: string): string | undefined {
  for (let d = real; ; d = path.dirname(d)) {
    const m = mountedFolder(d);
    if (m) return m;
    if (path.dirname(d) === d) return undefined;
  }
}

/** `dir` when it is a session's `workspace/` or `channel/` (a `private/manifest.json` beside it), else undefined. */
function mountedFolder(dir: string): string | undefined {
  const name = path.basename(dir);
  if (name !== 'workspace' && name !== 'channel') return undefined;
  return fs.existsSync(path.join(path.dirname(dir), 'private', 'manifest.json')) ? `the session folder ${dir}` : undefined;
}
