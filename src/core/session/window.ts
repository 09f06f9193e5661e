import { createHash } from 'node:crypto';
import { promises as fsp } from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { ExpBenchError } from '../errors';
import { SessionLayout } from '../layout';
import { writeJsonAtomic } from '../util/fs';

/**
 * The researcher window of a session opens a VS Code workspace file written by the host (a
 * "session window file", `<name>.code-workspace` holding the session's `workspace/` as its one
 * folder), never the bare folder, so that Workspace Trust is not inherited from a trusted parent.
 *
 * Why (VS Code 1.100, `src/vs/workbench/services/workspaces/common/workspaceTrust.ts`): the trusted
 * list holds positive entries only (`loadTrustInfo` drops `trusted: false`, "Don't Trust" removes an
 * equal entry and nothing else), and a URI is trusted when any entry equals it or is a parent of it
 * (`doGetUriTrustInfo`, longest match). A folder under a trusted folder is therefore always trusted,
 * and VS Code has no exception list (microsoft/vscode#126311). A window on a saved workspace file is
 * trusted only when every folder AND the workspace file itself are trusted (`getWorkspaceUris`,
 * `getUrisTrust`). The file is kept where no folder that holds the session holds it too: in
 * `~/.cache/expbench/windows/` for a session outside the home folder, else in the system's
 * temporary folder (`expbench-windows-<uid>/`); only `/` (or a folder that holds both the home and
 * the temporary folder) holds both. "Trust" in that window trusts exactly the folder and the file.
 */
export interface SessionWindowPlaces {
  /** The user's home folder (default `os.homedir()`). */
  home: string;
  /** The system's temporary folder (default `os.tmpdir()`). */
  tmp: string;
  /** The user id in the temporary folder's name (default `process.getuid()`, 0 where there is none). */
  uid: number;
}

function defaultPlaces(): SessionWindowPlaces {
  return { home: os.homedir(), tmp: os.tmpdir(), uid: process.getuid?.() ?? 0 };
}

const inside = (child: string, parent: string): boolean => {
  const rel = path.relative(parent, child);
  return rel === '' || (!rel.startsWith('..') && !path.isAbsolute(rel));
};

/** The folder that holds the window files of sessions at `sessionDir` (absolute; see above). */
export function sessionWindowFolder(sessionDir: string, places: SessionWindowPlaces = defaultPlaces()): string {
  const root = path.resolve(sessionDir);
  const inHome = inside(root, path.resolve(places.home));
  return inHome ? path.join(path.resolve(places.tmp), `expbench-windows-${places.uid}`) : path.join(path.resolve(places.home), '.cache', 'expbench', 'windows');
}

/**
 * The window file's path for `sessionDir`: `<folder>/<session folder name>-<12 hex of sha256 of its
 * absolute path>.code-workspace`, the same path for the same session every time (a trust given to
 * it stays), another for every other session.
 */
export function sessionWindowFile(sessionDir: string, places: SessionWindowPlaces = defaultPlaces()): string {
  const root = path.resolve(sessionDir);
  const id = createHash('sha256').update(root).digest('hex').slice(0, 12);
  const name = path.basename(root).replace(/[^\w.-]+/g, '_').slice(0, 60) || 'session';
  return path.join(sessionWindowFolder(root, places), `${name}-${id}.code-workspace`);
}

/**
 * Makes `dir` (and its parents) with mode 0700 and checks that it is a real folder of this user,
 * not a link and not writable by others: the temporary folder is shared, and a folder planted there
 * by another user would let them change the window file.
 * @throws ExpBenchError BAD_INPUT naming the folder otherwise
 */
async function ownFolder(dir: string, uid: number): Promise<void> {
  await fsp.mkdir(dir, { recursive: true, mode: 0o700 });
  const st = await fsp.lstat(dir);
  if (!st.isDirectory() || st.isSymbolicLink()) throw new ExpBenchError('BAD_INPUT', dir, 'is not a folder (a link or a file); the session window file is not written through it');
  if (process.getuid && st.uid !== uid) throw new ExpBenchError('BAD_INPUT', dir, `belongs to uid ${st.uid}, not to this user (${uid}); remove it or set TMPDIR`);
  if ((st.mode & 0o022) !== 0) await fsp.chmod(dir, 0o700);
}

/**
 * Writes the session window file of `sessionDir` (a prepared session: its `workspace/` exists) and
 * returns its absolute path. The file is the host's: `{"folders": [{"path": <workspace>}],
 * "settings": {}}`; it is rewritten on each call (the folder of a moved session changes).
 * @throws ExpBenchError SESSION_INVALID when the session has no `workspace/` folder; BAD_INPUT (see {@link ownFolder})
 */
export async function writeSessionWindow(sessionDir: string, places: SessionWindowPlaces = defaultPlaces()): Promise<string> {
  const root = path.resolve(sessionDir);
  const workspace = new SessionLayout(root).workspace;
  const st = await fsp.stat(workspace).catch(() => undefined);
  if (!st?.isDirectory()) throw new ExpBenchError('SESSION_INVALID', workspace, 'is not a folder: not a prepared session');
  const file = sessionWindowFile(root, places);
  await ownFolder(path.dirname(file), places.uid);
  await writeJsonAtomic(file, { folders: [{ path: workspace }], settings: {} });
  return file;
}

/** True when `file` is the window file of `sessionDir` (the path {@link sessionWindowFile} gives). */
export function isSessionWindowFile(file: string | undefined, sessionDir: string, places: SessionWindowPlaces = defaultPlaces()): boolean {
  return file !== undefined && path.resolve(file) === sessionWindowFile(sessionDir, places);
}
