import { randomBytes } from 'node:crypto';
import { promises as fsp } from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import parseDiff from 'parse-diff';
import { ExpBenchError } from '../errors';
import { sweepDeadOwners } from '../sandbox/processes';
import { allSettledOrThrow } from '../util/promises';
import { TASK_START } from './build';
import { copyIndex, git } from '../git';
import { errorMessage } from '../util/errors';
import { dedupeLeftOut, ignoredEntry, isKnownCache, knownCache, type LeftOut } from './patchRule';
import { copyUntrusted, LIMITS } from '../untrusted';

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
  /** Unified diff of the text changes (`git apply`-able; binary files left out). Empty when nothing changed. */
  patch: string;
  files: PatchFile[];
  /** Paths of binary files added, modified, deleted or renamed with changes (noted, not inlined). */
  binaryFiles: string[];
  /** Ignored files and folders (`.gitignore` rules: build outputs, caches; a folder ends with `/`), listed, not inlined. */
  ignoredFiles: string[];
  /** Nested git repositories the solver created (an untracked folder with its own `.git`): listed, not inlined. */
  nestedRepositories: string[];
  /**
   * Everything of the workspace that is not in the patch, and why (the rule: src/core/workspace/patchRule.ts):
   * ignored files and folders, and known caches (`__pycache__/`, `*.pyc`, `.ipynb_checkpoints/`, …),
   * tracked or not. Sorted by path; a folder ends with `/`.
   */
  leftOut: LeftOut[];
}

/** Session files kept out of the patch even when listed as ignored (`.git/info/exclude`). */
const SESSION_PREFIXES = ['.devcontainer/'];

/**
 * The "task start" commit of a workspace: the root commit of HEAD, which must be the only root
 * and carry the message `task start`.
 *
 * @throws ExpBenchError `SESSION_INVALID` naming the folder when it is not such a workspace.
 */
export async function taskStartCommit(workspaceDir: string): Promise<string> {
  let out: string;
  try {
    out = (await git(['log', '--max-parents=0', '--format=%H%x00%s', 'HEAD', '--'], { cwd: workspaceDir, subject: workspaceDir })).text;
  } catch (e) {
    throw new ExpBenchError('SESSION_INVALID', workspaceDir, `not a task workspace (no git history): ${errorMessage(e)}`, { cause: e });
  }
  const roots = out.split('\n').filter(Boolean).map((l) => l.split('\0'));
  if (roots.length !== 1 || roots[0][1] !== TASK_START) {
    throw new ExpBenchError('SESSION_INVALID', workspaceDir,
      `expected exactly one root commit "${TASK_START}", found ${roots.map((r) => `"${r[1]}"`).join(', ') || 'none'}`);
  }
  return roots[0][0];
}

/**
 * Computes the workspace's patch without touching the user's index: the index is copied to a
 * temporary file (`GIT_INDEX_FILE`), untracked files are intent-added there (`git add -N`), and
 * `git diff --find-renames <task start>` compares the commit with the working tree. Known caches
 * are never intent-added and their sections are dropped from the diff; they and the ignored paths
 * are listed in `leftOut` (the one rule of src/core/workspace/patchRule.ts, which the stepper and
 * the submission both get from here).
 *
 * Speed (bench/patch.bench.ts): the git calls that do not depend on each other run at once (the
 * two `ls-files` read the workspace's own index, read-only, while it is being copied), and the
 * diff is asked for once with its `--raw -z` summary in front (names unquoted, statuses), so that
 * the text is decoded once and parse-diff is needed only for the rare diff the summary does not
 * describe one section per file (see {@link splitDiff}).
 *
 * @throws ExpBenchError `SESSION_INVALID` (not a task workspace), `GIT_FAILED`, `CANCELLED`.
 */
