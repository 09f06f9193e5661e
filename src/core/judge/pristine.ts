import { catFileBatch, git, isGitDir, type GitRepo } from '../git';

/**
 * Read access to the pinned pristine checkout of a task's repository (the unmasked repository at
 * the manifest's commit). Ground-truth scripts and requirement ranges are read from here, never
 * from the network and never from the solver's workspace.
 */
export interface PristineSource {
  /** Where the files come from, for notes and errors (e.g. `/cache/repo.git@1a2b3c4`). */
  readonly describe: string;
  /** File text at the pinned commit, or undefined when the path does not exist there. */
  read(path: string): Promise<string | undefined>;
}

/**
 * A {@link PristineSource} over a local git repository (bare or not) and a commit, reading files
 * with `git show <commit>:<path>`. Reads are memoised; `prefetched` (path → text, or undefined for
 * a path known to be absent at the commit) answers reads without spawning git.
 */
export function gitPristine(repoDir: string, commit: string, prefetched?: Map<string, string | undefined>): PristineSource {
  const memo = new Map<string, Promise<string | undefined>>();
  for (const [p, text] of prefetched ?? []) memo.set(p, Promise.resolve(text));
  return {
    describe: `${repoDir}@${commit.slice(0, 12)}`,
    read(p: string) {
      let r = memo.get(p);
      if (!r) {
        r = git(['cat-file', 'blob', `${commit}:${p.replace(/^\/+/, '')}`], { repo: repoOf(repoDir) }).then((o) => o.text, () => undefined);
        memo.set(p, r);
      }
      return r;
    },
  };
}

/**
 * Finds a local repository that holds `commit`, among `candidates` (in order): the first folder in
 * which git resolves `<commit>^{commit}`. Returns undefined when none does.
 * (Used until the workspace room's pristine clone cache exposes its own lookup.)
 *
 * `prefetch`: repo-relative paths (a leading `/` is ignored) read at the commit in the SAME git call
 * (one `git cat-file --batch` per candidate tried), so that later `read`s of them spawn nothing.
 * Paths that are not files at the commit (absent, folders, submodules) are left to `read`.
 */
export async function locatePristine(commit: string, candidates: (string | undefined)[], prefetch: string[] = []): Promise<PristineSource | undefined> {
  const paths = [...new Set(prefetch)].filter((p) => !/[\r\n]/.test(p) && p.replace(/^\/+/, '') !== '');
  for (const dir of candidates) {
    if (!dir) continue;
    const objects = await catFileBatch(repoOf(dir), [`${commit}^{commit}`, ...paths.map((p) => `${commit}:${p.replace(/^\/+/, '')}`)]);
    if (!objects || objects[0]?.type !== 'commit') continue; // not this one
    const files = new Map<string, string | undefined>();
    paths.forEach((p, i) => {
      const o = objects[i + 1];
      if (o?.type === 'blob') files.set(p, o.data.toString('utf8'));
      else if (o?.type === 'missing') files.set(p, undefined);
    });
    return gitPristine(dir, commit, files);
  }
  return undefined;
}

/** Lines `start..end` (1-based, inclusive) of `text`, each prefixed with its number. */
export function numberedLines(text: string, start: number, end: number): string {
  const lines = text.split('\n');
  const out: string[] = [];
  for (let i = Math.max(1, start); i <= Math.min(end, lines.length); i++) out.push(`${i}: ${lines[i - 1]}`);
  return out.join('\n');
}

/** Number of lines of `text` (a trailing newline does not start a new line). */
export function lineCount(text: string): number {
  if (text === '') return 0;
  const n = text.split('\n').length;
  return text.endsWith('\n') ? n - 1 : n;
}

/** A candidate folder as the git layer takes it: the pristine cache's bare repository (the host's), or a user's checkout. */
function repoOf(dir: string): GitRepo {
  return isGitDir(dir) ? { gitDir: dir } : { checkout: dir };
}
