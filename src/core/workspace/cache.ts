import { randomBytes } from 'node:crypto';
import * as fs from 'node:fs';
import { promises as fsp } from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { ExpBenchError, isExpBenchError } from '../errors';
import { log } from '../log';
import { FULL_SHA, git, hardenRepository, initRepository } from '../git';
import { sweepDeadOwners } from '../sandbox/processes';
import { cacheName, ClassifiedSource } from './source';
import { errorMessage } from '../util/errors';

const logger = log('workspace.cache');

/** A pristine (bare, never modified by a solver) repository in the cache, and the commit resolved in it. */
export interface Pristine {
  /** Absolute path of the bare cache repository. */
  repo: string;
  /** Full SHA of the commit asked for (or of the source's HEAD). */
  commit: string;
  /** True when the cache repository was created by this call. */
  created: boolean;
  /**
   * False when `commit` is a full SHA taken as given, without a git call to look it up (see
   * {@link PristineOptions.lookUp}): the caller's first read of it must fail when it is absent,
   * and then call {@link ensurePristine} again with `lookUp: true`.
   */
  checked: boolean;
}

export interface PristineOptions {
  source: ClassifiedSource;
  /** Commit (SHA, abbreviated SHA, branch or tag) to resolve; default: the source's HEAD. */
  commit?: string;
  cacheDir: string;
  /** The source's HEAD (full SHA) when the caller already read it (see `probeSource`): no second look-up. */
  sourceHead?: string;
  /**
   * `false`: when the cache repository already exists and the commit is a full SHA, return it
   * unchecked (`checked: false`, no git process) instead of looking it up. Default `true`.
   */
  lookUp?: boolean;
  signal?: AbortSignal;
  onProgress?: (message: string) => void;
}

/**
 * Returns the pristine cache repository of `source` (creating it on first use: `git clone --bare`
 * for URLs and clones, an import commit for plain folders) with the asked commit present,
 * fetching from the source when it is absent.
 *
 * Cache layout: `<cacheDir>/<slug>-<sha256(normalised source)[0..16]>.git`. A new cache repository
 * is made in a temporary folder and renamed into place, so a concurrent or interrupted
 * preparation never leaves a half-made one under the final name.
 *
 * @throws ExpBenchError `SOURCE_UNAVAILABLE` naming the URL or folder, with git's own stderr, when
 *   the clone or fetch fails or the commit does not exist in the source; `CANCELLED`.
 */
export async function ensurePristine(o: PristineOptions): Promise<Pristine> {
  const repo = path.join(o.cacheDir, cacheName(o.source));
  if (o.source.kind === 'folder') {
    await fsp.mkdir(o.cacheDir, { recursive: true });
    return importFolder(o, repo);
  }
  let created = false;
  // One stat, synchronous: a round trip through the thread pool costs more at this point.
  if (!fs.existsSync(path.join(repo, 'HEAD'))) {
    await fsp.mkdir(o.cacheDir, { recursive: true });
    o.onProgress?.(`cloning ${o.source.location}`);
    await cloneInto(o, repo);
    created = true;
  }
  const want = o.commit ?? (created ? 'HEAD' : o.sourceHead ?? await sourceHead(o));
  if (!created && o.lookUp === false && FULL_SHA.test(want)) return { repo, commit: want, created, checked: false };
  let sha = await resolve(repo, want);
  if (!sha) {
    o.onProgress?.(`fetching ${o.commit ?? 'HEAD'} from ${o.source.location}`);
    await fetchAll(o, repo, want);
    sha = await resolve(repo, want);
  }
  if (!sha) {
    throw new ExpBenchError('SOURCE_UNAVAILABLE', o.source.location,
      `commit ${want} does not exist in this repository (after fetching its branches and tags)`);
  }
  return { repo, commit: sha, created, checked: true };
}

async function cloneInto(o: PristineOptions, repo: string): Promise<void> {
  await sweepDeadOwners(o.cacheDir, STALE_TMP);
  const tmp = `${repo}.tmp-${process.pid}-${randomBytes(4).toString('hex')}`;
  try {
    await git(['clone', '--bare', '--quiet', '--', o.source.location, tmp],
      { repo: 'none', cwd: o.cacheDir, signal: o.signal, subject: o.source.location, userConfig: true, allowFileProtocol: true });
    await git(['config', 'remote.origin.fetch', '+refs/heads/*:refs/heads/*'], { repo: { gitDir: tmp } });
    await git(['config', 'gc.auto', '0'], { repo: { gitDir: tmp } });
    await hardenRepository(tmp);
    await placeOrDrop(tmp, repo);
  } catch (e) {
    await fsp.rm(tmp, { recursive: true, force: true });
    if (isExpBenchError(e, 'GIT_FAILED')) {
      throw new ExpBenchError('SOURCE_UNAVAILABLE', o.source.location, `cannot clone: ${e.message.replace(/^[^:]*: /, '')}`, { cause: e });
    }
    throw e;
  }
}

/**
 * A partial clone `<name>.git.tmp-<pid>-<hex>` (its process killed mid-clone): removed by the next
 * cold preparation in that cache once its process is gone (processes.ts).
 */
const STALE_TMP = /\.tmp-(\d+)-[0-9a-f]{8}$/;

