/**
 * The one rule that decides which workspace files are part of the implementation patch, used by
 * the stepper's live patch summary and by the submission alike (both call `makePatch`,
 * src/core/workspace/patch.ts, which applies it):
 *
 * - every tracked change and every untracked file is in the patch, as the reference harness records
 *   it (untracked files intent-added, then `git diff`; docs/exp-bench-harness.md step 3): outputs a
 *   run wrote (`results/…json`) stay in, since a task may ask for a results file;
 * - left out, and listed with the reason: files git ignores (`.gitignore`, `.git/info/exclude`,
 *   reason `ignored`), and the known caches below (reason `cache`), tracked or not;
 * - the session's own files (`.devcontainer/`) are never part of it and never listed;
 * - a nested repository (a folder with its own `.git` that task start does not have) is taken as
 *   plain files: its files are in the patch, its own `.git` is not, and git never runs in it
 *   (src/core/workspace/snapshot.ts); the patch lists it in `nestedRepositories`.
 */

/** Folder names that are caches wherever they are (Python bytecode, Jupyter, test and type-checker caches). */
export const CACHE_FOLDERS: readonly string[] = [
  '__pycache__', '.ipynb_checkpoints', '.pytest_cache', '.mypy_cache', '.ruff_cache', '.hypothesis', '.tox', '.nox',
];
/** File name endings that are caches wherever they are (compiled Python bytecode). */
export const CACHE_SUFFIXES: readonly string[] = ['.pyc', '.pyo'];
/** File names that are caches wherever they are (macOS folder metadata). */
export const CACHE_NAMES: readonly string[] = ['.DS_Store'];

/** Why a path is not in the patch. */
export type LeftOutReason = 'ignored' | 'cache';

/** A file or folder (ends with `/`) of the workspace that is not in the patch, and why. */
export interface LeftOut {
  path: string;
  reason: LeftOutReason;
  /** What matched, in words: `known cache folder __pycache__`, `ignored by git (a .gitignore or the repository's info/exclude)`. */
  why: string;
}

/**
 * The known cache that `rel` (workspace-relative, `/`-separated) is or lies in, or undefined: the
 * path up to and including the first cache folder (`src/__pycache__/`), else the path itself for a
 * cache file (`a.pyc`, `.DS_Store`).
 */
export function knownCache(rel: string): LeftOut | undefined {
  const parts = rel.split('/');
  for (let i = 0; i < parts.length; i++) {
    const isLast = i === parts.length - 1 && !rel.endsWith('/');
    if (!isLast && CACHE_FOLDERS.includes(parts[i])) {
      return { path: `${parts.slice(0, i + 1).join('/')}/`, reason: 'cache', why: `known cache folder ${parts[i]}` };
    }
  }
  const name = parts[parts.length - 1];
  const suffix = CACHE_SUFFIXES.find((s) => name.endsWith(s));
  if (suffix) return { path: rel, reason: 'cache', why: `known cache file *${suffix}` };
  if (CACHE_NAMES.includes(name)) return { path: rel, reason: 'cache', why: `known cache file ${name}` };
  return undefined;
}

/** True when `rel` is a known cache or lies in one. */
export function isKnownCache(rel: string): boolean {
  return knownCache(rel) !== undefined;
}

/** An ignored path as `git ls-files --ignored --directory` lists it, with its reason. */
export function ignoredEntry(rel: string): LeftOut {
  const cache = knownCache(rel);
  return { path: rel, reason: 'ignored', why: `ignored by git (a .gitignore or the repository's info/exclude)${cache ? `; also a ${cache.why}` : ''}` };
}

/** Distinct entries, sorted by path (the first entry of a path wins). */
export function dedupeLeftOut(entries: LeftOut[]): LeftOut[] {
  const seen = new Map<string, LeftOut>();
  for (const e of entries) if (!seen.has(e.path)) seen.set(e.path, e);
  return [...seen.values()].sort((a, b) => (a.path < b.path ? -1 : a.path > b.path ? 1 : 0));
}
