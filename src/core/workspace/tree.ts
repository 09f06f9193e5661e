import { ExpBenchError, isExpBenchError } from '../errors';
import { ensurePristine } from './cache';
import { git, listTree } from '../git';
import { classifySource, ClassifiedSource, resolveSubmoduleUrl } from './source';
import { errorMessage } from '../util/errors';
import { trimEndOf } from '../untrusted';

/** One file of the source tree at the pinned commit, submodule files flattened to full paths. */
export interface TreeFile {
  /** `100644`, `100755` or `120000` (symbolic link). */
  mode: string;
  /** Blob id. */
  sha: string;
  /** Repository-relative path from the superproject's root. */
  path: string;
  /** The cache repository that holds the blob. */
  repo: string;
  /** Path of the innermost submodule holding the file, if any. */
  submodule?: string;
}

/** A submodule met while flattening. `url` and `repo` are absent when it was masked whole (never fetched). */
export interface FlatSubmodule {
  path: string;
  sha: string;
  url?: string;
  repo?: string;
}

/** A tree object of the source (a folder at the pinned commit), with its full path. */
export interface TreeDir {
  sha: string;
  path: string;
  repo: string;
}

export interface FlatTree {
  files: TreeFile[];
  /** Every sub-tree (folder) met, the root trees excepted. */
  trees: TreeDir[];
  submodules: FlatSubmodule[];
}

export interface FlattenOptions {
  repo: string;
  commit: string;
  /**
   * URL or folder of the repository (relative submodule URLs are resolved against it), or a
   * function giving it, called only when the tree has submodules.
   */
  location: string | (() => Promise<string>);
  cacheDir: string;
  /** Submodules at (or under) a path for which this returns true are not fetched nor listed. */
  skipSubmodule: (path: string) => boolean;
  signal?: AbortSignal;
  onProgress?: (message: string) => void;
}

/**
 * Lists every file of `commit` (a commit id; anything else fails) with `git ls-tree -r`
 * ({@link listTree}), replacing each submodule (gitlink) by the files of its own tree at the
 * recorded SHA (fetched into the pristine cache, recursively for nested submodules).
 *
 * @throws ExpBenchError `SOURCE_UNAVAILABLE` naming the submodule when `.gitmodules` has no URL
 *   for it or its commit cannot be fetched (with git's error).
 */
export async function flattenTree(o: FlattenOptions, prefix = ''): Promise<FlatTree> {
  // `^{commit}`: a missing commit, or an id that is not a commit, fails here (callers may pass an unchecked SHA).
  const listed = await listTree(o.repo, `${o.commit}^{commit}`, o.signal);
  const files: TreeFile[] = [];
  const trees: TreeDir[] = [];
  const submodules: FlatSubmodule[] = [];
  const links: { path: string; sha: string }[] = [];
  for (const { mode, type, sha, path: rel } of listed) {
    if (type === 'commit') links.push({ path: rel, sha });
    else if (type === 'tree') trees.push({ sha, path: prefix + rel, repo: o.repo });
    else if (type === 'blob') files.push({ mode, sha, path: prefix + rel, repo: o.repo, submodule: prefix ? prefix.slice(0, -1) : undefined });
  }
  if (links.length === 0) return { files, trees, submodules };
  const urls = await submoduleUrls(o.repo, o.commit);
  const location = typeof o.location === 'string' ? o.location : await o.location();
  for (const link of links) {
    const full = prefix + link.path;
    if (o.skipSubmodule(full)) {
      submodules.push({ path: full, sha: link.sha });
      continue;
    }
    const raw = urls.get(link.path);
    if (!raw) throw new ExpBenchError('SOURCE_UNAVAILABLE', full, `submodule at ${o.commit.slice(0, 12)} has no URL in .gitmodules`);
    const url = resolveSubmoduleUrl(raw, location);
    let sub: ClassifiedSource;
    try {
      sub = await classifySource(url);
    } catch (e) {
      throw new ExpBenchError('SOURCE_UNAVAILABLE', full, `submodule URL ${url} is not reachable: ${errorMessage(e)}`, { cause: e });
    }
    o.onProgress?.(`submodule ${full} at ${link.sha.slice(0, 12)}`);
    let pristine;
    try {
      pristine = await ensurePristine({ source: sub, commit: link.sha, cacheDir: o.cacheDir, signal: o.signal, onProgress: o.onProgress });
    } catch (e) {
      if (isExpBenchError(e, 'CANCELLED')) throw e;
      throw new ExpBenchError('SOURCE_UNAVAILABLE', full, `submodule ${url} at ${link.sha}: ${errorMessage(e)}`, { cause: e });
    }
    submodules.push({ path: full, sha: link.sha, url, repo: pristine.repo });
    const inner = await flattenTree({ ...o, repo: pristine.repo, commit: link.sha, location: sub.location }, `${full}/`);
    files.push(...inner.files);
    trees.push(...inner.trees);
    submodules.push(...inner.submodules);
  }
  return { files, trees, submodules };
}

/** `submodule.<name>.path` → `url` from `.gitmodules` of `commit`. */
async function submoduleUrls(repo: string, commit: string): Promise<Map<string, string>> {
  const r = await git(['config', '-z', '--blob', `${commit}:.gitmodules`, '--get-regexp', '^submodule\\..*\\.(path|url)$'],
    { repo: { gitDir: repo }, okCodes: [1, 128] });
  const byName = new Map<string, { path?: string; url?: string }>();
  if (r.code === 0) {
    for (const rec of r.text.split('\0')) {
      const nl = rec.indexOf('\n');
      if (nl < 0) continue;
      const key = rec.slice(0, nl);
      const m = /^submodule\.(.*)\.(path|url)$/.exec(key);
      if (!m) continue;
      const e = byName.get(m[1]) ?? {};
      e[m[2] as 'path' | 'url'] = rec.slice(nl + 1);
      byName.set(m[1], e);
    }
  }
  const map = new Map<string, string>();
  for (const e of byName.values()) if (e.path && e.url) map.set(trimEndOf(e.path, '/'), e.url);
  return map;
}
