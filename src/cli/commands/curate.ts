import * as path from 'node:path';
import { Command, InvalidArgumentError } from 'commander';
import { ExpBenchError } from '../../core/errors';
import { validateTask, type ValidationRecord } from '../../core/flows/validateTask';
import { validatePlaced } from '../../core/flows/placedValidation';
import { buildEnvironmentImage } from '../../core/flows/buildEnvImage';
import { createPlacement, PlacementSpecSchema, type PlacementSpec } from '../../core/placement';
import { curationFileFor, readCurationFile } from '../../core/curation/curationFile';
import { findTask, loadDatasets } from '../../core/tasks/loader';
import { lintTasks } from '../../core/curation/lint';
import { LINT_RULES, type LintReport } from '../../core/curation/types';
import { datasetDirs } from '../datasets';
import { printJson } from '../output';
import { registerReview } from './curateReview';
import { plural } from '../../core/util/plural';

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
  registerValidate(curate);
  curate.command('build-env').argument('<id>', 'task id: its paper\'s curation file names the image (environment.baseImage) and its Debian packages')
    .option('--force', 'rebuild even when the image is present')
    .option('--dataset <dir>', 'dataset folder (repeatable; default: $EXPBENCH_DATASETS, plus the bundled sample)', collect, [])
    .option('--no-sample', 'leave out the bundled sample task')
    .option('--json', 'print {image, curationFile, packages, built}')
    .description('build a task\'s missing environment image from its curation file (bash sandbox/build-env.sh --tag IMAGE PKG…)')
    .action(async (id: string, opts) => {
      const dirs = datasetDirs(undefined, opts);
      const task = findTask(await loadDatasets(dirs), id);
      if (!task) throw new ExpBenchError('TASK_NOT_FOUND', id, `no such task in ${dirs.join(', ')}`);
      const ac = new AbortController();
      const onSigint = () => { process.stderr.write('expbench: cancelling…\n'); ac.abort(); };
      process.once('SIGINT', onSigint);
      try {
        const r = await buildEnvironmentImage({ task, force: !!opts.force, signal: ac.signal, onLine: (l) => { if (!opts.json) console.error(l); } });
        if (opts.json) printJson({ image: r.image, curationFile: r.curationFile, packages: r.packages, built: r.built });
        else console.log(r.built ? `${r.image}: built from ${r.curationFile} (${r.packages.join(' ')})` : `${r.image}: present; nothing built (--force rebuilds)`);
      } finally {
        process.removeListener('SIGINT', onSigint);
      }
    });
  registerReview(curate);
}

const collect = (v: string, acc: string[]) => [...acc, v];
const positive = (name: string) => (v: string) => {
  const n = Number(v);
  if (!(n > 0) || !Number.isFinite(n)) throw new InvalidArgumentError(`${name} must be a positive number, got "${v}"`);
  return n;
};

/**
 * `expbench curate validate ID [--source …] [--commit …] --run CMD --out DIR [--json]`: runs the
 * curator-confirmed command on the unmasked checkout at the pin, in the task's environment
 * (src/core/flows/validateTask.ts, docs/curation.md "Validate by running"). Without `--run`, prints
 * the task's usage instructions as the suggestion and exits 2. Exit 0 when the run was recorded
 * (whatever its result); with `--check`, 1 unless it exited 0 and every claim was found or derived.
 */
