import * as assert from 'node:assert/strict';
import { execFile, spawn, type ChildProcess } from 'node:child_process';
import { promises as fsp } from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type Docker from 'dockerode';
import { TOOL_NAMES, toolDefinitions } from '../../src/core/agent/tools';
import { SessionLayout } from '../../src/core/layout';
import { parseLoopbackAddress } from '../../src/core/mcp/http';
import { BRIEF_URI } from '../../src/core/mcp/server';
import { readEvents } from '../../src/core/session/events';
import { importOwnEvents } from '../../src/core/trajectory/own';
import { assertNoContainers, requireDocker } from '../harness/docker';
import { AGENT_RUNNER, AGENT_SCRIPT, forbiddenStrings, ROOT, sampleTask, TASK_ID } from './agent.fixtures';

const CLI = path.join(ROOT, 'dist', 'cli.js');
const BASE_ENV = Object.fromEntries(Object.entries(process.env).filter(([k]) => !/^(OPENAI_|EXPBENCH_(JUDGE|AGENT)_)/.test(k))) as Record<string, string>;
const CLIENT = { name: 'expbench-mcp-test', version: '0.1.0' };
const LONG = { timeout: 280_000 };

function cli(...args: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    execFile(process.execPath, [CLI, ...args], { cwd: ROOT, env: BASE_ENV, maxBuffer: 64 * 1024 * 1024 }, (err, stdout, stderr) => {
      resolve({ code: err ? (typeof err.code === 'number' ? err.code : 1) : 0, stdout, stderr });
    });
  });
}

const text = (r: any): string => (r.content as Array<{ type: string; text: string }>).map((c) => c.text).join('');

const DESIGN = {
  constants: [{ name: 'data', description: 'toycal synthetic blobs, seed 0' }],
  independent: [{ name: 'calibration', description: 'temperature fitted on validation or not', values: ['T = 1', 'fitted T'] }],
  dependent: [{ name: 'ECE', description: 'test calibration error' }],
  freeText: 'Fit T on validation NLL; compare test ECE at T = 1 and at the fitted T.',
};

