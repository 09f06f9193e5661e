import * as assert from 'node:assert/strict';
import { promises as fsp } from 'node:fs';
import { getEventListeners } from 'node:events';
import * as path from 'node:path';
import { withChildSignal } from '../../src/core/llm/signal';
import { FakeOpenAIServer } from '../harness/fakeOpenAIServer';
import { makeJudgeFixture, type JudgeFixture } from '../harness/judgeFixture';
import { cli, deadPort, OFFLINE_ENV } from './cli.helpers';

/**
 * `expbench judge` on an endpoint that fails (issue 15): nothing listening on a local port, and
 * the fake OpenAI server answering 500. The message names the URL, no MaxListenersExceededWarning,
 * `private/judge/latest.json` keeps the last good (heuristic) record, the failed attempt is written
 * beside it, and the monitor line says it did not run.
 */
describe('expbench judge on a failing endpoint (dist/cli.js)', function () {
  this.timeout(120_000);
  let fx: JudgeFixture;
  let server: FakeOpenAIServer;
  before(async () => {
    fx = await makeJudgeFixture();
    server = await new FakeOpenAIServer().start();
    server.handler = () => ({ status: 500, message: 'the model is down' });
  });
  after(async () => {
    await server.close();
    await fsp.rm(fx.root, { recursive: true, force: true });
  });

  const judge = (baseUrl: string) => cli(['judge', fx.sessionDir, '--dataset', fx.dataset, '--no-sample', '--timeout', '5000'],
    { env: { ...OFFLINE_ENV, EXPBENCH_JUDGE_BASE_URL: baseUrl, EXPBENCH_JUDGE_MODEL: 'judge-model' } });

  it('the signal given to the openai client is a child: the outer signal keeps no listener after a call, and still cancels', async () => {
    const outer = new AbortController();
    for (let i = 0; i < 20; i++) {
      await withChildSignal(outer.signal, async (child) => { child!.addEventListener('abort', () => undefined); return i; });
    }
    assert.equal(getEventListeners(outer.signal, 'abort').length, 0);
    const seen = withChildSignal(outer.signal, (child) => new Promise((resolve) => child!.addEventListener('abort', () => resolve(child!.reason))));
    outer.abort(new Error('stop'));
    assert.equal(((await seen) as Error).message, 'stop');
  });

  it('keeps the last good record, writes the failed attempt beside it, names the URL, says the monitor did not run', async () => {
    const good = await cli(['judge', fx.sessionDir, '--dataset', fx.dataset, '--no-sample', '--heuristic']);
    assert.equal(good.code, 0, good.stderr);
    const latest = path.join(fx.layout.judge, 'latest.json');
    const harnessFile = path.join(fx.layout.harness, 'judge.heuristic.json');
    const before = await fsp.readFile(latest, 'utf8');
    const harnessBefore = await fsp.readFile(harnessFile, 'utf8');
    assert.equal(JSON.parse(before).kind, 'heuristic');

    const dead = `http://127.0.0.1:${await deadPort()}/v1`;
    for (const [url, cause] of [[dead, /cannot connect to the judge endpoint http:\/\/127\.0\.0\.1:\d+\/v1: Connection error\. \(ECONNREFUSED 127\.0\.0\.1:\d+\)/], [server.baseURL, /endpoint error 500: 500 the model is down/]] as const) {
      const failedBefore = (await fsp.readdir(fx.layout.judge)).filter((f) => f.startsWith('failed-'));
      const r = await judge(url);
      assert.equal(r.code, 1, r.stderr);
      assert.doesNotMatch(r.stderr, /MaxListenersExceededWarning|memory leak/, r.stderr);
      assert.ok(r.stderr.includes(`expbench: the judge endpoint ${url} (model judge-model): `), r.stderr);
      assert.match(r.stdout, cause);
      assert.match(r.stdout, /^monitor: not run \(error\); the deterministic log scan found no violation$/m);
      assert.doesNotMatch(r.stdout, /^monitor {2}no violation$/m);
      assert.equal(await fsp.readFile(latest, 'utf8'), before, 'latest.json keeps the last good record');
      assert.equal(await fsp.readFile(harnessFile, 'utf8'), harnessBefore, 'so does the harness file that repeats it');
      await assert.rejects(fsp.access(path.join(fx.layout.harness, 'judge.json')), 'no harness file of the failed attempt');
      const failed = (await fsp.readdir(fx.layout.judge)).filter((f) => f.startsWith('failed-') && !failedBefore.includes(f));
      assert.equal(failed.length, 1, `one new failed attempt: ${failed.join(', ')}`);
      assert.match(failed[0], /^failed-\d{8}T\d{6}Z-llm\.json$/);
      const rec = JSON.parse(await fsp.readFile(path.join(fx.layout.judge, failed[0]), 'utf8'));
      assert.equal(rec.kind, 'llm');
      assert.equal(rec.monitor.llm.status, 'harness_error');
      assert.deepEqual(rec.harnessErrors.map((h: { item: string }) => h.item).sort(), ['conclusion', 'design', 'implementation:1', 'implementation:2', 'implementation:3', 'monitor']);
      assert.ok(r.stderr.includes(`${latest} keeps the last good record; this attempt is in ${path.join(fx.layout.judge, failed[0])}`), r.stderr);
      // distinct file names: the stamps are whole seconds
      await new Promise((res) => setTimeout(res, 1100));
    }
    assert.ok(server.count >= 18, `every call was tried with the client's retries (${server.count} requests)`);
  });
});
