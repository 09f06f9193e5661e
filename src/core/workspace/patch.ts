import { promises as fsp } from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import parseDiff from 'parse-diff';
import { ExpBenchError } from '../errors';
import { sweepDeadOwners } from '../sandbox/processes';
import { allSettledOrThrow } from '../util/promises';
import { catFileBatch, git, listTree } from '../git';
import { hostRepositoryOf, type HostRepository } from './hostRepo';
import { snapshotWorkTree, stageWorkTree, tempIndex, walkPaused } from './snapshot';
import { dedupeLeftOut, ignoredEntry, isKnownCache, knownCache, type LeftOut } from './patchRule';

export type { LeftOut, LeftOutReason } from './patchRule';

/** One changed file of a {@link WorkspacePatch}. Paths are repository-relative, `/`-separated. */
export interface PatchFile {
  path: string;
  status: 'added' | 'modified' | 'deleted' | 'renamed';
  /** The path at "task start", for renames. */
  oldPath?: string;
  /** True when git sees the content change as binary: then it is NOT in `patch` (see {@link applyToCheckout}). */
  binary: boolean;
  /** Added and deleted lines (0 for binary files). */
  additions: number;
  deletions: number;
}

/**
 * The implementation patch: everything changed in the workspace since its "task start" commit
 * (the contract: docs/DEVELOPING.md), as the reference harness records it (untracked files
 * intent-added, then `git diff`), with binary contents left out.
 */
export interface WorkspacePatch {
  /** The "task start" commit the patch applies to. */
  base: string;
  /** The tree of the host repository the patch leads to, when it is one (the frozen submission's, or a snapshot's); absent for the live patch of {@link makePatch}. */
  tree?: string;
  /** Unified diff of the text changes (`git apply`-able; binary files left out). Empty when nothing changed. */
  patch: string;
  files: PatchFile[];
  /** Paths of binary files added, modified, deleted or renamed with changes (noted, not inlined). */
  binaryFiles: string[];
  /** Ignored files and folders (`.gitignore` rules: build outputs, caches; a folder ends with `/`), listed, not inlined. */
  ignoredFiles: string[];
  /**
   * Nested git repositories the solver created (an untracked folder with its own `.git`, `/` at
   * the end): their files are in the patch as plain files, their own `.git` is not, and git never
   * runs in them (src/core/workspace/snapshot.ts).
   */
  nestedRepositories: string[];
  /**
   * Everything of the workspace that is not in the patch, and why (the rule: src/core/workspace/patchRule.ts):
   * ignored files and folders, and known caches (`__pycache__/`, `*.pyc`, `.ipynb_checkpoints/`, …),
   * tracked or not. Sorted by path; a folder ends with `/`.
   */
  leftOut: LeftOut[];
}

/** Session files kept out of the patch even when listed as ignored (`info/exclude` of the host repository). */
const SESSION_PREFIXES = ['.devcontainer/'];

/**
 * The "task start" commit of a workspace: the `taskStart` the session's manifest records (the
 * host repository's, src/core/workspace/hostRepo.ts), never anything the workspace's own `.git`
 * says.
 *
 * @throws ExpBenchError `SESSION_INVALID` naming the session folder when it has no host repository.
 */
export async function taskStartCommit(workspaceDir: string): Promise<string> {
  return (await hostRepositoryOf(workspaceDir)).taskStart;
}

/**
 * Computes the workspace's patch as the reference harness records it (untracked files
 * intent-added, then `git diff --find-renames <task start>`), in the session's HOST repository
 * with the workspace as its work tree, on a temporary copy of the host index
 * ({@link stageWorkTree}): nothing of the workspace's own `.git` is read, no driver of the
 * solver's runs, known caches are never intent-added and their sections are dropped, nested
 * repositories are staged as plain content (git never runs in them). Known caches and the
 * ignored paths are listed in `leftOut` (the one rule of src/core/workspace/patchRule.ts, which
 * the stepper and the submission both get from here; the submission takes the same rule as a
 * tree, {@link patchOfTree}).
 *
 * Speed (bench/patch.bench.ts): the listing of ignored paths runs while the work tree is staged,
 * and the diff is asked for once with its `--raw -z` summary in front (names unquoted, statuses),
 * so that the text is decoded once and parse-diff is needed only for the rare diff the summary
 * does not describe one section per file (see {@link splitDiff}).
 *
 * The walk runs with every container that mounts the workspace paused ({@link walkPaused}): the
 * live patch is shown to the solver (the stepper, the proctored window) and sent to the judge of
 * a session not submitted yet, so no link swapped in during the walk may carry host files into it.
 *
 * @throws ExpBenchError `SESSION_INVALID` (no host repository), `GIT_FAILED`, `CANCELLED`;
 *   `CONTAINER_FAILED` when a container that mounts the workspace cannot be paused.
 */
