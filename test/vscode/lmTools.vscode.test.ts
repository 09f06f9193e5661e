/**
 * The task's tools as language-model tools, in the real extension host (code-server) with the
 * real work container: "Offer Task Tools to Chat Agents" on a proctored session registers none
 * (`vscode.lm.tools` lists none of ours); on a prepared sample session the tools appear, and
 * `vscode.lm.invokeTool` (what a chat agent's request does; no chat model is needed) runs a shell
 * command in the container as its non-root user and reads the brief, each call recorded as an
 * `agent.tool_call` step with `via: lm`; withdrawing unregisters them.
 */
import * as assert from 'node:assert/strict';
import { promises as fsp } from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import * as vscode from 'vscode';
import type Docker from 'dockerode';
import { TOOL_NAMES } from '../../src/core/agent/tools';
import { SessionLayout } from '../../src/core/layout';
import { listProjectContainers, removeWorkContainer } from '../../src/core/sandbox';
import { readEvents } from '../../src/core/session/events';
import { importOwnEvents } from '../../src/core/trajectory/own';
import type { OfferResult } from '../../src/extension/agent/lmTools';
import { requireDocker } from '../harness/docker';
import { sampleTask } from '../unit/agent.fixtures';
import { api } from './extensionApi';

const TASK = 'sample/toycal/0';
const ours = () => vscode.lm.tools.filter((t) => t.name.startsWith('expbench_')).map((t) => t.name).sort();

async function until(what: () => string, pred: () => boolean, ms = 30_000): Promise<void> {
  const deadline = Date.now() + ms;
  while (!pred() && Date.now() < deadline) await new Promise((r) => setTimeout(r, 50));
  assert.ok(pred(), what());
}

const textOf = (r: vscode.LanguageModelToolResult): string =>
  r.content.map((p) => (p instanceof vscode.LanguageModelTextPart ? p.value : '')).join('');

