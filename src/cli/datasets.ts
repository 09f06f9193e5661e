import * as path from 'node:path';
import { ExpBenchError } from '../core/errors';
import { bundledDatasetDir } from '../core/paths';
import { findTask, loadDatasets } from '../core/tasks/loader';
import type { Task } from '../core/tasks/types';

/**
 * The dataset folders a CLI command reads: the DIR arguments or `--dataset` options when given,
 * else `EXPBENCH_DATASETS` (folders separated by the platform's path delimiter). The bundled
 * sample dataset is added unless `--no-sample` was given; with `sample: 'unless-given'` (the
 * listing commands `tasks list` / `tasks validate`) it is added only when no folder was given on
 * the command line, so that `tasks validate DIR` lists DIR's tasks and nothing else.
 */
export function datasetDirs(args: string[] | undefined, opts: { dataset?: string[]; sample?: boolean },
  mode: { sample: 'always' | 'unless-given' } = { sample: 'always' }): string[] {
  const given = [...(args ?? []), ...(opts.dataset ?? [])];
  const fromEnv = (process.env.EXPBENCH_DATASETS ?? '').split(path.delimiter).filter(Boolean);
  const dirs = given.length > 0 ? given : fromEnv;
  const addSample = opts.sample !== false && (mode.sample === 'always' || given.length === 0);
  const withSample = addSample ? [...dirs, bundledDatasetDir()] : dirs;
  return [...new Set(withSample.map((d) => path.resolve(d)))];
}

/**
 * The task `id` among the dataset folders of {@link datasetDirs} (`--dataset`, `--no-sample`,
 * `EXPBENCH_DATASETS`), with the folders read.
 * @throws ExpBenchError TASK_NOT_FOUND naming `id` and the folders searched
 */
export async function requireTask(id: string, opts: { dataset?: string[]; sample?: boolean }): Promise<{ task: Task; dirs: string[] }> {
  const dirs = datasetDirs(undefined, opts);
  const task = findTask(await loadDatasets(dirs), id);
  if (!task) throw new ExpBenchError('TASK_NOT_FOUND', id, `no such task in ${dirs.join(', ')}`);
  return { task, dirs };
}
