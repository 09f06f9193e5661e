import * as fs from 'node:fs';
import { promises as fsp } from 'node:fs';
import * as path from 'node:path';
import { ExpBenchError } from '../errors';
import { HOST_ATTRIBUTES } from './env';
import { FULL_SHA } from './sha';
import { assertHostFolder } from './guard';
import { plumbing } from './run';
import { storedObjects } from './objects';

/**
 * Repositories as a whole: making one, finding one, and the few files of a git folder the project
 * writes or copies itself (the attributes, the exclude list, a copy of the index, the solver's
 * repository of a workspace). The only code that knows where a git folder keeps them.
 */

/**
 * Formats pinned whatever the git version's defaults: `GIT_DEFAULT_HASH` (git ≥ 2.29) and
 * `GIT_DEFAULT_REF_FORMAT` (git ≥ 2.45; older versions only know these formats). A workspace
 * receives objects packed from SHA-1 caches, and every EXP-Bench paper repository is SHA-1.
 */
const PINNED_FORMATS = { GIT_DEFAULT_HASH: 'sha1', GIT_DEFAULT_REF_FORMAT: 'files' };

/**
 * `git init --quiet --template= --initial-branch=main [--bare] dir`: an empty repository with
 * branch `main`, no template (no sample hooks, no `description`), SHA-1 objects and files refs,
 * and the layer's own attributes ({@link hardenRepository}). Its configuration is git's own
 * (format, `bare`, `filemode`…): no driver, include, alternates or work tree in it.
 *
 * @throws ExpBenchError `GIT_FAILED` naming `dir` (also when its parent folder is one the solver
 *   can write); `CANCELLED`.
 */
export async function initRepository(dir: string, o: { bare?: boolean; signal?: AbortSignal } = {}): Promise<void> {
  assertHostFolder(path.dirname(path.resolve(dir)));
  await plumbing(['init', '--quiet', '--template=', '--initial-branch=main', ...(o.bare ? ['--bare'] : []), dir],
    { repo: 'none', cwd: path.dirname(path.resolve(dir)), signal: o.signal, subject: dir, env: PINNED_FORMATS });
  await hardenRepository(o.bare ? dir : path.join(dir, '.git'));
}

/**
 * Writes the layer's `info/attributes` (env.ts `HOST_ATTRIBUTES`: no filter, diff, merge, ident or
 * encoding attribute of any work tree takes effect) into the git folder `gitDir`, which the host
 * owns (made by {@link initRepository}, a clone into the pristine cache…). Idempotent.
 */
export async function hardenRepository(gitDir: string): Promise<void> {
  const file = path.join(gitDir, 'info', 'attributes');
  if (await fsp.readFile(file, 'utf8').then((t) => t === HOST_ATTRIBUTES, () => false)) return;
  await fsp.mkdir(path.dirname(file), { recursive: true });
  await fsp.writeFile(file, HOST_ATTRIBUTES);
}

/**
 * Whether `dir` is the top of a non-bare repository or is a bare repository (no search upwards:
 * `GIT_CEILING_DIRECTORIES` is its parent), and its HEAD commit when it has one: one
 * `git rev-parse`, a second only when the first fails (a repository without HEAD…). `dir` is a
 * user's source (a `checkout` call of run.ts: trusted for that path only).
 */
export async function repositoryTop(dir: string): Promise<{ isTop: boolean; head?: string }> {
  const repo = { checkout: dir };
  try {
    // Exit 1 (output still complete): HEAD names no commit yet. A bare repository prints no cdup line.
    const r = await plumbing(['rev-parse', '--is-bare-repository', '--show-cdup', '--verify', '--quiet', 'HEAD^{commit}'],
      { repo, okCodes: [1] });
    const lines = r.text.split('\n');
    const bare = lines[0].trim() === 'true';
    const head = r.code === 0 ? lines[bare ? 1 : 2]?.trim() : undefined;
    return {
      isTop: bare || (lines[1] ?? '').trim() === '',
      ...(head && FULL_SHA.test(head) ? { head } : {}),
    };
  } catch {
    try {
      const r = await plumbing(['rev-parse', '--is-bare-repository'], { repo });
      return { isTop: r.text.trim() === 'true' };
    } catch {
      return { isTop: false };
    }
  }
}

/**
 * Adds `patterns` (lines not there yet) to `info/exclude` of the git folder `gitDir`, under a
 * comment line, so that session files inside its work tree never enter a patch.
 */
