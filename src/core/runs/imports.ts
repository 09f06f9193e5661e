import { createHash } from 'node:crypto';
import { createReadStream, promises as fsp } from 'node:fs';
import * as path from 'node:path';
import { ExpBenchError } from '../errors';
import { parseHarnessJudgeName } from '../interop/harnessLayout';
import { importFiles } from '../trajectory/import';
import type { LoadResult } from '../tasks/types';

/** One imported run matched to a task: the files it is read from (with their hashes) and its attempt. */
export interface ImportRecord {
  task: string;
  attempt: number;
  files: Array<{ path: string; sha256: string }>;
  /** `<agent>-<model>` from the harness's config, else `import`. */
  actorName: string;
  /** The trajectory's id when its files hold several (a multi-sample log). */
  trajectoryId?: string;
}

const CANDIDATE = /\.(json|jsonl|patch|eval|traj)$/i;
const MAX_DEPTH = 8;

/**
 * The runs under `from` (folders, searched to depth 8 without following links, and files), read
 * with the trajectory importers (src/core/trajectory/import.ts: harness records grouped per task
 * index and iteration, a run configuration attached to its paper's records; any other known
 * format), each matched to a task of `loaded`: by its task id, or for a harness record whose files
 * do not name the conference, by paper id and index. A run that matches no task, or holds no
 * task id, is in `skipped` with the reason.
 * @throws ExpBenchError BAD_INPUT naming a path of `from` that does not exist
 */
export async function collectImports(from: string[], loaded: LoadResult): Promise<{ records: ImportRecord[]; skipped: Array<{ files: string[]; reason: string }> }> {
  const files: string[] = [];
  const inputs: Array<{ from: string; files: string[] }> = [];
  for (const p of from) {
    const st = await fsp.lstat(p).catch(() => undefined);
    if (!st) throw new ExpBenchError('BAD_INPUT', p, 'the import path does not exist');
    const mine: string[] = [];
    if (st.isDirectory()) await walk(p, mine, 0);
    else if (st.isFile()) mine.push(path.resolve(p));
    else throw new ExpBenchError('BAD_INPUT', p, 'the import path is neither a folder nor a regular file');
    inputs.push({ from: p, files: mine });
    files.push(...mine);
  }
  const byPaperIndex = new Map<string, string[]>();
  for (const t of loaded.tasks) {
    const k = `${t.paperId}/${t.index}`;
    byPaperIndex.set(k, [...(byPaperIndex.get(k) ?? []), t.id]);
  }
  const known = new Set(loaded.tasks.map((t) => t.id));
  const records: ImportRecord[] = [];
  const skipped: Array<{ files: string[]; reason: string }> = [];
  const counts = new Map<string, number>();
  const used = new Set<string>();
  const result = await importFiles([...new Set(files)].sort(), async (t) => {
    const parts = t.files ?? [t.file];
    for (const f of parts) used.add(f);
    let task = t.task && known.has(t.task) ? t.task : undefined;
    const meta = (t.metadata ?? {}) as { paper?: unknown; taskIndex?: unknown; iteration?: unknown; config?: { agent_name?: unknown; llm_name?: unknown } };
    if (!task && t.format === 'exp-bench-harness' && meta.paper !== undefined && typeof meta.taskIndex === 'number') {
      const ids = byPaperIndex.get(`${String(meta.paper)}/${meta.taskIndex}`) ?? [];
      if (ids.length === 1) task = ids[0];
      else if (ids.length > 1) { skipped.push({ files: parts, reason: `paper ${String(meta.paper)} task ${meta.taskIndex} is in several conferences (${ids.join(', ')}) and the record does not say which` }); return; }
    }
    if (!task) { skipped.push({ files: parts, reason: t.task ? `task ${t.task} is not in the datasets` : 'the run names no task' }); return; }
    const n = (counts.get(task) ?? 0) + 1;
    counts.set(task, n);
    const attempt = typeof meta.iteration === 'number' && meta.iteration > 0 ? meta.iteration : n;
    // The harness's config names agent and model; else its folders do (`…/<paperId>/<agent>/<model>/`).
    const byPath = parts.map((f) => parseHarnessJudgeName(f.replace(/_eval_[a-z_.]+$/, '_eval_judge.json'))).find((n) => n?.from === 'path');
    const agent = typeof meta.config?.agent_name === 'string' ? meta.config.agent_name : byPath?.agent;
    const model = typeof meta.config?.llm_name === 'string' ? meta.config.llm_name : byPath?.model;
    const actorName = [agent, model].filter(Boolean).join('-').replace(/[^\w.+-]+/g, '-').slice(0, 64) || 'import';
    const hashed = await Promise.all(parts.map(async (f) => ({ path: f, sha256: await sha256File(f) })));
    records.push({ task, attempt, files: hashed, actorName, ...(t.format !== 'exp-bench-harness' ? { trajectoryId: t.id } : {}) });
  });
  for (const i of inputs) {
    if (i.files.some((f) => used.has(f))) continue;
    skipped.push({ files: [i.from], reason: nothingFrom(i.files, result.problems) });
  }
  return { records, skipped };
}

/** Why an import input gave no run: which files were looked at and what each lacked (the importers' first problem per file). */
function nothingFrom(files: string[], problems: Array<{ file: string; message: string }>): string {
  if (!files.length) return `no file to read (looked for *.json, *.jsonl, *.patch, *.eval, *.traj to depth ${MAX_DEPTH}; links are not followed)`;
  const lines = files.slice(0, 8).map((f) => `${path.basename(f)}: ${problems.find((p) => p.file === f)?.message ?? 'read, but it holds no run (for a harness record: no _eval_judge.json / diff of the same task index and iteration)'}`);
  return `looked at ${files.length} file(s), none is a run:\n    ${lines.join('\n    ')}${files.length > 8 ? `\n    … and ${files.length - 8} more` : ''}`;
}

async function walk(dir: string, out: string[], depth: number): Promise<void> {
  if (depth > MAX_DEPTH) return;
  for (const e of await fsp.readdir(dir, { withFileTypes: true })) {
    if (e.name === 'node_modules' || e.name === '.git') continue;
    const p = path.resolve(dir, e.name);
    if (e.isDirectory()) await walk(p, out, depth + 1);
    else if (e.isFile() && CANDIDATE.test(e.name)) out.push(p);
  }
}

/** SHA-256 (hex) of a file's bytes, streamed. */
export async function sha256File(file: string): Promise<string> {
  const h = createHash('sha256');
  for await (const chunk of createReadStream(file)) h.update(chunk as Buffer);
  return h.digest('hex');
}
