import { Command, InvalidArgumentError } from 'commander';
import { checkFeasibility } from '../../core/curation/feasibility';
import { requireTask } from '../datasets';
import { printJson } from '../output';

const collect = (v: string, acc: string[]) => [...acc, v];

/**
 * `expbench feasibility ID [--source URL|PATH] [--commit SHA] [--image TAG] [--probe] [--json] [--check]`:
 * can the task run on this machine (src/core/curation/feasibility.ts, docs/curation.md)? Prints
 * the verdict and each need, or the {@link checkFeasibility} result as JSON. Exit 0 when the check
 * ran (whatever the verdict), 1 on an error (no such task, a bad curation file); with `--check`, 3
 * when the task cannot run here.
 */
export function register(program: Command): void {
  program.command('feasibility').argument('<id>', 'task id <conference>/<paperId>/<index>')
    .option('--source <url|path>', 'repository whose requirements are probed (default: the curation file\'s, else the task\'s code_url)')
    .option('--commit <sha>', 'commit to read the requirements at (default: the curation file\'s pin, else the source\'s HEAD)')
    .option('--image <tag>', 'image to probe (default: the curation file\'s baseImage, else expbench/sandbox:1)')
    .option('--probe', 'probe the image for the declared requirements even when the curation file describes the environment')
    .option('--timeout <seconds>', 'bound of the probe (default 60)', (v: string) => {
      const n = Number(v);
      if (!(n > 0 && n <= 3600)) throw new InvalidArgumentError(`--timeout must be between 0 and 3600 seconds, got "${v}"`);
      return n;
    })
    .option('--dataset <dir>', 'dataset folder (repeatable; default: $EXPBENCH_DATASETS, plus the bundled sample)', collect, [])
    .option('--no-sample', 'leave out the bundled sample task')
    .option('--cache <dir>', 'pristine clone cache (default: ~/.cache/expbench/pristine)')
    .option('--json', 'print the result as JSON')
    .option('--check', 'exit 3 when the task cannot run here')
    .description('can this task run here? GPUs, packages the image lacks, data, expected run time')
    .action(async (id: string, opts) => {
      const { task } = await requireTask(id, opts);
      const ac = new AbortController();
      const onSigint = () => ac.abort();
      process.once('SIGINT', onSigint);
      try {
        const f = await checkFeasibility({
          task, source: opts.source, commit: opts.commit, image: opts.image, cacheDir: opts.cache, probe: opts.probe,
          probeTimeoutMs: opts.timeout !== undefined ? Math.round(opts.timeout * 1000) : undefined, signal: ac.signal,
        });
        if (opts.json) printJson(f);
        else {
          console.log(`${f.taskId}: ${f.summary}`);
          console.log(`  from ${f.from}${f.curationFile ? ` (${f.curationFile})` : ''}, image ${f.image}${f.commit ? `, requirements at ${f.commit.slice(0, 12)}` : ''}`);
          for (const n of f.needs) console.log(`  ${n.have === true ? 'ok     ' : n.have === false ? 'MISSING' : 'info   '} ${n.kind} ${n.what}: ${n.detail}  [${n.source}]`);
          for (const note of f.notes) console.log(`  note: ${note}`);
        }
        process.exitCode = opts.check && f.verdict === 'cannot-run' ? 3 : 0;
      } finally {
        process.removeListener('SIGINT', onSigint);
      }
    });
}
