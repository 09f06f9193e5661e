/**
 * The agent's limits bound a run whatever the endpoint does (issue 33, the fault round's findings),
 * through the real `openai` client against a local OpenAI-compatible server the test starts
 * (test/harness/fakeOpenAIServer.ts), with the real work container:
 * - a hung endpoint is not waited on past the working-time limit (it was 120 s per attempt, with
 *   retries, under `--max-minutes 1`): the run stops as `max_time`, and no retry is sent after it;
 * - one reply asking for 10,000 tool calls does not run them all: at most the per-reply cap runs,
 *   the model is told, the conversation stays valid; a total tool-call limit stops a run;
 * - a 200 reply without `choices` is a model error said as such (it passed for a reply without a
 *   tool call, and ended as `no_action`), retried like a 5xx;
 * - a connection cut mid-reply is retried, as docs/agent.md says.
 */
import * as assert from 'node:assert/strict';
import { promises as fsp } from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import type Docker from 'dockerode';
import { MAX_TOOL_CALLS_PER_REPLY } from '../../src/core/agent/loop';
import { MAX_RECORDED_TOOL_NAMES } from '../../src/core/llm/chat';
import { runAgentTask, type AgentRunOptions, type AgentRunResult } from '../../src/core/flows/agentRun';
import { SessionLayout } from '../../src/core/layout';
import { readEvents, type SessionEvent } from '../../src/core/session/events';
import type { Task } from '../../src/core/tasks/types';
import { assertNoContainers, requireDocker } from '../harness/docker';
import { FakeOpenAIServer } from '../harness/fakeOpenAIServer';
import { API_KEY, sampleTask } from './agent.fixtures';

type ToolCallEvent = Extract<SessionEvent, { type: 'agent.tool_call' }>;
type ModelCallEvent = Extract<SessionEvent, { type: 'agent.model_call' }>;

