import * as os from 'node:os';
import * as path from 'node:path';
import * as vscode from 'vscode';
import { ExpBenchError } from '../../core/errors';
import { validateTask, type ValidationRecord } from '../../core/flows/validateTask';
import { validatePlaced } from '../../core/flows/placedValidation';
import { curationFileFor, readCurationFile } from '../../core/curation/curationFile';
import { createPlacement } from '../../core/placement';
import { setting } from '../settings';
import { log } from '../../core/log';
import type { Task } from '../../core/tasks/types';
import { errorMessage } from '../../core/util/errors';
import { plural } from '../../core/util/plural';
import type { CommandSpec } from '../commands';
import { withCancellableProgress } from '../progress';
import { pickTask } from '../taskCommands';
import type { TaskStore } from '../taskStore';
import { GROUND_TRUTH_SCHEME } from './groundTruthView';

const logger = log('validateTask');

/** Options of `expbench.curation.validate` (all optional: without `run` the command asks). */
export interface ValidateCommandOptions {
  /** The command to run (`bash -c`, in the checkout's root); asked for when absent. */
  run?: string;
  /** Output folder; default `~/.expbench/validations/<task id with '-'>/<ISO time>`. */
  out?: string;
  source?: string;
  commit?: string;
  image?: string;
  /** Time limit of the run, seconds (over the curation file's). */
  timeoutSeconds?: number;
  /** Scratch folder cap, MiB (default 1024). */
  scratchMiB?: number;
  /** Pristine cache folder (default ~/.cache/expbench/pristine). */
  cacheDir?: string;
  /** Where to run (default: setting `expbench.curation.placement`): in this process, or through the local or Slurm placement. */
  placement?: 'direct' | 'local' | 'slurm';
  /** Slurm's partition (default: setting `expbench.curation.partition`). */
  partition?: string;
}

/** The curation file's time limit of a run, seconds (3600 without one, as the validator's default). */
async function curationTimeSeconds(task: Task): Promise<number> {
  return (await readCurationFile(curationFileFor(task.file)))?.curation?.environment?.limits?.timeSeconds ?? 3600;
}

/** What the command returns (tests read it): the record, its folder and the summary shown. */
export interface ValidateCommandResult {
  record: ValidationRecord;
  out: string;
  summary: string;
}

/**
 * "Validate Task by Running…" (`expbench.curation.validate`; issue 20, item 5, in VS Code): on a
 * task (tree row, task id, or the ground-truth document `expbench-gt:/<task>/Ground truth.md`),
 * asks for the command (prefilled with the last one run for that task; the usage instructions
 * shown as the prompt) unless `options.run` gives it, runs it on the unmasked checkout at the pin in
 * the task's environment ({@link validateTask}) under a cancellable progress notification, writes the
 * record (`validation.json` and the logs), and shows the result — exit, limits hit, claims found /
 * derived / not found — with "Open Record" and "Open Log". Refused in a solver's window: the run
 * reads the unmasked ground truth.
 * @returns the result, or undefined when refused, dismissed, cancelled or failed (the failure shown)
 */