describe('expbench agent mcp (the MCP SDK client, the real container)', function () {
  this.timeout(600_000);
  let docker: Docker;
  let tmp: string;
  const sessions: string[] = [];

  const prepare = async (name: string): Promise<string> => {
    const out = path.join(tmp, name);
    const r = await cli('prepare', TASK_ID, '--out', out, '--cache', path.join(tmp, 'cache'));
    assert.equal(r.code, 0, r.stderr);
    sessions.push(path.basename(out));
    return out;
  };

  before(async function () {
    docker = await requireDocker(this);
    tmp = await fsp.mkdtemp(path.join(os.tmpdir(), 'expbench-mcp-'));
  });
  after(async () => {
    if (docker) await assertNoContainers(docker, sessions);
    if (tmp) await fsp.rm(tmp, { recursive: true, force: true }).catch(() => undefined);
  });

  it('stdio: lists the tools, reads the brief, works in the container as its non-root user, submits (E_clean); every call is a step', async () => {
    const task = await sampleTask();
    const dir = await prepare(`mcp-stdio-${process.pid}`);
    const transport = new StdioClientTransport({ command: process.execPath, args: [CLI, 'agent', 'mcp', dir], env: BASE_ENV, stderr: 'pipe' });
    let stderr = '';
    transport.stderr?.on('data', (d: Buffer) => { stderr += d.toString(); });
    const client = new Client(CLIENT);
    await client.connect(transport);
    try {
      const { tools } = await client.listTools();
      assert.deepEqual(tools.map((t) => t.name), TOOL_NAMES);
      assert.ok(tools.every((t) => t.inputSchema.type === 'object' && t.description), 'each tool has a schema and a description');

      const { resources } = await client.listResources();
      assert.deepEqual(resources.map((r) => r.uri), [BRIEF_URI]);
      const brief = (await client.readResource({ uri: BRIEF_URI })).contents[0] as { text: string };
      assert.ok(brief.text.includes(task.question) && brief.text.includes(task.method), 'the brief holds the question and the method');
      const forbidden = forbiddenStrings(task).filter((f) => !f.startsWith('sk-'));
      assert.deepEqual(forbidden.filter((f) => brief.text.includes(f)), [], 'no ground truth in the brief');
      assert.equal(text(await client.callTool({ name: 'read_brief', arguments: {} })), brief.text);

      const who = await client.callTool({ name: 'shell', arguments: { command: 'id -u; whoami; pwd' } }, undefined, LONG);
      const [head, uid, user, cwd] = text(who).split('\n');
      assert.equal(head, 'exit code 0');
      assert.notEqual(Number(uid), 0, 'the command ran as a non-root user');
      assert.ok(Number.isInteger(Number(uid)));
      assert.deepEqual([user, cwd], ['solver', '/workspace']);

      const escape = await client.callTool({ name: 'read_file', arguments: { path: '../private/task.json' } });
      assert.equal(escape.isError, true);
      assert.match(text(escape), /not allowed/);
      const unknown = await client.callTool({ name: 'rm_rf', arguments: {} });
      assert.equal(unknown.isError, true);

      const early = await client.callTool({ name: 'submit', arguments: {} });
      assert.equal(early.isError, true, 'submit is refused before a design and a conclusion');
      assert.match(text(await client.callTool({ name: 'set_design', arguments: DESIGN })), /^design set/);
      await client.callTool({ name: 'write_file', arguments: { path: 'experiments/calibrate_agent.py', content: AGENT_SCRIPT } });
      await client.callTool({ name: 'write_file', arguments: { path: 'reproduce_exp_bench.sh', content: AGENT_RUNNER } });
      const run = await client.callTool({ name: 'run_script', arguments: {} }, undefined, LONG);
      assert.match(text(run), /^exit code 0[\s\S]*temperature = 1\.3000/);
      await client.callTool({ name: 'set_conclusion', arguments: { text: 'Temperature scaling fitted T = 1.3000 and lowered test ECE; accuracy unchanged.' } });
      const submitted = await client.callTool({ name: 'submit', arguments: {} }, undefined, LONG);
      assert.equal(submitted.isError, undefined, text(submitted));
      assert.match(text(submitted), /^submitted; verify: ok.*; judge: ok/);
      const after = await client.callTool({ name: 'shell', arguments: { command: 'true' } });
      assert.equal(after.isError, true, 'nothing more runs once submitted');
    } finally {
      await client.close();
    }
    assert.match(stderr, /MCP server \(stdio\) for sample\/toycal\/0/);

    const layout = new SessionLayout(dir);
    const { events, invalid } = await readEvents(layout.events);
    assert.deepEqual(invalid, []);
    const attached = events.filter((e) => e.type === 'agent.attached');
    assert.deepEqual(attached.map((e) => e.type === 'agent.attached' && [e.client, e.version, e.via, e.transport, e.unconfined]), [[CLIENT.name, CLIENT.version, 'mcp', 'stdio', true]]);
    const calls = events.flatMap((e) => (e.type === 'agent.tool_call' ? [e] : []));
    assert.deepEqual(calls.map((c) => c.tool), ['read_brief', 'shell', 'read_file', 'rm_rf', 'submit', 'set_design', 'write_file', 'write_file', 'run_script', 'set_conclusion', 'submit', 'shell']);
    assert.ok(calls.every((c) => c.client === CLIENT.name && c.via === 'mcp' && c.durationMs >= 0));
    assert.ok(events.some((e) => e.type === 'submitted') && events.some((e) => e.type === 'verify.finished' && e.ok));
    assert.ok(events.some((e) => e.type === 'script.run' && e.exitCode === 0));

    const traj = await importOwnEvents(layout.events);
    const toolSteps = traj.steps.filter((s) => s.kind === 'tool' && s.actor === 'agent');
    assert.equal(toolSteps.length, calls.length);
    assert.equal(toolSteps[1].action?.tool, 'shell');
    assert.match(toolSteps[1].observation?.text ?? '', /\nsolver\n\/workspace/);
    assert.deepEqual(toolSteps[1].extra, { client: CLIENT.name, via: 'mcp' });
    assert.equal(toolSteps[2].observation?.error, true);
    assert.ok(traj.steps.some((s) => s.kind === 'environment' && /outside agent expbench-mcp-test 0\.1\.0 attached through MCP \(stdio\); unconfined/.test(s.text ?? '')));
    assert.equal(traj.steps.find((s) => s.action?.tool === 'run_script')?.phase, 'execution');

    const show = await cli('session', 'show', dir);
    assert.equal(show.code, 0, show.stderr);
    assert.match(show.stdout, /unconfined\s+yes: expbench-mcp-test \(mcp\)/);
    const shown = JSON.parse((await cli('session', 'show', dir, '--json')).stdout);
    assert.deepEqual(shown.unconfined.map((u: any) => [u.client, u.via]), [[CLIENT.name, 'mcp']]);
    const report = await cli('report', dir, '--json');
    assert.equal(report.code, 0, report.stderr);
    assert.deepEqual(JSON.parse(report.stdout).unconfined.map((u: any) => [u.session, u.agents.map((a: any) => a.client)]), [[dir, [CLIENT.name]]]);
    const reportText = await cli('report', dir);
    assert.match(reportText.stdout, /unconfined \(an outside agent kept its own shell on the host\): .*expbench-mcp-test via mcp/);
    await assertNoContainers(docker, [path.basename(dir)]);
  });

  it('Streamable HTTP on loopback: the token file (0600, private/), 401 without or with a wrong token; the tools work with it; calls are steps', async () => {
    const dir = await prepare(`mcp-http-${process.pid}`);
    const layout = new SessionLayout(dir);
    const child: ChildProcess = spawn(process.execPath, [CLI, 'agent', 'mcp', dir, '--http', '127.0.0.1:0', '--no-verify', '--no-judge'], { env: BASE_ENV, stdio: ['ignore', 'pipe', 'pipe'] });
    let stderr = '';
    const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
    const ready = new Promise<{ url: string; token: string }>((resolve, reject) => {
      child.stderr!.on('data', (d: Buffer) => {
        stderr += d.toString();
        const url = /at (http:\/\/127\.0\.0\.1:\d+\/mcp)\n/.exec(stderr)?.[1];
        const token = /mode 0600\): (\S+)\n/.exec(stderr)?.[1];
        if (url && token) resolve({ url, token });
      });
      void exited.then((code) => reject(new Error(`expbench agent mcp exited (${code}): ${stderr}`)));
    });
    try {
      const { url, token } = await ready;
      const file = path.join(layout.private, 'mcp-token');
      assert.equal((await fsp.readFile(file, 'utf8')).trim(), token);
      assert.equal((await fsp.stat(file)).mode & 0o777, 0o600);
      assert.equal(stderr.split(token).length - 1, 1, 'the token is printed once');
      const inWorkspace = await fsp.readdir(layout.workspace, { recursive: true });
      assert.ok(!inWorkspace.some((f) => String(f).includes('mcp-token')), 'no token file in the workspace');

      const init = { jsonrpc: '2.0', id: 1, method: 'initialize', params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'curl', version: '1' } } };
      const post = (headers: Record<string, string>) => fetch(url, { method: 'POST', headers: { 'Content-Type': 'application/json', Accept: 'application/json, text/event-stream', ...headers }, body: JSON.stringify(init) });
      const none = await post({});
      assert.equal(none.status, 401);
      assert.match(none.headers.get('www-authenticate') ?? '', /^Bearer/);
      assert.equal((await post({ Authorization: `Bearer ${token.slice(0, -1)}x` })).status, 401);
      assert.equal((await post({ Authorization: token })).status, 401, 'a token without the Bearer scheme');

      const wrong = new Client({ name: 'intruder', version: '1' });
      await assert.rejects(wrong.connect(new StreamableHTTPClientTransport(new URL(url), { requestInit: { headers: { Authorization: 'Bearer not-the-token' } } })), /401|nauthorized/);

      const client = new Client(CLIENT);
      await client.connect(new StreamableHTTPClientTransport(new URL(url), { requestInit: { headers: { Authorization: `Bearer ${token}` } } }));
      try {
        assert.deepEqual((await client.listTools()).tools.map((t) => t.name), TOOL_NAMES);
        assert.match(((await client.readResource({ uri: BRIEF_URI })).contents[0] as { text: string }).text, /^Task sample\/toycal\/0/);
        const who = await client.callTool({ name: 'shell', arguments: { command: 'id -u' } }, undefined, LONG);
        assert.match(text(who), /^exit code 0\n\d+\n$/);
        assert.notEqual(Number(text(who).split('\n')[1]), 0, 'not root');
        await client.callTool({ name: 'set_design', arguments: DESIGN });
        await client.callTool({ name: 'set_conclusion', arguments: { text: 'Not measured: this test submits the drafts only.' } });
        assert.equal(text(await client.callTool({ name: 'submit', arguments: {} }, undefined, LONG)), 'submitted');
      } finally {
        await client.close();
      }
      child.kill('SIGTERM');
      assert.equal(await exited, 0, stderr);
      await assert.rejects(fsp.stat(file), /ENOENT/, 'the token file is removed at the end');
    } finally {
      if (child.exitCode === null) { child.kill('SIGKILL'); await exited; }
    }
    const { events } = await readEvents(layout.events);
    const attached = events.flatMap((e) => (e.type === 'agent.attached' ? [e.client] : []));
    assert.deepEqual(attached, [CLIENT.name], 'refused clients never attached');
    const calls = events.flatMap((e) => (e.type === 'agent.tool_call' ? [`${e.client}:${e.tool}`] : []));
    assert.deepEqual(calls, ['shell', 'set_design', 'set_conclusion', 'submit'].map((t) => `${CLIENT.name}:${t}`));
    const traj = await importOwnEvents(layout.events);
    assert.equal(traj.steps.filter((s) => s.kind === 'tool' && s.actor === 'agent').length, 4);
    assert.ok(events.some((e) => e.type === 'submitted'));
    await assertNoContainers(docker, [path.basename(dir)]);
  });

  it('refuses a non-loopback bind, a proctored session and a session another live process owns', async () => {
    for (const bad of ['0.0.0.0:8080', '192.168.1.5:80', 'example.com:80', '[::]:80']) assert.throws(() => parseLoopbackAddress(bad), /loopback/, bad);
    assert.deepEqual(parseLoopbackAddress('8080'), { host: '127.0.0.1', port: 8080 });
    assert.deepEqual(parseLoopbackAddress('localhost:0'), { host: '127.0.0.1', port: 0 });
    assert.deepEqual(parseLoopbackAddress('[::1]:9000'), { host: '::1', port: 9000 });
    const dir = await prepare(`mcp-refuse-${process.pid}`);
    const layout = new SessionLayout(dir);

    const open = await cli('agent', 'mcp', dir, '--http', '0.0.0.0:0');
    assert.equal(open.code, 1);
    assert.match(open.stderr, /refusing to listen on 0\.0\.0\.0/);

    // Another live process (this test runner) owns the session: refused, nothing written.
    await fsp.writeFile(layout.owner, JSON.stringify({ ownerId: 'x', pid: process.pid, client: 'vscode', openedAt: new Date().toISOString() }));
    const owned = await cli('agent', 'mcp', dir);
    assert.equal(owned.code, 1);
    assert.match(owned.stderr, new RegExp(`open in another process \\(vscode, pid ${process.pid}`));
    assert.equal(JSON.parse(await fsp.readFile(layout.owner, 'utf8')).ownerId, 'x');

    await fsp.mkdir(layout.channel);
    const proctored = await cli('agent', 'mcp', dir);
    assert.equal(proctored.code, 1);
    assert.match(proctored.stderr, /proctored human baseline/);
  });
});

describe('the language-model tools declared in package.json', () => {
  it('are the task tools, each with the same description and JSON Schema as the MCP server and the built-in agent serve', async () => {
    const pkg = JSON.parse(await fsp.readFile(path.join(ROOT, 'package.json'), 'utf8'));
    const declared = pkg.contributes.languageModelTools as Array<Record<string, any>>;
    const defs = toolDefinitions();
    assert.deepEqual(declared.map((t) => t.name), defs.map((d) => `expbench_${d.name}`));
    for (const [i, d] of defs.entries()) {
      const t = declared[i];
      assert.doesNotMatch(t.name, /^(copilot_|vscode_)/);
      assert.deepEqual(t.inputSchema, d.parameters, `${t.name}: inputSchema`);
      assert.equal(t.modelDescription, `EXP-Bench task session: ${d.description}`, `${t.name}: modelDescription`);
      assert.equal(t.canBeReferencedInPrompt, true);
      assert.equal(t.toolReferenceName, t.name);
      assert.equal(t.when, 'expbench.lmTools', `${t.name}: shown only while a session's tools are offered`);
      assert.ok(t.displayName);
    }
  });
});
