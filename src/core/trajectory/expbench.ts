import { promises as fsp } from 'node:fs';
import * as path from 'node:path';
import { outcomeFromHarnessJudge } from '../interop/harnessIn';
import type { NewStep } from '../steps/step';
import { splitDiff } from './patchFiles';
import { errorMessage } from '../util/errors';
import { finishTrajectory } from './finish';
import { num, obj, str, type Obj } from './json';
import { TrajectoryBuilder, type Trajectory, type TrajProblem } from './types';

/**
 * The EXP-Bench harness's outputs (Just-Curieous/Curie `benchmark/exp_bench/`), one record per task
 * index: `<paper>_task_index_<i>_iter_<n>_duration_<h>_eval_gen.json` (answers `{design,
 * conclusion}`), `…_eval_gen.patch` (`diff -urN` of the workspace with host paths; may be empty or
 * cut), `…_eval_judge.json` (the judge's scores, read with interop/harnessIn) and
 * `…_eval_gen_config_config.json` (the run's settings: `paper_id`, `task_index`, `output_folder`).
 * A run-wide config (`main_<paper>_judge_config.json`, no `task_index`) is attached to every record
 * of its paper read with it. Steps: the design, one edit per file of the patch, the conclusion, the
 * judge's verdict, with the harness's phases (exact: the harness asks for each by name).
 */
export type HarnessPart = 'gen' | 'patch' | 'judge' | 'config' | 'run-config';

export interface HarnessFile { file: string; part: HarnessPart; json?: Obj; text?: string }

// The paper id as task ids have it (`<conference>/<paperId>/<index>`): the harness's are OpenReview
// numbers; a dataset's own (the bundled sample's `toycal`) are names, as parseHarnessJudgeName reads them.
const NAME = /^([A-Za-z0-9][A-Za-z0-9.-]*)_task_index_(\d+)_iter_(\d+)(?:_duration_([\d.]+))?_eval_(gen\.json|gen\.patch|judge\.json|gen_config_config\.json)$/;

/** The record a harness file belongs to, from its name (`<paper>/<index>/<iter>`), or undefined. */
export function harnessKey(file: string): { paper: string; index: number; iter: number; key: string } | undefined {
  const m = NAME.exec(path.basename(file));
  if (!m) return undefined;
  return { paper: m[1], index: Number(m[2]), iter: Number(m[3]), key: `${path.dirname(file)}|${m[1]}|${m[2]}|${m[3]}` };
}

/** True when a zero-byte file is named as a harness patch (an empty patch, which content cannot show). */
export function isHarnessPatchName(file: string): boolean {
  return /_eval_gen\.patch$/.test(path.basename(file)) && !!harnessKey(file);
}

/** At most this many names of a folder are looked at for a record's other files (a hostile folder may hold millions). */
const COMPANION_SCAN = 20_000;
/** A record's other file above this size is left out, named (the harness writes answers, patches and judge files of kilobytes). */
export const COMPANION_MAX_BYTES = 64 * 1024 * 1024;

/**
 * The other files of the records that `files` belong to, found beside them: a harness record is
 * four files named by one `<paper>_task_index_<i>_iter_<n>` (answers, patch, judge file, config),
 * and opening one of them (the viewer's "Open as Trajectory", a triage row) must show the record,
 * not a quarter of it (the judge's scores, the conference in the config's `output_folder`). Only
 * regular files are taken (never a link or a special file: the folder may be a solver's); a file
 * already in `files` is not repeated; one above {@link COMPANION_MAX_BYTES} is listed in `tooLarge`.
 * Paths, in folder order then name order.
 */
