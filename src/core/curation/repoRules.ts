import { isExpBenchError } from '../errors';
import { parseRequirementRefs } from '../tasks/refs';
import type { RequirementRef, Task } from '../tasks/types';
import { covers, maskRules, normaliseTaskPath, ROOT_README, type MaskRule } from '../workspace/mask';
import { numberIndex, numberLeaks, WINDOW_LINES, type NumberIndex } from './leakNumbers';
export { distinctiveClaims, shortClaims } from './leakNumbers';
import { isFieldPath } from './refItems';
import type { RepoSnapshot } from './snapshot';
import { LINT_RULES, type LintFinding, type LintRule } from './types';

/**
 * The repository rules of the task lint (docs/curation.md), over one snapshot of the paper's
 * repository (all `tasks` are taken to hold at that commit). Rules: `masked-path-missing`,
 * `source-path-missing`, `ref-file-missing`, `ref-path-resolved`, `ref-path-ambiguous`,
 * `ref-range-past-end`, `ref-binary-file`, `ref-in-submodule`, `ref-into-kept-file`,
 * `leak-expected-number`, `leak-nested-readme`, `leak-result-file`, `leak-masked-lines`.
 * The mask is the workspace's (workspace/mask.ts: type 1 masks `masked_source`, type 2 `source`,
 * every type the root README); "kept" means not masked for that task.
 */
export async function repoRuleFindings(tasks: Task[], snap: RepoSnapshot): Promise<LintFinding[]> {
  const out: LintFinding[] = [];
  const numbers = numberIndex(tasks, snap);
  const lines = lineIndex(snap);
  for (const t of tasks) {
    const add = (pointer: string, rule: LintRule, message: string) =>
      out.push({ file: t.file, pointer, rule, severity: LINT_RULES[rule].severity, message, task: t.id });
    const at = `/questions/${t.index}`;
    const at12 = snap.commit.slice(0, 12);
    let rules: MaskRule[] = [];
    try {
      rules = maskRules(t);
    } catch (e) {
      if (!isExpBenchError(e, 'BAD_INPUT')) throw e;
      add(`${at}/${t.type === 1 ? 'masked_source' : 'source'}`, 'masked-path-missing', e.message.replace(/^[^:]*: /, ''));
    }
    const masked = new Set<string>();
    const ruleOf = new Map<string, MaskRule>();
    for (const f of snap.files.keys()) {
      const r = rules.find((x) => covers(x.path, f));
      if (r) { masked.add(f); ruleOf.set(f, r); } else if (!f.includes('/') && ROOT_README.test(f)) masked.add(f);
    }
    for (const r of rules) {
      const hit = [...snap.files.keys()].some((f) => covers(r.path, f)) || snap.submodules.some((s) => covers(r.path, s) || covers(s, r.path));
      if (!hit) add(fieldPointer(t, r.field, r.path), 'masked-path-missing', `${r.field} path "${r.path}" matches no file at commit ${at12}: the task cannot be prepared at this commit`);
    }
    if (t.type === 1) {
      for (const s of new Set(t.source.map(normaliseTaskPath))) {
        if (!exists(snap, s)) add(fieldPointer(t, 'source', s), 'source-path-missing', `source "${s}" is not in the tree at commit ${at12}`);
      }
    }
    await refFindings(t, snap, masked, add);
    leakFindings(t, snap, masked, ruleOf, numbers, lines, add);
  }
  return out;
}

type Add = (pointer: string, rule: LintRule, message: string) => void;

/** Pointer of the entry of `field` (a list or one string in the task file) that normalises to `p`. */
function fieldPointer(t: Task, field: 'masked_source' | 'source', p: string): string {
  const raw = t.raw[field];
  if (Array.isArray(raw)) {
    const k = raw.findIndex((x) => typeof x === 'string' && normaliseTaskPath(x) === p);
    if (k >= 0) return `/questions/${t.index}/${field}/${k}`;
  }
  return `/questions/${t.index}/${field}`;
}

function exists(snap: RepoSnapshot, p: string): boolean {
  return snap.files.has(p) || snap.dirs.has(p) || snap.submodules.some((s) => covers(s, p));
}

