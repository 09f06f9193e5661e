import { randomBytes } from 'node:crypto';
import { promises as fsp } from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { copyIndex, git } from '../git';
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
 * How: the host index's stat data is refreshed (`update-index --refresh`: the host's index holds
 * task start only, so ignore rules see what the reference harness sees), then copied to a
 * temporary index where `git add --all` takes the work tree (caches and nested repositories
 * excluded by pathspec) and `write-tree` writes it. Each nested repository is taken the same way
 * with its folder as the work tree (so its own `.git` is skipped like any work tree's top-level
 * `.git`) and read in under its path (`read-tree --prefix`), recursively up to
 * {@link MAX_NESTING}.
 *
 * @throws ExpBenchError `GIT_FAILED` (a file git cannot add: a tracked file replaced by a FIFO…), `CANCELLED`.
 */
export async function snapshotWorkTree(h: HostRepository, o: { signal?: AbortSignal } = {}): Promise<WorkTreeSnapshot> {
  // Another refresh holding the index lock (128) leaves the stat data as it is: only slower.
  await git(['update-index', '-q', '--refresh'], { repo: h.repo, signal: o.signal, okCodes: [1, 128] });
  const index = tempIndex('snapshot');
  try {
    await copyIndex(h.gitDir, index);
    const nested: string[] = [];
    const caches: LeftOut[] = [];
    const tree = await takeTree(h, h.workTree, '', index, 0, nested, caches, o.signal);
    return { tree, nestedRepositories: nested, caches: dedupeLeftOut(caches) };
  } finally {
    await fsp.rm(index, { force: true });
  }
}

/** Temporary index files of this module and patch.ts, named with the pid of the process that made them. */
export function tempIndex(kind: string): string {
  return path.join(os.tmpdir(), `expbench-${kind}-${process.pid}-${randomBytes(4).toString('hex')}.index`);
}

/** The tree of the work tree `workTree` (`prefix`: its path in the workspace) added to `index`. */
async function takeTree(
  h: HostRepository, workTree: string, prefix: string, index: string, depth: number, nested: string[], caches: LeftOut[], signal?: AbortSignal,
): Promise<string> {
  const repo = { gitDir: h.gitDir, workTree };
  const env = { GIT_INDEX_FILE: index };
  const untracked = (await git(['ls-files', '-z', '--others', '--exclude-standard'], { repo, env, signal })).text.split('\0').filter(Boolean);
  const inner = untracked.filter((p) => p.endsWith('/'));
  for (const p of untracked) if (!p.endsWith('/')) { const c = knownCache(prefix + p); if (c) caches.push(c); }
  await git(['add', '--all', '--', '.', ...inner.map((p) => `:(exclude,literal)${p}`), ...CACHE_EXCLUDES], { repo, env, signal });
  for (const p of inner) {
    nested.push(prefix + p);
    if (depth + 1 > MAX_NESTING) continue;
    const innerIndex = tempIndex('snapshot');
    try {
      const t = await takeTree(h, path.join(workTree, p), prefix + p, innerIndex, depth + 1, nested, caches, signal);
      await git(['read-tree', `--prefix=${p}`, t], { repo, env, signal });
    } finally {
      await fsp.rm(innerIndex, { force: true });
    }
  }
  return (await git(['write-tree'], { repo, env, signal })).text.trim();
}