export async function makePatch(workspaceDir: string, opts: { signal?: AbortSignal } = {}): Promise<WorkspacePatch> {
  // Index files of a killed submit or patch (named with their pid) are removed while this one runs.
  void sweepDeadOwners(os.tmpdir(), STALE_TEMP);
  const h = await hostRepositoryOf(workspaceDir, opts);
  return walkPaused(h, 'computing the workspace patch', () => livePatch(h, opts));
}

async function livePatch(h: HostRepository, opts: { signal?: AbortSignal }): Promise<WorkspacePatch> {
  const index = tempIndex('patch');
  try {
    // The host index, read-only, for the ignored paths, while the work tree is staged in the copy.
    const ignoredP = git(['ls-files', '-z', '--others', '--ignored', '--exclude-standard', '--directory'], { repo: h.repo, signal: opts.signal, env: { GIT_LITERAL_PATHSPECS: '1' } });
    const stagedP = stageWorkTree(h, index, 'intent', opts.signal);
    const [staged, ignored] = await allSettledOrThrow([stagedP, ignoredP] as const);
    const diff = await git(['-c', 'core.quotePath=false', 'diff', '--no-color', '--no-ext-diff', '--no-textconv',
      '--find-renames', '--src-prefix=a/', '--dst-prefix=b/', '--patch', '--raw', '-z', h.taskStart, '--'], { repo: h.repo, signal: opts.signal, env: { GIT_INDEX_FILE: index } });
    return fromDiff(h, diff.text, { nested: staged.nestedRepositories, caches: staged.caches, ignored: ignored.text.split('\0') });
  } finally {
    await fsp.rm(index, { force: true });
  }
}

/**
 * The patch from task start to `tree` (a tree of the host repository: a snapshot, or the frozen
 * submission's), as {@link makePatch} describes it; `o.nested`, `o.caches` and `o.ignored` are
 * the snapshot's lists (empty for a frozen tree read back).
 */
export async function patchOfTree(
  h: HostRepository, tree: string, o: { signal?: AbortSignal; nested?: string[]; caches?: LeftOut[]; ignored?: string[] } = {},
): Promise<WorkspacePatch> {
  const diff = await git(['-c', 'core.quotePath=false', 'diff', '--no-color', '--no-ext-diff', '--no-textconv',
    '--find-renames', '--src-prefix=a/', '--dst-prefix=b/', '--patch', '--raw', '-z', h.taskStart, tree, '--'], { repo: { gitDir: h.gitDir }, signal: o.signal });
  return { ...fromDiff(h, diff.text, o), tree };
}

/** A {@link WorkspacePatch} from git's `--patch --raw -z` output (no `tree`: a live patch). */
function fromDiff(h: HostRepository, text: string, o: { nested?: string[]; caches?: LeftOut[]; ignored?: string[] }): WorkspacePatch {
  const { entries, patchStart } = readRawSummary(text);
  const split = splitDiff(text.slice(patchStart), entries, { leaveOut: isKnownCache });
  const ignoredFiles = (o.ignored ?? []).filter((p) => p && !SESSION_PREFIXES.some((s) => p.startsWith(s)));
  return {
    base: h.taskStart,
    patch: split.patch,
    files: split.files,
    binaryFiles: split.binaryFiles,
    ignoredFiles,
    nestedRepositories: o.nested ?? [],
    leftOut: dedupeLeftOut([
      ...ignoredFiles.map(ignoredEntry),
      ...(o.caches ?? []),
      ...split.leftOutFiles.map((f) => knownCache(f.path)!),
    ]),
  };
}

