import * as path from 'node:path';
import { bundledDatasetDir } from '../core/paths';

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
