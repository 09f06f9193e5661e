import * as assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { promises as fsp } from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import type Docker from 'dockerode';
import { readEvents, type SessionEvent } from '../../src/core/session/events';
import { SessionLayout } from '../../src/core/layout';
import { workingByActor } from '../../src/core/session/clock';
import type { SessionState } from '../../src/core/session/state';
import { stepFromSessionEvent } from '../../src/core/steps/step';
import { readRecord, latestRecordPath } from '../../src/core/verify';
import { assertNoContainers, requireDocker } from '../harness/docker';
import { FakeOpenAIServer } from '../harness/fakeOpenAIServer';
import { AGENT_RUNNER, API_KEY, forbiddenStrings, groundTruthSeen, ROOT, sampleTask, solvingScript, TASK_ID } from './agent.fixtures';

/** The bundled CLI, as the README runs it (`npm run build` first). */
const CLI = path.join(ROOT, 'dist', 'cli.js');
/** No judge endpoint (the heuristic judge runs offline), no inherited OpenAI settings. */
const BASE_ENV = Object.fromEntries(Object.entries(process.env).filter(([k]) => !/^(OPENAI_|EXPBENCH_(JUDGE|AGENT)_)/.test(k)));

function cli(env: Record<string, string>, ...args: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    execFile(process.execPath, [CLI, ...args], { cwd: ROOT, env: { ...BASE_ENV, ...env }, maxBuffer: 64 * 1024 * 1024 }, (err, stdout, stderr) => {
      resolve({ code: err ? (typeof err.code === 'number' ? err.code : 1) : 0, stdout, stderr });
    });
  });
}