/** Temp files of this module, named with the pid of the process that made them. */
const STALE_TEMP = /^expbench-(?:patch|checkout|apply|snapshot|frozen|nullgit)-(\d+)-[0-9a-f]{6,}/;

/** One entry of `git diff --raw -z`: its status letter (`M`, `A`, `D`, `R`, `T`, `U`…) and paths. */
export interface RawEntry {
  status: string;
  path: string;
  /** The source path of a rename or copy. */
  oldPath?: string;
}

/**
 * Reads the `--raw -z` summary that `git diff --patch --raw -z` writes before the patch
 * (`:<modes> <ids> <status>\0<path>\0[<new path>\0]` per file, then one NUL before the patch).
 * Returns the entries and where the patch text starts.
 */
export function readRawSummary(text: string): { entries: RawEntry[]; patchStart: number } {
  const entries: RawEntry[] = [];
  let i = 0;
  const field = () => {
    const end = text.indexOf('\0', i);
    const f = text.slice(i, end < 0 ? text.length : end);
    i = end < 0 ? text.length : end + 1;
    return f;
  };
  while (text.charCodeAt(i) === 58 /* : */) {
    const meta = field();
    const status = meta.slice(meta.lastIndexOf(' ') + 1, meta.lastIndexOf(' ') + 2);
    const first = field();
    if (status === 'R' || status === 'C') entries.push({ status, oldPath: first, path: field() });
    else entries.push({ status, path: first });
  }
  if (entries.length && (text[i] === '\0' || text[i] === '\n')) i++;
  return { entries, patchStart: i };
}

/**
 * Splits git's diff into per-file sections; keeps the text ones as the patch. Names and status
 * come from `raw` (git's `--raw -z` summary of the same diff, {@link readRawSummary}) when it
 * describes the sections one to one with plain statuses (`M`, `A`, `D`, `R`); otherwise (no
 * summary, a type change, which git prints as two sections, an unmerged path…) from parse-diff run
 * on the section HEADERS only (parse-diff turns every hunk line into an object: 2.7 s for a
 * 10 MiB diff in a fresh process, against 0.15 s for its headers, and 35 ms for the headers of a
 * 2900-file diff against 1.5 ms for the summary). Added and deleted lines are counted from the hunk
 * bodies ({@link countHunkLines}).
 *
 * With `opts.leaveOut`, the sections of the files it returns true for (by their path) are neither
 * in `patch` nor in `files`: they are returned in `leftOutFiles`.
 *
 * @throws ExpBenchError `GIT_FAILED` when parse-diff does not find one file per section.
 */
export function splitDiff(text: string, raw?: RawEntry[], opts: { leaveOut?: (path: string) => boolean } = {}):
  { patch: string; files: PatchFile[]; binaryFiles: string[]; leftOutFiles: PatchFile[] } {
  const starts = sectionStarts(text);
  const sections = starts.map((s, k) => text.slice(s, k + 1 < starts.length ? starts[k + 1] : text.length));
  const heads = sections.map((s) => headerEnd(s));
  const names = (raw && namesFromRaw(raw, sections.length)) ?? namesFromHeaders(sections, heads);
  const files: PatchFile[] = [];
  const leftOutFiles: PatchFile[] = [];
  const keep: number[] = [];
  for (let i = 0; i < sections.length; i++) {
    const s = sections[i];
    const binary = /^(Binary files .* differ|GIT binary patch)$/m.test(s.slice(0, heads[i]));
    const { from, to, status } = names[i];
    const counted = binary ? { additions: 0, deletions: 0 } : countHunkLines(s, heads[i]);
    const file: PatchFile = {
      path: status === 'deleted' ? from : to,
      status,
      ...(status === 'renamed' ? { oldPath: from } : {}),
      binary,
      ...counted,
    };
    if (opts.leaveOut?.(file.path)) { leftOutFiles.push(file); continue; }
    files.push(file);
    if (!binary) keep.push(i);
  }
  return {
    patch: keptText(text, starts, keep),
    files,
    binaryFiles: files.filter((f) => f.binary).map((f) => f.path),
    leftOutFiles,
  };
}

