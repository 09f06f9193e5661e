import { promises as fsp } from 'node:fs';
import * as path from 'node:path';
import { designVariables } from '../../src/core/judge/common';
import { coverRequirement, solverFiles } from '../../src/core/judge/coverage';
import { designItems, designPair, words, type DesignItem } from '../../src/core/judge/designMatch';
import { readGroundTruthRange, type GroundTruthRange } from '../../src/core/judge/groundtruth';
import { parseHunks, symbolsOf } from '../../src/core/judge/hunks';
import { gitPristine, type PristineSource } from '../../src/core/judge/pristine';
import { loadDatasets } from '../../src/core/tasks/loader';
import type { Task } from '../../src/core/tasks/types';

/**
 * Scores the heuristic pre-judge against the hand labels in test/data/prejudge-labels.json
 * (issue 14, item 5). Used by test/unit/judge.prejudge.unit.test.ts and bench/prejudge.bench.ts.
 *
 * Inputs that are not committed are looked up where this machine keeps them and the pairs that
 * need them are counted as `unavailable` when absent: the shared dataset and harness records
 * (`../shared/data/…`, beside the repository), and the fetched repositories
 * (`../.mirror/<owner>+<name>/repo`, beside the repository as `../shared`, or
 * EXPBENCH_MIRRORS=<dir>), never committed.
 */
export const ROOT = path.resolve(__dirname, '..', '..', '..');
const SHARED = path.resolve(ROOT, '..', 'shared', 'data');
const MIRRORS = process.env.EXPBENCH_MIRRORS ?? path.resolve(ROOT, '..', '.mirror');

export interface Labels {
  design: { id: string; task: string; designSource: string; variable: string; item: string; label: 'matched' | 'partial' | 'missing'; heldOut: boolean }[];
  requirements: { id: string; task: string; requirement: number; solver: { path?: string; file?: string; patch?: string }; label: 'met' | 'partial' | 'unmet'; heldOut: boolean }[];
}

/**
 * The labels as frozen. The file writes the sample task's id as `samples/toycal/0` (a slip of the
 * labelling: the loader's id is `sample/toycal/0`); it is read as the loader's id here so that the
 * frozen file stays byte for byte as labelled.
 */
