import * as assert from 'node:assert/strict';
import { promises as fsp } from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { z } from 'zod';
import { isExpBenchError } from '../../src/core/errors';
import { AnswerCache } from '../../src/core/llm/cache';
import { redact } from '../../src/core/log';
import { LlmClient, toStrictJsonSchema, type ChatMessage } from '../../src/core/llm/client';
import { NO_API_KEY, type LlmEndpoint } from '../../src/core/llm/endpoint';
import { Ledger } from '../../src/core/llm/ledger';
import { FakeOpenAIServer } from '../harness/fakeOpenAIServer';

const Answer = z.object({ n: z.number().int() }).strict();
const messages: ChatMessage[] = [{ role: 'system', content: 'answer with JSON' }, { role: 'user', content: 'pick a number' }];

describe('llm: the client of a named endpoint (structured output, repair retry, ledger, cache)', function () {
  let server: FakeOpenAIServer;
  let dir: string;
  const endpoint = (): LlmEndpoint => ({ name: 'agent', baseURL: server.baseURL, apiKey: 'sk-agent-0123456789', model: 'agent-model', timeoutMs: 5000, maxRetries: 0 });

  beforeEach(async () => {
    server = await new FakeOpenAIServer().start();
    dir = await fsp.mkdtemp(path.join(os.tmpdir(), 'expbench-llm-'));
  });
  afterEach(async () => {
    await server.close();
    await fsp.rm(dir, { recursive: true, force: true });
  });

  it('sends one repair retry quoting the problem, then gives up with an error (no throw)', async () => {
    server.enqueue({ content: 'not json' }, { json: { n: 'seven' } });
    const ledger = new Ledger();
    const r = await new LlmClient(endpoint(), ledger).structured({ item: 'pick', schemaName: 'number', schema: Answer, messages });
    assert.equal(r.ok, false);
    assert.match(r.ok ? '' : r.error, /invalid answer after one repair retry: n: /);
    assert.equal(server.count, 2);
    assert.match(server.requests[1].lastUser, /Your answer was not valid: not JSON/);
    assert.equal(server.requests[1].body.messages.length, 4, 'the first answer and the problem are sent back');
    assert.equal(server.requests[0].headers.authorization, 'Bearer sk-agent-0123456789');
    assert.equal(ledger.calls.length, 2);
  });

  it('turns an endpoint failure into an error outcome, and a budget it could exceed into BUDGET_EXCEEDED before the call', async () => {
    server.enqueue({ status: 503, message: 'overloaded' });
    const r = await new LlmClient(endpoint(), new Ledger()).structured({ item: 'pick', schemaName: 'number', schema: Answer, messages });
    assert.deepEqual(r, { ok: false, error: 'endpoint error 503: 503 overloaded' });
    const before = server.count;
    const tight = new Ledger({ 'agent-model': { inputPerMTok: 1, outputPerMTok: 1 } }, 0.001);
    await assert.rejects(new LlmClient(endpoint(), tight).structured({ item: 'pick', schemaName: 'number', schema: Answer, messages }),
      (e) => isExpBenchError(e, 'BUDGET_EXCEEDED') && e.input === 'pick');
    assert.equal(server.count, before, 'no request sent over the budget');
  });

  it('keeps its API key out of every log line, but not the placeholder of a keyless local endpoint', () => {
    new LlmClient({ ...endpoint(), apiKey: 'agent-key-without-prefix-42' }, new Ledger());
    new LlmClient({ ...endpoint(), apiKey: NO_API_KEY }, new Ledger());
    assert.equal(redact('sent agent-key-without-prefix-42 to the agent'), 'sent *** to the agent');
    assert.equal(redact(`the endpoint has ${NO_API_KEY}`), `the endpoint has ${NO_API_KEY}`);
  });

  it("keys the cache as the judge did before the move: an answer cached then is a hit now, another scope misses", async () => {
    const decoding = { temperature: 0, seed: 1234 };
    const oldKey = AnswerCache.key({
      promptVersion: 'judge-v9', model: 'agent-model', decoding, schemaName: 'number', jsonSchema: toStrictJsonSchema(Answer), messages,
    });
    const seeded = new AnswerCache(dir);
    await seeded.put(oldKey, { value: { n: 7 }, model: 'agent-model', promptTokens: 11, completionTokens: 3, storedAt: new Date().toISOString() });
    await seeded.flush();
    const ledger = new Ledger();
    const hit = await new LlmClient(endpoint(), ledger, { cache: new AnswerCache(dir), cacheScope: { promptVersion: 'judge-v9' } })
      .structured({ item: 'pick', schemaName: 'number', schema: Answer, messages });
    assert.deepEqual(hit, { ok: true, value: { n: 7 }, cached: true });
    assert.equal(server.count, 0);
    assert.deepEqual(ledger.totals(), { calls: 0, cachedCalls: 1, promptTokens: 0, completionTokens: 0, usd: 0, unpricedCalls: 0 });
    server.enqueue({ json: { n: 8 } });
    const miss = await new LlmClient(endpoint(), new Ledger(), { cache: new AnswerCache(dir), cacheScope: { promptVersion: 'judge-v10' } })
      .structured({ item: 'pick', schemaName: 'number', schema: Answer, messages });
    assert.deepEqual(miss, { ok: true, value: { n: 8 }, cached: false });
    assert.equal(server.count, 1);
  });
});
