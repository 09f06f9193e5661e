import { createHash } from 'node:crypto';
import { promises as fsp } from 'node:fs';
import * as path from 'node:path';
import { log } from '../log';
import type { Judgement } from '../review';
import { loadDatasets } from '../tasks/loader';
import { errorMessage } from '../util/errors';
import { writeAtomic } from '../util/fs';
import { assertNewFolder, buildFolder } from '../util/outFolder';
import { plural } from '../util/plural';
import { CURATION_FILE, curationFileFor, readCurationFile, type CurationFile } from './curationFile';
import { applyEdits, editsOf } from './edits';
import { selectTaskFiles } from './taskFiles';
import { resolveVerdicts, type TaskVerdictState } from './verdicts';

const logger = log('curation');

/** The export's manifest file name: `.jsonc` keeps it out of the task loader, which reads every `*.json` and `*.jsonl`. */
export const EXPORT_MANIFEST = 'curated-manifest.jsonc';
export const EXPORT_VERSION = 1;

/** One task of the export's manifest. */
export interface ExportedTask {
  id: string;
  /** The task file it is in, relative to the export. */
  file: string;
  /** The verdict that holds (resolveVerdicts), or null: not judged, or the curators disagree. */
  verdict: string | null;
  decidedBy?: string;
  reason?: string;
  disagreement: boolean;
  curators: { by: string; verdict: string; at: string; reason?: string }[];
  /** Edits applied, oldest first. */
  edits: { id: string; by: string; at: string; reason?: string; operations: number }[];
  /** Edits that did not apply (the task is exported with the edits before them). */
  failedEdits: { id: string; message: string }[];
  openDisputes: { id: string; by: string; at: string; about: string; reason?: string }[];
  /** The curation file's pin and environment, when the paper has one. */
  pin?: { url: string; commit: string };
  environment?: Record<string, unknown>;
}

export interface ExportManifest {
  version: 1;
  kind: 'expbench-curated-dataset';
  createdAt: string;
  /** The dataset folders or files exported, as given. */
  inputs: string[];
  reviewStore: string;
  counts: Record<'tasks' | 'files' | 'valid' | 'invalid' | 'needsFix' | 'unjudged' | 'disagreements' | 'edited' | 'openDisputes', number>;
  /** Every file of the export but this manifest and SHA256SUMS (which covers this one too): path (relative, `/`), bytes, SHA-256 hex. */
  files: { path: string; bytes: number; sha256: string }[];
  tasks: ExportedTask[];
  knownIssues: string[];
}

export interface ExportOptions {
  /** Dataset folders or task files (the task lint's selection: one final file per paper). */
  inputs: string[];
  /** Every judgement of the review store (`store.list()`), and the store's folder for the manifest. */
  judgements: readonly Judgement[];
  reviewStore: string;
  /** The export folder: must not exist, or be empty. */
  out: string;
}

/**
 * Exports a curated dataset in EXP-Bench's task-file family (docs/curation.md "Export"):
 * `<out>/<path of each final task file under its input>` with every task's edits applied (in time
 * order; the source files are never changed), the curation file beside each (the pin and the
 * environment), the paper lists (`*.jsonl`) and a `LICENSE` at an input's root copied as they are;
 * then `curated-manifest.jsonc` (every task's verdict, edits, open disputes, pin and environment,
 * each file's SHA-256, the known issues), `KNOWN_ISSUES.md` (the same list for people) and
 * `SHA256SUMS` (`sha256sum -c` form, every file). `expbench tasks validate <out>` and
 * `expbench curate lint <out>` read it back. The folder is built beside `out` and renamed onto it
 * once complete (util/outFolder.ts): a failure (a full disk) leaves no half-made `out`.
 * @throws ExpBenchError `BAD_INPUT` naming `out` when it exists and is not an empty folder (a file
 *   included), or when the export cannot be written (the disk full: said so; nothing left behind)
 */
export async function exportCurated(o: ExportOptions): Promise<ExportManifest> {
  const out = path.resolve(o.out);
  await assertNewFolder(out, 'export');
  const manifest = await buildFolder(out, 'export', (tmp) => exportInto(o, tmp));
  logger.info(`exported ${plural(manifest.tasks.length, 'task')} in ${plural(manifest.counts.files, 'file')} to ${out}, ${plural(manifest.knownIssues.length, 'known issue')}`);
  return manifest;
}

