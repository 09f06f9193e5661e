import { randomBytes } from 'node:crypto';
import { promises as fsp } from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { ExpBenchError } from '../errors';
import { allSettledOrThrow } from '../util/promises';
import { git, packObjectsInto } from '../git';

/**
 * Builds the tree the clean run verifies in `dest` (an empty folder): the workspace's single
 * commit "task start" (the masked checkout) plus the solver's changes exactly as the patch records
 * them, i.e. every tracked and untracked file that `.gitignore` does not exclude, binary files
 * included, deletions applied. Files the solver left in ignored paths are NOT in the tree.
 *
 * Done through temporary indexes (the solver's own index and work tree are never touched):
 * `read-tree HEAD`, `checkout-index` of it into `dest`, `add -A` of the work tree into a second
 * index (same rule as the harness's intent-add of untracked files), then only the paths that
 * differ between the two are removed or checked out again. `dest/.git` is a fresh repository
 * whose one commit "task start" is the masked checkout (its objects packed from the workspace's
 * store), with the solver's changes uncommitted on top, as in the workspace. Each file is written
 * once and none is hashed again.
 *
 * @param o.onChecked called once the workspace is known to be a repository with a commit (the
 *   rest of the build can then only fail on git or disk errors)
 * @param o.proceed awaited after that check, before the rest (the verifier lets it go once the
 *   container's start is under way: each git spawn blocks Node's event loop for a few ms, which
 *   would otherwise delay the engine calls before the start); its rejection stops the build
 * @throws ExpBenchError SESSION_INVALID naming the workspace when it is not a git repository with
 *   a "task start" commit; GIT_FAILED when git fails; whatever `o.proceed` rejects with.
 */
export async function buildVerifyTree(
  workspace: string, dest: string, o: { signal?: AbortSignal; onChecked?: () => void; proceed?: Promise<void> } = {},
): Promise<void> {
  const { signal } = o;
  const tag = randomBytes(6).toString('hex');
  // Named with the pid: the next verifier removes those of a process that is gone (run.ts).
  const start = { GIT_INDEX_FILE: path.join(os.tmpdir(), `expbench-verify-index-${process.pid}-${tag}-start`) };
  const solver = { GIT_INDEX_FILE: path.join(os.tmpdir(), `expbench-verify-index-${process.pid}-${tag}-solver`) };
  try {
    // `read-tree HEAD` fails with 128 when there is no commit: that is the "not a workspace" check.
    const read = await git(['read-tree', 'HEAD'], { cwd: workspace, env: start, signal, okCodes: [128] });
    if (read.code !== 0) {
      throw new ExpBenchError('SESSION_INVALID', workspace, 'the workspace is not a git repository with a "task start" commit');
    }
    o.onChecked?.();
    await o.proceed;
    // The fresh repository in `dest` (empty so far; no template: no sample hooks to copy into the
    // container) is initialised while the start index is copied.
    await Promise.all([git(['init', '-q', '--template='], { cwd: dest, signal }), fsp.copyFile(start.GIT_INDEX_FILE, solver.GIT_INDEX_FILE)]);
    // 1. The masked checkout at "task start" written into `dest` (before `add -A` runs: it would
    // write back into the workspace's store any blob missing there that the work tree still has).
    const [startTree] = await allSettledOrThrow([
      git(['rev-parse', 'HEAD^{tree}'], { cwd: workspace, signal }).then((r) => r.text.trim()),
      git(['checkout-index', '-a', '-f', `--prefix=${dest}${path.sep}`], { cwd: workspace, env: start, signal }),
    ] as const);
    // 2. In parallel: the objects of that tree packed into `dest`'s store and committed there as
    // "task start" (no hashing of the files again); the second temporary index takes the work
    // tree's state (ignored files left out) and is written as a tree.
    const [, solverTree] = await allSettledOrThrow([
      commitStartTree(workspace, dest, startTree, signal),
      git(['add', '-A'], { cwd: workspace, env: solver, signal }).then(() => git(['write-tree'], { cwd: workspace, env: solver, signal })).then((r) => r.text.trim()),
    ] as const);
    // 3. The solver's changes on top: only the paths that differ from "task start" are removed or
    // written again (deletions first, so that a file may replace a folder and a folder a file).
    const changes = await git(['diff-tree', '-r', '-z', '--no-renames', '--name-status', startTree, solverTree], { cwd: workspace, signal });
    const fields = changes.text.split('\0').filter((x) => x !== '');
    const write: string[] = [];
    for (let i = 0; i + 1 < fields.length; i += 2) {
      const [status, rel] = [fields[i], fields[i + 1]];
      if (status === 'D' || status === 'T') await removeWithEmptyParents(dest, rel);
      if (status !== 'D') write.push(rel);
    }
    if (write.length > 0) {
      await git(['checkout-index', '-f', '-z', '--stdin', `--prefix=${dest}${path.sep}`], { cwd: workspace, env: solver, signal, input: write.join('\0') + '\0' });
    }
  } finally {
    await Promise.all([start, solver].map((e) => fsp.rm(e.GIT_INDEX_FILE, { force: true })));
  }
}

/**
 * Makes "task start" the one commit of the repository in `dest`: the objects of `tree` (from the
 * workspace's store) are packed into `dest`'s store, the index is read from the tree (the files
 * are already checked out; git refreshes their stat data when it first needs it) and the commit is
 * written there.
 */
async function commitStartTree(workspace: string, dest: string, tree: string, signal?: AbortSignal): Promise<void> {
  const listing = await git(['ls-tree', '-r', '-t', '-z', tree], { cwd: workspace, signal });
  const ids = [tree];
  for (const entry of listing.text.split('\0')) {
    const m = /^\d+ (blob|tree) ([0-9a-f]+)\t/.exec(entry); // gitlinks (commit entries) have no object here
    if (m) ids.push(m[2]);
  }
  // Run in `dest`, reading the workspace as alternates: git's temporary files stay in `dest`.
  await packObjectsInto(dest, ids, [workspace], signal);
  await git(['read-tree', tree], { cwd: dest, signal });
  const commit = (await git(['commit-tree', tree, '-m', 'task start'], { cwd: dest, signal })).text.trim();
  await git(['update-ref', 'HEAD', commit], { cwd: dest, signal });
}

/** Deletes `rel` under `dir` (a file, link or folder), then its parent folders that are left empty. */
async function removeWithEmptyParents(dir: string, rel: string): Promise<void> {
  await fsp.rm(path.join(dir, rel), { recursive: true, force: true });
  for (let p = path.dirname(rel); p !== '.' && p !== ''; p = path.dirname(p)) {
    try { await fsp.rmdir(path.join(dir, p)); } catch { return; }
  }
}
