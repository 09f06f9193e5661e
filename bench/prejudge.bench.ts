/**
 * Benchmark (issue 14, item 5): the heuristic pre-judge against real judgements.
 *
 * 1. The EXP-Bench harness records in ../shared/data/trajectories/exp-bench/ (an agent's design
 *    and patch, and the harness LLM judge's `design_score` and `setup_score`): the heuristic's D
 *    (design recall, partial credit 0.5) and I (requirement score) beside them, per record, with the
 *    ground truth read from the task's repository fetched under ../.mirror (beside the repository, or EXPBENCH_MIRRORS; never committed;
 *    a record whose repository is absent is listed as such).
 * 2. The hand labels (test/data/prejudge-labels.json): precision and recall on the tuning part and
 *    on the held-out part, design pairs (positive = matched or partial) and requirement pairs
 *    (positive = met; and, lenient, met or partial).
 * 3. Time per heuristic judgement of a harness record, and the baseline: the same record's patch
 *    parsed only (parse-diff), in the same run.
 */
import { promises as fsp } from 'node:fs';
import * as path from 'node:path';
import { judgeHeuristic } from '../src/core/judge/heuristic';
import { parseHunks } from '../src/core/judge/hunks';
import { gitPristine } from '../src/core/judge/pristine';
import { labelTasks, mirror, precision, readLabels, recall, ROOT, scoreLabels, type Confusion } from '../test/harness/prejudgeLabels';

const RECORDS = path.resolve(ROOT, '..', 'shared', 'data', 'trajectories', 'exp-bench');
/** Harness paper id → the repository it was run on (from the papers list). */
const REPOS: Record<string, string> = { 93022: 'bjing2016/mdgen', 18439: 'apple/ml-calibration' };

interface Row { record: string; task: string; D: number | null; I: number | null; designScore: number; setupScore: number; counts: string }

export async function run(): Promise<unknown> {
  const rows: Row[] = [];
  const tasks = await labelTasks();
  const files = await listFiles(RECORDS).catch(() => [] as string[]);
  const judgeMs: number[] = [];
  const parseMs: number[] = [];
  for (const judgeFile of files.filter((f) => f.endsWith('_eval_judge.json'))) {
    const m = /(\d+)_task_index_(\d+)_/.exec(path.basename(judgeFile));
    if (!m) continue;
    const [paper, index] = [m[1], Number(m[2])];
    const task = tasks.find((t) => t.paperId === paper && t.index === index);
    const repo = REPOS[paper] ? await mirror(REPOS[paper]) : undefined;
    const judge = JSON.parse(await fsp.readFile(judgeFile, 'utf8'));
    const gen = JSON.parse(await fsp.readFile(judgeFile.replace('_eval_judge.json', '_eval_gen.json'), 'utf8'));
    const patch = await fsp.readFile(judgeFile.replace('_eval_judge.json', '_eval_gen.patch'), 'utf8').catch(() => '');
    const name = path.relative(RECORDS, judgeFile);
    if (!task || !repo) { rows.push({ record: name, task: task?.id ?? `${paper}/${index}`, D: null, I: null, designScore: judge.design_score, setupScore: judge.setup_score, counts: !task ? 'task not loaded' : `${REPOS[paper] ?? 'repository'} not fetched` }); continue; }
    const t0 = performance.now();
    const r = await judgeHeuristic({ task, answers: { design: gen.design, conclusion: gen.conclusion ?? '' }, patch, maskedPaths: [], pristine: gitPristine(repo, 'HEAD') });
    judgeMs.push(performance.now() - t0);
    const t1 = performance.now();
    parseHunks(patch);
    parseMs.push(performance.now() - t1);
    const c = r.implementation.counts;
    rows.push({
      record: name, task: task.id, D: r.design.recall === null ? null : Math.round(r.design.recall * 100), I: r.implementation.score === null ? null : Math.round(r.implementation.score * 100),
      designScore: judge.design_score, setupScore: judge.setup_score,
      counts: `design ${r.design.counts.matched}m/${r.design.counts.partial}p/${r.design.counts.total}; reqs ${c.met}m/${c.partial}p/${c.unmet}u/${c.total}`,
    });
  }
  console.log('prejudge: heuristic D and I beside the EXP-Bench harness judge (design_score, setup_score), per record');
  console.log('| record | task | heuristic D | harness design_score | heuristic I | harness setup_score | heuristic counts |');
  console.log('| --- | --- | --- | --- | --- | --- | --- |');
  for (const r of rows) console.log(`| ${r.record} | ${r.task} | ${r.D ?? '–'} | ${r.designScore} | ${r.I ?? '–'} | ${r.setupScore} | ${r.counts} |`);
  const scored = rows.filter((r) => r.D !== null);
  const mae = (a: (r: Row) => number | null, b: (r: Row) => number) => scored.length ? scored.reduce((s, r) => s + Math.abs(a(r)! - b(r)), 0) / scored.length : NaN;
  console.log(scored.length
    ? `prejudge: mean |D − design_score| = ${mae((r) => r.D, (r) => r.designScore).toFixed(1)} points, mean |I − setup_score| = ${mae((r) => r.I, (r) => r.setupScore).toFixed(1)} points over ${scored.length} records`
    : 'prejudge: no record could be judged (each names why above), so no agreement with the harness judge is measured');

  const s = await scoreLabels(await readLabels());
  const f = (c: Confusion) => `n=${c.n} P=${precision(c).toFixed(2)} R=${recall(c).toFixed(2)} (tp ${c.tp}, fp ${c.fp}, fn ${c.fn}, tn ${c.tn}; unavailable ${c.unavailable})`;
  console.log(`prejudge labels, design pairs: tuning ${f(s.design.train)}; held out ${f(s.design.heldOut)}`);
  console.log(`prejudge labels, requirement pairs (met): tuning ${f(s.requirements.train)}; held out ${f(s.requirements.heldOut)}`);
  console.log(`prejudge labels, requirement pairs (met or partial): tuning ${f(s.requirements.trainLenient)}; held out ${f(s.requirements.heldOutLenient)}`);
  const med = (xs: number[]) => xs.length ? [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)] : NaN;
  console.log(judgeMs.length
    ? `prejudge: heuristic judgement ${med(judgeMs).toFixed(1)} ms per record (median of ${judgeMs.length}), baseline patch parse ${med(parseMs).toFixed(2)} ms, ratio ${(med(judgeMs) / med(parseMs)).toFixed(0)}x`
    : 'prejudge: no record was judged, so no time per record is measured');
  return { rows, labels: { design: { train: s.design.train, heldOut: s.design.heldOut }, requirements: { train: s.requirements.train, heldOut: s.requirements.heldOut, trainLenient: s.requirements.trainLenient, heldOutLenient: s.requirements.heldOutLenient } }, judgeMs: med(judgeMs), parseMs: med(parseMs) };
}

async function listFiles(dir: string): Promise<string[]> {
  const out: string[] = [];
  for (const e of await fsp.readdir(dir, { withFileTypes: true })) {
    const p = path.join(dir, e.name);
    if (e.isDirectory()) out.push(...await listFiles(p));
    else out.push(p);
  }
  return out.sort();
}
