import * as path from 'node:path';
import type { Command } from 'commander';
import { ExpBenchError } from '../../core/errors';
import { importSession } from '../../core/flows/importSession';
import { judgeStep } from '../../core/flows/judge';
import { verifyStep } from '../../core/flows/verify';
import { findTask, loadDatasets } from '../../core/tasks/loader';
import { datasetDirs } from '../datasets';
import { printJson } from '../output';
import { cancelOnStopSignals } from '../signals';
import { endpointFromEnv } from './judge';
import { plural } from '../../core/util/plural';

const collect = (v: string, acc: string[]) => [...acc, v];

/**
 * `expbench session import FILE… --task ID [--source URL|PATH] [--commit SHA] --out DIR [--json]`:
 * Import as Session (src/core/flows/importSession.ts). The files are one agent run: an EXP-Bench
 * harness record (its `_eval_gen.json`, `.patch`, `_eval_judge.json`, config), or a trajectory of
 * any known format with, optionally, a patch file. The session is prepared, the patch applied, the
 * steps recorded, then submitted, verified (clean mode) and judged (the LLM judge when the
 * environment configures one, see `expbench judge`; else the heuristic pre-judge).
 * Exit 0 when the session was made (problems or not; they are listed), 1 when it was not.
 */
export function registerImport(session: Command): void {
  session.command('import').argument('<files...>', "an agent run's files (trajectory, harness record, patch)")
    .requiredOption('--task <id>', 'the task the run attempted, <conference>/<paperId>/<index>')
    .requiredOption('--out <dir>', 'session folder to create (must not exist or be empty)')
    .option('--source <url|path>', "the paper's repository (default: the curation file's, else the task's code_url)")
    .option('--commit <sha>', 'commit to pin (default: the one the record names, else as for prepare)')
    .option('--id <trajectory>', 'the trajectory to import when the files hold several (default: the one of --task)')
    .option('--dataset <dir>', 'dataset folder (repeatable; default: $EXPBENCH_DATASETS, plus the bundled sample)', collect, [])
    .option('--cache <dir>', 'pristine clone cache (default: ~/.cache/expbench/pristine)')
    .option('--image <tag>', 'sandbox image (default: the curation file\'s, else expbench/sandbox:1)')
    .option('--no-verify', 'do not run the verifier')
    .option('--no-judge', 'do not run the judge')
    .option('--json', 'print the import record as JSON')
    .description('turn an agent run into a session (answers, git-form patch, steps), then verify and judge it')
    .action(async (files: string[], opts) => {
      const dirs = datasetDirs(undefined, opts);
      const task = findTask(await loadDatasets(dirs), opts.task);
      if (!task) throw new ExpBenchError('TASK_NOT_FOUND', opts.task, `no such task in ${dirs.join(', ')}`);
      const ac = cancelOnStopSignals((sig) => `${sig}: cancelling the import (the half-made session is removed)…`);
      try {
        const r = await importSession({
          files, task, trajectoryId: opts.id, source: opts.source, commit: opts.commit, outDir: path.resolve(opts.out),
          cacheDir: opts.cache, image: opts.image, signal: ac.signal,
          ...(opts.verify ? { verify: verifyStep() } : {}),
          ...(opts.judge ? { judge: judgeStep({ task, endpoint: endpointFromEnv() }) } : {}),
          onProgress: (p) => process.stderr.write(`${p.step}: ${p.message}\n`),
        });
        if (opts.json) { printJson(r); return; }
        console.log(`imported ${r.trajectory.format} ${r.trajectory.id} as ${r.taskId} into ${r.sessionDir}`);
        console.log(`  commit   ${r.commit.sha} (${r.commit.from})`);
        console.log(`  steps    ${r.trajectory.steps}`);
        console.log(`  patch    ${plural(r.patch.files.length, 'file')}: ${r.patch.applied} applied, ${r.patch.failed} refused by git apply, ${r.patch.cut} cut${r.patch.strippedPrefixes.length ? `; stripped ${r.patch.strippedPrefixes.join(', ')}` : ''}`);
        for (const [name, s] of [['verify', r.submission?.verify], ['judge', r.submission?.judge]] as const) {
          if (s) console.log(`  ${name.padEnd(8)} ${s.ok ? 'ok' : 'failed'}${s.summary ? `: ${s.summary}` : ''}${s.error ? `: ${s.error}` : ''}`);
        }
        if (r.execution) {
          console.log(`  E        ${r.execution.E === null ? 'not verified' : String(r.execution.E)}`);
          for (const why of r.execution.reasons) console.log(`    - ${why}`);
        }
        for (const p of r.problems) console.log(`${p.severity.padEnd(7)} ${p.file}${p.line ? `:${p.line}` : ''}${p.pointer ? `#${p.pointer}` : ''} ${p.message}`);
      } finally {
        ac.dispose();
      }
    });
}
