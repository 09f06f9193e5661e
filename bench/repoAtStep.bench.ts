/**
 * Benchmark: the repository at step N (src/core/viewer/repoAtStep.ts) against one `git apply` of
 * the same cumulative diff, in the same run, interleaved. Target (issue 17): ≤ 1.3×.
 *
 * Workspace: a "task start" repository of FILES Python files (bench/prepare.bench.ts's generator).
 * Trajectory: STEPS edit steps on 40 of its files, each file edited several times: jsdiff unified
 * diffs (as a session's `file.edited`), before/after replacements (an editor tool's
 * `str_replace`), whole contents for new files (`create`), and a few deletions.
 *
 * Both sides start from the same prepared tree (the cache's base, checked out once) and end with a
 * tree at step N = STEPS-1:
 * - baseline: copy the base tree, then ONE `git apply` of the cumulative diff (base → step N, as
 *   `RepoAtStep.compare` gives it), through the git room;
 * - `at(N)` cold: no cached tree: copy the base, compose the STEPS steps in memory, one `git apply`;
 * - also shown: `at(N)` moving forward one step from the cached tree of N-1, and the per-step
 *   strategy (one `git apply` per step: why the combined patch is the default).
 * Prints medians of RUNS runs in ms, the ratio and the load (`/proc/loadavg`).
 */
import { promises as fsp } from 'node:fs';
import * as path from 'node:path';
import { createPatch } from 'diff';
import { git } from '../src/core/git';
import type { Step } from '../src/core/steps/step';
import { emptyTrajectory, type Trajectory } from '../src/core/trajectory/types';
import { RepoAtStep } from '../src/core/viewer/repoAtStep';
import { sh, tmpDir } from '../test/fixtures/repos/build';
import { generateRepo } from './prepare.bench';
import { adoptWorkspace } from '../test/fixtures/hostRepo';

const FILES = Number(process.env.BENCH_FILES ?? 1000);
const STEPS = Number(process.env.BENCH_STEPS ?? 200);
const RUNS = Number(process.env.BENCH_RUNS ?? 9);

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];

async function time(f: () => Promise<unknown>): Promise<number> {
  const t = performance.now();
  await f();
  return performance.now() - t;
}

/** STEPS steps over 40 files of the generated repository (see the header), each step one change. */
async function makeSteps(ws: string): Promise<Step[]> {
  const current = new Map<string, string | null>();
  const read = async (p: string) => (current.has(p) ? current.get(p)! : fsp.readFile(path.join(ws, p), 'utf8').catch(() => null));
  const steps: Step[] = [];
  const add = (s: Partial<Step>) => steps.push({ index: steps.length, kind: 'edit', actor: 'agent', phase: 'implementation', source: { file: 'bench' }, ...s } as Step);
  for (let i = 0; steps.length < STEPS; i++) {
    const file = `pkg${i % 40}/mod_${i % 40}.py`;
    const text = await read(file);
    if (i % 50 === 49) {
      // a new file, written whole
      const p = `experiments/run_${i}.py`;
      const body = Array.from({ length: 30 }, (_, l) => `value_${i}_${l} = ${(i * 7 + l) % 101}`).join('\n') + '\n';
      current.set(p, body);
      add({ edits: [{ path: p, after: body, op: 'create' }] });
    } else if (i % 67 === 66 && text !== null) {
      current.set(file, null);
      add({ edits: [{ path: file, diff: createPatch(file, text, ''), op: 'delete' }] });
    } else if (text === null) {
      const body = `# recreated ${i}\n`;
      current.set(file, body);
      add({ edits: [{ path: file, after: body, op: 'create' }] });
    } else if (i % 3 === 0) {
      const lines = text.split('\n');
      const at = (i * 13) % Math.max(1, lines.length - 1);
      const before = lines[at];
      const after = `${before}  # step ${i}`;
      lines[at] = after;
      current.set(file, lines.join('\n'));
      add({ kind: 'tool', action: { tool: 'str_replace_editor', arguments: { command: 'str_replace', path: file } }, edits: [{ path: file, before, after, op: 'str_replace' }] });
    } else {
      const lines = text.split('\n');
      for (let l = i % 5; l < lines.length; l += 9) lines[l] = `${lines[l]}  # edit ${i}`;
      const next = lines.join('\n');
      current.set(file, next);
      add({ edits: [{ path: file, diff: createPatch(file, text, next), op: 'edit' }] });
    }
  }
  return steps;
}