export async function makePatch(workspaceDir: string, opts: { signal?: AbortSignal } = {}): Promise<WorkspacePatch> {
  // Index files of a killed submit or patch (named with their pid) are removed while this one runs.
  void sweepDeadOwners(os.tmpdir(), STALE_TEMP);
  const index = path.join(os.tmpdir(), `expbench-patch-${process.pid}-${randomBytes(4).toString('hex')}.index`);
  const run = { cwd: workspaceDir, signal: opts.signal, env: { GIT_INDEX_FILE: index, GIT_LITERAL_PATHSPECS: '1' } };
  // The workspace's own index (`$GIT_DIR/index`, what is copied), only read by ls-files.
  const ownIndex = { cwd: workspaceDir, signal: opts.signal, env: { GIT_INDEX_FILE: undefined, GIT_LITERAL_PATHSPECS: '1' } };
  const baseP = taskStartCommit(workspaceDir);
  const copiedP = copyIndex(workspaceDir, index);
  const untrackedP = git(['ls-files', '-z', '--others', '--exclude-standard'], ownIndex);
  const ignoredP = git(['ls-files', '-z', '--others', '--ignored', '--exclude-standard', '--directory'], ownIndex);
  try {
    // The first failure in the order the steps depend on each other (not a workspace → SESSION_INVALID).
    const [base, , untracked, ignored] = await allSettledOrThrow([baseP, copiedP, untrackedP, ignoredP] as const);
    const newPaths = untracked.text.split('\0').filter(Boolean);
    const nested = newPaths.filter((p) => p.endsWith('/'));
    // Untracked caches, one entry per cache folder (`src/__pycache__/`) or cache file.
    const caches = dedupeLeftOut(newPaths.filter((p) => !p.endsWith('/')).map(knownCache).filter((c): c is LeftOut => !!c));
    const cachedFiles = newPaths.filter((p) => !p.endsWith('/') && isKnownCache(p)).length;
    if (newPaths.length > nested.length + cachedFiles) {
      // Every untracked file but the nested repositories (which `add` would record as gitlinks)
      // and the caches: `--all` with exclusions, not one pathspec per file (matching each path
      // against a thousand pathspecs took 250-420 ms where `git add -N --all` took 60-140 ms).
      const skip = [...nested, ...caches.map((c) => c.path)].map((p) => `:(exclude,literal)${p}`);
      await git(['add', '--intent-to-add', '--all', '--', '.', ...skip],
        { ...run, env: { ...run.env, GIT_LITERAL_PATHSPECS: undefined } });
    }
    const diff = await git(['-c', 'core.quotePath=false', 'diff', '--no-color', '--no-ext-diff', '--no-textconv',
      '--find-renames', '--src-prefix=a/', '--dst-prefix=b/', '--patch', '--raw', '-z', base, '--'], run);
    const { entries, patchStart } = readRawSummary(diff.text);
    const split = splitDiff(diff.text.slice(patchStart), entries, { leaveOut: isKnownCache });
    const ignoredFiles = ignored.text.split('\0').filter((p) => p && !SESSION_PREFIXES.some((s) => p.startsWith(s)));
    return {
      base,
      patch: split.patch,
      files: split.files,
      binaryFiles: split.binaryFiles,
      ignoredFiles,
      nestedRepositories: nested,
      leftOut: dedupeLeftOut([
        ...ignoredFiles.map(ignoredEntry),
        ...caches,
        ...split.leftOutFiles.map((f) => knownCache(f.path)!),
      ]),
    };
  } finally {
    await copiedP.catch(() => undefined);
    await fsp.rm(index, { force: true });
  }
}

/** Temp files of this module, named with the pid of the process that made them. */
const STALE_TEMP = /^expbench-(?:patch|checkout|apply)-(\d+)-[0-9a-f]{8}\./;

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
 * `destDir` (created when absent; must be empty), with `git read-tree` into a temporary index
 * and `git checkout-index --prefix` (nothing in the workspace changes).
 *
 * @throws ExpBenchError `BAD_INPUT` when `destDir` is not empty; `SESSION_INVALID`; `GIT_FAILED`.
 */
export async function checkoutTaskStart(workspaceDir: string, destDir: string): Promise<string> {
  const base = await taskStartCommit(workspaceDir);
  await fsp.mkdir(destDir, { recursive: true });
  if ((await fsp.readdir(destDir)).length > 0) throw new ExpBenchError('BAD_INPUT', destDir, 'must be empty to receive a clean checkout');
  const index = path.join(os.tmpdir(), `expbench-checkout-${process.pid}-${randomBytes(4).toString('hex')}.index`);
  const run = { cwd: workspaceDir, env: { GIT_INDEX_FILE: index } };
  try {
    await git(['read-tree', base], run);
    await git(['checkout-index', '--all', '--force', `--prefix=${path.resolve(destDir)}/`], run);
  } finally {
    await fsp.rm(index, { force: true });
  }
  return base;
}

/**
 * Applies a workspace's patch to a checkout of its "task start" tree (see {@link checkoutTaskStart}):
 * `git apply` for the text patch (all or nothing), then binary files copied byte for byte from the
 * workspace (added, modified, renamed) or removed (deleted). Returns the patch applied.
 *
 * @throws ExpBenchError `GIT_FAILED` with git apply's message when the patch does not apply.
 */
export async function applyToCheckout(workspaceDir: string, destDir: string, patch?: WorkspacePatch): Promise<WorkspacePatch> {
  const p = patch ?? (await makePatch(workspaceDir));
  const dest = path.resolve(destDir);
  if (p.patch) {
    const file = path.join(os.tmpdir(), `expbench-apply-${process.pid}-${randomBytes(4).toString('hex')}.patch`);
    await fsp.writeFile(file, p.patch);
    try {
      await git(['apply', '--whitespace=nowarn', file], { cwd: dest, subject: dest, env: { GIT_CEILING_DIRECTORIES: path.dirname(dest) } });
    } finally {
      await fsp.rm(file, { force: true });
    }
  }
  for (const f of p.files.filter((x) => x.binary)) {
    if (f.status === 'deleted' || f.status === 'renamed') await fsp.rm(inside(dest, f.oldPath ?? f.path), { force: true });
    if (f.status === 'deleted') continue;
    const target = inside(dest, f.path);
    const src = inside(workspaceDir, f.path);
    await fsp.mkdir(path.dirname(target), { recursive: true });
    // no link followed, no FIFO opened, the target created new (copyFile followed a link to any host file)
    await fsp.rm(target, { force: true });
    await copyUntrusted(src, target, { within: workspaceDir, maxBytes: LIMITS.patchBytes, what: `the binary file ${f.path}` });
  }
  return p;
}

function inside(root: string, rel: string): string {
  const abs = path.resolve(root, rel);
  if (!abs.startsWith(path.resolve(root) + path.sep)) throw new ExpBenchError('BAD_INPUT', rel, `path leaves ${root}`);
  return abs;
}
