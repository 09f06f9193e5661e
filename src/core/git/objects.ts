import * as fs from 'node:fs';
import { promises as fsp } from 'node:fs';
import * as path from 'node:path';
import { ExpBenchError, cancelled } from '../errors';
import { gitError, plumbing, startGit, type GitRepo } from './run';

/**
 * Object-store plumbing: trees, commits, checkouts, packs and listings, each written or read by
 * git itself (`mktree`, `commit-tree`, `reset`, `pack-objects`, `cat-file`), always in a git
 * folder the host owns (named by `gitDir`: a bare repository, or a work tree's `.git`).
 */

/** One entry of a tree to write: `sha` is an object id, or the index of an earlier tree in the same {@link writeTrees} call. */
export interface TreeEntry {
  /** `100644`, `100755`, `120000` (symbolic link) or `040000` (tree). */
  mode: string;
  type: 'blob' | 'tree';
  sha: string | number;
  /** The entry's name in its folder (no `/`). */
  name: string;
}

/**
 * Writes `trees` into the object store of the git folder `gitDir` with one
 * `git mktree --batch -z --missing` (git sorts each tree's entries), in order: an entry may name an
 * earlier tree by its index, so children come before their parents. The objects the entries name
 * are not looked up (`--missing`): they may be in another repository (read later through
 * alternates). Returns the tree ids, in the order of `trees`.
 *
 * @throws ExpBenchError `GIT_FAILED` (git's message; also for an entry naming a later tree),
 *   `CANCELLED`.
 */
export function writeTrees(gitDir: string, trees: TreeEntry[][], signal?: AbortSignal): Promise<string[]> {
  const cwd = gitDir;
  if (signal?.aborted) return Promise.reject(cancelled(cwd));
  if (trees.length === 0) return Promise.resolve([]);
  return new Promise((resolve, reject) => {
    const child = startGit(['mktree', '--batch', '-z', '--missing'], { repo: { gitDir }, signal });
    const ids: string[] = [];
    const err: Buffer[] = [];
    let inFlight = 0;
    let pending = '';
    let failed: Error | undefined;
    // Writes every tree whose entries are all known, then waits for git's answer (one id per line).
    const writeReady = () => {
      while (ids.length + inFlight < trees.length) {
        const t = trees[ids.length + inFlight];
        if (t.some((e) => typeof e.sha === 'number' && e.sha >= ids.length)) break;
        const body = t.map((e) => `${e.mode} ${e.type} ${typeof e.sha === 'number' ? ids[e.sha] : e.sha}\t${e.name}\0`).join('');
        child.stdin.write(`${body}\0`);
        inFlight++;
      }
      if (ids.length === trees.length) child.stdin.end();
      else if (inFlight === 0) {
        failed = new ExpBenchError('GIT_FAILED', cwd, `tree ${ids.length} names a tree written after it`);
        child.stdin.end();
      }
    };
    child.stdout.on('data', (b: Buffer) => {
      pending += b.toString('latin1');
      let nl: number;
      while ((nl = pending.indexOf('\n')) >= 0) {
        ids.push(pending.slice(0, nl));
        pending = pending.slice(nl + 1);
        inFlight--;
      }
      writeReady();
    });
    child.stderr.on('data', (b: Buffer) => err.push(b));
    child.on('error', (e) => reject(new ExpBenchError('GIT_FAILED', cwd, `cannot run git: ${e.message}`, { cause: e })));
    child.on('close', (code) => {
      if (signal?.aborted) return reject(cancelled(cwd));
      if (failed) return reject(failed);
      if (code !== 0 || ids.length !== trees.length) return reject(gitError(['mktree'], code ?? -1, Buffer.concat(err).toString('utf8'), cwd));
      resolve(ids);
    });
    writeReady();
  });
}

/**
 * Writes a commit of `tree` with `message` and `parents` (none: a root commit), by the identity of
 * `GIT_ENV` (env.ts), into the git folder `gitDir`; returns its id. No ref changes.
 *
 * @throws ExpBenchError `GIT_FAILED`, `SOURCE_UNAVAILABLE` (the tree is missing), `CANCELLED`.
 */
export async function commitTree(gitDir: string, tree: string, message: string, signal?: AbortSignal, parents: string[] = []): Promise<string> {
  return (await plumbing(['commit-tree', tree, ...parents.flatMap((p) => ['-p', p]), '-m', message], { repo: { gitDir }, signal })).text.trim();
}

