import { ExpBenchError, isExpBenchError } from '../errors';
import { allSettledOrThrow } from '../util/promises';
import {
  alternatesEnv, checkOutCommit, commitTree, git, initRepository, listObjects, missingObjectIn, packObjectsInto, writeTrees, type TreeEntry,
} from '../git';
import type { TreeDir, TreeFile } from './tree';

/** Message of the workspace repository's single commit (contract: docs/DEVELOPING.md). */
export const TASK_START = 'task start';

/** The ref of the host's repository that names the task start commit (besides `main` and the manifest's `taskStart`). */
export const TASK_START_REF = 'refs/expbench/task-start';
/** The ref of the host's repository that names the frozen submission (freeze.ts). */
export const SUBMITTED_REF = 'refs/expbench/submitted';

/**
 * Makes `gitDir` (a session's `private/repo.git`) an empty bare repository: branch `main`, no
 * template, SHA-1, the layer's attributes ({@link initRepository}). May run while the source is
 * being read; pass its promise to {@link buildWorkspaceRepo}.
 *
 * @throws ExpBenchError `GIT_FAILED`, `CANCELLED`.
 */
export function initWorkspaceRepo(gitDir: string, signal?: AbortSignal): Promise<void> {
  return initRepository(gitDir, { bare: true, signal });
}

/** What {@link buildWorkspaceRepo} made. */
export interface BuiltWorkspace {
  commit: string;
  tree: string;
  /** The `forbidden` blob ids found in the workspace's object store ({@link objectsAmong}); empty when none leaked. */
  leaks: string[];
}

/**
 * Makes the bare repository `gitDir` (the host's, in `private/`) a FRESH repository whose only
 * commit, "task start", holds exactly `files`, checked out into the work tree `workTree` (the
 * workspace), every step done by git:
 *
 * 1. {@link initWorkspaceRepo} (branch `main`; no remote, no alternates), or `initialized` (its
 *    promise) awaited;
 * 2. while `git pack-objects` copies ONLY the listed blobs and the listed source trees, reused as
 *    they are, as one pack into the host repository's store ({@link packObjectsInto}): the tree objects
 *    the mask changed (every folder not in `trees`, children first) with one `git mktree --batch`
 *    ({@link writeTrees}), the commit with `git commit-tree`, then `git reset --hard` makes
 *    `main` point at it and writes the index and the working tree, reading the reused trees and
 *    the blobs from the cache repositories as alternates for that process only
 *    ({@link checkOutCommit}; no alternates recorded, no reflog);
 * 3. once the pack and the commit are written (every object the repository will hold), the
 *    object store is listed for the `forbidden` blob ids (masked content) while checking out, and
 *    {@link TASK_START_REF} is set.
 *
 * When this returns, every object of the tree and the commit is in the host repository's own
 * store, and its index describes the work tree. The solver's own `.git` is made from it
 * afterwards (git/repo.ts `writeSolverRepository`). With `opts.checkout: false` the work tree is
 * not written (only the index is read from the tree and `main` set): a session's repository
 * rebuilt from its manifest (hostRepo.ts).
 *
 * @throws ExpBenchError `SOURCE_UNAVAILABLE` naming the object id AND its path(s) when a blob is
 *   missing from the cache repository (for example a snapshot made without its large files);
 *   `GIT_FAILED`; `CANCELLED`.
 */