/** The kept sections (indices, ascending) of `text` as one string, in as few slices as runs of kept sections. */
function keptText(text: string, starts: number[], keep: number[]): string {
  const end = (k: number) => (k + 1 < starts.length ? starts[k + 1] : text.length);
  let out = '';
  for (let j = 0; j < keep.length;) {
    let last = j;
    while (last + 1 < keep.length && keep[last + 1] === keep[last] + 1) last++;
    out += text.slice(starts[keep[j]], end(keep[last]));
    j = last + 1;
  }
  return out;
}

type SectionName = { from: string; to: string; status: PatchFile['status'] };

const RAW_STATUS: Record<string, PatchFile['status']> = { M: 'modified', A: 'added', D: 'deleted', R: 'renamed' };

/** Names from the `--raw` summary, or undefined when it does not match the sections one to one. */
function namesFromRaw(raw: RawEntry[], count: number): SectionName[] | undefined {
  if (raw.length !== count || raw.some((e) => !(e.status in RAW_STATUS))) return undefined;
  return raw.map((e) => ({ from: e.oldPath ?? e.path, to: e.path, status: RAW_STATUS[e.status] }));
}

/** Names from parse-diff run on the section headers (git's C-style quoting decoded). */
function namesFromHeaders(sections: string[], heads: number[]): SectionName[] {
  const parsed = parseDiff(sections.map((s, i) => s.slice(0, heads[i])).join(''));
  if (parsed.length !== sections.length) {
    throw new ExpBenchError('GIT_FAILED', 'git diff', `cannot parse the diff: ${sections.length} file sections, parse-diff found ${parsed.length}`);
  }
  return parsed.map((p) => {
    const from = unquote(p.from ?? '');
    const to = unquote(p.to ?? '');
    return { from, to, status: p.new ? 'added' : p.deleted ? 'deleted' : from !== to ? 'renamed' : 'modified' };
  });
}

/**
 * Added (`+`) and deleted (`-`) lines in the hunks of one file section, from `start` (the first
 * `@@`) on; hunk headers, context lines and `\ No newline at end of file` are not counted.
 */
export function countHunkLines(section: string, start: number): { additions: number; deletions: number } {
  let additions = 0;
  let deletions = 0;
  for (let i = start; i < section.length;) {
    const c = section.charCodeAt(i);
    if (c === 43 /* + */) additions++;
    else if (c === 45 /* - */) deletions++;
    const nl = section.indexOf('\n', i);
    if (nl < 0) break;
    i = nl + 1;
  }
  return { additions, deletions };
}

/** Where the `diff --git ` sections of a diff start, in order (found with indexOf: a multiline regex split was 5× slower). */
function sectionStarts(text: string): number[] {
  const starts: number[] = [];
  if (text.startsWith('diff --git ')) starts.push(0);
  for (let i = text.indexOf('\ndiff --git '); i >= 0; i = text.indexOf('\ndiff --git ', i + 1)) starts.push(i + 1);
  return starts;
}

/** Length of a section's header (up to its first hunk). */
function headerEnd(section: string): number {
  if (section.startsWith('@@ ')) return 0;
  const i = section.indexOf('\n@@ ');
  return i < 0 ? section.length : i + 1;
}

/** Decodes git's C-style quoting left in parse-diff's names (`\303\251` → `é`, `\t`, `\"`, `\\`). */
export function unquote(name: string): string {
  if (!name.includes('\\')) return name;
  const bytes: number[] = [];
  const simple: Record<string, number> = { a: 7, b: 8, t: 9, n: 10, v: 11, f: 12, r: 13, '"': 34, '\\': 92 };
  for (let i = 0; i < name.length; i++) {
    const c = name[i];
    if (c === '\\' && /^[0-7]{3}$/.test(name.slice(i + 1, i + 4))) {
      bytes.push(parseInt(name.slice(i + 1, i + 4), 8));
      i += 3;
    } else if (c === '\\' && name[i + 1] in simple) {
      bytes.push(simple[name[i + 1]]);
      i += 1;
    } else {
      bytes.push(...Buffer.from(c, 'utf8'));
    }
  }
  return Buffer.from(bytes).toString('utf8');
}

