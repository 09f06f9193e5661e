import { promises as fsp } from 'node:fs';
import * as path from 'node:path';
import { ExpBenchError, isExpBenchError } from '../errors';
import { git, missingObjectIn } from './git';
import type { TreeDir, TreeFile } from './tree';

/** Message of the workspace repository's single commit (contract: docs/DEVELOPING.md). */
export const TASK_START = 'task start';

/** What {@link buildWorkspaceRepo} made. */
export interface BuiltWorkspace {
  commit: string;
  tree: string;
}

/**
 * Makes `dir` a FRESH git repository whose only commit, "task start", holds exactly `files`:
 *
 * 1. `git init` (branch `main`; no remote, no alternates), or `initialized` (from
 *    {@link initWorkspaceRepo}) awaited;
 * 2. for each cache repository, `git pack-objects` writes ONLY the listed blobs, and the listed
 *    source trees that `write-tree` will reuse as they are, as one pack into the workspace's
 *    object store (a non-thin pack: deltas only against objects in the same pack, so nothing
 *    else from the source's history is copied). Objects stored in the source as deltas against
 *    objects left out are written uncompressed (`pack.compression=0`): deflating them again was
 *    the largest part of a preparation, such a pack is about as large as those files in the
 *    working tree, and checking them out needs no inflating;
 * 3. `git update-index --index-info` builds the index (while the pack is written), `write-tree`
 *    the tree;
 * 4. at the same time: `commit-tree` the commit and `update-ref` with reflogs off the branch; and
 *    `git checkout-index --all` writes the working tree (from the workspace's own pack: no long
 *    delta chains of the source to resolve) and records stat data in the index.
 *
 * @throws ExpBenchError `SOURCE_UNAVAILABLE` naming the object id AND its path(s) when a blob is
 *   missing from the cache repository (for example a snapshot made without its large files);
 *   `GIT_FAILED`; `CANCELLED`.
 */
export async function buildWorkspaceRepo(
  dir: string, files: TreeFile[], trees: TreeDir[], signal?: AbortSignal, initialized?: Promise<void>,
): Promise<BuiltWorkspace> {
  await (initialized ?? initWorkspaceRepo(dir, signal));
  const packDir = path.join(dir, '.git', 'objects', 'pack');
  const byRepo = new Map<string, Set<string>>();
  for (const f of files) {
    let set = byRepo.get(f.repo);
    if (!set) byRepo.set(f.repo, (set = new Set()));
    set.add(f.sha);
  }
  for (const t of trees) {
    let set = byRepo.get(t.repo);
    if (!set) byRepo.set(t.repo, (set = new Set()));
    set.add(t.sha);
  }
  const packAll = async () => {
    for (const [repo, shas] of byRepo) {
      try {
        await git(['-c', 'pack.compression=0', 'pack-objects', '--quiet', '--window=0', path.join(packDir, 'pack')], {
          cwd: repo, input: [...shas].join('\n') + '\n', signal, subject: repo,
        });
      } catch (e) {
        throw missingObjectError(e, files, repo);
      }
    }
  };
  const opts = { cwd: dir, signal, subject: dir };
  const info = files.map((f) => `${f.mode} ${f.sha}\t${f.path}\0`).join('');
  // The index names blobs by id only: it can be built while their pack is being written.
  const [packed, indexed] = await Promise.allSettled([packAll(), git(['update-index', '-z', '--index-info'], { ...opts, input: info })]);
  if (packed.status === 'rejected') throw packed.reason;
  if (indexed.status === 'rejected') throw indexed.reason;
  const tree = (await git(['write-tree'], opts)).text.trim();
  // The commit and the branch touch neither the index nor the working tree: made while checking out.
  const commitAndBranch = async () => {
    const sha = (await git(['commit-tree', tree, '-m', TASK_START], opts)).text.trim();
    await git(['-c', 'core.logAllRefUpdates=false', 'update-ref', 'refs/heads/main', sha], opts);
    return sha;
  };
  const [committed, checkedOut] = await Promise.allSettled([commitAndBranch(), git(['checkout-index', '--all', '--force', '--index'], opts)]);
  if (committed.status === 'rejected') throw committed.reason;
  if (checkedOut.status === 'rejected') throw checkedOut.reason;
  const commit = committed.value;
  return { commit, tree };
}

/**
 * `git init` of the workspace: branch `main`, no template (no sample hooks, no `description`).
 * May run while the source is being read; pass its promise to {@link buildWorkspaceRepo}.
 */
export async function initWorkspaceRepo(dir: string, signal?: AbortSignal): Promise<void> {
  await git(['init', '--quiet', '--template=', '--initial-branch=main', dir], { signal, subject: dir });
}

function missingObjectError(e: unknown, files: TreeFile[], repo: string): unknown {
  if (!isExpBenchError(e) || (e.code !== 'SOURCE_UNAVAILABLE' && e.code !== 'GIT_FAILED')) return e;
  const sha = missingObjectIn(e.message);
  if (!sha) return e;
  const paths = files.filter((f) => f.sha === sha && f.repo === repo).map((f) => f.path);
  return new ExpBenchError('SOURCE_UNAVAILABLE', paths.length ? paths.join(', ') : sha,
    `object ${sha} (${paths.length ? `the content of ${paths.join(', ')}` : 'not a file of the tree'}) is missing from ` +
    `${repo}: the source is an incomplete snapshot (large files left out?). Use a complete clone of the repository.`,
    { cause: e });
}

/**
 * Lines written to `.git/info/exclude` so that session files inside the workspace never enter
 * the patch: the Dev Container folder the session adds.
 */
export async function addExcludes(dir: string, patterns: string[]): Promise<void> {
  const file = path.join(dir, '.git', 'info', 'exclude');
  await fsp.mkdir(path.dirname(file), { recursive: true });
  const old = await fsp.readFile(file, 'utf8').catch(() => '');
  const add = patterns.filter((p) => !old.split('\n').includes(p));
  if (add.length) {
    await fsp.writeFile(file, `${old}${old && !old.endsWith('\n') ? '\n' : ''}# EXP-Bench session files\n${add.join('\n')}\n`);
  }
}

/**
 * Lists the blob ids in the object store of `dir` (loose and packed, reachable or not:
 * `git cat-file --batch-all-objects`) that are among `blobs`.
 */
export async function objectsAmong(dir: string, blobs: Iterable<string>): Promise<string[]> {
  const want = new Set(blobs);
  if (want.size === 0) return [];
  const r = await git(['cat-file', '--batch-all-objects', '--batch-check=%(objectname)'], { cwd: dir });
  return r.text.split('\n').filter((s) => want.has(s));
}
