import * as fs from 'node:fs';
import { promises as fsp } from 'node:fs';
import * as path from 'node:path';
import { FULL_SHA } from './sha';
import { git, plumbing } from './run';

/**
 * Repositories as a whole: making one, finding one, and the few files of a git folder the project
 * writes or copies itself (the exclude list, a copy of the index). The only code that knows where
 * a git folder keeps them.
 */

/**
 * Formats pinned whatever the git version's defaults: `GIT_DEFAULT_HASH` (git ≥ 2.29) and
 * `GIT_DEFAULT_REF_FORMAT` (git ≥ 2.45; older versions only know these formats). A workspace
 * receives objects packed from SHA-1 caches, and every EXP-Bench paper repository is SHA-1.
 */
const PINNED_FORMATS = { GIT_DEFAULT_HASH: 'sha1', GIT_DEFAULT_REF_FORMAT: 'files' };

/**
 * `git init --quiet --template= --initial-branch=main [--bare] dir`: an empty repository with
 * branch `main`, no template (no sample hooks, no `description`), SHA-1 objects and files refs.
 *
 * @throws ExpBenchError `GIT_FAILED` naming `dir`; `CANCELLED`.
 */
export async function initRepository(dir: string, o: { bare?: boolean; signal?: AbortSignal } = {}): Promise<void> {
  await plumbing(['init', '--quiet', '--template=', '--initial-branch=main', ...(o.bare ? ['--bare'] : []), dir],
    { signal: o.signal, subject: dir, env: PINNED_FORMATS });
}

/**
 * Whether `dir` is the top of a non-bare repository or is a bare repository (no search upwards:
 * `GIT_CEILING_DIRECTORIES` is its parent), and its HEAD commit when it has one: one
 * `git rev-parse`, a second only when the first fails (a repository without HEAD…).
 */
export async function repositoryTop(dir: string): Promise<{ isTop: boolean; head?: string }> {
  const env = { GIT_CEILING_DIRECTORIES: path.dirname(dir) };
  try {
    // Exit 1 (output still complete): HEAD names no commit yet. A bare repository prints no cdup line.
    const r = await plumbing(['rev-parse', '--is-bare-repository', '--show-cdup', '--verify', '--quiet', 'HEAD^{commit}'],
      { cwd: dir, env, okCodes: [1] });
    const lines = r.text.split('\n');
    const bare = lines[0].trim() === 'true';
    const head = r.code === 0 ? lines[bare ? 1 : 2]?.trim() : undefined;
    return {
      isTop: bare || (lines[1] ?? '').trim() === '',
      ...(head && FULL_SHA.test(head) ? { head } : {}),
    };
  } catch {
    try {
      const r = await plumbing(['rev-parse', '--is-bare-repository'], { cwd: dir, env });
      return { isTop: r.text.trim() === 'true' };
    } catch {
      return { isTop: false };
    }
  }
}

/**
 * The git folder of the work tree `dir`: `dir/.git` when it is a folder (every call of {@link git}
 * ignores `GIT_DIR` from the environment, so that is the one git uses), which spares a git
 * process; otherwise (a linked worktree, a `.git` file) `git rev-parse --absolute-git-dir`.
 *
 * @throws ExpBenchError `GIT_FAILED` when `dir` is not in a repository.
 */
export async function gitDirOf(dir: string): Promise<string> {
  const dotGit = path.join(path.resolve(dir), '.git');
  if (await fsp.stat(dotGit).then((st) => st.isDirectory(), () => false)) return dotGit;
  return (await git(['rev-parse', '--absolute-git-dir'], { cwd: dir })).text.trim();
}

/**
 * Adds `patterns` (lines not there yet) to `.git/info/exclude` of the work tree `dir`, under a
 * comment line, so that session files inside it never enter a patch.
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
 * Copies the index of the work tree `dir` to `to` (for a call's `GIT_INDEX_FILE`), keeping its
 * modification time (rounded DOWN to the millisecond): git's "racy clean" check compares each
 * entry's mtime with the index file's own mtime, so a copy stamped "now" would make a file
 * rewritten, same size, in the same second as the index was last written look unchanged.
 * No index yet: nothing is copied.
 *
 * @throws ExpBenchError `GIT_FAILED` when `dir` is not in a repository; the file system's error.
 */
export async function copyIndex(dir: string, to: string): Promise<void> {
  const from = path.join(await gitDirOf(dir), 'index');
  let st;
  try {
    st = await fsp.stat(from);
    await fsp.copyFile(from, to);
  } catch (e: any) {
    if (e?.code === 'ENOENT') return;
    throw e;
  }
  await fsp.utimes(to, st.atime, new Date(Math.floor(st.mtimeMs)));
}

/**
 * Sets `key` to `value` in the repository configuration of `dir` when `dir` is the top of a work
 * tree (`dir/.git` exists); returns whether it did.
 *
 * @throws ExpBenchError `GIT_FAILED`.
 */
export async function configureIfRepository(dir: string, key: string, value: string): Promise<boolean> {
  if (!fs.existsSync(path.join(dir, '.git'))) return false;
  await git(['config', key, value], { cwd: dir });
  return true;
}

/** Whether the work tree `dir` (git folder `dir/.git`) has an index file: anything was ever read into it or staged. */
export async function hasIndex(dir: string): Promise<boolean> {
  return fsp.access(path.join(dir, '.git', 'index')).then(() => true, () => false);
}