/** The export's files, written into `out` (a new folder of {@link buildFolder}). */
async function exportInto(o: ExportOptions, out: string): Promise<ExportManifest> {
  const sel = await selectTaskFiles(o.inputs);
  const knownIssues: string[] = [];
  for (const u of sel.unreadable) knownIssues.push(`input ${u.input} could not be read: ${u.message}`);
  for (const f of sel.findings) knownIssues.push(`${f.file}: ${f.message} (left out of the export)`);
  const loaded = await loadDatasets([...sel.taskFiles, ...sel.paperLists]);
  for (const p of loaded.problems.filter((x) => x.severity === 'error')) knownIssues.push(`${p.file}#${p.pointer}: ${p.message}`);
  const states = new Map(resolveVerdicts(o.judgements).map((s) => [s.task, s]));
  const roots = o.inputs.map((i) => path.resolve(i));
  const relOf = (abs: string): string => {
    const root = roots.filter((r) => abs === r || abs.startsWith(r + path.sep)).sort((a, b) => b.length - a.length)[0];
    const base = root === undefined ? path.dirname(abs) : root === abs ? path.dirname(abs) : root;
    return path.relative(base, abs);
  };
  const written = new Set<string>();
  const put = async (rel: string, data: string | Buffer, from: string) => {
    const key = rel.split(path.sep).join('/');
    if (written.has(key)) { knownIssues.push(`${from}: another input already wrote ${key}: not exported twice`); return; }
    written.add(key);
    await writeAtomic(path.join(out, rel), data, { fsync: false });
  };
  const tasks: ExportedTask[] = [];
  const byFile = new Map<string, typeof loaded.tasks>();
  for (const t of loaded.tasks) byFile.set(t.file, [...(byFile.get(t.file) ?? []), t]);
  for (const file of sel.taskFiles) {
    let json: { questions?: unknown[] } & Record<string, unknown>;
    try {
      json = JSON.parse(await fsp.readFile(file, 'utf8'));
    } catch (e) {
      knownIssues.push(`${file}: not exported: ${errorMessage(e)}`);
      continue;
    }
    const rel = relOf(file);
    const curation = await readCurationFile(curationFileFor(file));
    if (curation?.problems.length) knownIssues.push(`${curation.file}: ${curation.problems[0].message}`);
    for (const t of byFile.get(file) ?? []) {
      const s = states.get(t.id);
      const edits = editsOf(o.judgements, t.id);
      const e = exportedTask(t.id, rel, s, curation?.curation);
      if (Array.isArray(json.questions) && json.questions[t.index] && typeof json.questions[t.index] === 'object') {
        let entry = json.questions[t.index] as Record<string, unknown>;
        for (const edit of edits) {
          try {
            entry = applyEdits(entry, [edit], t.id);
            e.edits.push({ id: edit.id, by: edit.by, at: edit.at, ...(edit.reason ? { reason: edit.reason } : {}), operations: (edit.value as { patch: unknown[] }).patch.length });
          } catch (err) {
            e.failedEdits.push({ id: edit.id, message: errorMessage(err) });
            knownIssues.push(`${t.id}: edit ${edit.id} by ${edit.by} does not apply: ${errorMessage(err)} (exported with the edits before it)`);
            break;
          }
        }
        json.questions[t.index] = entry;
      }
      tasks.push(e);
    }
    await put(rel, JSON.stringify(json, null, 2) + '\n', file);
    if (curation) await put(path.join(path.dirname(rel), CURATION_FILE), await fsp.readFile(curation.file), curation.file);
  }
  for (const list of sel.paperLists) await put(relOf(list), await fsp.readFile(list), list);
  for (const r of roots) {
    const lic = await fsp.readFile(path.join(r, 'LICENSE')).catch(() => undefined);
    if (lic) await put(path.relative(r, path.join(r, 'LICENSE')), lic, r);
  }
  for (const t of tasks) {
    if (t.verdict === 'invalid') knownIssues.push(`${t.id}: invalid (${t.decidedBy}${t.reason ? `: ${t.reason}` : ''})`);
    if (t.verdict === 'needs-fix') knownIssues.push(`${t.id}: needs a fix (${t.decidedBy}${t.reason ? `: ${t.reason}` : ''})`);
    if (t.disagreement) knownIssues.push(`${t.id}: the curators disagree (${t.curators.map((c) => `${c.by}: ${c.verdict}`).join('; ')}); no resolution`);
    for (const d of t.openDisputes) knownIssues.push(`${t.id}: open dispute ${d.id} by ${d.by} about ${d.about}${d.reason ? `: ${d.reason}` : ''}`);
  }
  const unjudged = tasks.filter((t) => t.verdict === null && !t.disagreement).length;
  if (unjudged > 0) knownIssues.push(`${plural(unjudged, 'task')} without a curator's verdict`);
  const manifest: ExportManifest = {
    version: EXPORT_VERSION, kind: 'expbench-curated-dataset', createdAt: new Date().toISOString(), inputs: o.inputs, reviewStore: o.reviewStore,
    counts: {
      tasks: tasks.length, files: sel.taskFiles.length,
      valid: tasks.filter((t) => t.verdict === 'valid').length, invalid: tasks.filter((t) => t.verdict === 'invalid').length,
      needsFix: tasks.filter((t) => t.verdict === 'needs-fix').length, unjudged,
      disagreements: tasks.filter((t) => t.disagreement).length, edited: tasks.filter((t) => t.edits.length > 0).length,
      openDisputes: tasks.reduce((n, t) => n + t.openDisputes.length, 0),
    },
    files: [], tasks, knownIssues,
  };
  await writeAtomic(path.join(out, 'KNOWN_ISSUES.md'), knownIssuesText(manifest), { fsync: false });
  manifest.files = await checksums(out, [EXPORT_MANIFEST, 'SHA256SUMS']);
  await writeAtomic(path.join(out, EXPORT_MANIFEST), JSON.stringify(manifest, null, 2) + '\n', { fsync: false });
  const all = await checksums(out, ['SHA256SUMS']);
  await writeAtomic(path.join(out, 'SHA256SUMS'), all.map((f) => `${f.sha256}  ${f.path}\n`).join(''));
  return manifest;
}