export function validateTaskCommand(store: TaskStore, solverWindow: () => Promise<boolean>): CommandSpec {
  const lastRun = new Map<string, string>();
  return {
    id: 'expbench.curation.validate',
    async execute(arg?: unknown, options: ValidateCommandOptions = {}): Promise<ValidateCommandResult | undefined> {
      if (await solverWindow()) {
        void vscode.window.showWarningMessage('EXP-Bench: validating runs the unmasked ground truth, for curators; this window holds a task session, so it is not done here.');
        return undefined;
      }
      const task = await pickTask(store, taskArg(arg));
      if (!task) return undefined;
      const run = options.run ?? await askCommand(task, lastRun.get(task.id));
      if (!run) return undefined;
      lastRun.set(task.id, run);
      const out = path.resolve(options.out ?? path.join(os.homedir(), '.expbench', 'validations', task.id.replace(/\//g, '-'), new Date().toISOString().replace(/[:.]/g, '-')));
      try {
        const where = options.placement ?? setting('curation.placement');
        const partition = options.partition ?? (setting('curation.partition') || undefined);
        const record = where !== 'direct' ? await withCancellableProgress(`EXP-Bench: validating ${task.id} (${where} placement)`, async (report, signal) => {
          const placement = createPlacement(where === 'slurm' ? { kind: 'slurm', container: 'docker', ...(partition ? { partition } : {}) } : { kind: 'local' });
          try {
            return await validatePlaced({
              placement, task, out, partition: where === 'slurm' ? partition : undefined, signal, onStatus: report,
              timeSeconds: options.timeoutSeconds ?? (await curationTimeSeconds(task)),
              validateArgs: [
                '--run', run, ...store.dirs().flatMap((d) => ['--dataset', d]), '--no-sample',
                ...(options.source ? ['--source', options.source] : []), ...(options.commit ? ['--commit', options.commit] : []),
                ...(options.image ? ['--image', options.image] : []), ...(options.scratchMiB ? ['--scratch-mib', String(options.scratchMiB)] : []),
                ...(options.cacheDir ? ['--cache', options.cacheDir] : []),
              ],
            });
          } finally {
            placement.dispose();
          }
        }) : await withCancellableProgress(`EXP-Bench: validating ${task.id}`, (report, signal) => validateTask({
          task, run, out, source: options.source, commit: options.commit, image: options.image, cacheDir: options.cacheDir,
          ...(options.timeoutSeconds ? { limits: { timeoutMs: Math.round(options.timeoutSeconds * 1000) } } : {}),
          ...(options.scratchMiB ? { scratchBytes: Math.round(options.scratchMiB * 1024 * 1024) } : {}),
          signal, onStatus: report,
        }));
        const summary = validationSummary(record);
        logger.info(`${task.id}: ${summary} (${out})`);
        void showResult(record, out, summary);
        return { record, out, summary };
      } catch (e) {
        if (e instanceof ExpBenchError && e.code === 'CANCELLED') {
          void vscode.window.showInformationMessage(`EXP-Bench: the validation of ${task.id} was cancelled; nothing was recorded.`);
          return undefined;
        }
        logger.error(`validating ${task.id}: ${errorMessage(e)}`);
        void vscode.window.showErrorMessage(`EXP-Bench: cannot validate ${task.id}: ${errorMessage(e)}`);
        return undefined;
      }
    },
  };
}

/** A task id from the ground-truth document's URI; any other argument as given. */
function taskArg(arg: unknown): unknown {
  if (arg instanceof vscode.Uri && arg.scheme === GROUND_TRUTH_SCHEME) return arg.path.replace(/^\/|\/Ground truth\.md$/g, '');
  return arg;
}

async function askCommand(task: Task, last: string | undefined): Promise<string | undefined> {
  const hint = (task.usageInstructions || '').replace(/\s+/g, ' ').trim();
  const v = await vscode.window.showInputBox({
    title: `Validate ${task.id}: the command to run in the unmasked checkout at the pin`,
    prompt: hint ? `Usage instructions: ${hint.length > 300 ? `${hint.slice(0, 300)}…` : hint}` : 'The task has no usage instructions: give the ground-truth script chain.',
    placeHolder: 'bash -c command, run in the repository root (e.g. python3 train.py --quick)',
    value: last ?? '',
    ignoreFocusOut: true,
    validateInput: (s) => (s.trim() ? undefined : 'Give a command'),
  });
  return v?.trim() || undefined;
}

/**
 * One line for a validation record: how the run ended (exit code, or the limit that stopped it),
 * the limits hit (time, scratch folder full, a log cut at its cap), and the claims found, derived
 * and not found.
 */
export function validationSummary(r: ValidationRecord): string {
  const end = r.timedOut ? `stopped at the time limit (${r.limits.timeoutMs / 1000} s)` : `exit ${r.exitCode}${r.setupFailed ? ' in the environment\'s setup (the command was not run)' : ''}`;
  const hit = [r.diskFull ? `scratch folder full (${Math.round(r.scratchBytes / 1048576)} MiB)` : '', r.logTruncated ? 'a log cut at its cap' : ''].filter(Boolean);
  const found = r.claims.claims.filter((c) => c.found).length;
  const derived = r.claims.claims.filter((c) => !c.found && c.status === 'derived').length;
  const missing = r.claims.claims.length - found - derived;
  const claims = r.claims.claims.length === 0
    ? 'expected_outcome holds no number to check'
    : `claims: ${found} found, ${derived} derived, ${missing} not found`;
  return `${r.taskId} at ${r.commit.slice(0, 12)}: ${end} after ${(r.durationMs / 1000).toFixed(1)} s` +
    `${hit.length ? `; limits hit: ${hit.join(', ')}` : ''}; ${claims}` +
    `${r.changedFiles.length ? ` (${plural(r.changedFiles.length, 'file')} written)` : ''}`;
}

async function showResult(r: ValidationRecord, out: string, summary: string): Promise<void> {
  const ok = r.exitCode === 0 && r.claims.allProduced;
  const show = ok ? vscode.window.showInformationMessage : vscode.window.showWarningMessage;
  const pick = await show(`EXP-Bench: ${summary}`, 'Open Record', 'Open Log');
  if (pick === 'Open Record') await vscode.window.showTextDocument(vscode.Uri.file(path.join(out, 'validation.json')), { preview: false });
  else if (pick === 'Open Log') await vscode.window.showTextDocument(vscode.Uri.file(path.join(out, r.logs.combined)), { preview: false });
}