describe('faults: the agent\'s limits bound a run (real openai client, local server, real container)', function () {
  this.timeout(240_000);
  let docker: Docker;
  let server: FakeOpenAIServer;
  let task: Task;
  let tmp: string;
  const sessions: string[] = [];
  let n = 0;

  before(async function () {
    docker = await requireDocker(this);
    task = await sampleTask();
    tmp = await fsp.mkdtemp(path.join(os.tmpdir(), 'expbench-faults-agent-'));
  });
  beforeEach(async () => { server = await new FakeOpenAIServer().start(); });
  afterEach(async () => { await server.close(); });
  after(async () => {
    if (docker) await assertNoContainers(docker, sessions);
    if (tmp) await fsp.rm(tmp, { recursive: true, force: true }).catch(() => undefined);
  });

  async function run(extra: Partial<AgentRunOptions>, endpoint: Partial<AgentRunOptions['endpoint']> = {}): Promise<{ r: AgentRunResult; events: SessionEvent[]; ms: number }> {
    const out = path.join(tmp, `limits-${process.pid}-${++n}`);
    sessions.push(path.basename(out));
    const t0 = Date.now();
    const r = await runAgentTask({
      task, source: task.paper!.localRepo!, outDir: out, cacheDir: path.join(tmp, 'cache'), docker,
      endpoint: { name: 'agent', baseURL: server.baseURL, apiKey: API_KEY, model: 'scripted-agent', ...endpoint },
      verify: false, judge: false, sleep: () => Promise.resolve(), ...extra,
    });
    const ms = Date.now() - t0;
    const read = await readEvents(new SessionLayout(out).events);
    assert.deepEqual(read.invalid, []);
    return { r, events: read.events, ms };
  }
  const toolEvents = (events: SessionEvent[]) => events.filter((e): e is ToolCallEvent => e.type === 'agent.tool_call');
  const modelEvents = (events: SessionEvent[]) => events.filter((e): e is ModelCallEvent => e.type === 'agent.model_call');

  it('a hung endpoint under a 3 s working-time limit: max_time at the limit, not 120 s per attempt and retries', async () => {
    server.handler = () => ({ hang: true });
    const { r, events, ms } = await run({ limits: { maxWorkingMs: 3000 } });
    assert.equal(r.agent.stop, 'max_time', `${r.agent.stop}: ${r.agent.message}`);
    assert.equal(server.count, 1, 'no retry is sent once the working time is up');
    // The endpoint's own timeout (120 s) and its retries would take 6 minutes; the limit is 3 s of working time.
    assert.ok(ms < 60_000, `the run took ${ms} ms`);
    assert.match(modelEvents(events)[0]?.error ?? '', /working-time limit/);
  });

  it('a hung endpoint whose own timeout is shorter than the time left: retried, each attempt within the time left', async () => {
    server.handler = () => ({ hang: true });
    const { r } = await run({ limits: { maxWorkingMs: 60_000 } }, { timeoutMs: 800, maxRetries: 2 });
    assert.equal(r.agent.stop, 'model_error', r.agent.message);
    assert.equal(server.count, 3, 'the attempt and its two retries');
    assert.match(r.agent.message, /timed out after 800 ms/);
  });

  it('one reply asking for 10,000 tool calls: at most the per-reply cap runs, the model is told, the next request is valid', async () => {
    const calls = Array.from({ length: 10_000 }, () => ({ name: 'read_brief', arguments: {} }));
    server.enqueue({ toolCalls: calls });
    server.handler = () => ({ status: 400, message: 'the scripted sequence is over' });
    const { r, events } = await run({});
    const ran = toolEvents(events);
    assert.ok(ran.length <= MAX_TOOL_CALLS_PER_REPLY, `${ran.length} tool calls ran`);
    assert.equal(r.agent.toolCalls, ran.length);
    assert.equal(server.count, 2);
    const next = server.requests[1].body.messages as Array<{ role: string; content?: string; tool_calls?: unknown[]; tool_call_id?: string }>;
    const asked = next.find((m) => m.role === 'assistant' && m.tool_calls);
    assert.ok(asked && asked.tool_calls!.length === ran.length, 'the assistant message sent back holds the calls that ran');
    assert.equal(next.filter((m) => m.role === 'tool').length, ran.length, 'one tool message per call sent back');
    assert.ok(next.some((m) => m.role === 'user' && /10000 tool calls.*only the first/.test(m.content ?? '')), 'the model is told');
    assert.ok(JSON.stringify(server.requests[1].body).length < 200_000, 'the next request is not 10,000 messages long');
    const first = modelEvents(events)[0];
    assert.ok((first.toolCalls?.length ?? 0) <= MAX_RECORDED_TOOL_NAMES, `the event lists ${first.toolCalls?.length} tool names`);
    assert.ok(events.some((e) => e.type === 'note.added' && /asked for 10000 tool calls; only the first/.test(e.text)), 'the log says what was not run');
  });

  it('a total tool-call limit stops a run (max_tool_calls), a reply\'s calls past it are not run', async () => {
    server.handler = () => ({ toolCalls: [{ name: 'read_brief', arguments: {} }, { name: 'read_brief', arguments: {} }, { name: 'read_brief', arguments: {} }] });
    const { r, events } = await run({ limits: { maxToolCalls: 5 } });
    assert.equal(r.agent.stop, 'max_tool_calls', r.agent.message);
    assert.equal(toolEvents(events).length, 5);
    assert.equal(server.count, 2);
  });

  it('a 200 reply without choices: a model error naming what came back, retried; never "no_action"', async () => {
    server.handler = () => ({ raw: JSON.stringify({ id: 'x', object: 'chat.completion', model: 'scripted-agent', usage: { prompt_tokens: 3, completion_tokens: 0 } }) });
    const { r, events } = await run({});
    assert.equal(r.agent.stop, 'model_error', `${r.agent.stop}: ${r.agent.message}`);
    assert.match(r.agent.message, /no choices/);
    assert.equal(server.count, 3, 'the attempt and its two retries');
    assert.ok(modelEvents(events).every((e) => /no choices/.test(e.error ?? '')), 'each attempt recorded as failed');
    const proxy = { error: { message: 'upstream overloaded', type: 'server_error' } };
    server.handler = () => ({ raw: JSON.stringify(proxy) });
    const again = await run({});
    assert.equal(again.r.agent.stop, 'model_error');
    assert.match(again.r.agent.message, /upstream overloaded/);
  });

  it('a connection cut mid-reply is retried (docs/agent.md), and the retry\'s answer is used', async () => {
    server.enqueue({ cut: true }, { toolCalls: [{ name: 'read_brief', arguments: {} }] });
    server.handler = () => ({ status: 400, message: 'the scripted sequence is over' });
    const { r, events } = await run({});
    assert.equal(toolEvents(events).length, 1, 'the retry\'s tool call ran');
    const m = modelEvents(events);
    assert.equal(m[0].retry, true, `the cut attempt: ${JSON.stringify(m[0])}`);
    assert.ok(m[0].error, 'the cut attempt is recorded as failed');
    assert.equal(r.agent.stop, 'model_error');
    assert.equal(server.count, 3);
  });
});
