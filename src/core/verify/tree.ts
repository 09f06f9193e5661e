import { randomBytes } from 'node:crypto';
import { promises as fsp } from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { allSettledOrThrow } from '../util/promises';
import { git, initRepository, packObjectsInto } from '../git';
import { hostRepositoryOf } from '../workspace/hostRepo';
import { snapshotWorkTree } from '../workspace/snapshot';

/**
 * Builds the tree the clean run verifies in `dest` (an empty folder): the session's "task start"
 * (the masked checkout) plus the solver's changes exactly as the patch records them: the frozen
 * submission's tree `o.tree` when given (a submitted session: never the live workspace), else the
 * work tree taken now by the patch rule (src/core/workspace/snapshot.ts: every tracked and
 * untracked file that `.gitignore` does not exclude, binary files included, deletions applied;
 * ignored files and known caches NOT in the tree). Every git call runs in the session's host
 * repository (`private/repo.git`) or in `dest`'s own, never in the workspace's `.git`.
 *
 * Done through temporary indexes: task start is checked out into `dest`, then only the paths
 * that differ between the two trees are removed or checked out again. `dest/.git` is a fresh
 * repository whose one commit "task start" is the masked checkout (its objects packed from the
 * host repository), with the solver's changes uncommitted on top, as in the workspace. Each file
 * is written once.
 *
 * @param o.onChecked called once the session is known to have a host repository with its task
 *   start (the rest of the build can then only fail on git or disk errors)
 * @param o.proceed awaited after that check, before the rest (the verifier lets it go once the
 *   container's start is under way: each git spawn blocks Node's event loop for a few ms, which
 *   would otherwise delay the engine calls before the start); its rejection stops the build
 * @throws ExpBenchError SESSION_INVALID naming the session folder when it has no host repository
 *   with a task start; GIT_FAILED when git fails; whatever `o.proceed` rejects with.
 */
export async function buildVerifyTree(
  workspace: string, dest: string, o: { signal?: AbortSignal; onChecked?: () => void; proceed?: Promise<void>; tree?: string } = {},
): Promise<void> {
  const { signal } = o;
  const h = await hostRepositoryOf(workspace, { signal });
  o.onChecked?.();
  await o.proceed;
  const tag = randomBytes(6).toString('hex');
  // Named with the pid: the next verifier removes those of a process that is gone (run.ts).
  const start = { GIT_INDEX_FILE: path.join(os.tmpdir(), `expbench-verify-index-${process.pid}-${tag}-start`) };
  const solver = { GIT_INDEX_FILE: path.join(os.tmpdir(), `expbench-verify-index-${process.pid}-${tag}-solver`) };
  const host = { gitDir: h.gitDir };
  const into = { gitDir: h.gitDir, workTree: path.resolve(dest) };
  try {
    // The fresh repository in `dest` (no template: no sample hooks to copy into the container),
    // the work tree taken (unless frozen) and the start index read, at once.
    const [, solverTree] = await allSettledOrThrow([
      initRepository(dest, { signal }),
      o.tree ? Promise.resolve(o.tree) : snapshotWorkTree(h, { signal }).then((snap) => snap.tree),
      git(['read-tree', h.taskStart], { repo: host, env: start, signal }),
    ] as const);
    const startTree = (await git(['rev-parse', `${h.taskStart}^{tree}`], { repo: host, signal })).text.trim();
    // 1. The masked checkout at "task start" written into `dest`; in parallel, the solver's tree
    // read into the second index, and the objects of task start packed into `dest`'s store and
    // committed there as "task start".
    await allSettledOrThrow([
      git(['checkout-index', '-a', '-f'], { repo: into, env: start, signal }),
      git(['read-tree', solverTree], { repo: host, env: solver, signal }),
      commitStartTree(h.gitDir, dest, startTree, signal),
    ] as const);
    // 2. The solver's changes on top: only the paths that differ from "task start" are removed or
    // written again (deletions first, so that a file may replace a folder and a folder a file).
    const changes = await git(['diff-tree', '-r', '-z', '--no-renames', '--name-status', startTree, solverTree], { repo: host, signal });
    const fields = changes.text.split('\0').filter((x) => x !== '');
    const write: string[] = [];
    for (let i = 0; i + 1 < fields.length; i += 2) {
      const [status, rel] = [fields[i], fields[i + 1]];
      if (status === 'D' || status === 'T') await removeWithEmptyParents(dest, rel);
      if (status !== 'D') write.push(rel);
    }
    if (write.length > 0) {
      await git(['checkout-index', '-f', '-z', '--stdin'], { repo: into, env: solver, signal, input: write.join('\0') + '\0' });
    }
  } finally {
    await Promise.all([start, solver].map((e) => fsp.rm(e.GIT_INDEX_FILE, { force: true })));
  }
}

/**
 * Makes "task start" the one commit of the repository in `dest`: the objects of `tree` (from the
 * host repository `gitDir`) are packed into `dest`'s store, the index is read from the tree (the
 * files are checked out beside it; git refreshes their stat data when it first needs it) and the
 * commit is written there.
 */
async function commitStartTree(gitDir: string, dest: string, tree: string, signal?: AbortSignal): Promise<void> {
  const listing = await git(['ls-tree', '-r', '-t', '-z', tree], { repo: { gitDir }, signal });
  const ids = [tree];
  for (const entry of listing.text.split('\0')) {
    const m = /^\d+ (blob|tree) ([0-9a-f]+)\t/.exec(entry); // gitlinks (commit entries) have no object here
    if (m) ids.push(m[2]);
  }
  const destGit = { gitDir: path.join(dest, '.git') };
  // Run in `dest`, reading the host repository as alternates: git's temporary files stay in `dest`.
  await packObjectsInto(destGit.gitDir, ids, [gitDir], signal);
  await git(['read-tree', tree], { repo: destGit, signal });
  const commit = (await git(['commit-tree', tree, '-m', 'task start'], { repo: destGit, signal })).text.trim();
  await git(['update-ref', 'HEAD', commit], { repo: destGit, signal });
}

/** Deletes `rel` under `dir` (a file, link or folder), then its parent folders that are left empty. */
async function removeWithEmptyParents(dir: string, rel: string): Promise<void> {
  await fsp.rm(path.join(dir, rel), { recursive: true, force: true });
  for (let p = path.dirname(rel); p !== '.' && p !== ''; p = path.dirname(p)) {
    try { await fsp.rmdir(path.join(dir, p)); } catch { return; }
  }
}
