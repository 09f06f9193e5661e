import { randomBytes } from 'node:crypto';
import { promises as fsp } from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { ExpBenchError } from '../errors';
import { git } from '../workspace/git';

/**
 * Builds the tree the clean run verifies in `dest` (an empty folder): the workspace's single
 * commit "task start" (the masked checkout) plus the solver's changes exactly as the patch records
 * them, i.e. every tracked and untracked file that `.gitignore` does not exclude, binary files
 * included, deletions applied. Files the solver left in ignored paths are NOT in the tree.
 *
 * Done through a temporary index (the solver's own index and work tree are never touched):
 * `read-tree HEAD`, `add -A` (same rule as the harness's intent-add of untracked files), then
 * `checkout-index` into `dest`; `dest/.git` is a fresh repository whose one commit "task start"
 * is the masked checkout, with the solver's changes uncommitted on top, as in the workspace.
 *
 * @throws ExpBenchError SESSION_INVALID naming the workspace when it is not a git repository with
 *   a "task start" commit; GIT_FAILED when git fails.
 */
export async function buildVerifyTree(workspace: string, dest: string, signal?: AbortSignal): Promise<void> {
  const head = await git(['rev-parse', '--verify', 'HEAD^{commit}'], { cwd: workspace, signal, okCodes: [128] });
  if (head.code !== 0) {
    throw new ExpBenchError('SESSION_INVALID', workspace, 'the workspace is not a git repository with a "task start" commit');
  }
  const index = path.join(os.tmpdir(), `expbench-verify-index-${randomBytes(6).toString('hex')}`);
  const env = { GIT_INDEX_FILE: index };
  try {
    // 1. The masked checkout at "task start", committed as the one commit of a fresh repository.
    await git(['read-tree', 'HEAD'], { cwd: workspace, env, signal });
    await git(['checkout-index', '-a', '-f', `--prefix=${dest}${path.sep}`], { cwd: workspace, env, signal });
    await git(['init', '-q'], { cwd: dest, signal });
    await git(['add', '-A'], { cwd: dest, signal });
    await git(['commit', '-q', '--allow-empty', '--no-verify', '-m', 'task start'], { cwd: dest, signal });
    // 2. The solver's changes: the temporary index takes the work tree's state (ignored files left out).
    await git(['add', '-A'], { cwd: workspace, env, signal });
    await removeTrackedFiles(dest);
    await git(['checkout-index', '-a', '-f', `--prefix=${dest}${path.sep}`], { cwd: workspace, env, signal });
  } finally {
    await fsp.rm(index, { force: true });
  }
}

/** Deletes every file of `dir` except `.git`, so that files the solver deleted stay deleted. */
async function removeTrackedFiles(dir: string): Promise<void> {
  for (const name of await fsp.readdir(dir)) {
    if (name !== '.git') await fsp.rm(path.join(dir, name), { recursive: true, force: true });
  }
}
