import { Command } from 'commander';
import { collectOutcomes } from '../../core/interop/collect';
import { policyByName } from '../../core/metrics/policies';
import { buildTable, formatTable } from '../../core/metrics/table';
import { loadDatasets } from '../../core/tasks/loader';
import { datasetDirs } from '../datasets';
import { fail, printJson } from '../output';

const collect = (v: string, acc: string[]) => [...acc, v];

/**
 * `expbench report DIR…`: the paper's metrics table over folders of sessions and of harness judge
 * files. Harness files named `<paperId>_task_index_<i>_iter_<k>_…_eval_judge.json` are grouped by
 * the agent and model of their folders (`…/<paperId>/<agent>/<model>/`) or config file; a paper id
 * whose conference the folders do not say is looked up in the datasets (`--dataset`, else
 * `$EXPBENCH_DATASETS`, loaded only then). Nothing to report (no judged session, no harness judge
 * file): says so on stderr and exits 1.
 */
export function register(program: Command): void {
  program.command('report').argument('<dirs...>', 'folders of sessions and/or reference-harness judge JSON files (one table row per folder, or per agent/model for the harness\'s files)')
    .option('--policy <name>', 'metric policy: paper-likely or strict', 'paper-likely')
    .option('--json', 'print the table as JSON {policy, bootstrap, rows, exclusions, tasks, skipped}')
    .option('--seed <n>', 'bootstrap seed', (v) => parseInt(v, 10), 1)
    .option('--resamples <n>', 'bootstrap resamples', (v) => parseInt(v, 10), 2000)
    .option('--dataset <dir>', 'dataset folder giving the conference of a harness file\'s paper id (repeatable; default $EXPBENCH_DATASETS)', collect, [])
    .description('per-task D, I, E, C, I·E, C·D, All✓, All·E✓ and an aggregate table with 95% intervals (resampled by paper)')
    .action(async (dirs: string[], opts: { policy: string; json?: boolean; seed: number; resamples: number; dataset: string[] }) => {
      const policy = policyByName(opts.policy);
      let conferences: Promise<Map<string, string>> | undefined;
      const conferenceOf = async (paperId: string) => {
        conferences ??= loadDatasets(datasetDirs(undefined, opts)).then((r) => new Map(r.tasks.map((t) => [t.paperId, t.conference])));
        return (await conferences).get(paperId);
      };
      const { outcomes, skipped } = await collectOutcomes(dirs, { conferenceOf });
      for (const s of skipped) console.error(`expbench: skipped ${s.file}: ${s.reason}`);
      if (outcomes.length === 0) {
        return fail(`nothing to report in ${dirs.join(', ')}: no judged session (private/judge/latest.json) and no reference-harness judge file (*.json with design_score, setup_score or conclusion_score)`, 1);
      }
      const table = buildTable(outcomes, policy, { seed: opts.seed, resamples: opts.resamples });
      if (opts.json) printJson({ ...table, skipped });
      else console.log(formatTable(table));
    });
}
