import { parsePatch, type StructuredPatch, type StructuredPatchHunk } from 'diff';
import { git } from '../git';
import { hostRepositoryOf } from '../workspace/hostRepo';
import { splitDiff } from '../trajectory/expbench';
import { errorMessage } from '../util/errors';

/**
 * An agent's final patch, brought to the form `git apply` takes in a task workspace.
 *
 * Agents hand in patches in several shapes: the EXP-Bench harness's `diff -urN` of two folders
 * with host paths (`--- workspace/<repo>_task_index_1_iter_1_…/train.py`, `+++ /Users/…/workspace/
 * <repo>_task_index_1_…/train.py`), `git diff` (`a/`, `b/`), or `diff -ruN old/ new/`. Each file
 * section is parsed with jsdiff (`parsePatch`) and written again with git headers and paths
 * relative to the repository. Rules, in order, for a section's path (docs/steps.md, "Import as
 * Session"):
 * 1. a path with a `workspace/<folder>/` part (the harness's and OpenHands' workspaces): what follows it;
 * 2. `a/…` and `b/…` (git): what follows the prefix;
 * 3. otherwise the components the old and new names share at their end, less the first one when
 *    that is all of one name (`diff -ruN old/ new/` compares two roots).
 * A section is a creation when its old side is `/dev/null`, or its only hunk is `-0,0` and the file
 * is not in the workspace (`diff -N` writes an absent file as empty, dated at the epoch); a deletion
 * when its new side is `/dev/null`, or its only hunk is `+0,0` with an epoch date.
 */

/** What became of one file section of the patch. */
export interface PatchFileImport {
  /** Repository-relative path (git form), or the name as written when none could be derived. */
  path: string;
  /** The name as the patch writes it (old side, or new side for a creation). */
  sourcePath: string;
  op: 'create' | 'modify' | 'delete';
  /** 1-based line of the section's first line in the patch as read. */
  line: number;
  hunks: number;
  /**
   * `applied`: in the workspace; `failed`: `git apply` refused it (see `problem`, `failingHunk`);
   * `cut`: the section is cut or damaged and was not applied; `empty`: no hunks (nothing to apply).
   */
  status: 'pending' | 'applied' | 'failed' | 'cut' | 'empty';
  problem?: string;
  /** The hunk git named when it refused the section: its header, its line in the patch as read, its text. */
  failingHunk?: { header: string; line: number; text: string };
}

/** A patch in git form, per file. */
export interface NormalisedPatch {
  /** The git-form patch of every section that is not cut (what is applied). */
  text: string;
  files: PatchFileImport[];
  /** Path prefixes removed (host folders, `a/`, `b/`), each once. */
  strippedPrefixes: string[];
  /** Git-form text of each section, in the order of `files` (`''` for cut ones). */
  sections: string[];
  /** Each section as read, in the order of `files`. */
  sourceSections: string[];
}

const EPOCH = /^(1969-12-31|1970-01-01)/;

/**
 * Normalises `text` (any unified diff) to git form; `exists(path)` says whether a repository path is
 * in the workspace before the patch. Never throws: a section that cannot be parsed, or whose hunks
 * are short of the lines their headers count (a patch cut to its head and tail), is `cut`, with
 * the line and reason.
 */
