import { promises as fsp } from 'node:fs';
import * as path from 'node:path';
import { judgeStep } from '../../src/core/flows/judge';
import type { JudgeRecord } from '../../src/core/judge/types';
import { bundledDatasetDir } from '../../src/core/paths';
import { SessionLayout } from '../../src/core/layout';
import { writeSessionMarker } from '../../src/core/session/marker';
import { submitAndScore } from '../../src/core/flows/submit';
import { findTask, loadDatasets } from '../../src/core/tasks/loader';
import type { Task } from '../../src/core/tasks/types';
import { prepareSession } from '../../src/core/workspace/prepare';

/**
 * A judged session of the bundled sample task `sample/toycal/0`, made with the real core
 * functions (prepare: pin + mask + "task start"; submit; heuristic judge, no verifier), with a
 * PARTIAL solution: `experiments/calibrate.py` (fit_temperature only, not the reference file) and
 * a `brier` function added to `toycal/metrics.py`. The heuristic judge then gives (checked by hand
 * with `expbench session submit`): requirements 2 and 5 partial, citing calibrate.py:1-6 and
 * metrics.py:16-26; requirements 1, 3, 4 and 6 unmet, citing nothing.
 */
export const SAMPLE_TASK_ID = 'sample/toycal/0';

export const CALIBRATE_PY = [
  '"""Fit a temperature on held-out logits (work in progress)."""',
  '',
  '',
  'def fit_temperature(logits, ys, nll):',
  '    grid = [0.5 + 0.05 * i for i in range(91)]',
  '    return min(grid, key=lambda t: nll(logits, ys, t))',
  '',
].join('\n');

const BRIER = `def brier(logits, ys, temperature=1.0):
    """Mean squared error of the predicted probability."""
    return sum((sigmoid(z / temperature) - y) ** 2 for z, y in zip(logits, ys)) / len(ys)


`;

export interface JudgedSession {
  root: string;
  layout: SessionLayout;
  task: Task;
  record: JudgeRecord;
}

/** Prepares a session in `root` (must not exist) and fills it with the partial solution; nothing submitted. */
export async function makePartialSampleSession(root: string, cacheDir: string): Promise<{ root: string; layout: SessionLayout; task: Task }> {
  const task = findTask(await loadDatasets([bundledDatasetDir()]), SAMPLE_TASK_ID);
  if (!task?.paper?.localRepo) throw new Error(`${SAMPLE_TASK_ID} (with its local repository) is not in ${bundledDatasetDir()}`);
  await prepareSession({ task, source: task.paper.localRepo, outDir: root, cacheDir });
  await writeSessionMarker(root, task);
  const layout = new SessionLayout(root);
  const ws = layout.workspace;
  await fsp.mkdir(path.join(ws, 'experiments'), { recursive: true });
  await fsp.writeFile(path.join(ws, 'experiments', 'calibrate.py'), CALIBRATE_PY);
  const metrics = path.join(ws, 'toycal', 'metrics.py');
  const text = await fsp.readFile(metrics, 'utf8');
  const anchor = 'def ece(logits, ys, temperature=1.0, n_bins=15):';
  if (!text.includes(anchor)) throw new Error(`${metrics} has no ${anchor}`);
  await fsp.writeFile(metrics, text.replace(anchor, BRIER + anchor));
  await fsp.writeFile(layout.script, '#!/usr/bin/env bash\nset -euo pipefail\ncd "$(dirname "$0")"\npython3 experiments/calibrate.py\n');
  return { root, layout, task };
}

/** Prepares, fills with the partial solution, submits and judges (heuristic) a session in `root` (must not exist). */
export async function makeJudgedSampleSession(root: string, cacheDir: string): Promise<JudgedSession> {
  const { layout, task } = await makePartialSampleSession(root, cacheDir);
  const answers = JSON.parse(await fsp.readFile(path.join(bundledDatasetDir(), '..', 'solutions', 'toy-calibration', 'answers.json'), 'utf8'));
  const r = await submitAndScore(layout, answers, { judge: judgeStep({ task }) });
  if (r.judge?.error) throw new Error(`judge failed: ${r.judge.error}`);
  const record = JSON.parse(await fsp.readFile(path.join(layout.judge, 'latest.json'), 'utf8')) as JudgeRecord;
  return { root, layout, task, record };
}
