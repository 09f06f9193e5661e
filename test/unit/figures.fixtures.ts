import { promises as fsp } from 'node:fs';
import * as path from 'node:path';
import { ROOT } from './cli.helpers';

/** The real reference-harness output beside the repository (`../shared/data/trajectories/exp-bench/`: Curie on four tasks of NeurIPS 2024 paper 93022). */
export async function harnessDir(): Promise<string> {
  const d = path.join(ROOT, '..', 'shared', 'data', 'trajectories', 'exp-bench');
  if (await fsp.stat(d).then((s) => s.isDirectory(), () => false)) return d;
  throw new Error(`the shared harness output is not beside the repository: ${d}`);
}

/** The real judge files under `dir` (`*_eval_judge.json`). */
export async function realJudgeFiles(dir: string): Promise<string[]> {
  const out: string[] = [];
  const walk = async (d: string) => {
    for (const e of await fsp.readdir(d, { withFileTypes: true })) {
      const p = path.join(d, e.name);
      if (e.isDirectory()) await walk(p);
      else if (e.name.endsWith('_eval_judge.json')) out.push(p);
    }
  };
  await walk(dir);
  return out.sort();
}

/** A small deterministic generator (the same seed, the same files). */
function rng(seed: number): () => number {
  let a = seed >>> 0;
  return () => { a = (a + 0x6d2b79f5) >>> 0; let t = a; t = Math.imul(t ^ (t >>> 15), t | 1); t ^= t + Math.imul(t ^ (t >>> 7), t | 61); return ((t ^ (t >>> 14)) >>> 0) / 4294967296; };
}

/**
 * Mutated variants of the real harness judge files, laid out as the harness writes them
 * (`<conference>/<paperId>/<agent>/<model>/<paperId>_task_index_<i>_iter_1_…_eval_judge.json`):
 * each keeps a real file's text fields and gets other scores — design and setup scores 0–100, a
 * harness error string ("Error parsing response") now and then, conclusions either way,
 * `execution_success` true, false or absent, a monitor flag, an invalid task — over `papers`
 * papers of two conferences and two agents' models. Returns the folder.
 */
export async function writeVariants(root: string, real: string[], opts: { papers?: number; tasksPerPaper?: number; seed?: number } = {}): Promise<string> {
  const r = rng(opts.seed ?? 7);
  const papers = opts.papers ?? 5;
  const perPaper = opts.tasksPerPaper ?? 4;
  const texts = await Promise.all(real.map(async (f) => JSON.parse(await fsp.readFile(f, 'utf8')) as Record<string, unknown>));
  let n = 0;
  for (const [agent, model] of [['curie', 'azure-gpt-4o'], ['openhands', 'o3-mini']]) {
    for (let p = 0; p < papers; p++) {
      const conference = p % 2 ? 'iclr2024' : 'neurips2024';
      const paperId = String(90000 + p * 37);
      const dir = path.join(root, conference, paperId, agent, model);
      await fsp.mkdir(dir, { recursive: true });
      for (let i = 0; i < perPaper; i++) {
        const base = { ...texts[n++ % texts.length] };
        const roll = r();
        base.design_score = roll < 0.08 ? 'Error parsing response' : Math.round(r() * 100);
        base.setup_score = Math.round(r() ** 2 * 100);
        base.conclusion_score = r() < 0.35 ? 'correct' : 'incorrect';
        const e = r();
        if (e < 0.4) base.execution_success = true; else if (e < 0.75) base.execution_success = false; else delete base.execution_success;
        if (r() < 0.06) base.monitor = { paper_access: true, git_operations: false, faked_or_nonexperimental_data: false };
        if (r() < 0.03) base.invalid = 'masked file missing from the repository';
        await fsp.writeFile(path.join(dir, `${paperId}_task_index_${i}_iter_1_duration_0.5_eval_judge.json`), JSON.stringify(base, null, 2));
      }
    }
  }
  return root;
}