function exportedTask(id: string, file: string, s: TaskVerdictState | undefined, curation: CurationFile | undefined): ExportedTask {
  const e: ExportedTask = {
    id, file: file.split(path.sep).join('/'), verdict: s?.verdict ?? null, disagreement: s?.disagreement ?? false,
    curators: (s?.byCurator ?? []).map((j) => ({ by: j.by, verdict: String(j.value), at: j.at, ...(j.reason ? { reason: j.reason } : {}) })),
    edits: [], failedEdits: [],
    openDisputes: (s?.openDisputes ?? []).map((d) => ({ id: d.id, by: d.by, at: d.at, about: (d.value as { about: string }).about, ...(d.reason ? { reason: d.reason } : {}) })),
  };
  if (s?.decidedBy) e.decidedBy = s.decidedBy;
  if (s?.reason) e.reason = s.reason;
  if (curation?.repository) e.pin = { url: curation.repository.url, commit: curation.repository.commit };
  if (curation?.environment) e.environment = curation.environment as Record<string, unknown>;
  return e;
}

/** Every file under `dir` (relative, `/`-separated, sorted) with its size and SHA-256, but those of `leaveOut`. */
async function checksums(dir: string, leaveOut: string[]): Promise<ExportManifest['files']> {
  const entries = await fsp.readdir(dir, { recursive: true, withFileTypes: true });
  const files: ExportManifest['files'] = [];
  for (const e of entries) {
    if (!e.isFile()) continue;
    const abs = path.join(e.parentPath, e.name);
    const rel = path.relative(dir, abs).split(path.sep).join('/');
    if (leaveOut.includes(rel)) continue;
    const buf = await fsp.readFile(abs);
    files.push({ path: rel, bytes: buf.length, sha256: createHash('sha256').update(buf).digest('hex') });
  }
  return files.sort((a, b) => (a.path < b.path ? -1 : a.path > b.path ? 1 : 0));
}

/** KNOWN_ISSUES.md: the counts and one line per issue. */
export function knownIssuesText(m: ExportManifest): string {
  const c = m.counts;
  return [
    '# Known issues of this curated export', '',
    `${plural(c.tasks, 'task')} in ${plural(c.files, 'file')}: ${c.valid} valid, ${c.invalid} invalid, ${c.needsFix} needing a fix, ` +
      `${c.unjudged} not judged, ${plural(c.disagreements, 'disagreement')}, ${c.edited} edited, ${plural(c.openDisputes, 'open dispute')}.`,
    `Made ${m.createdAt} from ${m.inputs.join(', ')} with the review store ${m.reviewStore} (${EXPORT_MANIFEST} has every task's verdict; SHA256SUMS checks every file).`,
    '', ...(m.knownIssues.length ? m.knownIssues.map((i) => `- ${i}`) : ['(none)']), '',
  ].join('\n');
}
