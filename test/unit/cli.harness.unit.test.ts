import * as assert from 'node:assert/strict';
import { promises as fsp } from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { collectOutcomes } from '../../src/core/interop/collect';
import { parseHarnessJudgeName } from '../../src/core/interop/harnessLayout';
import { cli, ROOT } from './cli.helpers';

/**
 * `expbench report` on the reference harness's own judge files (issue 15), the real ones of
 * ../shared/data/trajectories/exp-bench/ (Just-Curieous/Curie `benchmark/exp_bench/outputs/evaluation/`):
 * named `<paperId>_task_index_<i>_iter_<k>_duration_<h>_eval_judge.json`, they are read as task
 * `<conference>/<paperId>/<i>` and grouped by agent and model, as the harness lays them out.
 */
const REAL = path.resolve(ROOT, '..', 'shared', 'data', 'trajectories', 'exp-bench');
const REAL_FILES = path.join(REAL, 'Just-Curieous__Curie', 'azure-gpt-4o');
const DATASET = path.resolve(ROOT, '..', 'shared', 'data', 'exp-bench');
const judgeName = (i: number, k = 1) => `93022_task_index_${i}_iter_${k}_duration_0.67_eval_judge.json`;
const IDS = ['neurips2024/93022/0', 'neurips2024/93022/1', 'neurips2024/93022/2', 'neurips2024/93022/3'];

describe('report on the reference harness\'s judge files (real files)', function () {
  this.timeout(120_000);
  let tmp: string;
  before(async () => { tmp = await fsp.mkdtemp(path.join(os.tmpdir(), 'expbench-harness-files-')); });
  after(async () => { await fsp.rm(tmp, { recursive: true, force: true }); });

  async function copyJudgeFiles(to: string, iteration = 1): Promise<void> {
    await fsp.mkdir(to, { recursive: true });
    for (let i = 0; i < 4; i++) await fsp.copyFile(path.join(REAL_FILES, judgeName(i)), path.join(to, judgeName(i, iteration)));
  }

  it('parses the harness file name and the folders …/<paperId>/<agent>/<model>/', () => {
    assert.deepEqual(parseHarnessJudgeName(`/x/outputs/evaluation/neurips2024/93022/curie/azure-gpt-4o/${judgeName(2, 3)}`),
      { paperId: '93022', index: 2, iteration: 3, conference: 'neurips2024', agent: 'curie', model: 'azure-gpt-4o', from: 'path' });
    assert.deepEqual(parseHarnessJudgeName(path.join(REAL_FILES, judgeName(0))), { paperId: '93022', index: 0, iteration: 1, from: 'name' });
    assert.equal(parseHarnessJudgeName('/x/93022_eval_judge.json'), undefined);
  });

  it('the real folder as it is: task ids and the row curie/azure-gpt-4o from the harness config files beside (dist/cli.js)', async () => {
    const r = await cli(['report', REAL, '--json']);
    assert.equal(r.code, 0, r.stderr);
    const j = JSON.parse(r.stdout);
    assert.deepEqual(j.tasks.map((t: { taskId: string }) => t.taskId), IDS);
    // llm_name is "azure-gpt-4o" in one config and "azure/gpt-4o" in three: one row, the model folder's form.
    assert.deepEqual(j.rows.map((x: { group: string; tasks: number }) => [x.group, x.tasks]), [['curie/azure-gpt-4o', 4]]);
    // design_score / setup_score of the four files (50/30, 14/0, 86/30, 88/0), all conclusions "incorrect".
    assert.deepEqual(j.tasks.map((t: { D: number; I: number; correct: { C: boolean } }) => [t.D, t.I, t.correct.C]),
      [[0.5, 0.3, false], [0.14, 0, false], [0.86, 0.3, false], [0.88, 0, false]]);
    assert.deepEqual(j.skipped, []);
  });

  it('laid out as the harness writes them: conference, agent and model from the folders; later iterations get their own row', async () => {
    const base = path.join(tmp, 'outputs', 'evaluation', 'neurips2024', '93022', 'curie', 'azure-gpt-4o');
    await copyJudgeFiles(base);
    await copyJudgeFiles(base, 2);
    const { outcomes } = await collectOutcomes([path.join(tmp, 'outputs')]);
    const got = outcomes.map((o) => `${o.group} ${o.taskId}`).sort();
    assert.deepEqual(got, [...IDS.map((id) => `curie/azure-gpt-4o ${id}`), ...IDS.map((id) => `curie/azure-gpt-4o iter 2 ${id}`)].sort());
    assert.ok(outcomes.every((o) => o.paperId === '93022'));
  });

  it('with no conference in the folders and no config: from the dataset (--dataset), else "unknown"; the row is the folder', async () => {
    const flat = path.join(tmp, 'flat-run');
    await copyJudgeFiles(flat);
    const withDataset = JSON.parse((await cli(['report', flat, '--dataset', DATASET, '--json'])).stdout);
    assert.deepEqual(withDataset.tasks.map((t: { taskId: string; group: string }) => `${t.group} ${t.taskId}`), IDS.map((id) => `flat-run ${id}`));
    const without = JSON.parse((await cli(['report', flat, '--json'])).stdout);
    assert.deepEqual(without.tasks.map((t: { taskId: string }) => t.taskId), IDS.map((id) => id.replace('neurips2024', 'unknown')));
  });
});
