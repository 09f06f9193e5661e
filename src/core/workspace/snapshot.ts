import { randomBytes } from 'node:crypto';
import { promises as fsp } from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { copyIndex, git } from '../git';
import { withContainersPaused } from '../sandbox/pause';
import type { HostRepository } from './hostRepo';
import { CACHE_FOLDERS, CACHE_NAMES, CACHE_SUFFIXES, dedupeLeftOut, knownCache, type LeftOut } from './patchRule';

/** What {@link snapshotWorkTree} took. */
export interface WorkTreeSnapshot {
  /** The tree of the work tree as the patch rule takes it (written into the host repository's store). */
  tree: string;
  /**
   * Nested repositories (folders with their own `.git` that task start does not have, `/` at the
   * end): their files are in the tree as plain content, their own `.git` is not, and git is never
   * run in them (each is read as a work tree of the host repository).
   */
  nestedRepositories: string[];
  /** The untracked known caches left out (patchRule.ts), one entry per cache folder or file. */
  caches: LeftOut[];
}

/** How often a process refreshes a host index's stat data before a snapshot, ms (see {@link snapshotWorkTree}). */
export const REFRESH_EVERY_MS = 5 * 60_000;
const refreshedAt = new Map<string, number>();

/** Nested repositories deeper than this (a repository in a repository in …) are left out, listed. */
export const MAX_NESTING = 8;

/**
 * The known caches as pathspecs that keep them out of `git add` (tracked or not: a tracked cache
 * keeps its task start content, as the patch rule says).
 */
export const CACHE_EXCLUDES: readonly string[] = [
  ...CACHE_FOLDERS.map((f) => `:(exclude,glob)**/${f}/**`),
  ...CACHE_SUFFIXES.map((s) => `:(exclude,glob)**/*${s}`),
  ...CACHE_NAMES.map((n) => `:(exclude,glob)**/${n}`),
];

/**
 * Takes the host repository's work tree (a session's workspace) as a tree of the host
 * repository, by the one patch rule (src/core/workspace/patchRule.ts): every tracked change and
 * every untracked file, binaries included; ignored files (the work tree's `.gitignore` files and
 * the host repository's `info/exclude`) and known caches left out. Nothing of the workspace's own
 * `.git` is read, and no file is changed.
 *
 * How: the host index (it holds task start only, so ignore rules see what the reference harness
 * sees) is copied to a temporary index where `git add --all` takes the work tree (caches and
 * nested repositories excluded by pathspec) and `write-tree` writes it. The host index's stat
 * data is refreshed first (`update-index --refresh`) at most every {@link REFRESH_EVERY_MS} per
 * process: a work container's start changes every file's ctime (its group is shared), after
 * which each snapshot would hash every file again. Each nested repository is taken the same way
 * with its folder as the work tree (so its own `.git` is skipped like any work tree's top-level
 * `.git`) and read in under its path (`read-tree --prefix`), recursively up to
 * {@link MAX_NESTING}.
 *
 * While git walks the work tree, every container that mounts it (the session's work container,
 * a harness-mode verification of a session not submitted yet) is paused ({@link walkPaused}):
 * git's `lstat` then `open` of a path cannot be raced by a folder swapped for a link to the
 * host's files (private/, the pristine cache), nor a nested repository's folder swapped for a
 * link before git takes it as its work tree.
 *
 * @throws ExpBenchError `GIT_FAILED` (a file git cannot add: a tracked file replaced by a FIFO…),
 *   `CANCELLED`; `CONTAINER_FAILED` when a container that mounts the workspace cannot be paused
 *   (nothing is walked then).
 */
export async function snapshotWorkTree(h: HostRepository, o: { signal?: AbortSignal; reason?: string } = {}): Promise<WorkTreeSnapshot> {
  return walkPaused(h, o.reason ?? 'taking a snapshot of the workspace', async () => {
    const index = tempIndex('snapshot');
    try {
      const staged = await stageWorkTree(h, index, 'add', o.signal);
      const tree = (await git(['write-tree'], { repo: h.repo, env: { GIT_INDEX_FILE: index }, signal: o.signal })).text.trim();
      return { tree, nestedRepositories: staged.nestedRepositories, caches: staged.caches };
    } finally {
      await fsp.rm(index, { force: true });
    }
  });
}

