import { Command } from 'commander';
import { lintTasks } from '../../core/curation/lint';
import { LINT_RULES, type LintReport } from '../../core/curation/types';
import { datasetDirs } from '../datasets';
import { printJson } from '../output';

/**
 * `expbench curate lint [DIR…] [--source URL|PATH] [--commit SHA] [--json] [--check]`: the task
 * lint (docs/curation.md). Exit codes: 0 the lint ran (findings or not); 2 an input could not be
 * read (a folder, a task file that is not JSON, the source); 1 with `--check` when a finding is
 * an error (2 wins over 1).
 */
export function register(program: Command): void {
  const curate = program.command('curate').description('curators\' tools: lint task files against their content and their repository');
  curate.command('lint').argument('[dirs...]', 'dataset folders or task files (default: $EXPBENCH_DATASETS, plus the bundled sample without --source)')
    .option('--source <url|path>', 'the paper\'s repository (git URL, local clone or folder): also run the repository rules, for every task linted (default: each paper\'s pin in its curation.jsonc)')
    .option('--commit <sha>', 'commit of --source the tasks hold at (default: its HEAD)')
    .option('--cache <dir>', 'pristine clone cache (default: ~/.cache/expbench/pristine)')
    .option('--no-sample', 'leave out the bundled sample task')
    .option('--json', 'print one JSON object {files, tasks, findings, counts, bySeverity, unreadable, repositories}')
    .option('--check', 'exit 1 when a finding is an error')
    .description('lint task files: file rules, and with --source the repository rules (docs/curation.md)')
    .action(async (dirs: string[], opts) => {
      const inputs = datasetDirs(dirs, { sample: opts.sample !== false && opts.source === undefined });
      const ac = new AbortController();
      const onSigint = () => { process.stderr.write('expbench: cancelling…\n'); ac.abort(); };
      process.once('SIGINT', onSigint);
      try {
        const r = await lintTasks({ inputs, source: opts.source, commit: opts.commit, cacheDir: opts.cache, signal: ac.signal });
        if (opts.json) printJson(r);
        else console.log(lintText(r));
        for (const u of r.unreadable) console.error(`expbench: ${u.input}: ${u.message}`);
        process.exitCode = r.unreadable.length > 0 ? 2 : opts.check && r.bySeverity.error > 0 ? 1 : 0;
      } finally {
        process.removeListener('SIGINT', onSigint);
      }
    });
}

/** The text form: one line per finding, then the counts per rule and a summary line. */
export function lintText(r: LintReport): string {
  const lines = r.findings.map((f) => `${f.severity.padEnd(7)} ${f.file}#${f.pointer} [${f.rule}] ${f.message}`);
  lines.push('', 'findings per rule:');
  for (const rule of Object.keys(LINT_RULES) as Array<keyof typeof LINT_RULES>) {
    if (r.counts[rule] > 0) lines.push(`  ${rule.padEnd(22)} ${String(r.counts[rule]).padStart(5)}`);
  }
  if (r.findings.length === 0) lines.push('  (none)');
  const repo = r.repositories.length === 0 ? ', file rules only'
    : `, repository rules at ${r.repositories.map((x) => `${x.commit.slice(0, 12)} of ${x.source}${x.paper ? ` (${x.paper}'s pin)` : ''}`).join(', ')}`;
  lines.push(`${r.tasks} tasks in ${r.files.length} files${repo}: ${r.findings.length} findings ` +
    `(error: ${r.bySeverity.error}, warning: ${r.bySeverity.warning}, info: ${r.bySeverity.info}), ${r.unreadable.length} unreadable inputs`);
  return lines.join('\n');
}