/**
 * `GIT_ALTERNATE_OBJECT_DIRECTORIES` naming the object folders of `repos` (bare repositories, or
 * work trees with a `.git` folder; quoted as git reads them when needed): for one call's `env`, so
 * that it reads their objects without anything being recorded in the repository it runs in.
 */
export function alternatesEnv(repos: string[]): { GIT_ALTERNATE_OBJECT_DIRECTORIES: string } {
  return {
    GIT_ALTERNATE_OBJECT_DIRECTORIES: repos.map((r) => {
      const dotGit = path.join(r, '.git');
      const objects = path.join(fs.statSync(dotGit, { throwIfNoEntry: false })?.isDirectory() ? dotGit : r, 'objects');
      return /[:"\\]/.test(objects) ? `"${objects.replace(/["\\]/g, (c) => `\\${c}`)}"` : objects;
    }).join(path.delimiter),
  };
}

/**
 * Copies the objects `ids` (and nothing they refer to) from the repositories `from` (bare, or work
 * trees) into the object store of the git folder `gitDir` as ONE pack,
 * with `git pack-objects` running in `gitDir` and reading `from` as alternates for that process only.
 * Deltas are only against objects in the same pack (a non-thin pack); objects stored in `from`
 * as deltas against objects left out are written uncompressed (`pack.compression=0`): deflating
 * them again was the largest part of a preparation. Git's temporary files are made in `gitDir`'s
 * store, so a cancel or a `from` on another file system leaves nothing in `from`.
 *
 * @throws ExpBenchError `SOURCE_UNAVAILABLE` naming a missing object, `GIT_FAILED`, `CANCELLED`.
 */
export async function packObjectsInto(gitDir: string, ids: Iterable<string>, from: string[], signal?: AbortSignal): Promise<void> {
  const list = [...new Set(ids)];
  if (list.length === 0) return;
  await plumbing(['-c', 'pack.compression=0', 'pack-objects', '--quiet', '--window=0', path.join(gitDir, 'objects', 'pack', 'pack')], {
    repo: { gitDir }, input: list.join('\n') + '\n', signal, subject: gitDir, env: alternatesEnv(from),
  });
}

/**
 * Points the current branch of the git folder `gitDir` at `commit` and writes its index and the
 * work tree `workTree` (`git reset --hard`: stat data included; no reflog, and no `ORIG_HEAD` on
 * an unborn branch), reading the objects from the bare repositories `from` as alternates for that
 * process only (nothing about them is recorded).
 *
 * @throws ExpBenchError `SOURCE_UNAVAILABLE` naming a missing object, `GIT_FAILED`, `CANCELLED`.
 */
export async function checkOutCommit(gitDir: string, workTree: string, commit: string, from: string[], signal?: AbortSignal): Promise<void> {
  await plumbing(['-c', 'core.logAllRefUpdates=false', 'reset', '--quiet', '--hard', commit], { repo: { gitDir, workTree }, signal, subject: workTree, env: alternatesEnv(from) });
}

/**
 * Every object id in the object store of the git folder `gitDir` (loose and packed, reachable or
 * not, and those of alternates it records), from `git cat-file --batch-all-objects`.
 *
 * @throws ExpBenchError `GIT_FAILED`.
 */
export async function listObjects(gitDir: string, signal?: AbortSignal): Promise<string[]> {
  const r = await plumbing(['cat-file', '--batch-all-objects', '--unordered', '--batch-check=%(objectname)'], { repo: { gitDir }, signal });
  return r.text.split('\n').filter(Boolean);
}

/**
 * Every object id stored in the object folder `objectsDir` of a git folder the host must not run
 * git in (a workspace's `.git`, written by the host before the solver gets it): read as data, the
 * loose objects' file names and each pack index through `git show-index` (which needs no
 * repository: it runs in the layer's empty one). `alternates` is the content of its
 * `info/alternates` (other stores it would read), `''` when there is none.
 *
 * @throws ExpBenchError `GIT_FAILED` when an index cannot be read.
 */
export async function storedObjects(objectsDir: string): Promise<{ ids: string[]; alternates: string }> {
  const ids: string[] = [];
  const entries = await fsp.readdir(objectsDir).catch(() => [] as string[]);
  for (const d of entries) {
    if (!/^[0-9a-f]{2}$/.test(d)) continue;
    for (const f of await fsp.readdir(path.join(objectsDir, d))) if (/^[0-9a-f]{38}([0-9a-f]{24})?$/.test(f)) ids.push(d + f);
  }
  const packDir = path.join(objectsDir, 'pack');
  for (const f of await fsp.readdir(packDir).catch(() => [] as string[])) {
    if (!f.endsWith('.idx')) continue;
    const r = await plumbing(['show-index'], { repo: 'none', input: await fsp.readFile(path.join(packDir, f)), subject: path.join(packDir, f) });
    for (const line of r.text.split('\n')) { const id = line.split(' ')[1]; if (id) ids.push(id); }
  }
  const alternates = await fsp.readFile(path.join(objectsDir, 'info', 'alternates'), 'utf8').catch(() => '');
  return { ids, alternates };
}

/** One entry of {@link listTree}: a file (`blob`), a folder (`tree`) or a submodule (`commit`), its path from the root. */
export interface ListedEntry { mode: string; type: string; sha: string; path: string }

/**
 * Every entry of the tree of `rev` in the git folder `gitDir`, recursively, folders included
 * (`git ls-tree -r -t -z --full-tree`).
 *
 * @throws ExpBenchError `GIT_FAILED` (for example `rev` is not there, or not a tree-ish),
 *   `SOURCE_UNAVAILABLE` (a missing tree), `CANCELLED`.
 */
export async function listTree(gitDir: string, rev: string, signal?: AbortSignal): Promise<ListedEntry[]> {
  const r = await plumbing(['ls-tree', '-r', '-t', '-z', '--full-tree', rev], { repo: { gitDir }, signal });
  const out: ListedEntry[] = [];
  for (const rec of r.text.split('\0')) {
    if (!rec) continue;
    const tab = rec.indexOf('\t');
    const [mode, type, sha] = rec.slice(0, tab).split(' ');
    out.push({ mode, type, sha, path: rec.slice(tab + 1) });
  }
  return out;
}

/** One answer of {@link catFileBatch}: a missing object, or an object's type and content. */
export type BatchObject = { type: 'missing' | 'other' } | { type: string; data: Buffer };

/**
 * `git cat-file --batch` in the git folder `repo` (or any {@link GitRepo}) over `specs` (`<rev>`,
 * `<rev>:<path>`; no newline in them): one entry per spec, or undefined when git fails (not a
 * repository, refused by the layer…).
 */
export async function catFileBatch(repo: string | GitRepo, specs: string[]): Promise<BatchObject[] | undefined> {
  const r = await plumbing(['cat-file', '--batch'], { repo: typeof repo === 'string' ? { gitDir: repo } : repo, input: specs.join('\n') + '\n', okCodes: [128] }).catch(() => undefined);
  return r && r.code === 0 ? parseBatch(r.stdout, specs.length) : undefined;
}

function parseBatch(out: Buffer, count: number): BatchObject[] | undefined {
  const objects: BatchObject[] = [];
  let at = 0;
  while (objects.length < count) {
    const eol = out.indexOf(0x0a, at);
    if (eol < 0) return undefined;
    const header = out.subarray(at, eol).toString('utf8');
    at = eol + 1;
    const m = /^[0-9a-f]+ (\S+) (\d+)$/.exec(header);
    if (!m) { objects.push({ type: / missing$/.test(header) ? 'missing' : 'other' }); continue; }
    const size = Number(m[2]);
    objects.push({ type: m[1], data: out.subarray(at, at + size) });
    at += size + 1;
  }
  return objects;
}


/**
 * Streams `git archive --format=tar <commit>` of the repository `gitDir` (bare or a `.git` folder)
 * into `sink`, then ends `sink` (also on failure, so the reader sees the end of its input).
 * Resolves when git exited 0.
 * @throws ExpBenchError SOURCE_UNAVAILABLE naming `gitDir`, with git's message, when git fails
 */
export function archiveInto(gitDir: string, commit: string, sink: NodeJS.WritableStream, signal?: AbortSignal): Promise<void> {
  return new Promise((resolve, reject) => {
    let child: ReturnType<typeof startGit>;
    try {
      child = startGit(['archive', '--format=tar', commit], { repo: { gitDir }, signal });
    } catch (e) {
      sink.end();
      reject(e);
      return;
    }
    child.stdin.end();
    let err = '';
    child.stderr.on('data', (d: Buffer) => { err += d.toString(); });
    child.stdout.pipe(sink, { end: false });
    child.once('error', (e) => { sink.end(); reject(new ExpBenchError('SOURCE_UNAVAILABLE', gitDir, `cannot run git archive: ${e.message}`, { cause: e })); });
    child.once('close', (code) => {
      sink.end();
      if (code === 0) resolve();
      else reject(new ExpBenchError('SOURCE_UNAVAILABLE', gitDir, `git archive ${commit} failed: ${err.trim()}`));
    });
  });
}