/** Renames `tmp` to `final`; when another process made `final` first, keeps theirs. */
async function placeOrDrop(tmp: string, final: string): Promise<void> {
  try {
    await fsp.rename(tmp, final);
  } catch (e: any) {
    if (e?.code !== 'ENOTEMPTY' && e?.code !== 'EEXIST') throw e;
    await fsp.rm(tmp, { recursive: true, force: true });
  }
}

/** The source's current HEAD: read directly for local clones; `git ls-remote` for URLs (cache HEAD when offline). */
async function sourceHead(o: PristineOptions): Promise<string> {
  if (o.source.kind === 'clone') {
    try {
      return (await git(['rev-parse', '--verify', 'HEAD^{commit}'], { repo: { checkout: o.source.location }, signal: o.signal })).text.trim();
    } catch (e) {
      if (isExpBenchError(e, 'CANCELLED')) throw e;
      throw new ExpBenchError('SOURCE_UNAVAILABLE', o.source.location, `has no HEAD commit: ${errorMessage(e)}`, { cause: e });
    }
  }
  try {
    const r = await git(['ls-remote', '--', o.source.location, 'HEAD'], { repo: 'none', signal: o.signal, subject: o.source.location, userConfig: true });
    const sha = r.text.split(/\s/)[0];
    if (/^[0-9a-f]{40,64}$/.test(sha)) return sha;
  } catch (e) {
    if (isExpBenchError(e, 'CANCELLED')) throw e;
    logger.warn(`cannot reach ${o.source.location} (${errorMessage(e)}); using the cached HEAD`);
    o.onProgress?.(`${o.source.location} unreachable: using the cached HEAD`);
  }
  return 'HEAD';
}

async function resolve(repo: string, rev: string): Promise<string | undefined> {
  const r = await git(['rev-parse', '--verify', '--quiet', '--end-of-options', `${rev}^{commit}`], { repo: { gitDir: repo }, okCodes: [1, 128] });
  const sha = r.code === 0 ? r.text.trim() : '';
  return sha || undefined;
}

async function fetchAll(o: PristineOptions, repo: string, want: string): Promise<void> {
  const base = ['fetch', '--quiet', '--no-write-fetch-head', 'origin'];
  const opts = { repo: { gitDir: repo }, signal: o.signal, subject: o.source.location, userConfig: true, allowFileProtocol: true } as const;
  try {
    await git([...base, '+refs/heads/*:refs/heads/*', '+refs/tags/*:refs/tags/*'], opts);
    if (await resolve(repo, want)) return;
    if (/^[0-9a-f]{40,64}$/.test(want)) {
      // Servers that allow fetching a reachable commit by id (GitHub does) give commits off all branches.
      await git([...base, want], { ...opts, okCodes: [1, 128] });
    }
  } catch (e) {
    if (isExpBenchError(e, 'GIT_FAILED')) {
      throw new ExpBenchError('SOURCE_UNAVAILABLE', o.source.location, `cannot fetch: ${e.message.replace(/^[^:]*: /, '')}`, { cause: e });
    }
    throw e;
  }
}

/**
 * Imports a folder that is not a git repository: its files (its `.gitignore` rules apply) are
 * committed into a bare cache repository; the same content gives the same commit again.
 */
async function importFolder(o: PristineOptions, repo: string): Promise<Pristine> {
  let created = false;
  // One stat, synchronous: a round trip through the thread pool costs more at this point.
  if (!fs.existsSync(path.join(repo, 'HEAD'))) {
    await sweepDeadOwners(o.cacheDir, STALE_TMP);
    const tmp = `${repo}.tmp-${process.pid}-${randomBytes(4).toString('hex')}`;
    await initRepository(tmp, { bare: true });
    await git(['config', 'gc.auto', '0'], { repo: { gitDir: tmp } });
    await placeOrDrop(tmp, repo);
    created = true;
  }
  o.onProgress?.(`importing the folder ${o.source.location}`);
  const index = path.join(os.tmpdir(), `expbench-import-${process.pid}-${randomBytes(4).toString('hex')}.index`);
  const env = { GIT_INDEX_FILE: index };
  const folder = { gitDir: repo, workTree: o.source.location };
  try {
    await git(['add', '--all', '--', '.'], { repo: folder, env, signal: o.signal, subject: o.source.location });
    const tree = (await git(['write-tree'], { repo: folder, env })).text.trim();
    const head = await resolve(repo, 'refs/heads/main');
    const headTree = head ? (await git(['rev-parse', `${head}^{tree}`], { repo: { gitDir: repo } })).text.trim() : undefined;
    let commit = head;
    if (!head || headTree !== tree) {
      const args = ['commit-tree', tree, ...(head ? ['-p', head] : []), '-m', `import of the folder ${o.source.location}`];
      commit = (await git(args, { repo: { gitDir: repo } })).text.trim();
      await git(['update-ref', 'refs/heads/main', commit], { repo: { gitDir: repo } });
      await git(['symbolic-ref', 'HEAD', 'refs/heads/main'], { repo: { gitDir: repo } });
    }
    if (o.commit === undefined) return { repo, commit: commit!, created, checked: true };
    const asked = await resolve(repo, o.commit);
    if (!asked) {
      throw new ExpBenchError('BAD_INPUT', o.commit,
        `not a commit of the imported folder ${o.source.location} (a folder source has only its import commits)`);
    }
    return { repo, commit: asked, created, checked: true };
  } finally {
    await fsp.rm(index, { force: true });
  }
}