export function normalisePatch(text: string, exists: (repoPath: string) => boolean): NormalisedPatch {
  const files: PatchFileImport[] = [];
  const sections: string[] = [];
  const sourceSections: string[] = [];
  const stripped = new Set<string>();
  for (const d of splitDiff(text)) {
    let parsed: StructuredPatch[] = [];
    let damaged: string | undefined;
    try {
      parsed = parsePatch(d.text);
    } catch (e) {
      damaged = damagedAt(d.text, d.line, errorMessage(e));
    }
    // A hunk short of the lines its header counts (cut at its end) is no error to jsdiff.
    damaged ??= d.cut?.replace(/will not apply$/, 'is not applied');
    if (damaged) {
      files.push({ path: d.path, sourcePath: d.rawPath, op: 'modify', line: d.line, hunks: 0, status: 'cut', problem: damaged });
      sections.push('');
      sourceSections.push(d.text);
      continue;
    }
    const p = parsed.find((x) => x.hunks.length > 0 || x.oldFileName || x.newFileName);
    if (!p) continue;
    sourceSections.push(d.text);
    const names = repoPath(p.oldFileName ?? '', p.newFileName ?? '');
    if (names.prefix) for (const x of names.prefix) stripped.add(x);
    const rel = names.path || d.path;
    const only = p.hunks.length === 1 ? p.hunks[0] : undefined;
    const create = p.oldFileName === '/dev/null' || (!!only && only.oldLines === 0 && !exists(rel));
    const del = !create && (p.newFileName === '/dev/null' || (!!only && only.newLines === 0 && EPOCH.test(p.newHeader ?? '')));
    const f: PatchFileImport = { path: rel, sourcePath: create ? (p.newFileName ?? '') : (p.oldFileName ?? ''), op: create ? 'create' : del ? 'delete' : 'modify', line: d.line, hunks: p.hunks.length, status: 'pending' };
    if (p.hunks.length === 0) { f.status = 'empty'; f.problem = 'the section has no hunks (a binary or mode-only change?): nothing to apply'; sections.push(''); files.push(f); continue; }
    files.push(f);
    sections.push(gitSection(rel, f.op, p.hunks));
  }
  return { text: sections.join(''), files, strippedPrefixes: [...stripped], sections, sourceSections };
}

/**
 * Where jsdiff stopped in a section (`Hunk at line N contained invalid line X`): the line of the
 * patch as read that holds X (after hunk N), and X itself, cut to 80 characters.
 */
function damagedAt(section: string, sectionLine: number, message: string): string | undefined {
  const m = /^Hunk at line (\d+) contained invalid line (.*)$/s.exec(message);
  if (!m) return `the section cannot be read (${message}): this file is not applied`;
  const lines = section.split('\n');
  const hunk = Number(m[1]) - 1;
  const bad = lines.findIndex((l, i) => i > hunk && l === m[2]);
  // The text ended inside the hunk (cut at its end): said by the line count instead.
  if (m[2] === '' && lines.slice(bad).every((l) => l === '')) return undefined;
  const at = sectionLine + (bad >= 0 ? bad : hunk);
  return `the patch is cut or damaged at line ${at}: "${m[2].slice(0, 80)}" is no diff line inside the hunk at line ${sectionLine + hunk}; this file is not applied`;
}

