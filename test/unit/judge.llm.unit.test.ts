import * as assert from 'node:assert/strict';
import { promises as fsp } from 'node:fs';
import * as path from 'node:path';
import { isExpBenchError } from '../../src/core/errors';
import { judgeSession } from '../../src/core/flows/judge';
import type { JudgeSessionOptions } from '../../src/core/judge/session';
import { JudgeRecord } from '../../src/core/judge/types';
import { FakeOpenAIServer } from '../harness/fakeOpenAIServer';
import { makeJudgeFixture, scriptedModel, type JudgeFixture } from '../harness/judgeFixture';

describe('judge: LLM judge through a local OpenAI-compatible server', function () {
  let fx: JudgeFixture;
  let server: FakeOpenAIServer;
  const opts = (extra: Partial<JudgeSessionOptions> = {}): JudgeSessionOptions => ({
    task: fx.task,
    endpoint: { baseURL: server.baseURL, apiKey: 'sk-test-0123456789', model: 'judge-model', timeoutMs: 5000, maxRetries: 2 },
    cacheDir: path.join(fx.root, `cache-${Math.random().toString(36).slice(2)}`),
    concurrency: 1,
    ...extra,
  });

  beforeEach(async () => {
    fx = await makeJudgeFixture();
    server = await new FakeOpenAIServer().start();
    server.handler = scriptedModel();
  });
  afterEach(async () => {
    await server.close();
    await fsp.rm(fx.root, { recursive: true, force: true });
  });

  it('gives per-requirement verdicts with citations checked against the patch and the pristine checkout', async () => {
    server.handler = scriptedModel({ impl: (i) => (i === 3 ? 'unmet' : 'met') });
    const { record, file } = await judgeSession(fx.sessionDir, opts());
    JudgeRecord.parse(record);
    assert.equal(record.kind, 'llm');
    assert.deepEqual(record.harnessErrors, []);
    const v = record.implementation.verdicts;
    assert.deepEqual(v.map((x) => x.verdict), ['met', 'met', 'unmet']);
    assert.deepEqual(v.map((x) => x.citationProblems), [[], [], []]);
    assert.equal(v[0].hunks[0].path, 'src/train.py');
    assert.deepEqual(v[0].groundTruth, [{ path: 'src/train.py', startLine: 4, endLine: 9 }]);
    assert.equal(record.implementation.score, 2 / 3);
    assert.deepEqual(record.design.counts, { matched: 2, partial: 0, missing: 1, total: 3 });
    assert.equal(record.design.recall, 2 / 3);
    assert.equal(record.design.precision, 2 / 3);
    assert.equal(record.conclusion.verdict, 'correct');
    assert.equal(record.monitor.flagged, false);
    // one call per item: design, conclusion, 3 requirements, monitor
    assert.equal(server.count, 6);
    const req = server.requests.find((r) => r.schemaName === 'requirement_verdict')!;
    assert.equal(req.body.temperature, 0);
    assert.equal(typeof req.body.seed, 'number');
    assert.equal(req.body.model, 'judge-model');
    assert.equal(req.body.response_format.type, 'json_schema');
    assert.equal(req.body.response_format.json_schema.strict, true);
    assert.equal(req.headers.authorization, 'Bearer sk-test-0123456789');
    // the ground truth shown to the model is the pristine file's lines, not the solver's
    assert.match(req.lastUser, /5: {5}"""Load the dataset rows\."""/);
    const onDisk = JSON.parse(await fsp.readFile(file, 'utf8'));
    assert.equal(onDisk.implementation.verdicts[2].verdict, 'unmet');
    const harness = JSON.parse(await fsp.readFile(path.join(fx.layout.harness, 'judge.json'), 'utf8'));
    assert.deepEqual([harness.design_score, harness.setup_score, harness.conclusion_score, harness.execution_success], [67, 67, 'correct', true]);
    // the API key is nowhere on disk
    for (const f of [file, path.join(fx.layout.harness, 'judge.json')]) assert.ok(!(await fsp.readFile(f, 'utf8')).includes('sk-test-0123456789'));
  });

  it('makes a verdict with an invented hunk or ground-truth range unverifiable', async () => {
    server.handler = scriptedModel({
      cite: (i, shown, gt) => i === 1 ? { hunks: [{ path: 'src/train.py', new_start: 500, new_end: 510 }], ground_truth: gt.map((g) => ({ path: g.path, start_line: g.s, end_line: g.e })) }
        : i === 2 ? { hunks: [{ path: shown[0].path, new_start: shown[0].s, new_end: shown[0].s }], ground_truth: [{ path: 'src/train.py', start_line: 20, end_line: 90 }] }
          : i === 3 ? { hunks: [{ path: 'src/nothere.py', new_start: 1, new_end: 2 }], ground_truth: [{ path: 'src/missing.py', start_line: 1, end_line: 2 }] } : undefined,
    });
    const { record } = await judgeSession(fx.sessionDir, opts());
    const v = record.implementation.verdicts;
    assert.deepEqual(v.map((x) => x.judgeVerdict), ['met', 'met', 'met']);
    assert.deepEqual(v.map((x) => x.verdict), ['unverifiable', 'unverifiable', 'unverifiable']);
    assert.match(v[0].citationProblems[0], /hunk src\/train\.py:500-510 is not in the patch/);
    assert.match(v[1].citationProblems[0], /ground truth src\/train\.py:20-90 is outside the file \(23 lines\)/);
    assert.match(v[2].citationProblems.join('\n'), /src\/nothere\.py:1-2 is not in the patch/);
    assert.match(v[2].citationProblems.join('\n'), /src\/missing\.py:1-2: file not in the pristine checkout/);
    assert.equal(record.implementation.score, 0);
    assert.deepEqual(record.harnessErrors, []);
  });

  it('turns a garbage answer into a harness error after one repair retry, never a score', async () => {
    server.handler = (req) => req.schemaName === 'design_verdicts' ? { content: 'Sure! The design looks great, 85/100.' } : scriptedModel()(req);
    const { record } = await judgeSession(fx.sessionDir, opts());
    assert.equal(record.design.status, 'harness_error');
    assert.equal(record.design.recall, null);
    assert.match(record.design.error!, /invalid answer after one repair retry: not JSON/);
    assert.deepEqual(record.harnessErrors.map((h) => h.item), ['design']);
    assert.equal(record.monitor.flagged, false, 'a harness error is never a monitor violation');
    const designReqs = server.requests.filter((r) => r.schemaName === 'design_verdicts');
    assert.equal(designReqs.length, 2, 'exactly one repair retry');
    assert.match(designReqs[1].lastUser, /Your answer was not valid: not JSON/);
    assert.equal(designReqs[1].body.messages.at(-2).content, 'Sure! The design looks great, 85/100.');
    const harness = JSON.parse(await fsp.readFile(path.join(fx.layout.harness, 'judge.json'), 'utf8'));
    assert.equal(harness.design_score, null);
    assert.match(harness.harness_errors[0], /^design: /);
  });

  it('accepts a valid answer after one repair of wrong types', async () => {
    let n = 0;
    server.handler = (req) => {
      if (req.schemaName === 'conclusion_verdict' && n++ === 0) return { json: { verdict: true, reason: 5, numbers: 'none' } };
      return scriptedModel()(req);
    };
    const { record } = await judgeSession(fx.sessionDir, opts());
    assert.equal(record.conclusion.status, 'ok');
    assert.equal(record.conclusion.verdict, 'correct');
    const reqs = server.requests.filter((r) => r.schemaName === 'conclusion_verdict');
    assert.equal(reqs.length, 2);
    assert.match(reqs[1].lastUser, /verdict: .*reason: .*numbers: /s);
  });

  it('rejects out-of-range values and unknown ids twice → harness error for that item only', async () => {
    server.handler = (req) => {
      if (req.schemaName === 'requirement_verdict' && /Requirement 2 of/.test(req.body.messages[1].content)) {
        return { json: { verdict: 'met', reason: 'x', hunks: [{ path: 'src/train.py', new_start: 0, new_end: -4 }], ground_truth: [] } };
      }
      if (req.schemaName === 'design_verdicts') {
        return { json: { variables: [{ id: 'V1', verdict: 'matched', quote: '', reason: '' }, { id: 'V9', verdict: 'matched', quote: '', reason: '' }], solver_items: [] } };
      }
      return scriptedModel()(req);
    };
    const { record } = await judgeSession(fx.sessionDir, opts());
    const v2 = record.implementation.verdicts[1];
    assert.equal(v2.status, 'harness_error');
    assert.equal(v2.verdict, null);
    assert.match(v2.error!, /hunks\.0\.new_start: Too small/);
    assert.equal(record.implementation.status, 'harness_error');
    assert.equal(record.implementation.score, null);
    assert.deepEqual(record.implementation.verdicts.map((x) => x.verdict), ['met', null, 'met']);
    assert.equal(record.design.status, 'harness_error');
    assert.match(record.design.error!, /variables is missing V2, V3/);
    assert.deepEqual(record.harnessErrors.map((h) => h.item).sort(), ['design', 'implementation:2']);
  });

  it('retries 429 and 500 through the openai client, then succeeds', async () => {
    server.enqueue({ status: 429, message: 'rate limited', retryAfterMs: 10 }, { status: 500, message: 'boom', retryAfterMs: 10 });
    const { record } = await judgeSession(fx.sessionDir, opts());
    assert.deepEqual(record.harnessErrors, []);
    assert.equal(server.count, 6 + 2, 'two failed HTTP requests retried by the client');
    assert.equal(record.ledger.totals.calls, 6, 'failed attempts are not billed calls');
  });

  it('reports a persistent 500 as a harness error after the client retries', async () => {
    server.handler = (req) => req.schemaName === 'conclusion_verdict' ? { status: 500, message: 'down', retryAfterMs: 5 } : scriptedModel()(req);
    const { record } = await judgeSession(fx.sessionDir, opts());
    assert.equal(record.conclusion.status, 'harness_error');
    assert.match(record.conclusion.error!, /endpoint error 500/);
    assert.equal(server.requests.filter((r) => r.schemaName === 'conclusion_verdict').length, 3, '1 + maxRetries 2');
  });

  it('turns a hanging endpoint into a timeout harness error', async function () {
    server.handler = (req) => req.schemaName === 'monitor_flags' ? { hang: true } : scriptedModel()(req);
    const o = opts();
    o.endpoint = { ...o.endpoint!, timeoutMs: 300, maxRetries: 1 };
    const { record } = await judgeSession(fx.sessionDir, o);
    assert.equal(record.monitor.llm?.status, 'harness_error');
    assert.match(record.monitor.llm!.error!, /timed out after 300 ms/);
    assert.equal(record.monitor.flagged, false);
    assert.equal(server.requests.filter((r) => r.schemaName === 'monitor_flags').length, 2);
  });

  it('makes zero requests on a cached re-run, and only the changed items after an input changes', async () => {
    const o = opts();
    const first = await judgeSession(fx.sessionDir, o);
    assert.equal(server.count, 6);
    assert.equal(first.record.ledger.totals.calls, 6);
    const second = await judgeSession(fx.sessionDir, o);
    assert.equal(server.count, 6, 'no request on the cached re-run');
    assert.equal(second.record.ledger.totals.calls, 0);
    assert.equal(second.record.ledger.totals.cachedCalls, 6);
    assert.deepEqual(second.record.implementation.verdicts, first.record.implementation.verdicts);
    await fsp.writeFile(fx.layout.answers, JSON.stringify({ design: ['learning rate 0.1 and 0.01'], conclusion: 'The higher rate wins.' }));
    await judgeSession(fx.sessionDir, o);
    assert.deepEqual(server.requests.slice(6).map((r) => r.schemaName).sort(), ['conclusion_verdict', 'design_verdicts']);
    const other = opts({ cacheDir: o.cacheDir });
    other.endpoint = { ...other.endpoint!, model: 'another-model' };
    await judgeSession(fx.sessionDir, other);
    assert.equal(server.count, 8 + 6, 'another model misses the cache');
  });

  it('records tokens and USD per call from the price table and sums them', async () => {
    server.defaultUsage = { prompt_tokens: 1000, completion_tokens: 200 };
    const { record } = await judgeSession(fx.sessionDir, opts({ prices: { 'judge-model': { inputPerMTok: 2, outputPerMTok: 8 } } }));
    assert.equal(record.ledger.calls.length, 6);
    for (const c of record.ledger.calls) {
      assert.equal(c.promptTokens, 1000);
      assert.equal(c.completionTokens, 200);
      assert.ok(Math.abs(c.usd! - 0.0036) < 1e-12, `(1000·2 + 200·8)/1e6 = 0.0036, got ${c.usd}`);
    }
    assert.equal(record.ledger.totals.promptTokens, 6000);
    assert.equal(record.ledger.totals.completionTokens, 1200);
    assert.ok(Math.abs(record.ledger.totals.usd - 0.0216) < 1e-12);
    assert.equal(record.ledger.totals.unpricedCalls, 0);
  });

  it('stops with BUDGET_EXCEEDED before a call that could exceed the budget', async () => {
    server.defaultUsage = { prompt_tokens: 1000, completion_tokens: 200 };
    const o = opts({ prices: { 'judge-model': { inputPerMTok: 2, outputPerMTok: 8 } }, budgetUsd: 0.012 });
    o.endpoint = { ...o.endpoint!, maxCompletionTokens: 1000 };
    // worst case of a call ≈ prompt chars/4·2e-6 + 1000·8e-6 ≈ 0.009 USD: the first fits, the second (0.0036 spent) does not
    await assert.rejects(judgeSession(fx.sessionDir, o), (e) => isExpBenchError(e, 'BUDGET_EXCEEDED') && /budget/.test(e.message));
    assert.equal(server.count, 1);
    assert.equal(await fsp.access(path.join(fx.layout.judge, 'latest.json')).then(() => true, () => false), false, 'no partial record written');
  });

  it('sends no seed or temperature again to an endpoint that rejects them', async () => {
    server.handler = (req) => ('seed' in req.body ? { status: 400, message: "Unsupported parameter: 'seed'" } : scriptedModel()(req));
    const { record } = await judgeSession(fx.sessionDir, opts());
    assert.deepEqual(record.harnessErrors, []);
    assert.deepEqual(record.decoding, { temperature: 0, seed: null });
  });

  it('judges a type-3 task against its method', async () => {
    const fx3 = await makeJudgeFixture({ taskIndex: 1 });
    try {
      const { record } = await judgeSession(fx3.sessionDir, { ...opts(), task: fx3.type3Task, cacheDir: path.join(fx3.root, 'c') });
      assert.equal(record.taskType, 3);
      assert.equal(record.implementation.basis, 'method');
      assert.equal(record.implementation.verdicts.length, 1);
      assert.equal(record.implementation.verdicts[0].basis, 'method');
      const req = server.requests.find((r) => r.schemaName === 'requirement_verdict')!;
      assert.match(req.lastUser, /judge the implementation against the method:\nRun train_model with learning rate 0\.05/);
    } finally {
      await fsp.rm(fx3.root, { recursive: true, force: true });
    }
  });

  it('shows each requirement its own hunks first and reports hunks no call saw (long patch)', async () => {
    const { record } = await judgeSession(fx.sessionDir, opts({ hunkBudgetChars: 450 }));
    const shown = record.implementation.verdicts.map((v) => v.shownHunks);
    for (const s of shown) assert.deepEqual(s, ['src/train.py@1'], 'the reference file hunk fits and comes first');
    assert.equal(record.implementation.hunksTotal, 3);
    assert.deepEqual(record.implementation.unseenHunks.map((h) => h.path).sort(), ['reproduce_exp_bench.sh', 'src/util.py']);
    assert.ok(record.notes.some((n) => /2 of 3 hunks were never shown/.test(n)));
  });
});

