import { Command } from 'commander';
import { collectOutcomes } from '../../core/interop/collect';
import { policyByName } from '../../core/metrics/policies';
import { buildTable, formatTable } from '../../core/metrics/table';
import { printJson } from '../output';

/** `expbench report DIR…`: the paper's metrics table over folders of sessions and of harness judge files. */
export function register(program: Command): void {
  program.command('report').argument('<dirs...>', 'folders of sessions and/or reference-harness judge JSON files (one table row per folder)')
    .option('--policy <name>', 'metric policy: paper-likely or strict', 'paper-likely')
    .option('--json', 'print the table as JSON {policy, bootstrap, rows, exclusions, tasks, skipped}')
    .option('--seed <n>', 'bootstrap seed', (v) => parseInt(v, 10), 1)
    .option('--resamples <n>', 'bootstrap resamples', (v) => parseInt(v, 10), 2000)
    .description('per-task D, I, E, C, I·E, C·D, All✓, All·E✓ and an aggregate table with 95% intervals (resampled by paper)')
    .action(async (dirs: string[], opts: { policy: string; json?: boolean; seed: number; resamples: number }) => {
      const policy = policyByName(opts.policy);
      const { outcomes, skipped } = await collectOutcomes(dirs);
      const table = buildTable(outcomes, policy, { seed: opts.seed, resamples: opts.resamples });
      if (opts.json) printJson({ ...table, skipped });
      else {
        console.log(formatTable(table));
        for (const s of skipped) console.error(`expbench: skipped ${s.file}: ${s.reason}`);
      }
    });
}
