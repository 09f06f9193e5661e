import { execFile } from 'node:child_process';
import { promisify } from 'node:util';

const run = promisify(execFile);

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
 * with `git show <commit>:<path>`. Reads are memoised.
 */
export function gitPristine(repoDir: string, commit: string): PristineSource {
  const memo = new Map<string, Promise<string | undefined>>();
  return {
    describe: `${repoDir}@${commit.slice(0, 12)}`,
    read(p: string) {
      let r = memo.get(p);
      if (!r) {
        r = run('git', ['-C', repoDir, 'show', `${commit}:${p.replace(/^\/+/, '')}`], { maxBuffer: 64 * 1024 * 1024, encoding: 'utf8' })
          .then((o) => o.stdout, () => undefined);
        memo.set(p, r);
      }
      return r;
    },
  };
}

/**
 * Finds a local repository that holds `commit`, among `candidates` (in order): the first folder in
 * which `git cat-file -e <commit>^{commit}` succeeds. Returns undefined when none does.
 * (Used until the workspace room's pristine clone cache exposes its own lookup.)
 */
export async function locatePristine(commit: string, candidates: (string | undefined)[]): Promise<PristineSource | undefined> {
  for (const dir of candidates) {
    if (!dir) continue;
    try {
      await run('git', ['-C', dir, 'cat-file', '-e', `${commit}^{commit}`]);
      return gitPristine(dir, commit);
    } catch {
      // not this one
    }
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