export async function run(): Promise<Record<string, number>> {
  const root = await tmpDir('expbench-bench-repoatstep-');
  try {
    const ws = path.join(root, 'workspace');
    await generateRepo(ws, FILES, 1);
    await sh(ws, 'commit', '--quiet', '--amend', '-m', 'task start');
    adoptWorkspace(root);
    const steps = await makeSteps(ws);
    const trajectory: Trajectory = { ...emptyTrajectory('bench', 'openhands-v1', path.join(root, 'bench.jsonl')), steps };
    const N = steps.length - 1;
    const repo = new RepoAtStep({ trajectory, workspace: ws, cacheDir: path.join(root, 'cache') });
    const perStep = new RepoAtStep({ trajectory, workspace: ws, cacheDir: path.join(root, 'cache-per-step'), strategy: 'per-step' });
    const cmp = await repo.compare(N, -1);
    const patch = cmp.diff;
    const baseDir = cmp.left.dir;
    const scratch = path.join(root, 'scratch');
    // (the scratch tree is removed before each timing, outside it)
    const baseline = async () => {
      await fsp.cp(baseDir, scratch, { recursive: true, verbatimSymlinks: true });
      await git(['apply', '--whitespace=nowarn', '-'], { repo: 'none', cwd: scratch, input: patch });
    };
    // Same result both ways (checked once, outside the timings).
    await fsp.rm(scratch, { recursive: true, force: true });
    await baseline();
    const t = await repo.at(N);
    const check = await git(['diff', '--no-index', '--stat', '--', t.dir, scratch], { repo: 'none', okCodes: [1] });
    if (check.code !== 0) throw new Error(`the tree at step ${N} differs from the baseline's: ${check.text.slice(0, 400)}`);

    const base: number[] = [];
    const cold: number[] = [];
    const forward: number[] = [];
    for (let r = 0; r < RUNS; r++) {
      await fsp.rm(scratch, { recursive: true, force: true });
      base.push(await time(baseline));
      await repo.clearTrees();
      cold.push(await time(() => repo.at(N)));
      await repo.clearTrees();
      await repo.at(N - 1);
      forward.push(await time(() => repo.at(N)));
    }
    const per: number[] = [];
    for (let r = 0; r < Math.min(3, RUNS); r++) {
      await perStep.clearTrees();
      per.push(await time(() => perStep.at(N)));
    }
    const ratio = median(cold) / median(base);
    const load = (await fsp.readFile('/proc/loadavg', 'utf8').catch(() => '?')).split(' ').slice(0, 3).join(' ');
    console.log(`repo at step ${N} of ${STEPS} edit steps, ${FILES}-file repository, cumulative diff ${cmp.files.length} files / ${patch.length} characters; medians of ${RUNS} runs:`);
    console.log(`  baseline: copy + one git apply of the cumulative diff  ${median(base).toFixed(1)} ms`);
    console.log(`  at(N), no cached tree (composed, one git apply)        ${median(cold).toFixed(1)} ms  → ${ratio.toFixed(2)}× (target ≤ 1.3×)`);
    console.log(`  at(N) from the cached tree of N-1                      ${median(forward).toFixed(1)} ms`);
    console.log(`  at(N), per-step strategy (${STEPS} git applies, ${per.length} runs)   ${median(per).toFixed(1)} ms  → ${(median(per) / median(base)).toFixed(2)}×`);
    console.log(`  load average ${load}`);
    return { steps: STEPS, files: FILES, baselineMs: median(base), coldMs: median(cold), ratio, forwardMs: median(forward), perStepMs: median(per), perStepRatio: median(per) / median(base) };
  } finally {
    await fsp.rm(root, { recursive: true, force: true });
  }
}

if (require.main === module) void run();