describe('expbench agent run (node dist/cli.js, a scripted model, the real container)', function () {
  this.timeout(300_000);
  let docker: Docker;
  let server: FakeOpenAIServer;
  let tmp: string;
  const sessions: string[] = [];

  before(async function () {
    docker = await requireDocker(this);
    server = await new FakeOpenAIServer().start();
    tmp = await fsp.mkdtemp(path.join(os.tmpdir(), 'expbench-agent-cli-'));
  });
  after(async () => {
    await server?.close();
    if (docker) await assertNoContainers(docker, sessions);
    if (tmp) await fsp.rm(tmp, { recursive: true, force: true }).catch(() => undefined);
  });

  it('solves sample/toycal/0: writes the script, runs it in the container, sets design and conclusion, submits; E_clean; steps in the log; no ground truth sent', async () => {
    const task = await sampleTask();
    const out = path.join(tmp, `agent-${process.pid}`);
    sessions.push(path.basename(out));
    server.enqueue(...solvingScript());
    const r = await cli({ EXPBENCH_AGENT_BASE_URL: server.baseURL, EXPBENCH_AGENT_API_KEY: API_KEY },
      'agent', 'run', TASK_ID, '--model', 'scripted-agent', '--out', out, '--cache', path.join(tmp, 'cache'), '--max-steps', '20', '--json');
    assert.equal(r.code, 0, r.stderr);
    const result = JSON.parse(r.stdout);
    assert.equal(result.agent.stop, 'submitted');
    assert.equal(result.agent.steps, 7);
    assert.equal(result.agent.toolCalls, 9);
    assert.equal(result.submission.verify.ok, true, JSON.stringify(result.submission.verify));
    assert.ok(result.submission.judge, 'the judge ran after the verifier');

    // The scripted server's checks: no ground truth, no key in any request body; the key in the header.
    assert.equal(server.count, 7);
    const forbidden = forbiddenStrings(task);
    assert.ok(forbidden.includes(task.requirements[0].text) && forbidden.length > 20, 'the check has the ground truth to look for');
    assert.deepEqual(groundTruthSeen(server, forbidden), []);
    for (const q of server.requests) {
      assert.equal(q.headers.authorization, `Bearer ${API_KEY}`);
      assert.equal(q.body.model, 'scripted-agent');
      assert.ok(Array.isArray(q.body.tools) && q.body.tools.some((t: any) => t.function.name === 'submit'));
    }
    const brief = server.requests[0].body.messages[1].content as string;
    assert.ok(brief.includes(task.question) && brief.includes(task.method) && brief.includes(task.agentInstructions), 'the brief is in the prompt');
    // Tool results went back to the model: the shell ran in the container as its user, in /workspace.
    const toolMsgs = server.requests[4].body.messages.filter((m: any) => m.role === 'tool').map((m: any) => m.content as string);
    assert.match(toolMsgs.at(-1)!, /^exit code 0\n[\s\S]*temperature = 1\.3000[\s\S]*\nsolver\n\/workspace\n/);

    const layout = new SessionLayout(out);
    const { events, invalid, torn } = await readEvents(layout.events);
    assert.deepEqual(invalid, []);
    assert.equal(torn, undefined);
    const calls = events.filter((e) => e.type === 'agent.model_call');
    const tools = events.filter((e): e is Extract<SessionEvent, { type: 'agent.tool_call' }> => e.type === 'agent.tool_call');
    assert.equal(calls.length, 7);
    assert.deepEqual(tools.map((t) => t.tool), ['list_files', 'read_file', 'set_design', 'write_file', 'write_file', 'shell', 'run_script', 'set_conclusion', 'submit']);
    assert.ok(tools.every((t) => !t.error), JSON.stringify(tools.filter((t) => t.error)));
    assert.equal(tools.find((t) => t.tool === 'shell')!.exitCode, 0);
    const c0 = calls[0];
    assert.ok(c0.type === 'agent.model_call' && c0.model === 'scripted-agent' && c0.inputTokens === 100 && c0.outputTokens === 20 && c0.finishReason === 'tool_calls');
    assert.deepEqual(c0.type === 'agent.model_call' && c0.toolCalls, ['list_files', 'read_file']);
    const order = events.map((e) => e.type);
    for (const t of ['session.opened', 'clock.started', 'phase.changed', 'script.run', 'submitted', 'verify.finished', 'judge.finished']) assert.ok(order.includes(t as any), `${t} recorded`);
    assert.ok(order.indexOf('script.run') < order.indexOf('submitted') && order.indexOf('submitted') < order.indexOf('verify.finished'));
    const opened = events.find((e) => e.type === 'session.opened');
    assert.ok(opened?.type === 'session.opened' && opened.client === 'agent');
    assert.ok(events.some((e) => e.type === 'note.added' && e.text.startsWith('agent stopped: submitted')));
    // The step model reads the agent's calls as model and tool steps, in their phases.
    let phase: any = 'design';
    const steps = events.map((e, i) => { const s = stepFromSessionEvent(e, phase, { file: layout.events, line: i + 1 }); phase = s.phase; return s.step; }).filter(Boolean);
    assert.equal(steps.filter((s) => s!.kind === 'model' && s!.actor === 'agent').length, 7);
    assert.equal(steps.find((s) => s!.action?.tool === 'run_script')!.phase, 'execution');
    // Nothing of the key in the session's files.
    for (const f of [layout.events, layout.state]) assert.ok(!(await fsp.readFile(f, 'utf8')).includes(API_KEY), `${f} holds the key`);

    // the working time is the agent's: one agent segment, ended by the submission
    const state = JSON.parse(await fsp.readFile(layout.state, 'utf8')) as SessionState;
    assert.deepEqual(state.clock.segments.map((s) => [s.actor ?? 'human', s.endReason]), [['agent', 'submitted']]);
    assert.ok(workingByActor(state.clock).agent > 0 && workingByActor(state.clock).human === 0);
    assert.ok(events.some((e) => e.type === 'clock.actor' && e.actor === 'agent'));

    const record = await readRecord(latestRecordPath(layout));
    assert.equal(record?.E_clean, true);
    assert.equal(await fsp.readFile(path.join(layout.harness, 'reproduce_exp_bench.sh'), 'utf8'), AGENT_RUNNER);
    const answers = JSON.parse(await fsp.readFile(layout.answers, 'utf8'));
    assert.match(answers.conclusion, /ece_after = 0\.0123/);
    assert.ok(Array.isArray(answers.design) && answers.design.length >= 7);
  });

  it('a run stopped by a limit exits 1 with a one-line summary naming the reason; nothing is submitted', async () => {
    const out = path.join(tmp, `agent-limit-${process.pid}`);
    sessions.push(path.basename(out));
    server.handler = () => ({ toolCalls: [{ name: 'list_files', arguments: {} }] });
    const r = await cli({ EXPBENCH_AGENT_BASE_URL: server.baseURL }, 'agent', 'run', TASK_ID, '--model', 'scripted-agent', '--out', out, '--cache', path.join(tmp, 'cache'), '--max-steps', '2');
    assert.equal(r.code, 1, r.stderr);
    const lines = r.stdout.trim().split('\n');
    assert.equal(lines.length, 1, r.stdout);
    assert.match(lines[0], new RegExp(`^${TASK_ID}: stopped \\(max_steps: step limit reached \\(2 model calls\\)\\) after 2 steps \\(2 tool calls, 240 tokens, 0\\.0000 USD \\+ 2 unpriced calls\\); session ${out}$`));
    assert.match(r.stderr, /^\[1\] model → list_files$/m);
    await assert.rejects(fsp.access(new SessionLayout(out).answers), 'not submitted');
  });

  it('smoke: a real endpoint from the environment runs the agent on the sample (skipped without one)', async function () {
    const model = process.env.EXPBENCH_AGENT_SMOKE_MODEL;
    if (!model || !(process.env.EXPBENCH_AGENT_BASE_URL || process.env.EXPBENCH_AGENT_API_KEY)) {
      this.test!.title += ' (SKIPPED: set EXPBENCH_AGENT_SMOKE_MODEL and EXPBENCH_AGENT_BASE_URL / EXPBENCH_AGENT_API_KEY)';
      this.skip();
    }
    const out = path.join(tmp, `agent-smoke-${process.pid}`);
    sessions.push(path.basename(out));
    const env = Object.fromEntries(Object.entries(process.env).filter(([k]) => k.startsWith('EXPBENCH_AGENT_')).map(([k, v]) => [k, v ?? '']));
    const r = await cli(env, 'agent', 'run', TASK_ID, '--model', model, '--out', out, '--cache', path.join(tmp, 'cache'), '--max-steps', '30', '--no-judge', '--json');
    const result = JSON.parse(r.stdout);
    assert.ok(result.agent.steps > 0, r.stderr);
    const { invalid } = await readEvents(new SessionLayout(out).events);
    assert.deepEqual(invalid, []);
  });

  it('refuses to start without an agent endpoint, naming the variable', async () => {
    const r = await cli({}, 'agent', 'run', TASK_ID, '--model', 'm', '--out', path.join(tmp, 'never'));
    assert.equal(r.code, 1);
    assert.match(r.stderr, /EXPBENCH_AGENT_BASE_URL: no agent endpoint/);
    await assert.rejects(fsp.access(path.join(tmp, 'never')), 'nothing prepared');
    const b = await cli({ EXPBENCH_AGENT_BASE_URL: server.baseURL }, 'agent', 'run', TASK_ID, '--model', 'm', '--out', path.join(tmp, 'never'), '--budget-usd', '1');
    assert.equal(b.code, 1);
    assert.match(b.stderr, /^expbench: --prices: --budget-usd needs the price of m/m);
    await assert.rejects(fsp.access(path.join(tmp, 'never')), 'nothing prepared');
  });
});
