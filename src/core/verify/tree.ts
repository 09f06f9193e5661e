import { randomBytes } from 'node:crypto';
import { promises as fsp } from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { ExpBenchError } from '../errors';
import { allSettledOrThrow } from '../util/promises';
import { git } from '../git';

/**
 * Builds the tree the clean run verifies in `dest` (an empty folder): the workspace's single
 * commit "task start" (the masked checkout) plus the solver's changes exactly as the patch records
 * them, i.e. every tracked and untracked file that `.gitignore` does not exclude, binary files
 * included, deletions applied. Files the solver left in ignored paths are NOT in the tree.
 *
 * Done through temporary indexes (the solver's own index and work tree are never touched):
 * `read-tree HEAD`, `add -A` (same rule as the harness's intent-add of untracked files), then
 * `checkout-index` into `dest`; `dest/.git` is a fresh repository whose one commit "task start"
 * is the masked checkout, with the solver's changes uncommitted on top, as in the workspace.
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
  const start = { GIT_INDEX_FILE: path.join(os.tmpdir(), `expbench-verify-index-${tag}-start`) };
  const solver = { GIT_INDEX_FILE: path.join(os.tmpdir(), `expbench-verify-index-${tag}-solver`) };
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
    // Two independent chains in parallel: (1) the masked checkout at "task start", committed as
    // the one commit of a fresh repository in `dest`; (2) the second temporary index takes the work
    // tree's state (ignored files left out).
    await allSettledOrThrow([
      (async () => {
        await git(['checkout-index', '-a', '-f', `--prefix=${dest}${path.sep}`], { cwd: workspace, env: start, signal });
        await git(['add', '-A'], { cwd: dest, signal });
        await git(['commit', '-q', '--allow-empty', '--no-verify', '-m', 'task start'], { cwd: dest, signal });
      })(),
      git(['add', '-A'], { cwd: workspace, env: solver, signal }),
    ] as const);
    // 3. The solver's changes on top, so that files the solver deleted stay deleted.
    await removeTrackedFiles(dest);
    await git(['checkout-index', '-a', '-f', `--prefix=${dest}${path.sep}`], { cwd: workspace, env: solver, signal });
  } finally {
    await Promise.all([start, solver].map((e) => fsp.rm(e.GIT_INDEX_FILE, { force: true })));
  }
}

/** Deletes every file of `dir` except `.git`, so that files the solver deleted stay deleted. */
async function removeTrackedFiles(dir: string): Promise<void> {
  for (const name of await fsp.readdir(dir)) {
    if (name !== '.git') await fsp.rm(path.join(dir, name), { recursive: true, force: true });
  }
}