function registerValidate(curate: Command): void {
  curate.command('validate').argument('<id>', 'task id <conference>/<paperId>/<index>')
    .option('--run <command>', 'the command to run (bash -c) in the checkout\'s root: the usage instructions or the ground-truth script chain, as the curator confirmed it')
    .option('--out <dir>', 'output folder: validation.json and the logs')
    .option('--source <url|path>', 'the paper\'s repository (default: the curation file\'s, else the task\'s code_url)')
    .option('--commit <sha>', 'commit (default: the curation file\'s pin, else the source\'s HEAD)')
    .option('--image <tag>', 'image (default: the curation file\'s baseImage, else expbench/sandbox:1)')
    .option('--timeout <seconds>', 'time limit of the run (default: the curation file\'s, else 3600)', positive('--timeout'))
    .option('--scratch-mib <MiB>', 'size cap of the scratch folder holding the checkout and the run\'s files (default 1024)', positive('--scratch-mib'))
    .option('--dataset <dir>', 'dataset folder (repeatable; default: $EXPBENCH_DATASETS, plus the bundled sample)', collect, [])
    .option('--no-sample', 'leave out the bundled sample task')
    .option('--cache <dir>', 'pristine clone cache (default: ~/.cache/expbench/pristine)')
    .option('--json', 'print the record as JSON')
    .option('--check', 'exit 1 unless the command exited 0 and every claim was found or derived')
    .option('--placement <kind>', 'run the validation where a placement puts it (docs/placement.md): local (a process on this machine) or slurm (a batch job), with the curation file\'s resources')
    .option('--partition <name>', 'with --placement slurm: the Slurm partition (default: the cluster\'s)')
    .description('validate a task by running its ground truth at the pin, in its environment, and checking expected_outcome\'s numbers')
    .action(async (id: string, opts) => {
      const dirs = datasetDirs(undefined, opts);
      const task = findTask(await loadDatasets(dirs), id);
      if (!task) throw new ExpBenchError('TASK_NOT_FOUND', id, `no such task in ${dirs.join(', ')}`);
      if (opts.run === undefined || opts.out === undefined) {
        console.error(`expbench: give the command to run (--run) and an output folder (--out). The task's usage instructions suggest:\n${task.usageInstructions || '(none)'}`);
        process.exitCode = 2;
        return;
      }
      const ac = new AbortController();
      const onSigint = () => { process.stderr.write('expbench: cancelling…\n'); ac.abort(); };
      process.once('SIGINT', onSigint);
      try {
        if (opts.placement !== undefined || opts.partition !== undefined) {
          const placement = createPlacement(placementSpec(opts.placement, opts.partition));
          try {
            const r = await validatePlaced({
              placement, task, out: path.resolve(opts.out), partition: opts.partition, signal: ac.signal,
              timeSeconds: opts.timeout ?? (await validationTimeSeconds(task)),
              validateArgs: [
                '--run', opts.run, ...dirs.flatMap((d) => ['--dataset', d]), '--no-sample',
                ...(opts.source ? ['--source', opts.source] : []), ...(opts.commit ? ['--commit', opts.commit] : []),
                ...(opts.image ? ['--image', opts.image] : []), ...(opts.scratchMib !== undefined ? ['--scratch-mib', String(opts.scratchMib)] : []),
                ...(opts.cache ? ['--cache', path.resolve(opts.cache)] : []),
              ],
              onStatus: (m) => { if (!opts.json) console.error(`expbench: ${m}`); },
            });
            if (opts.json) printJson(r);
            else console.log(`${validationText(r)}\n  placed: ${r.placement.kind} ${r.placement.id}${r.placement.host ? ` on ${r.placement.host}` : ''}${r.placement.partition ? `, partition ${r.placement.partition}` : ''}`);
            process.exitCode = opts.check && !(r.exitCode === 0 && r.claims.allProduced) ? 1 : 0;
          } finally {
            placement.dispose();
          }
          return;
        }
        const r = await validateTask({
          task, run: opts.run, out: opts.out, source: opts.source, commit: opts.commit, image: opts.image, cacheDir: opts.cache,
          ...(opts.timeout !== undefined ? { limits: { timeoutMs: Math.round(opts.timeout * 1000) } } : {}),
          ...(opts.scratchMib !== undefined ? { scratchBytes: Math.round(opts.scratchMib * 1024 * 1024) } : {}),
          signal: ac.signal, onStatus: (m) => { if (!opts.json) console.error(`expbench: ${m}`); },
        });
        if (opts.json) printJson(r);
        else console.log(validationText(r));
        process.exitCode = opts.check && !(r.exitCode === 0 && r.claims.allProduced) ? 1 : 0;
      } finally {
        process.removeListener('SIGINT', onSigint);
      }
    });
}

/**
 * The placement `--placement KIND [--partition P]` names, checked by the run sets' schema.
 * @throws ExpBenchError BAD_INPUT naming `--placement` for a kind this build does not have, or `--partition` without slurm
 */
export function placementSpec(kind: string | undefined, partition: string | undefined): PlacementSpec {
  if (kind === undefined) throw new ExpBenchError('BAD_INPUT', '--partition', 'goes with --placement slurm');
  if (partition !== undefined && kind !== 'slurm') throw new ExpBenchError('BAD_INPUT', '--partition', `goes with --placement slurm, not ${kind}`);
  const raw = kind === 'slurm' ? { kind, container: 'docker', ...(partition ? { partition } : {}) } : { kind };
  const r = PlacementSpecSchema.safeParse(raw);
  if (!r.success) throw new ExpBenchError('BAD_INPUT', `--placement ${kind}`, `not a placement of this build (${r.error.issues.map((i) => `${i.path.join('.') || 'kind'}: ${i.message}`).join('; ')})`);
  return r.data;
}

/** The validation's time limit: the curation file's `environment.limits.timeSeconds`, else 3600 s (validateTask's default). */
async function validationTimeSeconds(task: { file: string }): Promise<number> {
  return (await readCurationFile(curationFileFor(task.file)))?.curation?.environment?.limits?.timeSeconds ?? 3600;
}

/** The text form of a validation record: the run's end, then one line per claim. */
export function validationText(r: ValidationRecord): string {
  const end = r.timedOut ? `stopped at the time limit (${r.limits.timeoutMs / 1000} s)` : `exit ${r.exitCode}${r.setupFailed ? ' in the environment\'s setup (the command was not run)' : ''}`;
  const lines = [`${r.taskId} at ${r.commit.slice(0, 12)} of ${r.source} in ${r.image}: ${end} after ${(r.durationMs / 1000).toFixed(1)} s` +
    `${r.diskFull ? `, scratch folder full (cap ${r.scratchBytes} bytes)` : ''}`];
  for (const c of r.claims.claims) {
    const st = c.found ? 'found    ' : c.status === 'derived' ? 'derived  ' : 'NOT FOUND';
    const w = c.where?.[0];
    lines.push(`  ${st} ${c.text}${w ? `  (${w.source}:${w.line})` : ''}`);
  }
  if (r.claims.note) lines.push(`  ${r.claims.note}`);
  return lines.join('\n');
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
    : `, repository rules at ${r.repositories.map((x) => `${x.commit.slice(0, 12)} of ${x.source}${x.paper ? ` (${x.paper}'s pin)` : ''}${x.absent ? ` (${plural(x.absent, 'file')} absent from its object store: not scanned)` : ''}`).join(', ')}`;
  lines.push(`${plural(r.tasks, 'task')} in ${plural(r.files.length, 'file')}${repo}: ${plural(r.findings.length, 'finding')} ` +
    `(error: ${r.bySeverity.error}, warning: ${r.bySeverity.warning}, info: ${r.bySeverity.info}), ${plural(r.unreadable.length, 'unreadable input')}`);
  return lines.join('\n');
}