/**
 * Runs `fn`, a host walk of the live work tree of `h` (git's `add`, `ls-files --others`, the
 * nested repositories' work trees), with every running container that mounts the workspace
 * paused and unpaused after, whatever `fn` does (src/core/sandbox/pause.ts, counted: nested
 * walks and the proctored clock's pause do not unpause early). Where no container runs (a
 * researcher's local workspace, no Docker engine) `fn` runs as it is: nothing of a solver's runs
 * then, and researcher mode is not proctored.
 */
export function walkPaused<T>(h: HostRepository, reason: string, fn: () => Promise<T>): Promise<T> {
  return withContainersPaused(h.workTree, reason, fn);
}

/**
 * Puts the work tree of `h` into the index file `index` (made from the host index) by the patch
 * rule: `add` stages every file (blobs written: what {@link snapshotWorkTree} writes as a tree),
 * `intent` marks the untracked ones intent-to-add, as the reference harness does before its
 * `git diff` (the live patch, patch.ts: no file is hashed twice). Either way, nested
 * repositories are staged as plain content under their path (each taken as a work tree of its
 * own, `read-tree --prefix`) and known caches are left out. Refreshes the host index's stat data
 * first, at most every {@link REFRESH_EVERY_MS} per process.
 */
export async function stageWorkTree(h: HostRepository, index: string, how: 'add' | 'intent', signal?: AbortSignal): Promise<Omit<WorkTreeSnapshot, 'tree'>> {
  const last = refreshedAt.get(h.gitDir);
  if (last === undefined || Date.now() - last > REFRESH_EVERY_MS) {
    refreshedAt.set(h.gitDir, Date.now());
    // Another refresh holding the index lock (128) leaves the stat data as it is: only slower.
    await git(['update-index', '-q', '--refresh'], { repo: h.repo, signal, okCodes: [1, 128] });
  }
  await copyIndex(h.gitDir, index);
  const nested: string[] = [];
  const caches: LeftOut[] = [];
  await takeTree(h, h.workTree, '', index, 0, nested, caches, how, signal);
  return { nestedRepositories: nested, caches: dedupeLeftOut(caches) };
}

/** Temporary index files of this module and patch.ts, named with the pid of the process that made them. */
export function tempIndex(kind: string): string {
  return path.join(os.tmpdir(), `expbench-${kind}-${process.pid}-${randomBytes(4).toString('hex')}.index`);
}

/**
 * Stages the work tree `workTree` (`prefix`: its path in the workspace) into `index`, its nested
 * repositories as trees of their own read in under their paths (always staged with `add`: their
 * files are not in task start).
 */
async function takeTree(
  h: HostRepository, workTree: string, prefix: string, index: string, depth: number, nested: string[], caches: LeftOut[], how: 'add' | 'intent', signal?: AbortSignal,
): Promise<void> {
  const repo = { gitDir: h.gitDir, workTree };
  const env = { GIT_INDEX_FILE: index };
  const untracked = (await git(['ls-files', '-z', '--others', '--exclude-standard'], { repo, env, signal })).text.split('\0').filter(Boolean);
  const inner = untracked.filter((p) => p.endsWith('/'));
  let plain = 0;
  for (const p of untracked) {
    if (p.endsWith('/')) continue;
    const c = knownCache(prefix + p);
    if (c) caches.push(c); else plain++;
  }
  // `intent`: with no untracked file to mark, `add -N` has nothing to do (tracked changes are read by the diff).
  if (how === 'add' || plain > 0) {
    await git(['add', ...(how === 'intent' ? ['--intent-to-add'] : []), '--all', '--', '.', ...inner.map((p) => `:(exclude,literal)${p}`), ...CACHE_EXCLUDES], { repo, env, signal });
  }
  for (const p of inner) {
    nested.push(prefix + p);
    if (depth + 1 > MAX_NESTING) continue;
    const innerIndex = tempIndex('snapshot');
    try {
      await takeTree(h, path.join(workTree, p), prefix + p, innerIndex, depth + 1, nested, caches, 'add', signal);
      const t = (await git(['write-tree'], { repo: { gitDir: h.gitDir, workTree: path.join(workTree, p) }, env: { GIT_INDEX_FILE: innerIndex }, signal })).text.trim();
      await git(['read-tree', `--prefix=${p}`, t], { repo, env, signal });
    } finally {
      await fsp.rm(innerIndex, { force: true });
    }
  }
}