export async function harnessCompanions(files: readonly string[]): Promise<{ files: string[]; tooLarge: string[] }> {
  const given = new Set(files.map((f) => path.resolve(f)));
  const keys = new Map<string, Set<string>>();
  for (const f of given) {
    const k = harnessKey(f);
    if (k) keys.set(path.dirname(f), (keys.get(path.dirname(f)) ?? new Set()).add(k.key));
  }
  const out: string[] = []; const tooLarge: string[] = [];
  for (const [dir, want] of keys) {
    const names: string[] = [];
    const d = await fsp.opendir(dir).catch(() => undefined);
    if (!d) continue;
    try {
      for await (const e of d) {
        if (names.length >= COMPANION_SCAN) break;
        if (e.isFile()) names.push(e.name);
      }
    } catch { /* a folder that cannot be listed: the given files alone */ }
    for (const n of names.sort()) {
      const f = path.join(dir, n);
      const k = harnessKey(f);
      if (!k || !want.has(k.key) || given.has(f)) continue;
      // the folder may have changed since it was listed: a regular file now, not a link
      const st = await fsp.lstat(f).catch(() => undefined);
      if (st?.isFile()) (st.size > COMPANION_MAX_BYTES ? tooLarge : out).push(f);
    }
  }
  return { files: out, tooLarge };
}

/** Builds the records of a set of harness files (problems for files that fit no record go to `fileProblems`). */
export function harnessRecords(files: HarnessFile[], fileProblems: TrajProblem[]): Trajectory[] {
  const groups = new Map<string, { key: NonNullable<ReturnType<typeof harnessKey>>; parts: HarnessFile[] }>();
  const runConfigs: HarnessFile[] = [];
  for (const f of files) {
    if (f.part === 'run-config') { runConfigs.push(f); continue; }
    const k = harnessKey(f.file) ?? keyFromConfig(f);
    if (!k) { fileProblems.push({ file: f.file, pointer: '', severity: 'warning', message: 'an EXP-Bench harness file whose name gives no paper and task index (<paper>_task_index_<i>_iter_<n>_…): not grouped' }); continue; }
    const g = groups.get(k.key) ?? { key: k, parts: [] };
    g.parts.push(f);
    groups.set(k.key, g);
  }
  const used = new Set<HarnessFile>();
  const out: Trajectory[] = [];
  for (const g of [...groups.values()].sort((a, b) => a.key.paper.localeCompare(b.key.paper) || a.key.index - b.key.index || a.key.iter - b.key.iter)) {
    const rc = runConfigs.filter((r) => String(num(r.json?.paper_id) ?? paperFromName(r.file) ?? '') === g.key.paper || paperFromName(r.file) === g.key.paper);
    rc.forEach((r) => used.add(r));
    out.push(record(g.key, g.parts, rc));
  }
  for (const r of runConfigs) if (!used.has(r)) {
    fileProblems.push({ file: r.file, pointer: '', severity: 'info', message: 'an EXP-Bench run configuration (no task index): no trajectory of its own; it is attached to the records of its paper read with it' });
  }
  return out;
}

function paperFromName(file: string): string | undefined {
  return /(?:^|_)(\d{3,})_(?:judge|gen)_config\.json$/.exec(path.basename(file))?.[1];
}

function keyFromConfig(f: HarnessFile): ReturnType<typeof harnessKey> {
  const p = num(f.json?.paper_id); const i = num(f.json?.task_index); const it = num(f.json?.iteration) ?? 1;
  if (p === undefined || i === undefined) return undefined;
  return { paper: String(p), index: i, iter: it, key: `${path.dirname(f.file)}|${p}|${i}|${it}` };
}

