import { ExpBenchError } from '../errors';
import { git } from '../git';
import { log } from '../log';
import { ensurePristine } from '../workspace/cache';
import { classifySource, defaultCacheDir } from '../workspace/source';

const logger = log('curation.snapshot');

/** One file (blob) of the tree at the commit. */
export interface SnapshotFile {
  path: string;
  blob: string;
  /** Bytes. */
  size: number;
  /** git mode: `100644`, `100755`, `120000` (symbolic link). */
  mode: string;
}

/** The repository's tree at one commit, read through the git layer, with the texts of its files. */
export interface RepoSnapshot {
  /** The pristine (bare) repository read. */
  repo: string;
  /** Full SHA of the commit. */
  commit: string;
  /** Every file of the tree (submodules' files not included), by repository-relative path. */
  files: Map<string, SnapshotFile>;
  /** Every folder of the tree (`a`, `a/b`), the root excluded. */
  dirs: Set<string>;
  /** Paths of submodules (gitlinks). */
  submodules: string[];
  /** Texts of the text files of at most {@link MAX_SCANNED_FILE_BYTES}, up to {@link MAX_SCANNED_BYTES} in all. */
  texts: Map<string, string>;
  /** Files that are binary (a NUL byte in their first 8000 bytes). */
  binary: Set<string>;
  /** Files not read because of a size limit. */
  unread: string[];
  /**
   * Files listed in the tree whose blob is not in the object store (a partial copy of the
   * repository: `git ls-tree -l` prints their size as `BAD`): never read, never scanned.
   */
  absent: string[];
  /**
   * Text of any file, read on demand when it was not read up front (a referenced file over the
   * size limits); `undefined` for a binary or absent file.
   */
  text(path: string): Promise<string | undefined>;
}

/** Largest file whose text is read up front (for the leak rules), bytes. */
export const MAX_SCANNED_FILE_BYTES = 2 * 1024 * 1024;
/** Largest total of texts read up front, bytes. */
export const MAX_SCANNED_BYTES = 256 * 1024 * 1024;
/** Largest file read on demand (a reference's line count), bytes. */
const MAX_ON_DEMAND_BYTES = 64 * 1024 * 1024;
/** Bytes asked of one `git cat-file --batch` (its output is held in memory). */
const BATCH_BYTES = 32 * 1024 * 1024;

/**
 * The tree of `source` (a git URL, a local clone or a folder) at `commit` (default: the source's
 * HEAD), from the pristine cache (src/core/workspace/cache.ts), which clones or fetches on first use.
 *
 * @throws ExpBenchError `SOURCE_UNAVAILABLE` naming the source when it cannot be cloned or has no
 *   such commit; `BAD_INPUT` for a folder source and a commit it does not have; `CANCELLED`.
 */
export async function openSnapshot(o: { source: string; commit?: string; cacheDir?: string; signal?: AbortSignal }): Promise<RepoSnapshot> {
  const source = await classifySource(o.source);
  const p = await ensurePristine({ source, commit: o.commit, cacheDir: o.cacheDir ?? defaultCacheDir(), signal: o.signal });
  return readSnapshot(p.repo, p.commit, o.signal);
}

/**
 * Reads the tree of `commit` in the repository `repo` (`git ls-tree -r -l`) and the texts of its
 * files (`git cat-file --batch`), within the size limits above.
 *
 * @throws ExpBenchError `GIT_FAILED` / `SOURCE_UNAVAILABLE` (from the git layer) naming `repo`.
 */
