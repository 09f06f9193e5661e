import { createHash } from 'node:crypto';
import { promises as fsp } from 'node:fs';
import * as path from 'node:path';
import { curationFileFor, readCurationFile } from '../curation';
import { VALIDATION_RECORD } from '../curation/validations';
import { ExpBenchError } from '../errors';
import { log } from '../log';
import type { Placement, PlacementRef, PlacementState, Resources } from '../placement';
import type { Task } from '../tasks/types';
import { readJsonIfExists, writeJsonAtomic } from '../util/fs';
import type { ValidationRecord } from './validateTask';

const logger = log('validate.placed');

/** A validation record as placed: where it ran (added to `validation.json` by {@link validatePlaced}). */
export interface PlacedValidationRecord extends ValidationRecord {
  placement: { kind: string; id: string; host?: string; partition?: string; log: string };
}

/** Options of {@link validatePlaced}. */
export interface PlacedValidationOptions {
  placement: Placement;
  task: Task;
  /**
   * The arguments of `curate validate` the placed process gets after the task id (`--run CMD`,
   * `--dataset DIR`…, never `--out` or `--placement`): it runs the validation itself, in the
   * task's environment, where the placement put it.
   */
  validateArgs: string[];
  /** Output folder (absolute; created): the record, the logs, and `placement.log` (the placed process's output). */
  out: string;
  /** The time limit the validation gets, seconds (the unit gets 10 minutes more for the checkout). */
  timeSeconds: number;
  /** Slurm's partition, recorded with the placement. */
  partition?: string;
  /** Environment variables the placed process gets from this one (when set). */
  passEnv?: string[];
  signal?: AbortSignal;
  /** Between two polls of the engine, ms (default 1000). */
  pollMs?: number;
  onStatus?: (message: string) => void;
}

/** Environment the placed CLI needs to find the datasets, the store, the engine and its own tools. */
const DEFAULT_PASS_ENV = ['EXPBENCH_DATASETS', 'DOCKER_HOST', 'HOME', 'PATH'];

/**
 * The resources of a task's validation from its curation file's `environment` (docs/curation.md
 * "Curation file"): `limits.cpus` (default 1), `limits.memoryMiB` (default 2048), `gpus` (default
 * 0), and `timeSeconds` plus 600 s for the checkout and the claims check.
 */
export async function validationResources(task: Task, timeSeconds: number): Promise<Resources> {
  const env = (await readCurationFile(curationFileFor(task.file)))?.curation?.environment;
  return { cpus: env?.limits?.cpus ?? 1, memoryMiB: env?.limits?.memoryMiB ?? 2048, gpus: env?.gpus ?? 0, timeSeconds: timeSeconds + 600 };
}

/**
 * Validates a task by running where a placement puts it (issue 31, item 4): one unit whose
 * process is the project's CLI, `expbench curate validate ID … --out OUT`, handed to the
 * placement (`local`: a child process on this machine; `slurm`: a batch job) with the task's
 * resources ({@link validationResources}). Waits, polling the engine, until the unit ended, then
 * reads the record the placed process wrote and adds where it ran (`placement`). Cancelled
 * (`signal`): the unit is cancelled through the placement and its containers removed.
 * @throws ExpBenchError `CANCELLED`; `CONTAINER_FAILED` naming `placement.log` (its last lines
 *   quoted) when the unit ended without a record; what the placement throws (a unit that can never fit)
 */
export async function validatePlaced(o: PlacedValidationOptions): Promise<PlacedValidationRecord> {
  const out = path.resolve(o.out);
  await fsp.mkdir(out, { recursive: true });
  const logFile = path.join(out, 'placement.log');
  const stamp = new Date().toISOString();
  const unit = createHash('sha256').update(`${o.task.id}\0${out}\0${stamp}`).digest('hex').slice(0, 16);
  const runSet = `validate-${unit}`;
  const resources = await validationResources(o.task, o.timeSeconds);
  const [ref] = await o.placement.submit([{
    runSet, unit, name: `validate ${o.task.id}`, args: ['curate', 'validate', o.task.id, ...o.validateArgs, '--timeout', String(o.timeSeconds), '--out', out],
    resources, logFile, cwd: out, passEnv: o.passEnv ?? DEFAULT_PASS_ENV,
  }], { throttle: 1 });
  o.onStatus?.(`placed on ${o.placement.kind} (${ref.id}); needs ${resources.cpus} CPU(s), ${resources.memoryMiB} MiB, ${resources.gpus} GPU(s), ${resources.timeSeconds} s`);
  let state: PlacementState | undefined;
  let current: PlacementRef = ref;
  let said = '';
  for (;;) {
    if (o.signal?.aborted) {
      await o.placement.cancel(runSet, [current]).catch((e: unknown) => logger.warn(`cancelling ${current.id}: ${String(e)}`));
      throw new ExpBenchError('CANCELLED', o.task.id, 'the placed validation was cancelled');
    }
    [state] = await o.placement.poll([current]);
    current = state.ref;
    const now = `${state.phase}${state.reason ? ` (${state.reason})` : ''}${state.host ? ` on ${state.host}` : ''}`;
    if (now !== said) { o.onStatus?.(`${current.id}: ${now}`); said = now; }
    if (state.phase === 'ended') break;
    await sleep(o.pollMs ?? 1000, o.signal);
  }
  const file = path.join(out, VALIDATION_RECORD);
  const record = await readJsonIfExists<ValidationRecord>(file);
  if (!record) {
    const tail = (await o.placement.log(current, 4096).catch(() => '')).trim().split('\n').slice(-8).join('\n');
    throw new ExpBenchError('CONTAINER_FAILED', logFile, `the placed validation ended (${state.end ?? 'ended'}${state.exitCode !== undefined ? `, exit ${state.exitCode}` : ''}) without a record${tail ? `; its log ends:\n${tail}` : ''}`);
  }
  const placed: PlacedValidationRecord = {
    ...record,
    placement: { kind: o.placement.kind, id: current.id, ...(state.host ? { host: state.host } : {}), ...(o.partition ? { partition: o.partition } : {}), log: path.basename(logFile) },
  };
  await writeJsonAtomic(file, placed);
  return placed;
}

function sleep(ms: number, signal?: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    const t = setTimeout(resolve, ms);
    signal?.addEventListener('abort', () => { clearTimeout(t); resolve(); }, { once: true });
  });
}