function record(key: NonNullable<ReturnType<typeof harnessKey>>, parts: HarnessFile[], runConfigs: HarnessFile[]): Trajectory {
  const order: HarnessPart[] = ['gen', 'patch', 'judge', 'config'];
  parts.sort((a, b) => order.indexOf(a.part) - order.indexOf(b.part));
  const first = parts[0].file;
  const b = new TrajectoryBuilder(`${key.paper}/${key.index}${key.iter !== 1 ? `#iter${key.iter}` : ''}`, 'exp-bench-harness', first);
  b.exactPhases = true;
  const config = parts.find((p) => p.part === 'config')?.json;
  const conf = /(?:^|\/)([a-z]+\d{4})\/\d+(?:\/|$)/.exec(str(config?.output_folder) ?? str(config?.input_conference_tasks_folder) ?? '')?.[1]
    ?? /(?:^|\/)([a-z]+\d{4})\/?$/.exec(str(config?.input_conference_tasks_folder) ?? '')?.[1];
  b.task = `${conf ?? 'unknown'}/${key.paper}/${key.index}`;
  if (!conf) b.problem('', 'the conference is not named by any file of the record (config `output_folder`): task id starts with "unknown/"', {}, 'info');
  if (config && num(config.task_index) !== undefined && num(config.task_index) !== key.index) {
    b.problem('/task_index', `the config says task_index ${String(config.task_index)} but the file name says ${key.index}`, { file: parts.find((p) => p.part === 'config')!.file });
  }
  const gen = parts.find((p) => p.part === 'gen');
  const patch = parts.find((p) => p.part === 'patch');
  const judge = parts.find((p) => p.part === 'judge');
  for (const [part, name] of [[gen, 'answers (_eval_gen.json)'], [patch, 'patch (_eval_gen.patch)'], [judge, 'judge file (_eval_judge.json)']] as const) {
    if (!part) b.problem('', `the record has no ${name}`, {}, 'info');
  }
  const add = (s: NewStep) => { b.add(s); b.sourceEvents++; b.mappedEvents++; };
  if (gen?.json) {
    const design = gen.json.design; const conclusion = gen.json.conclusion;
    b.answers = { ...(typeof design === 'string' ? { design } : {}), ...(typeof conclusion === 'string' ? { conclusion } : {}) };
    if (design !== undefined) add({ kind: 'message', actor: 'agent', phase: 'design', text: typeof design === 'string' ? design : JSON.stringify(design), source: { file: gen.file, pointer: '/design' } });
    else b.problem('/design', 'no `design` in the answers', { file: gen.file });
  }
  if (patch) {
    const text = patch.text ?? '';
    b.patch = text;
    if (text.trim() === '') b.problem('', 'the patch is empty: the agent changed no file', { file: patch.file }, 'info');
    for (const d of splitDiff(text)) {
      add({ kind: 'edit', actor: 'agent', phase: 'implementation', edits: [{ path: d.path, diff: d.text, op: d.op }], source: { file: patch.file, line: d.line } });
      const ti = /task_index_(\d+)/.exec(d.rawPath)?.[1];
      if (ti !== undefined && Number(ti) !== key.index) b.problem('', `the patch's file ${d.path} is in task_index_${ti}'s workspace but the record is task index ${key.index}`, { file: patch.file, line: d.line });
      if (d.cut) b.problem('', `${d.path}: ${d.cut}`, { file: patch.file, line: d.line });
    }
  }
  if (gen?.json && gen.json.conclusion !== undefined) {
    add({ kind: 'message', actor: 'agent', phase: 'conclusion', text: typeof gen.json.conclusion === 'string' ? gen.json.conclusion : JSON.stringify(gen.json.conclusion), source: { file: gen.file, pointer: '/conclusion' } });
  } else if (gen?.json) b.problem('/conclusion', 'no `conclusion` in the answers', { file: gen.file });
  if (judge?.json) {
    const outcome = outcomeFromHarnessJudge(judge.json, judge.file, 'import');
    b.scores = { ...judge.json, outcome: { ...outcome, taskId: b.task } };
    for (const e of outcome.harnessErrors) b.problem('', `judge file: ${e}`, { file: judge.file });
    add({ kind: 'score', actor: 'system', phase: 'conclusion', text: `judge: design ${String(judge.json.design_score ?? '–')}, setup ${String(judge.json.setup_score ?? '–')}, conclusion ${String(judge.json.conclusion_score ?? '–')}`, source: { file: judge.file, pointer: '' } });
  }
  b.metadata = { paper: key.paper, taskIndex: key.index, iteration: key.iter, ...(config ? { config } : {}), ...(runConfigs.length ? { runConfig: runConfigs.map((r) => r.json) } : {}), files: parts.map((p) => p.file) };
  const t = finishTrajectory(b);
  t.files = [...parts.map((p) => p.file), ...runConfigs.map((r) => r.file)];
  return t;
}

/** Reads a harness file's content (JSON, or the patch text). */
export async function readHarnessFile(file: string, part: HarnessPart): Promise<HarnessFile> {
  const text = await fsp.readFile(file, 'utf8');
  if (part === 'patch') return { file, part, text };
  try { return { file, part, json: obj(JSON.parse(text)) }; } catch (e) { throw new Error(`not JSON: ${errorMessage(e)}`); }
}
export { splitDiff } from './patchFiles';