async function refFindings(t: Task, snap: RepoSnapshot, masked: Set<string>, add: Add): Promise<void> {
  const at12 = snap.commit.slice(0, 12);
  const reqs = Array.isArray(t.raw.requirements) ? t.raw.requirements : typeof t.raw.requirements === 'string' ? [t.raw.requirements] : [];
  const defaultPath = t.source.length === 1 ? t.source[0] : undefined;
  for (let j = 0; j < reqs.length; j++) {
    const text = reqs[j];
    if (typeof text !== 'string') continue;
    const pointer = Array.isArray(t.raw.requirements) ? `/questions/${t.index}/requirements/${j}` : `/questions/${t.index}/requirements`;
    for (const ref of parseRequirementRefs(text, defaultPath).refs) {
      if (isFieldPath(ref.path)) continue; // said by the file rule ref-not-a-file
      const shown = refText(ref);
      const sub = snap.submodules.find((s) => covers(s, ref.path));
      if (sub) { add(pointer, 'ref-in-submodule', `${shown} is inside the submodule ${sub}: not checked`); continue; }
      if (ref.path.includes('*')) {
        const re = new RegExp('^' + ref.path.split('*').map(escapeRegExp).join('[^/]*') + '$');
        const n = [...snap.files.keys()].filter((f) => re.test(f)).length;
        if (n === 0) add(pointer, 'ref-file-missing', `${shown}: no file matches the pattern at commit ${at12}`);
        continue;
      }
      let file = ref.path;
      if (!snap.files.has(file)) {
        if (snap.dirs.has(file)) {
          if (ref.startLine !== null) add(pointer, 'ref-file-missing', `${shown}: "${file}" is a folder at commit ${at12}; a line range needs a file`);
          continue;
        }
        const ends = [...snap.files.keys()].filter((f) => f.endsWith('/' + file)).sort();
        if (ends.length === 0) { add(pointer, 'ref-file-missing', `${shown}: no file "${file}" (nor any path ending with it) at commit ${at12}`); continue; }
        if (ends.length > 1) {
          add(pointer, 'ref-path-ambiguous', `${shown}: ${ends.length} files end with "${file}": ${ends.slice(0, 5).join(', ')}${ends.length > 5 ? ', …' : ''}`);
          continue;
        }
        add(pointer, 'ref-path-resolved', `${shown}: resolved to ${ends[0]}, the one file whose path ends with "${file}"`);
        file = ends[0];
      }
      const body = await snap.text(file);
      if (body === undefined) {
        // a symbolic link or a file over 64 MiB: its lines are not counted (docs/curation.md, "Limits")
        if (snap.binary.has(file)) add(pointer, 'ref-binary-file', `${shown}: ${file} is a binary file at commit ${at12}`);
      } else if (ref.endLine !== null) {
        const span = lineSpan(file, body, ref.cell);
        if (span.count < ref.endLine) add(pointer, 'ref-range-past-end', `${shown}: ${span.what} has ${span.count} line${span.count === 1 ? '' : 's'} at commit ${at12}; the range ends at line ${ref.endLine}`);
      }
      if (!masked.has(file)) add(pointer, 'ref-into-kept-file', `${shown}: ${file} is kept by the mask, so the referenced ground truth is in the solver's workspace`);
    }
  }
}

/** Lines of a file, or of one cell (counted from 1) of a notebook. */
function lineSpan(file: string, body: string, cell?: number): { count: number; what: string } {
  if (cell !== undefined && file.endsWith('.ipynb')) {
    try {
      const cells = (JSON.parse(body) as { cells?: Array<{ source?: string | string[] }> }).cells ?? [];
      const c = cells[cell - 1];
      if (!c) return { count: 0, what: `${file} (${cells.length} cells, no cell ${cell})` };
      const src = Array.isArray(c.source) ? c.source.join('') : c.source ?? '';
      return { count: countLines(src), what: `cell ${cell} of ${file}` };
    } catch {
      // not a notebook that parses: count the file's own lines
    }
  }
  return { count: countLines(body), what: file };
}

/** Lines of a text: newline characters, plus one for an unterminated last line. */
export function countLines(text: string): number {
  if (text === '') return 0;
  let n = 0;
  for (let i = text.indexOf('\n'); i !== -1; i = text.indexOf('\n', i + 1)) n++;
  return text.endsWith('\n') ? n : n + 1;
}

function refText(r: RequirementRef): string {
  const range = r.startLine === null ? '' : r.startLine === r.endLine ? `:${r.startLine}` : `:${r.startLine}-${r.endLine}`;
  return `reference ${r.path}${range}${r.cell !== undefined ? ` in cell ${r.cell}` : ''}`;
}

function escapeRegExp(s: string): string {
  return s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
}

// ---- leaks ----------------------------------------------------------------------------------

/** Locations shown per claim. */
const SHOWN = 5;