export async function readLabels(): Promise<Labels> {
  const l = JSON.parse(await fsp.readFile(path.join(ROOT, 'test', 'data', 'prejudge-labels.json'), 'utf8')) as Labels;
  for (const p of [...l.design, ...l.requirements]) p.task = p.task.replace(/^samples\/toycal\//, 'sample/toycal/');
  return l;
}

/** The bare git dir of a fetched repository, or undefined when it was not fetched here. */
export async function mirror(ownerName: string): Promise<string | undefined> {
  const dir = path.join(MIRRORS, ownerName.replace('/', '+'), 'repo');
  return fsp.stat(dir).then(() => dir, () => undefined);
}

/** A pristine source over a plain folder (the bundled sample repository). */
export function folderPristine(dir: string): PristineSource {
  return { describe: dir, read: (p) => fsp.readFile(path.join(dir, p), 'utf8').catch(() => undefined) };
}

let tasksPromise: Promise<Task[]> | undefined;
export function labelTasks(): Promise<Task[]> {
  tasksPromise ??= loadDatasets([
    path.join(ROOT, 'samples', 'exp-bench'),
    path.join(SHARED, 'exp-bench', 'tasks', 'iclr2024', '18439'),
    path.join(SHARED, 'exp-bench', 'tasks', 'neurips2024', '93022'),
  ].filter((d) => require('node:fs').existsSync(d))).then((r) => r.tasks);
  return tasksPromise;
}

/** The pristine checkout of a labelled task: the sample's folder, or the fetched repository at HEAD. */
export async function pristineFor(taskId: string): Promise<PristineSource | undefined> {
  if (taskId.startsWith('sample/')) return folderPristine(path.join(ROOT, 'samples', 'repos', 'toy-calibration'));
  const repo = taskId.startsWith('iclr2024/18439') ? await mirror('apple/ml-calibration') : taskId.startsWith('neurips2024/93022') ? await mirror('bjing2016/mdgen') : undefined;
  return repo ? gitPristine(repo, 'HEAD') : undefined;
}

export interface Confusion { tp: number; fp: number; fn: number; tn: number; n: number; unavailable: number }
const empty = (): Confusion => ({ tp: 0, fp: 0, fn: 0, tn: 0, n: 0, unavailable: 0 });
export const precision = (c: Confusion) => (c.tp + c.fp ? c.tp / (c.tp + c.fp) : NaN);
export const recall = (c: Confusion) => (c.tp + c.fn ? c.tp / (c.tp + c.fn) : NaN);

function count(c: Confusion, truth: boolean, predicted: boolean): void {
  c.n++;
  if (truth && predicted) c.tp++; else if (!truth && predicted) c.fp++; else if (truth) c.fn++; else c.tn++;
}

/** The design item a label names, read with its role from the design it came from. */
async function labelledItem(item: string, source: string): Promise<DesignItem> {
  if (source.endsWith('.json') && source.includes('trajectories')) {
    const file = path.resolve(ROOT, source);
    const design = JSON.parse(await fsp.readFile(file, 'utf8')).design as string | string[];
    const items = designItems(Array.isArray(design) ? design : [design]);
    const target = words(item);
    let best = items[0];
    let bestScore = -1;
    for (const it of items) {
      const w = words(it.text);
      const s = target.filter((x) => w.includes(x)).length / Math.max(target.length, w.length);
      if (s > bestScore) { best = it; bestScore = s; }
    }
    return best;
  }
  return designItems([item])[0];
}

export interface LabelScores {
  design: { train: Confusion; heldOut: Confusion; rows: { id: string; label: string; predicted: string; heldOut: boolean }[] };
  /** positive = met (strict) and positive = met or partial (lenient). */
  requirements: { train: Confusion; heldOut: Confusion; trainLenient: Confusion; heldOutLenient: Confusion; rows: { id: string; label: string; predicted: string; heldOut: boolean; share: number }[] };
}

/** Runs the pre-judge's pieces on every labelled pair whose inputs are here. */
export async function scoreLabels(labels: Labels): Promise<LabelScores> {
  const tasks = await labelTasks();
  const byId = new Map(tasks.map((t) => [t.id, t]));
  const out: LabelScores = {
    design: { train: empty(), heldOut: empty(), rows: [] },
    requirements: { train: empty(), heldOut: empty(), trainLenient: empty(), heldOutLenient: empty(), rows: [] },
  };
  for (const p of labels.design) {
    const split = p.heldOut ? out.design.heldOut : out.design.train;
    const task = byId.get(p.task);
    const v = task && designVariables(task).find((x) => x.name === p.variable);
    const available = v && (!p.designSource.includes('trajectories') || await fsp.stat(path.resolve(ROOT, p.designSource)).then(() => true, () => false));
    if (!v || !available) { split.unavailable++; continue; }
    const predicted = designPair(v, await labelledItem(p.item, p.designSource)).verdict;
    count(split, p.label !== 'missing', predicted !== 'missing');
    out.design.rows.push({ id: p.id, label: p.label, predicted, heldOut: p.heldOut });
  }
  const fileCache = new Map<string, Awaited<ReturnType<typeof solverFiles>>>();
  for (const p of labels.requirements) {
    const strict = p.heldOut ? out.requirements.heldOut : out.requirements.train;
    const lenient = p.heldOut ? out.requirements.heldOutLenient : out.requirements.trainLenient;
    const task = byId.get(p.task);
    const pristine = await pristineFor(p.task);
    const req = task?.requirements[p.requirement - 1];
    const patch = await solverPatch(p.solver);
    if (!task || !pristine || !req || patch === undefined) { strict.unavailable++; lenient.unavailable++; continue; }
    const key = JSON.stringify(p.solver);
    if (!fileCache.has(key)) fileCache.set(key, await solverFiles(parseHunks(patch)));
    const ranges: GroundTruthRange[] = [];
    for (const ref of req.refs) { const r = await readGroundTruthRange(pristine, ref); if (!('problem' in r)) ranges.push(r); }
    const c = await coverRequirement(ranges, [...new Set(symbolsOf('', req.text).map((w) => w.split('.').pop()!))], fileCache.get(key)!);
    count(strict, p.label === 'met', c.verdict === 'met');
    count(lenient, p.label !== 'unmet', c.verdict === 'met' || c.verdict === 'partial');
    out.requirements.rows.push({ id: p.id, label: p.label, predicted: c.verdict, heldOut: p.heldOut, share: c.facts.length ? c.found.length / c.facts.length : 0 });
  }
  return out;
}

/** The labelled solver as a patch: a new file made from `file` at `path`, or a patch file as is. */
async function solverPatch(s: Labels['requirements'][number]['solver']): Promise<string | undefined> {
  if (s.patch) return fsp.readFile(path.resolve(ROOT, s.patch), 'utf8').catch(() => undefined);
  if (!s.file || !s.path) return undefined;
  const text = await fsp.readFile(path.resolve(ROOT, s.file), 'utf8').catch(() => undefined);
  return text === undefined ? undefined : newFilePatch(s.path, text);
}

/** A unified diff adding `p` with `text` (what `git diff` prints for a new file). */
export function newFilePatch(p: string, text: string): string {
  const lines = text.replace(/\n$/, '').split('\n');
  return `diff --git a/${p} b/${p}\nnew file mode 100644\n--- /dev/null\n+++ b/${p}\n@@ -0,0 +1,${lines.length} @@\n${lines.map((l) => `+${l}`).join('\n')}\n`;
}