describe('Language-model tools: vscode.lm.invokeTool on the task tools (real extension host, real Docker)', function () {
  this.timeout(240_000);
  let root: string;
  let docker: Docker | undefined;
  const sessions: string[] = [];

  before(async () => {
    await api();
    root = await fsp.mkdtemp(path.join(os.tmpdir(), 'expbench-lmtools-'));
  });
  after(async function () {
    this.timeout(60_000);
    await vscode.commands.executeCommand('expbench.agent.withdrawTools');
    if (docker) {
      for (const s of sessions) await removeWorkContainer(docker, s);
      for (const s of sessions) assert.deepEqual(await listProjectContainers(docker, { session: s }), [], 'no container left behind');
    }
    await fsp.rm(root, { recursive: true, force: true });
  });

  it('registers none of the tools for a proctored session', async () => {
    const outDir = path.join(root, 'proctored');
    assert.equal(await vscode.commands.executeCommand('expbench.openTask', { taskId: TASK, outDir, open: false }), outDir);
    await fsp.mkdir(new SessionLayout(outDir).channel);
    const r = await vscode.commands.executeCommand<OfferResult>('expbench.agent.offerTools', { sessionDir: outDir });
    assert.equal(r.offered, false);
    assert.match(r.reason ?? '', /proctored human baseline/);
    assert.deepEqual(r.tools, []);
    await new Promise((res) => setTimeout(res, 500)); // a registration would reach the tools list by then
    assert.deepEqual(ours(), [], 'vscode.lm.tools lists none of ours');
  });

  it('invokeTool runs the shell in the container as its non-root user and reads the brief; each call is a step; withdraw unregisters', async function () {
    docker = await requireDocker(this);
    const task = await sampleTask();
    const outDir = path.join(root, 'session');
    sessions.push(path.basename(outDir));
    assert.equal(await vscode.commands.executeCommand('expbench.openTask', { taskId: TASK, outDir, open: false }), outDir);
    const r = await vscode.commands.executeCommand<OfferResult>('expbench.agent.offerTools', { sessionDir: outDir });
    assert.equal(r.offered, true, r.reason);
    const expected = TOOL_NAMES.map((n) => `expbench_${n}`).sort();
    assert.deepEqual([...r.tools].sort(), expected);
    await until(() => `tools: ${ours().join(', ')}`, () => ours().length === expected.length);
    assert.deepEqual(ours(), expected);
    const shell = vscode.lm.tools.find((t) => t.name === 'expbench_shell')!;
    assert.deepEqual((shell.inputSchema as { required?: string[] }).required, ['command']);
    assert.ok(shell.tags.includes('expbench'));

    const cts = new vscode.CancellationTokenSource();
    const who = await vscode.lm.invokeTool('expbench_shell', { input: { command: 'id -u; whoami; pwd' }, toolInvocationToken: undefined }, cts.token);
    const [head, uid, user, cwd] = textOf(who).split('\n');
    assert.equal(head, 'exit code 0');
    assert.ok(Number.isInteger(Number(uid)) && Number(uid) !== 0, `not root: ${uid}`);
    assert.deepEqual([user, cwd], ['solver', '/workspace']);
    const brief = textOf(await vscode.lm.invokeTool('expbench_read_brief', { input: {}, toolInvocationToken: undefined }, cts.token));
    assert.ok(brief.includes(task.question), 'the brief holds the question');
    assert.ok(!brief.includes(task.expectedOutcome.slice(0, 60)), 'no ground truth in the brief');
    const refused = textOf(await vscode.lm.invokeTool('expbench_read_file', { input: { path: '../private/task.json' }, toolInvocationToken: undefined }, cts.token));
    assert.match(refused, /^error: .*not allowed/);

    const layout = new SessionLayout(outDir);
    const { events } = await readEvents(layout.events);
    const attached = events.flatMap((e) => (e.type === 'agent.attached' ? [[e.client, e.via, e.transport, e.unconfined]] : []));
    assert.deepEqual(attached, [['vscode-extension', 'lm', 'vscode', true]]);
    const calls = events.flatMap((e) => (e.type === 'agent.tool_call' ? [e] : []));
    assert.deepEqual(calls.map((c) => [c.tool, c.client, c.via, Boolean(c.error)]),
      [['shell', 'vscode-extension', 'lm', false], ['read_brief', 'vscode-extension', 'lm', false], ['read_file', 'vscode-extension', 'lm', true]]);
    const steps = (await importOwnEvents(layout.events)).steps.filter((s) => s.kind === 'tool' && s.actor === 'agent');
    assert.deepEqual(steps.map((s) => s.action?.tool), ['shell', 'read_brief', 'read_file']);
    assert.match(steps[0].observation?.text ?? '', /\nsolver\n\/workspace\n/);
    assert.deepEqual(steps[0].extra, { client: 'vscode-extension', via: 'lm' });

    await vscode.commands.executeCommand('expbench.agent.withdrawTools');
    await until(() => `tools after withdraw: ${ours().join(', ')}`, () => ours().length === 0);
    // A one-off local run keeps the worked session (docs/outside-agents.md, "How the screenshot was made").
    const keep = process.env.EXPBENCH_KEEP_LM_SESSION;
    if (keep) {
      await fsp.rm(keep, { recursive: true, force: true });
      await fsp.cp(outDir, keep, { recursive: true });
      console.log(`[lmTools] kept the session in ${keep}`);
    }
  });

  it('asks before a shell command exactly when expbench.agent.approveShell is on (the registered prepareInvocation)', async () => {
    const outDir = path.join(root, 'approve');
    sessions.push(path.basename(outDir));
    assert.equal(await vscode.commands.executeCommand('expbench.openTask', { taskId: TASK, outDir, open: false }), outDir);
    const r = await vscode.commands.executeCommand<OfferResult>('expbench.agent.offerTools', { sessionDir: outDir });
    assert.equal(r.offered, true, r.reason);
    const { lmTools } = await api();
    const config = vscode.workspace.getConfiguration('expbench');
    const before = config.inspect<boolean>('agent.approveShell')?.globalValue;
    const command = 'python3 train.py --seed 7 && rm -rf /workspace/out';
    try {
      await config.update('agent.approveShell', true, vscode.ConfigurationTarget.Global);
      const on = await lmTools.prepared('expbench_shell', { command });
      assert.ok(on?.confirmationMessages, 'a confirmation when approveShell is on');
      assert.equal(on.confirmationMessages.title, 'Run this command in the task container?');
      const message = on.confirmationMessages.message;
      assert.ok((typeof message === 'string' ? message : message.value).includes(command), 'the confirmation shows the command');
      const other = await lmTools.prepared('expbench_read_file', { path: 'README.md' });
      assert.ok(other && !other.confirmationMessages, 'no confirmation for a tool that is not the shell');

      await config.update('agent.approveShell', false, vscode.ConfigurationTarget.Global);
      const off = await lmTools.prepared('expbench_shell', { command });
      assert.ok(off, 'the shell tool is registered');
      assert.equal(off.confirmationMessages, undefined, 'no confirmation when approveShell is off');
      assert.match(String(off.invocationMessage), /shell/);
    } finally {
      await config.update('agent.approveShell', before, vscode.ConfigurationTarget.Global);
      await vscode.commands.executeCommand('expbench.agent.withdrawTools');
    }
    assert.equal(await lmTools.prepared('expbench_shell', { command }), undefined, 'nothing answers once withdrawn');
  });
});