/** A line worth tracing between files: long, with letters, not an import, comment or docstring fence. */
function distinctiveLine(line: string): boolean {
  return line.length >= 25 && line.length <= 500 && (line.match(/[A-Za-z]/g)?.length ?? 0) >= 3 &&
    !/^(import\s|from\s\S+\s+import\s|#|\/\/|\/\*|\*|--|"""|'''|<!--)/.test(line);
}
/** A distinctive line in more files than this is boilerplate, not a copy. */
const MAX_COPIES = 3;
/** Shared distinctive lines that make a kept file a copy of a masked one. */
const MIN_SHARED = 3;

/** For every distinctive line of the snapshot's texts, the files that hold it (only lines in at most {@link MAX_COPIES} files). */
function lineIndex(snap: RepoSnapshot): Map<string, Array<{ path: string; line: number }>> {
  const index = new Map<string, Array<{ path: string; line: number }>>();
  for (const [p, text] of snap.texts) {
    const seen = new Set<string>();
    text.split('\n').forEach((raw, i) => {
      const line = raw.trim();
      if (!distinctiveLine(line) || seen.has(line)) return;
      seen.add(line);
      const at = index.get(line);
      if (at === undefined) index.set(line, [{ path: p, line: i + 1 }]);
      else if (at.length <= MAX_COPIES) at.push({ path: p, line: i + 1 });
    });
  }
  return index;
}

function leakFindings(
  t: Task, snap: RepoSnapshot, masked: Set<string>, ruleOf: Map<string, MaskRule>,
  numbers: NumberIndex, lines: Map<string, Array<{ path: string; line: number }>>, add: Add,
): void {
  const at = `/questions/${t.index}`;
  const at12 = snap.commit.slice(0, 12);
  const rows = new Map<string, string[]>();
  const rowsOf = (p: string) => rows.get(p) ?? rows.set(p, (snap.texts.get(p) ?? '').split('\n')).get(p)!;
  for (const leak of numberLeaks(t, numbers, (p) => !masked.has(p), rowsOf)) {
    const { claim: c, hits, company } = leak;
    const where = hits.slice(0, SHOWN).map((h) => `"${h.matched}" at ${h.path}:${h.line}`).join(', ');
    const parts = !company ? [] : [
      ...(company.claims.length ? [`the outcome's ${company.claims.map((o) => `"${o.text}"`).join(', ')}`] : []),
      ...(company.words.length ? [`its context words ${company.words.map((w) => `"${w}"`).join(', ')}`] : []),
    ];
    const why = parts.length ? ` with ${parts.join(' and ')} within ${WINDOW_LINES} lines` : '';
    add(`${at}/expected_outcome`, 'leak-expected-number',
      `expected_outcome's "${c.text}" (${c.context}) matched ${where}${hits.length > SHOWN ? ` and ${hits.length - SHOWN} more` : ''}${why} in kept files at commit ${at12}`);
  }
  const maskPointer = t.type === 1 ? `${at}/masked_source` : t.type === 2 ? `${at}/source` : at;
  const keptFiles = [...snap.files.keys()].filter((f) => !masked.has(f)).sort();
  const readmes = keptFiles.filter((f) => f.includes('/') && ROOT_README.test(f.slice(f.lastIndexOf('/') + 1)));
  if (readmes.length > 0) add(maskPointer, 'leak-nested-readme', `${readmes.length} README file${readmes.length > 1 ? 's' : ''} below the root ${readmes.length > 1 ? 'are' : 'is'} kept at commit ${at12}: ${list(readmes)}`);
  const results = keptFiles.filter(isResultFile);
  if (results.length > 0) add(maskPointer, 'leak-result-file', `${results.length} result file${results.length > 1 ? 's are' : ' is'} kept at commit ${at12}: ${list(results)}`);

  for (const m of [...masked].sort()) {
    const text = snap.texts.get(m);
    if (text === undefined) continue;
    const shared = new Map<string, { n: number; first: { line: number; text: string } }>();
    let distinct = 0;
    for (const line of new Set(text.split('\n').map((l) => l.trim()))) {
      const holders = lines.get(line);
      if (!holders || holders.length > MAX_COPIES) continue;
      distinct++;
      for (const h of holders) {
        if (masked.has(h.path)) continue;
        const s = shared.get(h.path);
        if (s) s.n++;
        else shared.set(h.path, { n: 1, first: { line: h.line, text: line } });
      }
    }
    const copies = [...shared].filter(([, s]) => s.n >= MIN_SHARED).sort((a, b) => b[1].n - a[1].n || a[0].localeCompare(b[0]));
    if (copies.length === 0) continue;
    const r = ruleOf.get(m);
    const pointer = r ? fieldPointer(t, r.field, r.path) : at;
    add(pointer, 'leak-masked-lines', `masked ${m}: ${copies.slice(0, SHOWN).map(([p, s]) =>
      `${s.n} of its ${distinct} distinctive lines are in kept ${p} (first at line ${s.first.line}: ${JSON.stringify(short(s.first.text))})`).join('; ')}` +
      `${copies.length > SHOWN ? `; and ${copies.length - SHOWN} more files` : ''} at commit ${at12}`);
  }
}

/** `results/…`, `outputs/…`, `logs/…` data files, and `*results*.json|csv|tsv` anywhere. */
export function isResultFile(p: string): boolean {
  const data = /\.(json|jsonl|csv|tsv|txt|log|npy|npz|pkl|pickle|pt|pth|h5|xlsx)$/i;
  if (/(^|\/)(results?|outputs?|logs?)\//i.test(p) && data.test(p)) return true;
  const base = p.slice(p.lastIndexOf('/') + 1);
  return /(^|[_.-])results?([_.-]|$)/i.test(base) && /\.(json|jsonl|csv|tsv)$/i.test(base);
}

function list(paths: string[]): string {
  return paths.slice(0, 10).join(', ') + (paths.length > 10 ? `, … (${paths.length - 10} more)` : '');
}

function short(s: string): string {
  return s.length > 80 ? s.slice(0, 79) + '…' : s;
}
