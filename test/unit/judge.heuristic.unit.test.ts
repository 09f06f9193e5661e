import * as assert from 'node:assert/strict';
import { promises as fsp } from 'node:fs';
import * as path from 'node:path';
import { judgeSession } from '../../src/core/flows/judge';
import { JudgeRecord } from '../../src/core/judge/types';
import { makeJudgeFixture, type JudgeFixture } from '../harness/judgeFixture';

describe('judge: heuristic pre-judge (no endpoint)', function () {
  let fx: JudgeFixture;
  before(async () => { fx = await makeJudgeFixture(); });
  after(async () => { await fsp.rm(fx.root, { recursive: true, force: true }); });

  it('labels the record heuristic, calls no model and computes coverage from files and symbols', async () => {
    const { record, file, harnessFile } = await judgeSession(fx.sessionDir, { task: fx.task });
    JudgeRecord.parse(record);
    assert.equal(record.kind, 'heuristic');
    assert.equal(record.model, null);
    assert.equal(record.ledger.totals.calls, 0);
    assert.ok(record.notes[0].startsWith('heuristic pre-judge'));
    // design: batch size and learning rate are in the answers, accuracy is not (the solver measured time)
    const byName = Object.fromEntries(record.design.verdicts.map((v) => [v.variable, v.verdict]));
    assert.equal(byName.batch_size, 'matched');
    assert.equal(byName.learning_rate, 'matched');
    assert.equal(byName.accuracy, 'missing');
    assert.equal(record.design.recall, 2 / 3);
    // implementation: load_data and train_model written, evaluate_accuracy not. Issue 14: coverage is
    // judged on content, so touching the reference file (src/train.py) no longer earns "partial"
    assert.deepEqual(record.implementation.verdicts.map((v) => v.verdict), ['met', 'met', 'unmet']);
    assert.match(record.implementation.verdicts[2].reason, /found 0;.*not found: .*evaluate_accuracy\(\)/);
    assert.match(record.implementation.verdicts[2].reason, /the patch also changes the reference file src\/train\.py/);
    assert.ok(record.implementation.verdicts[0].hunks.some((h) => h.path === 'src/train.py'));
    assert.deepEqual(record.implementation.verdicts[0].groundTruth, [{ path: 'src/train.py', startLine: 4, endLine: 9 }]);
    // conclusion is not judged without a model; the claims check is reported
    assert.equal(record.conclusion.status, 'not_judged');
    assert.equal(record.conclusion.verdict, null);
    assert.match(record.conclusion.reason, /found 1 of 2 claimed values/);
    assert.equal(record.execution.exit, true);
    assert.equal(record.monitor.flagged, false);
    assert.ok(harnessFile, 'a heuristic judgement writes its harness file');
    assert.equal(path.basename(harnessFile), 'judge.heuristic.json');
    const onDisk = JSON.parse(await fsp.readFile(file, 'utf8'));
    assert.equal(onDisk.kind, 'heuristic');
    const harness = JSON.parse(await fsp.readFile(harnessFile, 'utf8'));
    assert.equal(harness.judge_kind, 'heuristic');
    assert.equal(harness.design_score, 67);
    assert.equal(harness.conclusion_score, null);
  });
});
