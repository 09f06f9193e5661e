import * as assert from 'node:assert/strict';
import { promises as fsp } from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import type Docker from 'dockerode';
import { AgentControl } from '../../src/core/agent/control';
import { runTool, type ToolContext } from '../../src/core/agent/tools';
import { runAgentTask, type AgentRunOptions, type AgentRunResult } from '../../src/core/flows/agentRun';
import { SessionService } from '../../src/core/flows/sessionService';
import { SessionLayout } from '../../src/core/layout';
import { DEFAULT_IMAGE } from '../../src/core/sandbox';
import { ensureWorkContainer, removeWorkContainer } from '../../src/core/sandbox/work';
import { readEvents, type SessionEvent } from '../../src/core/session/events';
import { writeSessionMarker } from '../../src/core/session/marker';
import { readState } from '../../src/core/session/store';
import type { Task } from '../../src/core/tasks/types';
import { prepareSession } from '../../src/core/workspace/prepare';
import { assertNoContainers, requireDocker } from '../harness/docker';
import { FakeOpenAIServer, type Reply } from '../harness/fakeOpenAIServer';
import { API_KEY, forbiddenStrings, groundTruthSeen, sampleTask } from './agent.fixtures';

type ToolCallEvent = Extract<SessionEvent, { type: 'agent.tool_call' }>;
type ModelCallEvent = Extract<SessionEvent, { type: 'agent.model_call' }>;

