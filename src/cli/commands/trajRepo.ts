import { promises as fsp } from 'node:fs';
import { Command, InvalidArgumentError } from 'commander';
import { repoOf, resolveRun, type RunSourceDeps } from '../../core/flows/runAtStep';
import { policyByName } from '../../core/metrics/policies';
import { findTask, loadDatasets } from '../../core/tasks/loader';
import { plural } from '../../core/util/plural';
import { buildFolder } from '../../core/util/outFolder';
import { compareRuns, type Comparison } from '../../core/viewer/compare';
import type { StepTree } from '../../core/viewer/repoAtStep';
import { formatRows } from '../../core/viewer/triage';
import { formatDuration } from '../../core/viewer/triageTable';
import { datasetDirs } from '../datasets';
import { printJson } from '../output';

const collect = (v: string, acc: string[]) => [...acc, v];
const stepArg = (name: string) => (v: string): number => {
  const n = Number(v);
  if (!Number.isInteger(n) || n < -1) throw new InvalidArgumentError(`${name} is a step index (0-based; -1: before the first step), not "${v}"`);
  return n;
};

/**
 * `expbench traj repo-at-step RUN --step N --out DIR [--against M] [--id ID] [--json]` and
 * `expbench traj compare A B [--policy P] [--json]`: the trajectory viewer's repository at a step
 * and its comparison of two runs (docs/viewer.md), for scripts and CI, through the same core as
 * VS Code's commands (src/core/flows/runAtStep.ts, src/core/viewer/repoAtStep.ts, compare.ts).
 * RUN is a session folder or a trajectory file on an EXP-Bench task (its task is prepared once in
 * the OS cache, from `--dataset`, `$EXPBENCH_DATASETS` or the bundled sample). Exit 0 on success,
 * 1 on an error (named).
 */
export function registerRepo(traj: Command): void {
  traj.command('repo-at-step').argument('<run>', 'a session folder or a trajectory file on an EXP-Bench task')
    .requiredOption('--step <n>', 'the step (0-based; -1: the prepared workspace before any step)', stepArg('--step'))
    .requiredOption('--out <dir>', 'the folder to write the tree into (new, or empty)')
    .option('--against <m>', 'also print the diff from step M\'s tree to step N\'s (git diff --no-index)', stepArg('--against'))
    .option('--id <id>', 'the trajectory when the file holds several (default: the first)')
    .option('--dataset <dir>', 'dataset folder with the trajectory\'s task (repeatable; default: $EXPBENCH_DATASETS, plus the bundled sample)', collect, [])
    .option('--no-sample', 'leave out the bundled sample task')
    .option('--json', 'print {run, trajectory, step, steps, out, baseCommit, changed, approximate, approximateFrom, uncertain, diff?}')
    .description('write the repository as it was after step N of a run (the prepared workspace + the steps\' file changes)')
    .action(async (run: string, opts: { step: number; out: string; against?: number; id?: string; dataset: string[]; sample?: boolean; json?: boolean }) => {
      const src = await resolveRun(run, taskFinder(opts), { trajectoryId: opts.id });
      const repo = repoOf(src);
      const tree = opts.against === undefined ? await repo.at(opts.step) : undefined;
      const cmp = opts.against === undefined ? undefined : await repo.compare(opts.step, opts.against);
      const t: StepTree = tree ?? cmp!.right;
      await buildFolder(opts.out, 'tree', (tmp) => fsp.cp(t.dir, tmp, { recursive: true, verbatimSymlinks: true, force: false, errorOnExist: true }));
      const result = {
        run: src.label, trajectory: src.trajectory.id, step: t.step, steps: repo.steps, out: opts.out, baseCommit: t.baseCommit, changed: t.changed,
        approximate: t.approximate, ...(t.approximateFrom !== undefined ? { approximateFrom: t.approximateFrom } : {}), uncertain: t.uncertain,
        ...(cmp ? { against: cmp.other, diff: cmp.diff, diffFiles: cmp.files } : {}),
      };
      if (opts.json) { printJson(result); return; }
      const by = (s: string) => t.changed.filter((c) => c.status === s).length;
      console.log(`${src.label}: step ${t.step} of ${plural(repo.steps, 'step')} written to ${opts.out}: ${plural(t.changed.length, 'file')} changed from task start ${t.baseCommit.slice(0, 12)} (${by('added')} added, ${by('modified')} modified, ${by('deleted')} deleted)`);
      for (const c of t.changed) console.log(`  ${c.status.padEnd(8)} ${c.path}`);
      if (t.approximate) {
        console.log(`approximate from step ${t.approximateFrom}: ${plural(t.uncertain.length, 'change')} without recorded content`);
        for (const u of t.uncertain) console.log(`  step ${u.step}${u.path ? ` ${u.path}` : ''}: ${u.why}`);
      }
      if (cmp) console.log(`\ndiff from step ${cmp.other} to step ${cmp.step} (${plural(cmp.files.length, 'file')}):\n${cmp.diff || '(no difference)'}`);
    });

  traj.command('compare').argument('<a>', 'a run: a session folder, a trajectory file, or <file>#<trajectory id>').argument('<b>', 'the other run, of the same task')
    .option('--policy <name>', 'metric policy of the scores: paper-likely or strict', 'paper-likely')
    .option('--json', 'print the comparison {task, policy, left, right, phases, verdicts}')
    .description('compare two runs of one task: scores, working time and steps per phase, the judge\'s verdicts per item')
    .action(async (a: string, b: string, opts: { policy: string; json?: boolean }) => {
      const c = await compareRuns(a, b, policyByName(opts.policy));
      if (opts.json) printJson(c);
      else console.log(comparisonText(c));
    });
}

/** The datasets' task of an id (loaded once, on first use). */
function taskFinder(opts: { dataset: string[]; sample?: boolean }): RunSourceDeps {
  let loaded: ReturnType<typeof loadDatasets> | undefined;
  return { findTask: async (id) => { loaded ??= loadDatasets(datasetDirs(undefined, opts)); return findTask(await loaded, id); } };
}

/** The comparison as text: the two runs' rows, working time and steps per phase, the verdicts that differ. */
export function comparisonText(c: Comparison): string {
  const lines = [`task ${c.task ?? '(unknown)'}, policy ${c.policy}`, formatRows([c.left, c.right]), '', 'phase\tA time\tA steps\tB time\tB steps'];
  const ms = (x: number | null) => (x === null ? '-' : formatDuration(x));
  for (const p of c.phases) lines.push(`${p.phase}\t${ms(p.leftMs)}\t${p.left.length}\t${ms(p.rightMs)}\t${p.right.length}`);
  const differ = c.verdicts.filter((v) => (v.left?.verdict ?? null) !== (v.right?.verdict ?? null));
  lines.push('', `verdicts: ${plural(c.verdicts.length, 'item')}, ${differ.length} differ${differ.length ? ':' : ''}`);
  for (const v of differ) lines.push(`  ${v.label}: A ${v.left?.verdict ?? '-'}, B ${v.right?.verdict ?? '-'}`);
  return lines.join('\n');
}
