import * as path from 'node:path';
import { bundledDatasetDir } from '../core/paths';

/**
 * The dataset folders a CLI command reads: the DIR arguments or `--dataset` options when given,
 * else `EXPBENCH_DATASETS` (folders separated by the platform's path delimiter); the bundled
 * sample dataset is always added unless `--no-sample` was given.
 */
export function datasetDirs(args: string[] | undefined, opts: { dataset?: string[]; sample?: boolean }): string[] {
  const given = [...(args ?? []), ...(opts.dataset ?? [])];
  const fromEnv = (process.env.EXPBENCH_DATASETS ?? '').split(path.delimiter).filter(Boolean);
  const dirs = given.length > 0 ? given : fromEnv;
  const withSample = opts.sample === false ? dirs : [...dirs, bundledDatasetDir()];
  return [...new Set(withSample.map((d) => path.resolve(d)))];
}
