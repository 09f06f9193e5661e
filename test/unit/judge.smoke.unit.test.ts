import * as assert from 'node:assert/strict';
import { promises as fsp } from 'node:fs';
import { endpointFromEnv, judgeEndpointHint } from '../../src/cli/commands/judge';
import { judgeSession } from '../../src/core/flows/judge';
import { JudgeRecord } from '../../src/core/judge/types';
import { makeJudgeFixture } from '../harness/judgeFixture';

/**
 * Smoke run against a real endpoint from the environment (EXPBENCH_JUDGE_API_KEY / OPENAI_API_KEY
 * and/or EXPBENCH_JUDGE_BASE_URL / OPENAI_BASE_URL, with EXPBENCH_JUDGE_MODEL). Skipped, visibly, otherwise.
 */
describe('judge: smoke run against a configured endpoint', function () {
  it('judges the fixture task end to end', async function () {
    const endpoint = endpointFromEnv(process.env);
    if (!endpoint) {
      console.log(`      (skipped: no judge endpoint configured: ${judgeEndpointHint()})`);
      this.skip();
    }
    this.timeout(600_000);
    const fx = await makeJudgeFixture();
    try {
      const { record } = await judgeSession(fx.sessionDir, { task: fx.task, endpoint });
      JudgeRecord.parse(record);
      assert.equal(record.kind, 'llm');
      assert.equal(record.implementation.verdicts.length, 3);
      assert.ok(record.ledger.totals.calls >= 1);
      console.log(`      ${record.model}: harness errors ${record.harnessErrors.length}, verdicts ${record.implementation.verdicts.map((v) => v.verdict).join(',')}`);
    } finally {
      await fsp.rm(fx.root, { recursive: true, force: true });
    }
  });
});
