import * as assert from 'node:assert/strict';
import { isExpBenchError } from '../../src/core/errors';
import { ToolChatClient, type ChatAttempt } from '../../src/core/llm/chat';
import { Ledger } from '../../src/core/llm/ledger';
import { FakeOpenAIServer } from '../harness/fakeOpenAIServer';
import { API_KEY } from './agent.fixtures';

describe('ToolChatClient (real openai client, scripted server)', () => {
  let server: FakeOpenAIServer;
  beforeEach(async () => { server = await new FakeOpenAIServer().start(); });
  afterEach(async () => { await server.close(); });

  const client = (extra: Record<string, unknown> = {}, sleeps: number[] = [], ledger = new Ledger()) => new ToolChatClient(
    { name: 'agent', baseURL: server.baseURL, apiKey: API_KEY, model: 'm', ...extra }, ledger,
    async (ms) => { sleeps.push(ms); },
  );
  const msgs = [{ role: 'user' as const, content: 'hi' }];
  const tools = [{ type: 'function' as const, function: { name: 'noop', description: 'nothing', parameters: { type: 'object', properties: {} } } }];

  it('sends the tools, returns the calls unparsed, reports usage and cost', async () => {
    server.enqueue({ toolCalls: [{ name: 'noop', arguments: '{"broken": ', id: 'c1' }], usage: { prompt_tokens: 1000, completion_tokens: 500 } });
    const ledger = new Ledger({ m: { inputPerMTok: 2, outputPerMTok: 4 } });
    const attempts: ChatAttempt[] = [];
    const r = await client({}, [], ledger).chat(msgs, tools, { item: 'agent:1', onAttempt: (a) => { attempts.push(a); } });
    assert.ok(r.ok);
    assert.deepEqual(r.reply.toolCalls, [{ id: 'c1', name: 'noop', arguments: '{"broken": ' }]);
    assert.equal(r.reply.finishReason, 'tool_calls');
    assert.deepEqual(r.reply.message, { role: 'assistant', content: null, tool_calls: [{ id: 'c1', type: 'function', function: { name: 'noop', arguments: '{"broken": ' } }] });
    assert.equal(attempts.length, 1);
    assert.equal(attempts[0].costUsd, 0.004);
    assert.deepEqual(server.requests[0].body.tools, tools);
    assert.equal(server.requests[0].body.tool_choice, 'auto');
    assert.equal(server.requests[0].headers.authorization, `Bearer ${API_KEY}`);
  });

  it('retries 429 and 5xx as the llm client does (retry-after-ms honoured), each attempt reported; gives up after maxRetries', async () => {
    server.enqueue({ status: 429, retryAfterMs: 40 }, { status: 500 }, { content: 'ok' });
    const sleeps: number[] = [];
    const attempts: ChatAttempt[] = [];
    const r = await client({}, sleeps).chat(msgs, tools, { item: 'x', onAttempt: (a) => { attempts.push(a); } });
    assert.ok(r.ok && r.reply.content === 'ok');
    assert.deepEqual(sleeps, [40, 1000]);
    assert.deepEqual(attempts.map((a) => [a.retry ?? null, a.error?.slice(0, 18) ?? null]), [[true, 'endpoint error 429'], [true, 'endpoint error 500'], [null, null]]);

    server.enqueue({ status: 503 }, { status: 503 });
    const r2 = await client({ maxRetries: 1 }).chat(msgs, tools, { item: 'y' });
    assert.ok(!r2.ok && r2.status === 503);
    assert.equal(server.count, 5);
  });

  it('does not retry a 400 other than a rejected decoding parameter; drops a rejected seed and sends again', async () => {
    server.enqueue({ status: 400, message: 'Unsupported parameter: seed' }, { content: 'fine' });
    const r = await client().chat(msgs, tools, { item: 'a' });
    assert.ok(r.ok);
    assert.equal(server.requests[0].body.seed, 1234);
    assert.equal(server.requests[1].body.seed, undefined);
    server.enqueue({ status: 400, message: 'context too long' });
    const r2 = await client().chat(msgs, tools, { item: 'b' });
    assert.ok(!r2.ok && /400/.test(r2.error));
    assert.equal(server.count, 3);
  });

  it('the budget guard refuses before sending; an aborted signal is CANCELLED', async () => {
    const ledger = new Ledger({ m: { inputPerMTok: 1, outputPerMTok: 1 } }, 0.001);
    await assert.rejects(client({}, [], ledger).chat(msgs, tools, { item: 'g' }), (e: unknown) => isExpBenchError(e, 'BUDGET_EXCEEDED'));
    const ac = new AbortController();
    ac.abort();
    await assert.rejects(client().chat(msgs, tools, { item: 'c', signal: ac.signal }), (e: unknown) => isExpBenchError(e, 'CANCELLED'));
    assert.equal(server.count, 0);
  });
});
