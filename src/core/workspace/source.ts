import { createHash } from 'node:crypto';
import { promises as fsp } from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { ExpBenchError } from '../errors';
import { repositoryTop } from '../git';
import { trimEndOf } from '../untrusted';

/** Kind of a preparation source: a git URL, a local git repository, or a plain local folder. */
export type SourceKind = 'url' | 'clone' | 'folder';

/** A classified source: its kind and its location (the URL, or the resolved absolute path). */
export interface ClassifiedSource {
  kind: SourceKind;
  location: string;
}

/** True for `scheme://…` URLs and scp-like `user@host:path` addresses. */
export function looksLikeUrl(source: string): boolean {
  return /^[a-z][a-z0-9+.-]*:\/\//i.test(source) || /^[^/\s@]+@[^/\s:]+:/.test(source);
}

/**
 * Decides what `source` is. A path is a `clone` only when it is itself the top of a git
 * repository (or a bare repository); a subfolder of a repository, or a folder without git,
 * is a `folder` (imported by committing its files).
 *
 * @throws ExpBenchError `SOURCE_UNAVAILABLE` naming the path when it is not an existing folder.
 */
export async function classifySource(source: string): Promise<ClassifiedSource> {
  return (await probeSource(source)).source;
}

/** A classified source and, for a `clone` with a commit checked out, the full SHA of its HEAD. */
export interface ProbedSource {
  source: ClassifiedSource;
  /** Full SHA of the clone's `HEAD` commit at probing time; absent for URLs, folders and clones without commits. */
  head?: string;
}

/**
 * {@link classifySource}, and for a local clone its HEAD commit read by the same git process
 * (one `git rev-parse` instead of two: a preparation without `--commit` pins that HEAD).
 *
 * @throws ExpBenchError as {@link classifySource}.
 */
export async function probeSource(source: string): Promise<ProbedSource> {
  const trimmed = source.trim();
  if (!trimmed) throw new ExpBenchError('BAD_INPUT', '(source)', 'no source given: pass a git URL or a folder');
  if (looksLikeUrl(trimmed)) return { source: { kind: 'url', location: trimmed } };
  const abs = path.resolve(trimmed);
  const st = await fsp.stat(abs).catch(() => undefined);
  if (!st?.isDirectory()) {
    throw new ExpBenchError('SOURCE_UNAVAILABLE', abs, 'not a folder, and not a git URL (scheme://… or user@host:path)');
  }
  const real = await fsp.realpath(abs);
  const top = await repositoryTop(real);
  return { source: { kind: top.isTop ? 'clone' : 'folder', location: real }, ...(top.isTop && top.head ? { head: top.head } : {}) };
}

/**
 * Normalised form of a source used for the cache key: URLs lose a trailing `/` and `.git`, and
 * their scheme and host are lower-cased; paths are absolute and real.
 */
export function normaliseSource(s: ClassifiedSource): string {
  if (s.kind !== 'url') return `${s.kind}:${s.location}`;
  let u = trimEndOf(s.location.trim(), '/').replace(/\.git$/, '');
  u = u.replace(/^([a-z][a-z0-9+.-]*:\/\/)([^/]*)/i, (_m, scheme: string, host: string) => scheme.toLowerCase() + host.toLowerCase());
  return `url:${u}`;
}

/** Cache folder name of a source: a readable slug plus 16 hex of the SHA-256 of {@link normaliseSource}. */
export function cacheName(s: ClassifiedSource): string {
  const norm = normaliseSource(s);
  const hash = createHash('sha256').update(norm).digest('hex').slice(0, 16);
  const base = trimEndOf(norm, '/').split(/[/:]/).pop() || 'repo';
  const slug = base.replace(/\.git$/, '').replace(/[^A-Za-z0-9._-]+/g, '_').slice(0, 40);
  return `${s.kind === 'folder' ? 'folder-' : ''}${slug}-${hash}.git`;
}

/** Default pristine cache: `$XDG_CACHE_HOME/expbench/pristine`, else `~/.cache/expbench/pristine`. */
export function defaultCacheDir(): string {
  const base = process.env.XDG_CACHE_HOME || path.join(os.homedir(), '.cache');
  return path.join(base, 'expbench', 'pristine');
}

/**
 * Resolves a submodule URL from `.gitmodules` the way git does: `./x` and `../x` are relative to
 * the superproject's URL (or folder); anything else is taken as is.
 */
export function resolveSubmoduleUrl(url: string, superLocation: string): string {
  if (!url.startsWith('./') && !url.startsWith('../')) return url;
  if (looksLikeUrl(superLocation)) {
    const scp = /^([^/\s@]+@[^/\s:]+:)(.*)$/.exec(superLocation);
    const [prefix, rest] = scp && !/^[a-z][a-z0-9+.-]*:\/\//i.test(superLocation) ? [scp[1], scp[2]] : ['', superLocation];
    const parts = trimEndOf(rest, '/').split('/');
    for (const seg of url.split('/')) {
      if (seg === '..') parts.pop();
      else if (seg !== '.' && seg !== '') parts.push(seg);
    }
    return prefix + parts.join('/');
  }
  return path.resolve(superLocation, url);
}