export async function addExcludes(gitDir: string, patterns: string[]): Promise<void> {
  const file = path.join(gitDir, 'info', 'exclude');
  await fsp.mkdir(path.dirname(file), { recursive: true });
  const old = await fsp.readFile(file, 'utf8').catch(() => '');
  const add = patterns.filter((p) => !old.split('\n').includes(p));
  if (add.length) {
    await fsp.writeFile(file, `${old}${old && !old.endsWith('\n') ? '\n' : ''}# EXP-Bench session files\n${add.join('\n')}\n`);
  }
}

/** The index file of the git folder `gitDir` (for a call's `GIT_INDEX_FILE`). */
export function indexFileOf(gitDir: string): string {
  return path.join(gitDir, 'index');
}

/**
 * Copies the index of the git folder `gitDir` to `to` (for a call's `GIT_INDEX_FILE`), keeping its
 * modification time (rounded DOWN to the millisecond): git's "racy clean" check compares each
 * entry's mtime with the index file's own mtime, so a copy stamped "now" would make a file
 * rewritten, same size, in the same second as the index was last written look unchanged.
 * No index yet: nothing is copied.
 *
 * @throws the file system's error.
 */
export async function copyIndex(gitDir: string, to: string): Promise<void> {
  const from = indexFileOf(gitDir);
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

/** Whether the git folder `gitDir` has an index file: anything was ever read into it or staged. */
export async function hasIndex(gitDir: string): Promise<boolean> {
  return fsp.access(indexFileOf(gitDir)).then(() => true, () => false);
}

/** Whether `gitDir` is a git folder (its `HEAD`, `objects/` and `refs/` are there), read without git. */
export function isGitDir(gitDir: string): boolean {
  return ['HEAD', 'objects', 'refs'].every((e) => fs.existsSync(path.join(gitDir, e)));
}

/** What {@link writeSolverRepository} makes in a work tree. */
export interface SolverRepositoryOptions {
  /** The host's git folder holding `commit` and every object it needs (packed, or loose). */
  from: string;
  /** The commit the branch `main` points at. */
  commit: string;
  /** Lines of `.git/info/exclude` (the session's own files). */
  excludes: string[];
}

/**
 * Makes `<workTree>/.git`, the solver's own repository of a workspace, WITHOUT running git in it
 * (the host never does: src/core/git/guard.ts): files written by the host before the workspace is
 * handed out. Branch `main` at `commit`; the objects are copies of the host's store `from` (its
 * packs and loose objects: nothing links back to it, no alternates); the index is a copy of the
 * host's (same work tree, same tree); `core.sharedRepository=group` (the work container's user
 * shares the workspace through its group: src/core/sandbox/ownership.ts); `info/exclude` holds
 * `excludes`. No hook, no template. Copies are made with copy-on-write where the file system has
 * it (`COPYFILE_FICLONE`), never as hard links (a hard link would make the solver's file the
 * host's).
 *
 * @throws ExpBenchError `BAD_INPUT` when `<workTree>/.git` exists; the file system's error.
 */
export async function writeSolverRepository(workTree: string, o: SolverRepositoryOptions): Promise<void> {
  const dotGit = path.join(workTree, '.git');
  if (fs.existsSync(dotGit)) throw new ExpBenchError('BAD_INPUT', dotGit, 'already exists: the solver\'s repository is made once, by the preparation');
  const objects = path.join(dotGit, 'objects');
  for (const d of [path.join(objects, 'pack'), path.join(objects, 'info'), path.join(dotGit, 'refs', 'heads'), path.join(dotGit, 'refs', 'tags'), path.join(dotGit, 'info')]) {
    await fsp.mkdir(d, { recursive: true });
  }
  const copies: Promise<void>[] = [];
  const fromObjects = path.join(o.from, 'objects');
  for (const d of await fsp.readdir(fromObjects)) {
    if (d === 'pack') {
      for (const f of await fsp.readdir(path.join(fromObjects, 'pack'))) {
        if (/^pack-[0-9a-f]+\.(pack|idx|rev)$/.test(f)) copies.push(fsp.copyFile(path.join(fromObjects, 'pack', f), path.join(objects, 'pack', f), fs.constants.COPYFILE_FICLONE));
      }
    } else if (/^[0-9a-f]{2}$/.test(d)) {
      copies.push(fsp.mkdir(path.join(objects, d)).then(async () => {
        for (const f of await fsp.readdir(path.join(fromObjects, d))) await fsp.copyFile(path.join(fromObjects, d, f), path.join(objects, d, f), fs.constants.COPYFILE_FICLONE);
      }));
    }
  }
  copies.push(
    fsp.writeFile(path.join(dotGit, 'HEAD'), 'ref: refs/heads/main\n'),
    fsp.writeFile(path.join(dotGit, 'refs', 'heads', 'main'), `${o.commit}\n`),
    fsp.writeFile(path.join(dotGit, 'config'),
      '[core]\n\trepositoryformatversion = 0\n\tfilemode = true\n\tbare = false\n\tlogallrefupdates = true\n\tsharedRepository = group\n'),
    fsp.writeFile(path.join(dotGit, 'info', 'exclude'), o.excludes.length ? `# EXP-Bench session files\n${o.excludes.join('\n')}\n` : ''),
    copyIndex(o.from, path.join(dotGit, 'index')),
  );
  await Promise.all(copies);
}

/**
 * The object ids stored in the solver's repository of the work tree `workTree` (read as data,
 * never by git running in it: objects.ts `storedObjects`), for the preparation's leak check.
 * @throws ExpBenchError `GIT_FAILED` when it records alternates (it would read another store).
 */
export async function solverRepositoryObjects(workTree: string): Promise<string[]> {
  const objectsDir = path.join(workTree, '.git', 'objects');
  const { ids, alternates } = await storedObjects(objectsDir);
  if (alternates.trim()) throw new ExpBenchError('GIT_FAILED', objectsDir, `records alternates (${alternates.trim()}): it would read another object store`);
  return ids;
}

/** The refs of a solver's repository, read as files ({@link solverRepositoryRefs}). */
export interface SolverRefs {
  /** What `refs/heads/main` holds (a commit id, or `ref: …`), when it is a small regular file. */
  main?: string;
  /** Every other ref name found (loose under `refs/`, or listed in `packed-refs`), at most {@link MAX_SOLVER_REFS}. */
  others: string[];
}

/** How many ref names {@link solverRepositoryRefs} reads at most. */
export const MAX_SOLVER_REFS = 64;

/**
 * The refs of the solver's repository `<workTree>/.git`, read as data (the host never runs git
 * there): the loose refs under `refs/` (no link followed, no file over 4 KiB read) and the names
 * in `packed-refs` (its first 64 KiB); a `.git` that is a link or a file is not read at all. For the folder check's "is there work" question only; never
 * believed as the task start.
 */
export async function solverRepositoryRefs(workTree: string): Promise<SolverRefs> {
  const dotGit = path.join(workTree, '.git');
  const out: SolverRefs = { others: [] };
  // A `.git` that is a link (or a file) is never followed: nothing of where it leads is read.
  if (!(await fsp.lstat(dotGit).then((st) => st.isDirectory(), () => false))) return out;
  const add = (name: string) => { if (out.others.length < MAX_SOLVER_REFS && !out.others.includes(name)) out.others.push(name); };
  const stack = ['refs'];
  while (stack.length && out.others.length < MAX_SOLVER_REFS) {
    const rel = stack.pop()!;
    const st = await fsp.lstat(path.join(dotGit, rel)).catch(() => undefined);
    if (!st) continue;
    if (st.isDirectory()) {
      for (const n of await fsp.readdir(path.join(dotGit, rel)).catch(() => [] as string[])) stack.push(`${rel}/${n}`);
    } else if (rel === 'refs/heads/main') {
      out.main = st.isFile() && st.size <= 4096 ? (await readSmall(path.join(dotGit, rel), 4096))?.trim() : undefined;
    } else {
      add(rel);
    }
  }
  const packed = await readSmall(path.join(dotGit, 'packed-refs'), 65536);
  for (const line of (packed ?? '').split('\n')) {
    const m = /^[0-9a-f]{40,64} (refs\/\S+)$/.exec(line);
    if (m && m[1] !== 'refs/heads/main') add(m[1]);
  }
  return out;
}

/** The first `max` bytes of a regular file as text, opened without following a link or waiting on a FIFO; undefined otherwise. */
async function readSmall(file: string, max: number): Promise<string | undefined> {
  let fh: fsp.FileHandle | undefined;
  try {
    fh = await fsp.open(file, fs.constants.O_RDONLY | fs.constants.O_NOFOLLOW | fs.constants.O_NONBLOCK);
    if (!(await fh.stat()).isFile()) return undefined;
    const buf = Buffer.alloc(max);
    const { bytesRead } = await fh.read(buf, 0, max, 0);
    return buf.subarray(0, bytesRead).toString('utf8');
  } catch {
    return undefined;
  } finally {
    await fh?.close().catch(() => undefined);
  }
}
