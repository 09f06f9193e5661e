import * as assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { promises as fsp } from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { policyByName } from '../../src/core/metrics/policies';
import { importFiles } from '../../src/core/trajectory/import';
import type { Trajectory } from '../../src/core/trajectory/types';
import { triageRuns } from '../../src/core/viewer/triage';

const DATA = path.resolve(__dirname, '..', '..', '..', '..', 'shared', 'data', 'trajectories');
const CURIE = path.join(DATA, 'exp-bench', 'Just-Curieous__Curie', 'azure-gpt-4o');
const REC = '93022_task_index_0_iter_1_duration_0.67_eval_';

/**
 * An EXP-Bench harness record opened by one of its files (the viewer's "Open as Trajectory", the
 * triage table's "Add Trajectory File"): the record's other files beside it are read with it, so
 * the run has its task with the conference (from the config's `output_folder`), its agent and model
 * (config `agent_name`, `llm_name`) and the judge's scores, instead of `unknown/93022/0`, `unknown`
 * and no score. Only regular files of the same record are taken.
 */
describe('trajectory import: an EXP-Bench harness record opened by one of its files (issue 30)', function () {
  this.timeout(60_000);
  let tmp: string;
  before(async function () {
    if (!(await fsp.stat(CURIE).catch(() => undefined))) { console.log(`      (skipped: the shared EXP-Bench harness outputs are absent: ${path.basename(CURIE)})`); this.skip(); }
    tmp = await fsp.mkdtemp(path.join(os.tmpdir(), 'expbench-harness-'));
  });
  after(async () => { if (tmp) await fsp.rm(tmp, { recursive: true, force: true }); });

  it('the answers file alone gives the whole record: task with its conference, judge scores, agent and model in the triage row', async () => {
    const gen = path.join(CURIE, `${REC}gen.json`);
    const ts: Trajectory[] = [];
    const r = await importFiles([gen], (t) => { ts.push(t); });
    assert.deepEqual(r.files.map((f) => path.basename(f.file)), [path.basename(gen)], 'the files named, only');
    assert.equal(ts.length, 1);
    const t = ts[0];
    assert.equal(t.task, 'neurips2024/93022/0');
    assert.deepEqual(t.files?.map((f) => path.basename(f)).sort(), [`${REC}gen.json`, `${REC}gen.patch`, `${REC}gen_config_config.json`, `${REC}judge.json`].sort());
    assert.ok(t.problems.some((p) => p.severity === 'info' && /read with the record's files beside it: .*judge\.json/.test(p.message)), 'said where the rest came from');
    assert.ok(t.steps.some((s) => s.kind === 'score'), 'the judge\'s verdict is a step');
    const judge = JSON.parse(await fsp.readFile(path.join(CURIE, `${REC}judge.json`), 'utf8')) as Record<string, unknown>;

    const { rows } = await triageRuns([gen], policyByName('strict'));
    assert.equal(rows.length, 1);
    const row = rows[0];
    assert.deepEqual([row.task, row.agent, row.model, row.judge], ['neurips2024/93022/0', 'curie', 'azure-gpt-4o', 'llm']);
    // the scores are the judge file's (design_score and setup_score in percent, conclusion_score a word)
    assert.equal(typeof judge.design_score, 'number');
    assert.equal(row.D, (judge.design_score as number) / 100, `D ${row.D} vs design_score ${String(judge.design_score)}`);
    assert.equal(row.I, (judge.setup_score as number) / 100, `I ${row.I} vs setup_score ${String(judge.setup_score)}`);
    assert.equal(row.C, judge.conclusion_score === 'correct');
  });

  it('the judge file alone gives the same record; a record given whole is not read twice', async () => {
    const one: Trajectory[] = []; const all: Trajectory[] = [];
    await importFiles([path.join(CURIE, `${REC}judge.json`)], (t) => { one.push(t); });
    const names = ['gen.json', 'gen.patch', 'judge.json', 'gen_config_config.json'].map((n) => path.join(CURIE, `${REC}${n}`));
    await importFiles(names, (t) => { all.push(t); });
    assert.equal(one.length, 1); assert.equal(all.length, 1);
    assert.deepEqual(one[0].steps.map((s) => `${s.kind}:${s.text ?? ''}`), all[0].steps.map((s) => `${s.kind}:${s.text ?? ''}`));
    assert.ok(!all[0].problems.some((p) => /beside it/.test(p.message)), 'nothing taken from beside: all were named');
  });

  it('beside it, a link, a FIFO or another record\'s file is never taken', async () => {
    const dir = path.join(tmp, 'rec');
    await fsp.mkdir(dir);
    await fsp.writeFile(path.join(dir, '7_task_index_0_iter_1_duration_1_eval_gen.json'), JSON.stringify({ design: 'd', conclusion: 'c' }));
    // a judge file that is a link to a real one, a FIFO as the patch, the next task's judge file
    await fsp.symlink(path.join(CURIE, `${REC}judge.json`), path.join(dir, '7_task_index_0_iter_1_duration_1_eval_judge.json'));
    execFileSync('mkfifo', [path.join(dir, '7_task_index_0_iter_1_duration_1_eval_gen.patch')]);
    await fsp.copyFile(path.join(CURIE, `${REC}judge.json`), path.join(dir, '7_task_index_1_iter_1_duration_1_eval_judge.json'));
    const ts: Trajectory[] = [];
    await importFiles([path.join(dir, '7_task_index_0_iter_1_duration_1_eval_gen.json')], (t) => { ts.push(t); });
    assert.equal(ts.length, 1, 'one record: the other task\'s judge file is not pulled in');
    assert.deepEqual(ts[0].files?.map((f) => path.basename(f)), ['7_task_index_0_iter_1_duration_1_eval_gen.json']);
    assert.ok(!ts[0].steps.some((s) => s.kind === 'score'), 'the linked judge file is not read');
    assert.ok(ts[0].problems.some((p) => /no judge file/.test(p.message)));
  });
});