/** Repository path of a section from its old and new names (rules in the file's comment). */
export function repoPath(oldName: string, newName: string): { path: string; prefix?: string[] } {
  const names = [oldName, newName].filter((n) => n && n !== '/dev/null');
  if (names.length === 0) return { path: '' };
  const ws = names.map((n) => /^(.*?(?:^|\/)workspace\/[^/]+\/)(.+)$/.exec(n));
  if (ws.every(Boolean)) return { path: ws[0]![2], prefix: ws.map((m) => m![1]) };
  if (names.length === 2 && oldName.startsWith('a/') && newName.startsWith('b/')) return { path: newName.slice(2), prefix: ['a/', 'b/'] };
  if (names.length === 1) {
    const n = names[0].replace(/^[ab]\//, '');
    return { path: n, ...(n !== names[0] ? { prefix: [names[0].slice(0, 2)] } : {}) };
  }
  const a = oldName.split('/'); const b = newName.split('/');
  let k = 0;
  while (k < a.length && k < b.length && a[a.length - 1 - k] === b[b.length - 1 - k]) k++;
  if (k === a.length || k === b.length) k--;
  if (k <= 0) return { path: newName };
  const rel = a.slice(a.length - k).join('/');
  return { path: rel, prefix: [a.slice(0, a.length - k).join('/') + '/', b.slice(0, b.length - k).join('/') + '/'] };
}

/** One file section with git headers. jsdiff adds 1 to the start of a hunk side with 0 lines; undone here. */
function gitSection(rel: string, op: PatchFileImport['op'], hunks: StructuredPatchHunk[]): string {
  const lines = [`diff --git a/${rel} b/${rel}`];
  if (op === 'create') lines.push('new file mode 100644', '--- /dev/null', `+++ b/${rel}`);
  else if (op === 'delete') lines.push('deleted file mode 100644', `--- a/${rel}`, '+++ /dev/null');
  else lines.push(`--- a/${rel}`, `+++ b/${rel}`);
  for (const h of hunks) {
    lines.push(hunkHeader(h));
    for (const l of h.lines) lines.push(l);
  }
  return lines.join('\n') + '\n';
}

function hunkHeader(h: StructuredPatchHunk): string {
  const side = (start: number, n: number) => `${n === 0 ? Math.max(start - 1, 0) : start},${n}`;
  return `@@ -${side(h.oldStart, h.oldLines)} +${side(h.newStart, h.newLines)} @@`;
}

/** What {@link applyNormalisedPatch} did. */
export interface ApplyReport { applied: number; failed: number; cut: number }

/**
 * Applies a normalised patch in a workspace with `git apply` (src/core/git, in the session's host
 * repository with the workspace as its work tree; the workspace's own `.git` is never used): the whole patch when
 * `git apply --check` takes it, else file by file, each file all or nothing. A file git refuses is
 * `failed`, with git's message and the hunk it named (`patch failed: train.py:67` → the hunk whose
 * old side starts at 67; else the section's first hunk). Updates `n.files` in place.
 * @throws ExpBenchError `GIT_FAILED` only when git itself cannot run (not for a patch that does not apply)
 */
export async function applyNormalisedPatch(workspace: string, n: NormalisedPatch, source: string, signal?: AbortSignal): Promise<ApplyReport> {
  const todo = n.files.map((f, i) => ({ f, text: n.sections[i], read: n.sourceSections[i] })).filter((x) => x.f.status === 'pending');
  const h = await hostRepositoryOf(workspace, { signal });
  const run = (args: string[], input: string) => git(['apply', '--whitespace=nowarn', ...args, '-'], { repo: h.repo, input, signal, okCodes: [1, 128], subject: workspace });
  if (todo.length > 0) {
    const whole = await run(['--check'], n.text);
    if (whole.code === 0) {
      const r = await run([], n.text);
      if (r.code !== 0) throw new Error(`git apply failed after its check passed: ${r.stderr.trim()}`);
      for (const x of todo) x.f.status = 'applied';
    } else {
      for (const x of todo) {
        const check = await run(['--check'], x.text);
        if (check.code === 0 && (await run([], x.text)).code === 0) { x.f.status = 'applied'; continue; }
        x.f.status = 'failed';
        const said = check.stderr.trim().split('\n').map((l) => l.replace(/^error: /, '')).join('; ');
        x.f.problem = `git apply refused ${x.f.path} (${source}:${x.f.line}): ${said || `exit ${check.code}`}`;
        x.f.failingHunk = failingHunk(x.text, x.read, check.stderr, x.f.line);
      }
    }
  }
  return {
    applied: n.files.filter((f) => f.status === 'applied').length,
    failed: n.files.filter((f) => f.status === 'failed').length,
    cut: n.files.filter((f) => f.status === 'cut').length,
  };
}

function failingHunk(section: string, read: string, stderr: string, sectionLine: number): PatchFileImport['failingHunk'] {
  const at = /patch failed: .*:(\d+)\s*$/m.exec(stderr)?.[1];
  const hunkStarts = (t: string[]) => t.map((l, i) => (l.startsWith('@@ ') ? i : -1)).filter((i) => i >= 0);
  const lines = section.split('\n');
  const starts = hunkStarts(lines);
  if (starts.length === 0) return undefined;
  let k = 0;
  if (at !== undefined) {
    const j = starts.findIndex((i) => Number(/^@@ -(\d+)/.exec(lines[i])?.[1]) === Number(at));
    if (j >= 0) k = j;
  }
  const end = k + 1 < starts.length ? starts[k + 1] : lines.length;
  // The k-th hunk of the section as read: both forms hold the same hunks in the same order.
  const readStart = hunkStarts(read.split('\n'))[k] ?? 0;
  return { header: lines[starts[k]], line: sectionLine + readStart, text: lines.slice(starts[k], end).join('\n').replace(/\n$/, '') };
}
