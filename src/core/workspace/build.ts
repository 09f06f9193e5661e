import { promises as fsp } from 'node:fs';
import * as path from 'node:path';
import { ExpBenchError, isExpBenchError } from '../errors';
import { allSettledOrThrow } from '../util/promises';
import { GIT_ENV, git, missingObjectIn } from '../git';
import { initWorkspaceRepo } from './init';
import { buildTrees, commitBody, gitObject, listObjectStore, LooseObject, writeLoose, writeRef } from './objects';
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
 * 1. {@link initWorkspaceRepo} (branch `main`; no remote, no alternates), or `initialized` (its
 *    promise) awaited;
 * 2. the tree objects the mask changed (every folder not in `trees`), the commit and the branch
 *    are written by this process ({@link buildTrees}, {@link writeLoose}, {@link writeRef}; no
 *    reflog);
 * 3. at the same time, `git pack-objects`, run in the workspace and reading the cache
 *    repositories as alternates (for that process only), writes ONLY the listed blobs, and the
 *    listed source trees reused as they are, as one pack into the workspace's object store (a
 *    non-thin pack: deltas only against objects in the same pack, so nothing else from the
 *    source's history is copied). Objects stored in the source as deltas against
 *    objects left out are written uncompressed (`pack.compression=0`): deflating them again was
 *    the largest part of a preparation, and such a pack is about as large as those files in the
 *    working tree;
 * 4. and `git read-tree -u --reset` writes the index and the working tree (stat data included),
 *    reading the reused trees and the blobs from the cache repositories
 *    (`GIT_ALTERNATE_OBJECT_DIRECTORIES`, for that process only: no alternates recorded);
 * 5. once the pack and the commit are written (every object the workspace will hold), the
 *    object store is listed for the `forbidden` blob ids (masked content) while checking out.
 *
 * When this returns, every object of the tree and the commit is in the workspace's own store.
 *
 * @throws ExpBenchError `SOURCE_UNAVAILABLE` naming the object id AND its path(s) when a blob is
 *   missing from the cache repository (for example a snapshot made without its large files);
 *   `GIT_FAILED` (also for a file system error writing an object); `CANCELLED`.
 */
export async function buildWorkspaceRepo(
  dir: string, files: TreeFile[], trees: TreeDir[], signal?: AbortSignal, initialized?: Promise<void>, forbidden: Iterable<string> = [],
): Promise<BuiltWorkspace> {
  // The trees and the commit are computed while `git init` may still run.
  const { root, trees: made } = buildTrees(files, trees);
  const commit = gitObject('commit', commitBody(root, TASK_IDENT, TASK_START));
  const gitDir = path.join(dir, '.git');
  const packDir = path.join(gitDir, 'objects', 'pack');
  const copied = [...files, ...trees];
  const repos = [...new Set(copied.map((o) => o.repo))];
  /** The cache repository that should hold the object a git error names as missing. */
  const inRepoOf = (e: unknown) => {
    const sha = isExpBenchError(e) ? missingObjectIn(e.message) : undefined;
    return copied.find((o) => sha && o.sha === sha)?.repo ?? dir;
  };
  // One pack for every cache repository, written by git in the workspace (its temporary files
  // too: a cache on another file system, or a cancel, leaves nothing in the cache), reading
  // the objects through the same alternates as the checkout.
  const packAll = () => git(['-c', 'pack.compression=0', 'pack-objects', '--quiet', '--window=0', path.join(packDir, 'pack')], {
    cwd: dir, input: [...new Set(copied.map((o) => o.sha))].join('\n') + '\n', signal, subject: dir,
    env: { GIT_ALTERNATE_OBJECT_DIRECTORIES: alternates(repos) },
  }).catch((e) => { throw missingObjectError(e, files, inRepoOf(e)); });
  await (initialized ?? initWorkspaceRepo(dir, signal));
  const opts = { cwd: dir, signal, subject: dir };
  const writeObjects = async (objects: LooseObject[]) => {
    try {
      writeLoose(gitDir, objects);
    } catch (e) {
      throw new ExpBenchError('GIT_FAILED', dir, `cannot write the workspace's objects: ${(e as Error).message}`, { cause: e });
    }
  };
  // Order (measured on an 18-file repository; each process start holds Node's event loop 1–6 ms):
  // the changed trees, which the checkout needs; the checkout, the longest step; the pack; the
  // commit and the branch. The working tree and the index are written while the pack is, reading
  // the reused trees and the blobs from the cache repositories through
  // GIT_ALTERNATE_OBJECT_DIRECTORIES for that process only: nothing about them is recorded in the
  // workspace (no objects/info/alternates).
  const treesWritten = writeObjects(made);
  const checkedOut = treesWritten.then(() => git(['read-tree', '-u', '--reset', root],
    { ...opts, env: { GIT_ALTERNATE_OBJECT_DIRECTORIES: alternates(repos) } }))
    .catch((e) => { throw missingObjectError(e, files, inRepoOf(e)); });
  // The pack, then the commit and the branch, written while the two processes work (a process
  // started right after another, or a file created, waits behind their writes: 2–6 ms measured;
  // starting the pack before the checkout, or before the repository is initialised, was slower).
  const packed = treesWritten.then(packAll);
  const written = treesWritten.then(() => writeObjects([commit]));
  const branched = written.then(() => writeRef(gitDir, 'refs/heads/main', commit.id));
  // Every object of the workspace is written once the pack and the loose objects are (the
  // branch and the checkout write none): the leak check lists the whole store then.
  const leaks = Promise.all([packed, written]).then(() => objectsAmong(dir, forbidden));
  const [, , , , leaked] = await allSettledOrThrow([packed, written, branched, checkedOut, leaks] as const);
  return { commit: commit.id, tree: root, leaks: leaked };
}

/** Author and committer of "task start" (the identity of {@link GIT_ENV}). */
const TASK_IDENT = `${GIT_ENV.GIT_COMMITTER_NAME} <${GIT_ENV.GIT_COMMITTER_EMAIL}>`;

/** `GIT_ALTERNATE_OBJECT_DIRECTORIES` naming the object folders of `repos` (quoted as git reads them when needed). */
export function alternates(repos: string[]): string {
  return repos.map((r) => {
    const objects = path.join(r, 'objects');
    return /[:"\\]/.test(objects) ? `"${objects.replace(/["\\]/g, (c) => `\\${c}`)}"` : objects;
  }).join(path.delimiter);
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
 * Lists the blob ids in the object store of `dir` (loose and packed, reachable or not) that are
 * among `blobs`: read directly ({@link listObjectStore}), or, when the store holds anything that
 * reader does not cover, with `git cat-file --batch-all-objects` (alternates included).
 */
export async function objectsAmong(dir: string, blobs: Iterable<string>): Promise<string[]> {
  const want = new Set(blobs);
  if (want.size === 0) return [];
  const listed = await listObjectStore(path.join(dir, '.git'))
    ?? (await git(['cat-file', '--batch-all-objects', '--batch-check=%(objectname)'], { cwd: dir })).text.split('\n');
  return listed.filter((s) => want.has(s));
}
