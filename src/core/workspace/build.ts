import { promises as fsp } from 'node:fs';
import * as path from 'node:path';
import { ExpBenchError, isExpBenchError } from '../errors';
import { allSettledOrThrow } from '../util/promises';
import { git, missingObjectIn } from './git';
import type { TreeDir, TreeFile } from './tree';

/** Message of the workspace repository's single commit (contract: docs/DEVELOPING.md). */
export const TASK_START = 'task start';

/** What {@link buildWorkspaceRepo} made. */
export interface BuiltWorkspace {
  commit: string;
  tree: string;
  /** The `forbidden` blob ids found in the workspace's object store ({@link objectsAmong}); empty when none leaked. */
  leaks: string[];
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
 *    the largest part of a preparation, and such a pack is about as large as those files in the
 *    working tree;
 * 3. while the pack is written: `git update-index --index-info` builds the index; then, at the
 *    same time: `write-tree` (on a copy of the index) the tree, followed by `commit-tree` the
 *    commit and `update-ref` with reflogs off the branch (with more than
 *    {@link EARLY_WRITE_TREE_MAX} reused trees, write-tree waits for the pack; before, it runs
 *    with `--missing-ok`); and `git checkout-index --all` writes the working tree, reading the
 *    blobs from the cache repositories (`GIT_ALTERNATE_OBJECT_DIRECTORIES`, for that process
 *    only: no alternates recorded), and records stat data in the index;
 * 4. when this returns, every object of the tree and the commit is in the workspace's own store;
 * 5. once the pack and the commit are written (every object the workspace will hold), the
 *    object store is listed for the `forbidden` blob ids (masked content) while checking out.
 *
 * @throws ExpBenchError `SOURCE_UNAVAILABLE` naming the object id AND its path(s) when a blob is
 *   missing from the cache repository (for example a snapshot made without its large files);
 *   `GIT_FAILED`; `CANCELLED`.
 */
export async function buildWorkspaceRepo(
  dir: string, files: TreeFile[], trees: TreeDir[], signal?: AbortSignal, initialized?: Promise<void>, forbidden: Iterable<string> = [],
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
  // The index names blobs by id only: built while their pack is written.
  const indexed = git(['update-index', '-z', '--index-info'], { ...opts, input: info });
  const packed = packAll();
  // write-tree and checkout-index both lock the index: write-tree reads a copy of it, so the two
  // run at once. With few folders it runs while the pack is written (`--missing-ok`: trees it
  // does not find yet it writes loose, a few duplicates of packed ones at most); with many, after
  // the pack, when it finds the reused trees and every blob in the workspace's store (checked)
  // and writes only the trees that changed.
  const early = trees.length <= EARLY_WRITE_TREE_MAX;
  const copy = path.join(dir, '.git', 'index.write-tree');
  const copied = indexed.then(() => fsp.copyFile(path.join(dir, '.git', 'index'), copy));
  const treeMade = Promise.all([copied, early ? undefined : packed]).then(async () => {
    try {
      return (await git(['write-tree', ...(early ? ['--missing-ok'] : [])], { ...opts, env: { GIT_INDEX_FILE: copy } })).text.trim();
    } finally {
      await fsp.rm(copy, { force: true });
    }
  });
  // The commit and the branch touch neither the index nor the working tree.
  const commitMade = treeMade.then(async (tree) => (await git(['commit-tree', tree, '-m', TASK_START], opts)).text.trim());
  // Every object of the workspace is written once the pack and the commit are (update-ref and
  // checkout-index write none): the leak check lists the whole store then, while they run.
  const leaks = Promise.all([packed, commitMade]).then(() => objectsAmong(dir, forbidden));
  const branched = commitMade.then((sha) => git(['-c', 'core.logAllRefUpdates=false', 'update-ref', 'refs/heads/main', sha], opts));
  // The working tree is written while the pack is, reading the blobs from the cache repositories
  // through GIT_ALTERNATE_OBJECT_DIRECTORIES for this process only: nothing about them is
  // recorded in the workspace (no objects/info/alternates), and only index entries are written.
  const repos = [...byRepo.keys()];
  const checkedOut = indexed.then(() => git(['checkout-index', '--all', '--force', '--index'],
    { ...opts, env: { GIT_ALTERNATE_OBJECT_DIRECTORIES: alternates(repos) } }))
    .catch((e) => {
      const sha = isExpBenchError(e) ? missingObjectIn(e.message) : undefined;
      throw missingObjectError(e, files, repos.find((r) => sha && byRepo.get(r)!.has(sha)) ?? dir);
    });
  const [, , tree, commit, , , leaked] = await allSettledOrThrow([packed, indexed, treeMade, commitMade, branched, checkedOut, leaks] as const);
  return { commit, tree, leaks: leaked };
}

/**
 * Up to this many reused source trees, `write-tree` runs while the pack is written (measured:
 * faster for small repositories); above, after it (no loose duplicates of many packed trees).
 */
const EARLY_WRITE_TREE_MAX = 64;

/** `GIT_ALTERNATE_OBJECT_DIRECTORIES` naming the object folders of `repos` (quoted as git reads them when needed). */
export function alternates(repos: string[]): string {
  return repos.map((r) => {
    const objects = path.join(r, 'objects');
    return /[:"\\]/.test(objects) ? `"${objects.replace(/["\\]/g, (c) => `\\${c}`)}"` : objects;
  }).join(path.delimiter);
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