describe('the built-in agent loop (real container, real openai client, scripted server)', function () {
  this.timeout(180_000);
  let docker: Docker;
  let server: FakeOpenAIServer;
  let task: Task;
  let tmp: string;
  const sessions: string[] = [];
  let n = 0;

  before(async function () {
    docker = await requireDocker(this);
    task = await sampleTask();
    tmp = await fsp.mkdtemp(path.join(os.tmpdir(), 'expbench-agent-loop-'));
  });
  beforeEach(async () => { server = await new FakeOpenAIServer().start(); });
  afterEach(async () => { await server.close(); });
  after(async () => {
    if (docker) await assertNoContainers(docker, sessions);
    if (tmp) await fsp.rm(tmp, { recursive: true, force: true }).catch(() => undefined);
  });

  async function run(extra: Partial<AgentRunOptions>, onOut?: (dir: string) => void): Promise<{ r: AgentRunResult; layout: SessionLayout; events: SessionEvent[] }> {
    const out = path.join(tmp, `loop-${process.pid}-${++n}`);
    sessions.push(path.basename(out));
    onOut?.(out);
    const r = await runAgentTask({
      task, source: task.paper!.localRepo!, outDir: out, cacheDir: path.join(tmp, 'cache'), docker,
      endpoint: { name: 'agent', baseURL: server.baseURL, apiKey: API_KEY, model: 'scripted-agent' },
      verify: false, judge: false, sleep: () => Promise.resolve(), ...extra,
    });
    const layout = new SessionLayout(out);
    const read = await readEvents(layout.events);
    assert.deepEqual(read.invalid, []);
    assert.equal(read.torn, undefined);
    assert.deepEqual(groundTruthSeen(server, forbiddenStrings(task)), []);
    return { r, layout, events: read.events };
  }

  /** Every reply: write a file (once), then list files, forever. */
  const busyModel = (usage?: { prompt_tokens: number; completion_tokens: number }) => (_req: unknown, i: number): Reply => (i === 1
    ? { toolCalls: [{ name: 'write_file', arguments: { path: 'notes/plan.md', content: 'step one\n' } }, { name: 'set_design', arguments: { constants: [], independent: [], dependent: [], freeText: 'draft design' } }], usage }
    : { toolCalls: [{ name: 'list_files', arguments: { path: 'notes' } }], usage });

  async function nothingLost(layout: SessionLayout, events: SessionEvent[], stop: string): Promise<void> {
    assert.equal(await fsp.readFile(path.join(layout.workspace, 'notes/plan.md'), 'utf8'), 'step one\n');
    const state = await readState(layout.state);
    assert.equal(state?.design.freeText, 'draft design');
    assert.equal(state?.submitted, undefined);
    assert.ok(events.some((e) => e.type === 'note.added' && e.text.startsWith(`agent stopped: ${stop}:`)), `stop ${stop} recorded`);
    assert.equal(events.filter((e) => e.type.startsWith('clock.')).at(-1)?.type, 'clock.paused', 'the clock is paused at the end');
    const saved = events.filter((e) => e.type === 'answers.saved').at(-1);
    assert.ok(saved?.type === 'answers.saved' && saved.design?.freeText === 'draft design', 'the design draft is in the log');
    assert.equal(events.filter((e) => e.type === 'agent.model_call').length, server.count, 'every request recorded');
  }

  it('a step limit stops the run with its reason; nothing lost', async () => {
    server.handler = busyModel();
    const { r, layout, events } = await run({ limits: { maxSteps: 3 } });
    assert.equal(r.agent.stop, 'max_steps');
    assert.equal(r.agent.steps, 3);
    assert.equal(server.count, 3);
    assert.equal(r.submission, undefined);
    await nothingLost(layout, events, 'max_steps');
  });

  it('a token limit stops the run before the next call once reached', async () => {
    server.handler = busyModel({ prompt_tokens: 1000, completion_tokens: 200 });
    const { r, layout, events } = await run({ limits: { maxTokens: 2500 } });
    assert.equal(r.agent.stop, 'max_tokens');
    assert.equal(server.count, 3, '2400 tokens after two calls (< 2500), 3600 after three');
    assert.equal(r.agent.ledger.promptTokens + r.agent.ledger.completionTokens, 3600);
    await nothingLost(layout, events, 'max_tokens');
  });

  it('a USD budget stops the run before a call that could exceed it (prices from the ledger table)', async () => {
    server.handler = busyModel({ prompt_tokens: 1000, completion_tokens: 200 });
    // 10 USD per 1M tokens: a call costs 0.012 USD; the guard's worst case adds 4096 output tokens (0.041 USD) and the prompt.
    const prices = { 'scripted-agent': { inputPerMTok: 10, outputPerMTok: 10 } };
    const { r, layout, events } = await run({ prices, limits: { budgetUsd: 0.1 } });
    assert.equal(r.agent.stop, 'budget');
    assert.ok(r.agent.ledger.usd <= 0.1, `spent ${r.agent.ledger.usd}`);
    assert.ok(server.count >= 2 && server.count <= 5, `${server.count} calls`);
    const calls = events.filter((e): e is ModelCallEvent => e.type === 'agent.model_call');
    assert.ok(calls.every((c) => Math.abs(c.costUsd! - 0.012) < 1e-9));
    await nothingLost(layout, events, 'budget');
  });

  it('a working-time limit stops the run, and caps a shell command\'s timeout by the time left', async () => {
    server.enqueue({ toolCalls: [{ name: 'write_file', arguments: { path: 'notes/plan.md', content: 'step one\n' } }, { name: 'set_design', arguments: { constants: [], independent: [], dependent: [], freeText: 'draft design' } }] });
    server.handler = () => ({ toolCalls: [{ name: 'shell', arguments: { command: 'sleep 20; echo late' } }] });
    const t0 = Date.now();
    const { r, layout, events } = await run({ limits: { maxWorkingMs: 2500 } });
    assert.equal(r.agent.stop, 'max_time');
    assert.ok(Date.now() - t0 < 15_000, 'the sleeping command was killed at the limit, not after 20 s');
    const shell = events.find((e): e is ToolCallEvent => e.type === 'agent.tool_call' && e.tool === 'shell');
    assert.equal(shell?.error, 'timeout');
    await nothingLost(layout, events, 'max_time');
  });

  it('cancelling stops the run at once with reason cancelled; the tool under way is killed', async () => {
    server.enqueue({ toolCalls: [{ name: 'write_file', arguments: { path: 'notes/plan.md', content: 'step one\n' } }, { name: 'set_design', arguments: { constants: [], independent: [], dependent: [], freeText: 'draft design' } }] });
    server.handler = () => ({ toolCalls: [{ name: 'shell', arguments: { command: 'sleep 30' } }] });
    const ac = new AbortController();
    const t0 = Date.now();
    const { r, layout, events } = await run({ signal: ac.signal, onStep: (s) => { if (s.kind === 'model' && s.step === 2) setTimeout(() => ac.abort(), 300); } });
    assert.equal(r.agent.stop, 'cancelled');
    assert.ok(Date.now() - t0 < 20_000);
    assert.equal(server.count, 2);
    const shell = events.find((e): e is ToolCallEvent => e.type === 'agent.tool_call' && e.tool === 'shell');
    assert.equal(shell?.exitCode, null, 'the sleeping command was killed');
    await nothingLost(layout, events, 'cancelled');
  });

  it('three replies in a row without a tool call stop the run (no_action), each answered with a nudge', async () => {
    server.enqueue(
      { toolCalls: [{ name: 'write_file', arguments: { path: 'notes/plan.md', content: 'step one\n' } }, { name: 'set_design', arguments: { constants: [], independent: [], dependent: [], freeText: 'draft design' } }] },
      { content: 'Hmm.' }, { content: 'Let me think.' }, { content: 'Still thinking.' },
    );
    const { r, layout, events } = await run({});
    assert.equal(r.agent.stop, 'no_action');
    assert.equal(server.count, 4);
    assert.match(server.requests[2].body.messages.at(-1).content, /Continue with the tools/);
    const last = events.filter((e): e is ModelCallEvent => e.type === 'agent.model_call').at(-1);
    assert.equal(last?.text, 'Still thinking.');
    assert.equal(last?.finishReason, 'stop');
    await nothingLost(layout, events, 'no_action');
  });

  it('pause, take over (an edit by the person), resume: the clock pauses, the model is told what changed; a refused shell command is not run', async () => {
    const control = new AgentControl();
    server.enqueue(
      { toolCalls: [{ name: 'write_file', arguments: { path: 'notes/plan.md', content: 'step one\n' } }, { name: 'set_design', arguments: { constants: [], independent: [], dependent: [], freeText: 'draft design' } }] },
      { toolCalls: [{ name: 'shell', arguments: { command: 'rm -rf toycal' } }] },
    );
    server.handler = () => ({ toolCalls: [{ name: 'list_files', arguments: { path: 'notes' } }] });
    let out = '';
    const asked: string[] = [];
    const { r, layout, events } = await run({
      limits: { maxSteps: 3 }, control,
      approveShell: async (command) => { asked.push(command); return { approved: false, reason: 'not that' }; },
      onStep: (st) => {
        if (st.kind !== 'tool' || st.step !== 1 || control.paused) return;
        control.pause();
        setTimeout(() => void (async () => {
          await fsp.writeFile(path.join(out, 'workspace', 'notes', 'by-person.md'), 'fixed by hand\n');
          control.resume('I fixed the plan by hand');
        })(), 1500);
      },
    }, (d) => { out = d; });
    assert.equal(r.agent.stop, 'max_steps');
    const told = server.requests[1].body.messages.at(-1);
    assert.equal(told.role, 'user');
    assert.match(told.content, /Files changed in \/workspace while you were paused .*notes\/by-person\.md/);
    assert.match(told.content, /The researcher's note: I fixed the plan by hand/);
    assert.doesNotMatch(told.content, /notes\/plan\.md/, 'the agent\'s own earlier write is not reported as a change');
    const types = events.map((e) => (e.type === 'note.added' ? `note:${e.text.split(';')[0]}` : e.type === 'clock.paused' ? `paused:${e.reason}` : e.type));
    const i = types.indexOf('note:agent paused by the researcher');
    assert.ok(i > 0);
    assert.deepEqual(types.slice(i, i + 4), ['note:agent paused by the researcher', 'paused:agent paused by the researcher', 'clock.resumed', 'note:agent resumed']);
    assert.deepEqual(asked, ['rm -rf toycal']);
    const refused = events.find((e): e is ToolCallEvent => e.type === 'agent.tool_call' && e.tool === 'shell');
    assert.match(refused!.error!, /did not approve this command: not that/);
    await fsp.access(path.join(layout.workspace, 'toycal', 'model.py'));
    await nothingLost(layout, events, 'max_steps');
  });

  it('a malformed tool call, an unknown tool and a 500 are recorded and handled; 500s after the retries stop the run', async () => {
    server.enqueue(
      { toolCalls: [{ name: 'write_file', arguments: '{"path": "notes/plan.md", "content": ' }] },
      { toolCalls: [{ name: 'rm_rf_everything', arguments: {} }, { name: 'read_file', arguments: { path: 'README.md', colour: 'red' } }] },
      { status: 500, message: 'upstream exploded' },
      { toolCalls: [{ name: 'write_file', arguments: { path: 'notes/plan.md', content: 'step one\n' } }, { name: 'set_design', arguments: { constants: [], independent: [], dependent: [], freeText: 'draft design' } }] },
      { content: 'I will think about it.' },
      { status: 500 }, { status: 503 }, { status: 502 },
    );
    const { r, layout, events } = await run({});
    assert.equal(r.agent.stop, 'model_error');
    assert.match(r.agent.message, /502/);
    const tools = events.filter((e): e is ToolCallEvent => e.type === 'agent.tool_call');
    assert.deepEqual(tools.map((t) => [t.tool, Boolean(t.error)]), [['write_file', true], ['rm_rf_everything', true], ['read_file', true], ['write_file', false], ['set_design', false]]);
    assert.match(tools[0].error!, /not valid JSON/);
    assert.match(tools[1].error!, /unknown tool "rm_rf_everything"/);
    assert.match(tools[2].error!, /invalid arguments for read_file/);
    // The model was told: the next request carries the tool errors as tool messages.
    const second = server.requests[1].body.messages.at(-1);
    assert.equal(second.role, 'tool');
    assert.match(second.content, /^error: the arguments are not valid JSON/);
    // After a reply without tools the model is nudged.
    assert.match(server.requests[5].body.messages.at(-1).content, /Continue with the tools/);
    const calls = events.filter((e): e is ModelCallEvent => e.type === 'agent.model_call');
    assert.deepEqual(calls.map((c) => [c.error ? c.error.match(/\d{3}/)?.[0] : 'ok', c.retry ?? null]),
      [['ok', null], ['ok', null], ['500', true], ['ok', null], ['ok', null], ['500', true], ['503', true], ['502', false]]);
    assert.equal(server.count, 8);
    await nothingLost(layout, events, 'model_error');
  });

  it('the file tools cannot reach outside /workspace; the session\'s private part is unreachable from the container', async () => {
    const out = path.join(tmp, `confine-${process.pid}`);
    const sessionId = path.basename(out);
    sessions.push(sessionId);
    await prepareSession({ task, source: task.paper!.localRepo!, outDir: out, cacheDir: path.join(tmp, 'cache') });
    await writeSessionMarker(out, task);
    const layout = new SessionLayout(out);
    const secret = await fsp.readFile(path.join(layout.private, 'task.json'), 'utf8');
    assert.ok(secret.includes(task.expectedOutcome.slice(0, 40)));
    // A host-side symlink into private/ (as if the person made one): inside the container it leads nowhere.
    await fsp.symlink(path.join(layout.private, 'task.json'), path.join(layout.workspace, 'hostlink'));
    const service = new SessionService();
    const handle = await service.open(out, { client: 'agent' });
    try {
      const { container } = await ensureWorkContainer(docker, { task: task.id, session: sessionId, workspaceDir: layout.workspace, image: DEFAULT_IMAGE, limits: { network: false } });
      const ctx: ToolContext = { session: handle, container, shellTimeoutMs: 30_000, outputCap: 16_000, remainingMs: () => Infinity };
      const call = (tool: string, args: unknown) => runTool(ctx, tool, JSON.stringify(args));
      assert.equal((await call('shell', { command: 'ln -s /etc etclink && ln -s .. up && ln -s / rootlink' })).exitCode, 0);
      const refused: Array<[string, unknown, RegExp]> = [
        ['read_file', { path: '../private/task.json' }, /"\.\." is not allowed/],
        ['read_file', { path: '/workspace/../private/task.json' }, /"\.\." is not allowed/],
        ['read_file', { path: '/etc/passwd' }, /outside \/workspace/],
        ['read_file', { path: 'etclink/passwd' }, /outside \/workspace/],
        ['read_file', { path: 'up/private/task.json' }, /outside \/workspace/],
        ['read_file', { path: 'rootlink/proc/self/environ' }, /outside \/workspace/],
        ['read_file', { path: 'hostlink' }, /outside \/workspace/],
        ['list_files', { path: '..' }, /"\.\." is not allowed/],
        ['list_files', { path: 'up' }, /outside \/workspace/],
        ['write_file', { path: '../evil.txt', content: 'x' }, /"\.\." is not allowed/],
        ['write_file', { path: 'etclink/evil', content: 'x' }, /outside \/workspace/],
        ['write_file', { path: '/tmp/evil', content: 'x' }, /outside \/workspace/],
        ['write_file', { path: '.git/config', content: 'x' }, /\.git\) is not writable/],
        ['replace_in_file', { path: 'etclink/hostname', old: 'task', new: 'x' }, /outside \/workspace/],
      ];
      const results: string[] = [];
      for (const [tool, args, why] of refused) {
        const r = await call(tool, args);
        results.push(r.result);
        assert.ok(r.error, `${tool} ${JSON.stringify(args)} refused`);
        assert.match(r.error!, why, `${tool} ${JSON.stringify(args)}: ${r.error}`);
      }
      // Reading the container's own /etc/passwd with the shell is fine; the host's private/ is not there to read.
      const sh = await call('shell', { command: 'head -1 /etc/passwd; cat ../private/task.json; cat /private/task.json; ls -a /; find / -name task.json -not -path "/proc/*" 2>/dev/null; echo done' });
      results.push(sh.result);
      assert.match(sh.result, /^root:x:0:0/m);
      assert.match(sh.result, /No such file or directory/);
      assert.match(sh.result, /^done$/m);
      // Inside /workspace the tools work: write, read a part, replace exactly once, list.
      assert.equal((await call('write_file', { path: 'sub/dir/a.txt', content: 'alpha\nbeta\ngamma\n' })).error, undefined);
      assert.match((await call('read_file', { path: 'sub/dir/a.txt', offset: 2, limit: 1 })).result, /from line 2\):\nbeta$/);
      assert.equal((await call('replace_in_file', { path: 'sub/dir/a.txt', old: 'beta', new: 'BETA' })).error, undefined);
      assert.match((await call('replace_in_file', { path: 'sub/dir/a.txt', old: 'beta', new: 'x' })).error!, /occurs 0 times/);
      assert.equal(await fsp.readFile(path.join(layout.workspace, 'sub/dir/a.txt'), 'utf8'), 'alpha\nBETA\ngamma\n');
      assert.match((await call('list_files', { path: 'sub' })).result, /^sub\/dir\/\nsub\/dir\/a\.txt$/);
      assert.match((await call('read_file', { path: '/workspace/toycal/metrics.py' })).result, /^toycal\/metrics\.py \(/);
      // A shell timeout kills the command and says so; a long output is cut in the middle.
      const slow = await runTool({ ...ctx, shellTimeoutMs: 1500 }, 'shell', JSON.stringify({ command: 'echo start; sleep 30; echo never' }));
      assert.equal(slow.error, 'timeout');
      assert.equal(slow.exitCode, null);
      assert.doesNotMatch(slow.result, /never/);
      const loud = await runTool({ ...ctx, outputCap: 1000 }, 'shell', JSON.stringify({ command: 'seq 1 100000' }));
      assert.match(loud.result, /^exit code 0\n1\n2\n[\s\S]*characters omitted[\s\S]*\n100000\n$/);
      assert.ok(loud.result.length < 1200);
      for (const text of results) {
        assert.ok(!text.includes(task.expectedOutcome.slice(0, 40)), `private task.json content leaked: ${text.slice(0, 200)}`);
        assert.ok(!text.includes(secret.slice(0, 60)));
      }
    } finally {
      await handle.release();
      await removeWorkContainer(docker, sessionId);
    }
  });
});