export async function buildWorkspaceRepo(
  gitDir: string, workTree: string, files: TreeFile[], trees: TreeDir[], signal?: AbortSignal, initialized?: Promise<void>, forbidden: Iterable<string> = [],
  opts: { checkout?: boolean } = {},
): Promise<BuiltWorkspace> {
  const dir = gitDir;
  const toWrite = changedTrees(files, trees);
  const copied = [...files, ...trees];
  const repos = [...new Set(copied.map((o) => o.repo))];
  /** The cache repository that should hold the object a git error names as missing. */
  const inRepoOf = (e: unknown) => {
    const sha = isExpBenchError(e) ? missingObjectIn(e.message) : undefined;
    return copied.find((o) => sha && o.sha === sha)?.repo ?? dir;
  };
  const missing = (e: unknown) => { throw missingObjectError(e, files, inRepoOf(e)); };
  await (initialized ?? initWorkspaceRepo(dir, signal));
  // The pack needs none of the mask's trees: it is written while they, the commit and the checkout are.
  const packed = packObjectsInto(dir, copied.map((o) => o.sha), repos, signal).catch(missing);
  const written = writeTrees(dir, toWrite, signal);
  const committed = written.then((ids) => commitTree(dir, ids[ids.length - 1], TASK_START, signal));
  const checkedOut = committed.then(async (id) => {
    if (opts.checkout === false) {
      // The work tree stays as it is (a session rebuilt from its manifest): only the index and the branch.
      await packed;
      await git(['read-tree', id], { repo: { gitDir: dir }, signal, env: alternatesEnv(repos) });
      await git(['update-ref', 'refs/heads/main', id], { repo: { gitDir: dir }, signal });
    } else {
      await checkOutCommit(dir, workTree, id, repos, signal);
    }
    await git(['update-ref', TASK_START_REF, id], { repo: { gitDir: dir }, signal });
  }).catch(missing);
  // Every object of the workspace is written once the pack and the commit are (the checkout
  // writes none): the leak check lists the whole store then.
  const leaks = Promise.all([packed, committed]).then(() => objectsAmong(dir, forbidden));
  const [ids, commit, , , leaked] = await allSettledOrThrow([written, committed, packed, checkedOut, leaks] as const);
  const root = ids[ids.length - 1];
  return { commit, tree: root, leaks: leaked };
}

/**
 * The trees to write for a folder hierarchy holding `files`, where every folder listed in
 * `reused` is taken as that existing tree (its files in `files` are then ignored; a reused folder
 * inside another reused folder is covered by the outer one): the other folders, children first,
 * the root last, as {@link writeTrees} takes them.
 *
 * @throws ExpBenchError `GIT_FAILED` when a path is both a file and a folder (not a tree git could have listed).
 */
export function changedTrees(files: Pick<TreeFile, 'mode' | 'sha' | 'path'>[], reused: Pick<TreeDir, 'sha' | 'path'>[]): TreeEntry[][] {
  type Node = { kind: 'file'; mode: string; sha: string } | { kind: 'reused'; sha: string } | { kind: 'dir'; children: Map<string, Node> };
  const root: Node = { kind: 'dir', children: new Map() };
  const clash = (p: string) => new ExpBenchError('GIT_FAILED', p, 'is both a file and a folder in the tree to write');
  const place = (p: string, leaf: Node): void => {
    const parts = p.split('/');
    let folder = root;
    for (let i = 0; i < parts.length - 1; i++) {
      let next = folder.children.get(parts[i]);
      if (next?.kind === 'reused') return;
      if (!next) folder.children.set(parts[i], (next = { kind: 'dir', children: new Map() }));
      if (next.kind !== 'dir') throw clash(parts.slice(0, i + 1).join('/'));
      folder = next;
    }
    const name = parts[parts.length - 1];
    const old = folder.children.get(name);
    if (old?.kind === 'reused') return;
    if (old && (old.kind === 'file' || leaf.kind === 'file')) throw clash(p);
    folder.children.set(name, leaf);
  };
  for (const t of [...reused].sort((a, b) => a.path.length - b.path.length)) place(t.path, { kind: 'reused', sha: t.sha });
  for (const f of files) place(f.path, { kind: 'file', mode: f.mode, sha: f.sha });
  const out: TreeEntry[][] = [];
  const add = (folder: Extract<Node, { kind: 'dir' }>): number => {
    const entries = [...folder.children].map(([name, n]): TreeEntry => n.kind === 'file'
      ? { mode: n.mode, type: 'blob', sha: n.sha, name }
      : { mode: '040000', type: 'tree', sha: n.kind === 'dir' ? add(n) : n.sha, name });
    out.push(entries);
    return out.length - 1;
  };
  add(root);
  return out;
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
 * The blob ids among `blobs` that are in the object store of the host's git folder `dir` (loose
 * and packed, reachable or not; {@link listObjects}).
 */
export async function objectsAmong(dir: string, blobs: Iterable<string>): Promise<string[]> {
  const want = new Set(blobs);
  if (want.size === 0) return [];
  return (await listObjects(dir)).filter((s) => want.has(s));
}