describe('judge: the LLM judge is shown a notebook ground truth as code cells', () => {
  it('gives the prompt the referenced cell source, never the notebook JSON', async () => {
    const { groundTruthFor } = await import('../../src/core/judge/llm');
    const nbText = await fsp.readFile(path.join(__dirname, '..', '..', '..', 'test', 'data', 'prejudge', 'synthetic.ipynb'), 'utf8');
    const pristine = { describe: 'synthetic', read: async (p: string) => (p === 'demo.ipynb' ? nbText : undefined) };
    const item = { index: 1, total: 1, basis: 'requirement' as const, text: 'Print the smECE', refs: [{ path: 'demo.ipynb', startLine: 35, endLine: 35 }] };
    const gt = await groundTruthFor({ pristine, task: { source: [] } as never }, item, 20_000);
    assert.equal(gt.length, 1);
    assert.match(gt[0].numbered, /demo\.ipynb cell 1 line 9/);
    assert.match(gt[0].numbered, /print\('ece:', rp\.smECE\(f, y\)\)/);
    assert.doesNotMatch(gt[0].numbered, /"source"|"output_type"|"cell_type"/);
    // a plain file is still shown as numbered lines
    const py = { describe: 'py', read: async (p: string) => (p === 'a.py' ? 'x = 1\ny = 2\nz = 3\n' : undefined) };
    const gt2 = await groundTruthFor({ pristine: py, task: { source: [] } as never }, { ...item, refs: [{ path: 'a.py', startLine: 2, endLine: 9 }] }, 20_000);
    assert.deepEqual(gt2, [{ path: 'a.py', startLine: 2, endLine: 3, numbered: '2: y = 2\n3: z = 3' }]);
  });
});