/**
 * Writes the "task start" tree of a workspace (the masked repository as handed out) into
 * `destDir` (created when absent; must be empty), from the host repository: `git read-tree` into
 * a temporary index and `git checkout-index --prefix` (nothing in the workspace is read or changed).
 *
 * @throws ExpBenchError `BAD_INPUT` when `destDir` is not empty; `SESSION_INVALID`; `GIT_FAILED`.
 */
export async function checkoutTaskStart(workspaceDir: string, destDir: string): Promise<string> {
  const h = await hostRepositoryOf(workspaceDir);
  await checkoutTree(h, h.taskStart, destDir);
  return h.taskStart;
}

/**
 * Writes the tree of `rev` (a commit or tree of the host repository `h`) into the empty folder
 * `destDir` (created when absent) through a temporary index.
 * @throws ExpBenchError `BAD_INPUT` when `destDir` is not empty; `GIT_FAILED`.
 */
export async function checkoutTree(h: HostRepository, rev: string, destDir: string, signal?: AbortSignal): Promise<void> {
  await fsp.mkdir(destDir, { recursive: true });
  if ((await fsp.readdir(destDir)).length > 0) throw new ExpBenchError('BAD_INPUT', destDir, 'must be empty to receive a clean checkout');
  const index = tempIndex('checkout');
  const repo = { gitDir: h.gitDir };
  try {
    await git(['read-tree', rev], { repo, env: { GIT_INDEX_FILE: index }, signal });
    await git(['checkout-index', '--all', '--force', `--prefix=${path.resolve(destDir)}/`], { repo: { gitDir: h.gitDir, workTree: path.resolve(destDir) }, env: { GIT_INDEX_FILE: index }, signal });
  } finally {
    await fsp.rm(index, { force: true });
  }
}

/**
 * Applies a workspace's patch to a checkout of its "task start" tree (see {@link checkoutTaskStart}):
 * `git apply` for the text patch (all or nothing), then binary files written from the patch's
 * tree in the host repository (added, modified, renamed) or removed (deleted). Returns the patch
 * applied.
 *
 * @throws ExpBenchError `GIT_FAILED` with git apply's message when the patch does not apply.
 */
export async function applyToCheckout(workspaceDir: string, destDir: string, patch?: WorkspacePatch): Promise<WorkspacePatch> {
  const h = await hostRepositoryOf(workspaceDir);
  const p = patch?.tree ? patch : await patchOfTree(h, (await snapshotWorkTree(h)).tree);
  const dest = path.resolve(destDir);
  if (p.patch) {
    await git(['apply', '--whitespace=nowarn', '-'], { repo: 'none', cwd: dest, input: p.patch, subject: dest });
  }
  const binaries = p.files.filter((x) => x.binary);
  const blobs = await catFileBatch(h.gitDir, binaries.filter((f) => f.status !== 'deleted').map((f) => `${p.tree!}:${f.path}`));
  const modes = new Map((await listTree(h.gitDir, p.tree!)).map((e) => [e.path, e.mode]));
  let k = 0;
  for (const f of binaries) {
    if (f.status === 'deleted' || f.status === 'renamed') await fsp.rm(inside(dest, f.oldPath ?? f.path), { force: true });
    if (f.status === 'deleted') continue;
    const b = blobs?.[k++];
    if (!b || !('data' in b)) throw new ExpBenchError('GIT_FAILED', f.path, `not in the patch's tree ${p.tree!.slice(0, 12)}`);
    const target = inside(dest, f.path);
    await fsp.mkdir(path.dirname(target), { recursive: true });
    // the tree's blob, never the workspace's file; the target made new (no link at it followed)
    await fsp.rm(target, { force: true });
    await fsp.writeFile(target, b.data, { mode: modes.get(f.path) === '100755' ? 0o755 : 0o644, flag: 'wx' });
  }
  return p;
}

function inside(root: string, rel: string): string {
  const abs = path.resolve(root, rel);
  if (!abs.startsWith(path.resolve(root) + path.sep)) throw new ExpBenchError('BAD_INPUT', rel, `path leaves ${root}`);
  return abs;
}