export async function readSnapshot(repo: string, commit: string, signal?: AbortSignal): Promise<RepoSnapshot> {
  const listing = await git(['ls-tree', '-r', '-z', '-l', '--full-tree', commit], { repo: { gitDir: repo }, signal });
  const files = new Map<string, SnapshotFile>();
  const dirs = new Set<string>();
  const submodules: string[] = [];
  const absent: string[] = [];
  for (const rec of listing.text.split('\0')) {
    if (rec === '') continue;
    const m = /^(\d+) (\w+) ([0-9a-f]+)\s+(-|\d+|BAD)\t([\s\S]*)$/.exec(rec);
    if (!m) throw new ExpBenchError('GIT_FAILED', repo, `unexpected git ls-tree line: ${JSON.stringify(rec.slice(0, 200))}`);
    const [, mode, type, id, size, p] = m;
    const parts = p.split('/');
    for (let i = 1; i < parts.length; i++) dirs.add(parts.slice(0, i).join('/'));
    if (type === 'commit') submodules.push(p);
    else if (type === 'blob') {
      files.set(p, { path: p, blob: id, size: size === '-' || size === 'BAD' ? 0 : Number(size), mode });
      if (size === 'BAD') absent.push(p);
    }
  }
  const texts = new Map<string, string>();
  const binary = new Set<string>();
  const unread: string[] = [];
  const wanted: SnapshotFile[] = [];
  let total = 0;
  const missing = new Set(absent);
  for (const f of [...files.values()].sort((a, b) => a.size - b.size)) {
    if (f.mode === '120000' || missing.has(f.path)) continue; // a symbolic link's blob is its target's name
    if (f.size > MAX_SCANNED_FILE_BYTES || total + f.size > MAX_SCANNED_BYTES) { unread.push(f.path); continue; }
    total += f.size;
    wanted.push(f);
  }
  for (const [f, data] of await readBlobs(repo, wanted, signal)) {
    if (isBinary(data)) binary.add(f.path);
    else texts.set(f.path, data.toString('utf8'));
  }
  logger.info(`${repo} @ ${commit.slice(0, 12)}: ${files.size} files, ${texts.size} texts read (${total} bytes), ${unread.length} over the limits${absent.length ? `, ${absent.length} absent from the object store` : ''}`);
  const text = async (p: string): Promise<string | undefined> => {
    const known = texts.get(p);
    if (known !== undefined || binary.has(p)) return known;
    const f = files.get(p);
    if (!f || f.mode === '120000' || missing.has(p) || f.size > MAX_ON_DEMAND_BYTES) return undefined;
    const [[, data]] = await readBlobs(repo, [f], signal);
    if (isBinary(data)) { binary.add(p); return undefined; }
    return data.toString('utf8');
  };
  return { repo, commit, files, dirs, submodules: submodules.sort(), texts, binary, unread: unread.sort(), absent: absent.sort(), text };
}

/** True when the first 8000 bytes hold a NUL byte (git's own test for binary content). */
export function isBinary(data: Buffer): boolean {
  return data.subarray(0, 8000).includes(0);
}

/** The contents of `files`' blobs, in batches of about {@link BATCH_BYTES}. */
async function readBlobs(repo: string, files: SnapshotFile[], signal?: AbortSignal): Promise<Array<[SnapshotFile, Buffer]>> {
  const out: Array<[SnapshotFile, Buffer]> = [];
  for (let i = 0; i < files.length;) {
    const batch: SnapshotFile[] = [];
    let bytes = 0;
    while (i < files.length && (batch.length === 0 || bytes + files[i].size <= BATCH_BYTES)) { bytes += files[i].size; batch.push(files[i++]); }
    const r = await git(['cat-file', '--batch'], { repo: { gitDir: repo }, signal, input: batch.map((f) => f.blob).join('\n') + '\n' });
    let at = 0;
    for (const f of batch) {
      const eol = r.stdout.indexOf(0x0a, at);
      const header = r.stdout.subarray(at, eol).toString('utf8');
      const m = /^[0-9a-f]+ blob (\d+)$/.exec(header);
      if (!m) throw new ExpBenchError('SOURCE_UNAVAILABLE', repo, `cannot read the blob of ${f.path}: git cat-file said ${JSON.stringify(header)}`);
      const size = Number(m[1]);
      out.push([f, r.stdout.subarray(eol + 1, eol + 1 + size)]);
      at = eol + 1 + size + 1;
    }
  }
  return out;
}
