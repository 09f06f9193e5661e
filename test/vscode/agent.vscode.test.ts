/**
 * The researcher in the loop, in the real extension host (code-server) with the real work
 * container (Docker, expbench/sandbox:1) and the real `openai` client against a scripted
 * OpenAI-compatible server (test/harness/fakeOpenAIServer.ts): "Attach Agent" on a prepared
 * sample session (no dialogs: an argument object), the steps land live, Take Over pauses the
 * agent before its next model call, the person edits (WorkspaceEdit + save, and a new file through
 * vscode.workspace.fs), Resume tells the model what changed (the next request's user message holds
 * the diff), a shell command waits for approval, Stop ends the run. The event log holds the steps
 * and the clock's actor changes; the clock's segments split the working time into human and agent.
 * A session with a proctor channel folder is refused.
 */
import * as assert from 'node:assert/strict';
import { promises as fsp } from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import * as vscode from 'vscode';
import type Docker from 'dockerode';
import { listProjectContainers, removeWorkContainer } from '../../src/core/sandbox';
import { SessionLayout } from '../../src/core/layout';
import { workingByActor } from '../../src/core/session/clock';
import type { SessionState } from '../../src/core/session/state';
import type { AgentAttachment } from '../../src/extension/agent/attachment';
import { FakeOpenAIServer, type Reply } from '../harness/fakeOpenAIServer';
import { requireDocker } from '../harness/docker';
import { AGENT_RUNNER, AGENT_SCRIPT, API_KEY, forbiddenStrings, groundTruthSeen, sampleTask, solvingScript } from '../unit/agent.fixtures';
import { importFiles } from '../../src/core/trajectory/import';
import type { Trajectory } from '../../src/core/trajectory/types';
import { clockText } from '../../webview-ui/src/clockText';
import { api } from './extensionApi';

const TASK = 'sample/toycal/0';
const MARK = '# checked by the researcher: grid kept';

/** Sets (or, with undefined, resets) `expbench.container.idleStopMinutes` for the user. */
async function idleMinutes(n: number | undefined): Promise<void> {
  await vscode.workspace.getConfiguration('expbench').update('container.idleStopMinutes', n, vscode.ConfigurationTarget.Global);
}

async function until(what: () => string, pred: () => boolean, ms = 30_000): Promise<void> {
  const deadline = Date.now() + ms;
  while (!pred() && Date.now() < deadline) await new Promise((r) => setTimeout(r, 50));
  assert.ok(pred(), what());
}

describe('Attach Agent: watch, take over, resume, stop (real extension host, real Docker, scripted model)', function () {
  this.timeout(180_000);
  let root: string;
  let outDir: string;
  let docker: Docker | undefined;
  let server: FakeOpenAIServer;

  before(async () => {
    await api();
    root = await fsp.mkdtemp(path.join(os.tmpdir(), 'expbench-agent-'));
    outDir = path.join(root, `agent-session-${process.pid}`); // the container's label: unique on a shared engine
    server = await new FakeOpenAIServer().start();
    await vscode.commands.executeCommand('expbench.setAgentApiKey', { key: API_KEY });
  });

  after(async function () {
    this.timeout(60_000);
    await vscode.commands.executeCommand('expbench.clearAgentApiKey');
    await server?.close();
    if (docker) {
      await removeWorkContainer(docker, path.basename(outDir));
      assert.deepEqual(await listProjectContainers(docker, { session: path.basename(outDir) }), [], 'no container left behind');
    }
    await fsp.rm(root, { recursive: true, force: true });
  });

  it('attach → steps live → take over → the person edits → resume (told the diff) → approve a shell command → stop', async function () {
    docker = await requireDocker(this);
    assert.equal(await vscode.commands.executeCommand('expbench.openTask', { taskId: TASK, outDir, open: false }), outDir);
    const layout = new SessionLayout(outDir);
    const [look, design] = solvingScript();
    // request 3 is held until the test has asked for the take-over: the pause then lands after its tools
    let release!: () => void;
    const held = new Promise<void>((r) => { release = r; });
    server.enqueue(look, design);
    server.handler = async (_req, n): Promise<Reply> => {
      if (n === 3) {
        await held;
        return { toolCalls: [
          { name: 'write_file', arguments: { path: 'experiments/calibrate_agent.py', content: AGENT_SCRIPT } },
          { name: 'write_file', arguments: { path: 'reproduce_exp_bench.sh', content: AGENT_RUNNER } },
        ] };
      }
      if (n === 4) return { toolCalls: [{ name: 'shell', arguments: { command: 'head -n 1 experiments/calibrate_agent.py && cat NOTES.md', timeout_seconds: 60 } }] };
      return { hang: true }; // until Stop
    };
    const approvals: string[] = [];
    const at = await vscode.commands.executeCommand<AgentAttachment>('expbench.attachAgent', {
      sessionDir: outDir, model: 'fake-agent', baseUrl: server.baseURL, maxSteps: 20,
      approveShell: async (command: string) => { approvals.push(command); return { approved: true }; },
    });
    assert.ok(at, 'attach returned no attachment');
    const landed: string[] = [];
    at.onDidStep((l) => landed.push(`${l.kind}:${l.step}:${l.text}`));

    // steps arrive live while the run goes on
    await until(() => `steps: ${JSON.stringify(at.steps)}`, () => at.steps.some((l) => l.kind === 'tool' && l.text === 'set_design') && server.count === 3);
    assert.deepEqual(at.steps.filter((l) => l.kind !== 'note').map((l) => `${l.kind}:${l.step}:${l.text}`),
      ['model:1:→ list_files, read_file', 'tool:1:list_files', 'tool:1:read_file', 'model:2:→ set_design', 'tool:2:set_design']);
    assert.equal(at.state, 'running');

    // Between its commands (request 3 is held: no docker exec runs in the container) an attached
    // agent is activity: the idle stopper leaves its container running.
    const wb = await api();
    const session = path.basename(outDir);
    const idleChecks = async (from: number, n: number): Promise<string[]> => {
      await idleMinutes(1);
      try {
        const stopped: string[] = [];
        for (let i = 0; i < n && stopped.length === 0; i++) stopped.push(...await wb.idleStopper.check(from + i * 120_000, session));
        return stopped;
      } finally {
        await idleMinutes(undefined);
      }
    };
    assert.deepEqual(await idleChecks(Date.now(), 3), [], 'the agent at work kept its container');
    assert.equal((await listProjectContainers(docker, { session, role: 'work' }))[0]?.State, 'running');

    // Take Over: the agent pauses before its next model call (after request 3's tools)
    const takeOver = vscode.commands.executeCommand<string>('expbench.agent.takeOver', { sessionDir: outDir });
    await until(() => 'no pausing state', () => at.state === 'pausing');
    release();
    assert.equal(await takeOver, 'takenOver');
    assert.equal(server.count, 3, 'no model call while taken over');
    assert.ok(landed.includes('tool:3:write_file'));

    // the person edits: a WorkspaceEdit saved in the editor, and a new file through the fs API
    const script = vscode.Uri.file(path.join(layout.workspace, 'experiments', 'calibrate_agent.py'));
    const doc = await vscode.workspace.openTextDocument(script);
    const edit = new vscode.WorkspaceEdit();
    edit.insert(script, new vscode.Position(0, 0), `${MARK}\n`);
    assert.ok(await vscode.workspace.applyEdit(edit));
    assert.ok(await doc.save());
    await vscode.workspace.fs.writeFile(vscode.Uri.file(path.join(layout.workspace, 'NOTES.md')), Buffer.from('grid 0.5..5.0 is fine\n'));
    await new Promise((r) => setTimeout(r, 300)); // the person's working time
    await new Promise((r) => setTimeout(r, 50));

    const told = await vscode.commands.executeCommand<string>('expbench.agent.resume', { sessionDir: outDir, note: 'Keep the grid.' });
    assert.match(told, /changed: experiments\/calibrate_agent\.py/);
    assert.match(told, /added: NOTES\.md/);
    assert.ok(told.includes(`+${MARK}`), told);
    assert.ok(told.includes('+grid 0.5..5.0 is fine'), told);

    // the next request carries the "what changed" message as the last user message
    await until(() => `requests: ${server.count}`, () => server.count >= 5);
    const fourth = server.requests[3];
    assert.ok(fourth.lastUser.includes('The researcher paused you'), fourth.lastUser);
    assert.ok(fourth.lastUser.includes(`+${MARK}`), fourth.lastUser);
    assert.ok(fourth.lastUser.includes('Keep the grid.'), fourth.lastUser);
    // the shell command waited for the approval, then ran in the container and saw the person's edits
    assert.deepEqual(approvals, ['head -n 1 experiments/calibrate_agent.py && cat NOTES.md']);
    const shellResult = (server.requests[4].body.messages as Array<{ role: string; content: string }>).filter((m) => m.role === 'tool').at(-1)!.content;
    assert.ok(shellResult.includes(MARK) && shellResult.includes('grid 0.5..5.0 is fine'), shellResult);

    // Stop while the model call hangs
    const r = await vscode.commands.executeCommand<{ stop: string }>('expbench.agent.stop', { sessionDir: outDir });
    assert.equal(r.stop, 'cancelled');
    assert.equal(at.state, 'stopped');

    // no ground truth and no key in any request; the key only in the Authorization header
    assert.deepEqual(groundTruthSeen(server, forbiddenStrings(await sampleTask())), []);
    assert.ok(server.requests.every((q) => q.headers.authorization === `Bearer ${API_KEY}`));

    // the event log holds the steps, the pause and the clock's actors
    const events = (await fsp.readFile(layout.events, 'utf8')).trim().split('\n').map((l) => JSON.parse(l) as { type: string; [k: string]: unknown });
    assert.deepEqual(events.filter((e) => e.type === 'agent.tool_call').map((e) => e.tool), ['list_files', 'read_file', 'set_design', 'write_file', 'write_file', 'shell']);
    assert.ok(events.filter((e) => e.type === 'agent.model_call').length >= 4);
    assert.deepEqual(events.filter((e) => e.type === 'clock.actor').map((e) => e.actor), ['agent', 'human', 'agent', 'human']);
    const notes = events.filter((e) => e.type === 'note.added').map((e) => String(e.text));
    assert.ok(notes.includes('agent paused by the researcher'), notes.join('\n'));
    assert.ok(notes.some((n) => n.startsWith('agent resumed') && n.includes('experiments/calibrate_agent.py')), notes.join('\n'));
    assert.ok(notes.some((n) => n.startsWith('agent stopped: cancelled')), notes.join('\n'));

    // the clock's split: the take-over is the person's time, the rest the agent's
    const state = JSON.parse(await fsp.readFile(layout.state, 'utf8')) as SessionState;
    const by = workingByActor(state.clock);
    assert.ok(by.human >= 300, `human ${by.human} ms`);
    assert.ok(by.agent > 0, `agent ${by.agent} ms`);
    assert.deepEqual(state.clock.segments.map((s) => s.actor ?? 'human'), ['agent', 'human', 'agent'], JSON.stringify(state.clock.segments));

    // "Export Session as Inspect Log…" on the stopped session: the steps and phases come back through our importer
    const log = path.join(root, 'agent.json');
    const exported = await vscode.commands.executeCommand<{ solver: string; counts: { tool: number } }>('expbench.exportSessionInspect', { sessionDir: outDir, format: 'inspect-json', out: log });
    assert.equal(exported.solver, 'agent');
    const back: Trajectory[] = [];
    await importFiles([log], (t) => { back.push(t); });
    assert.deepEqual(back[0].steps.filter((x) => x.kind === 'tool' && x.actor === 'tool').map((x) => x.action?.tool), ['list_files', 'read_file', 'set_design', 'write_file', 'write_file', 'shell']);
    assert.equal(back[0].steps.find((x) => x.action?.tool === 'shell')!.phase, 'implementation');

    // Once the agent has stopped, the same checks stop the idle container (so the check above could fail).
    assert.deepEqual(await idleChecks(Date.now() + 3_600_000, 10), [session], 'the container of a stopped agent is idle');
    assert.notEqual((await listProjectContainers(docker, { session, role: 'work' }))[0]?.State, 'running');
  });

  it('refuses a proctored human baseline (its channel folder exists)', async function () {
    if (!docker) this.skip();
    const layout = new SessionLayout(outDir);
    await fsp.mkdir(layout.channel);
    try {
      await assert.rejects(Promise.resolve(vscode.commands.executeCommand('expbench.attachAgent', { sessionDir: outDir, model: 'fake-agent', baseUrl: server.baseURL })),
        /never attached to this session: it is a proctored human baseline/);
    } finally {
      await fsp.rmdir(layout.channel);
    }
  });
});

describe('Attach Agent in the window\'s own session (the window opened on a prepared session: EXPBENCH_VSCODE_SESSION=sample/toycal/0)', function () {
  this.timeout(300_000);
  let docker: Docker | undefined;
  let server: FakeOpenAIServer | undefined;
  let root: string | undefined;

  after(async function () {
    this.timeout(60_000);
    await vscode.commands.executeCommand('expbench.clearAgentApiKey');
    await server?.close();
    if (docker && root) await removeWorkContainer(docker, path.basename(root));
  });

  it('attaches to the session this window has open (its own handle and container, no second client); take over and resume; it submits, and the stepper\'s clock splits the working time', async function () {
    const own = await (await api()).session;
    if (!own) {
      this.test!.title += ' (SKIPPED: this window has no task session; run with EXPBENCH_VSCODE_SESSION=sample/toycal/0)';
      this.skip();
    }
    docker = await requireDocker(this);
    const c = own.controller;
    root = c.layout.root;
    assert.equal(c.task.id, TASK);
    server = await new FakeOpenAIServer().start();
    await vscode.commands.executeCommand('expbench.setAgentApiKey', { key: API_KEY });
    const script = solvingScript();
    let release!: () => void;
    const held = new Promise<void>((r) => { release = r; });
    server.enqueue(script[0], script[1]);
    server.handler = async (_req, n): Promise<Reply> => {
      if (n === 3) await held;
      return script[n - 1] ?? { status: 500, message: 'the script is over' };
    };
    // no sessionDir: the window's session
    const at = await vscode.commands.executeCommand<AgentAttachment>('expbench.attachAgent', { model: 'fake-agent', baseUrl: server.baseURL, maxSteps: 20 });
    assert.ok(at, 'attach returned no attachment');
    assert.equal(at.sessionRoot, root);
    await until(() => `requests: ${server!.count}`, () => server!.count === 3);

    const takeOver = vscode.commands.executeCommand<string>('expbench.agent.takeOver', {});
    await until(() => `state ${at.state}`, () => at.state === 'pausing');
    release();
    assert.equal(await takeOver, 'takenOver');
    await new Promise((r) => setTimeout(r, 1_500)); // the person's working time (more than a second)
    await vscode.commands.executeCommand<string>('expbench.agent.resume', { note: 'Go on.' });
    const r = await at.done;
    assert.equal(r.stop, 'submitted', r.message);
    await until(() => 'no submission in the window', () => c.session.state.submitted !== undefined && c.view().results.length > 0, 120_000);

    // the agent worked through the window's own handle: no other client opened the session
    const events = (await fsp.readFile(c.layout.events, 'utf8')).trim().split('\n').map((l) => JSON.parse(l) as { type: string; [k: string]: unknown });
    const opened = events.filter((e) => e.type === 'session.opened').map((e) => e.client);
    assert.ok(opened.length > 0 && opened.every((x) => x === 'vscode'), `session.opened clients: ${opened.join(', ')}`);
    assert.equal(events.filter((e) => e.type === 'agent.tool_call').length, 9);
    assert.ok(events.some((e) => e.type === 'verify.finished' && e.ok === true), 'verified E_clean in the window');
    // the stepper's clock: the split by actor, in the text the brief shows
    const view = c.view();
    assert.equal(view.finished, 'submitted');
    assert.ok(view.clock.byActor && view.clock.byActor.agent > 0 && view.clock.byActor.human >= 1_500, JSON.stringify(view.clock));
    assert.match(clockText(view.clock, view.finished), /^Working time \d+:\d\d \(agent \d+:\d\d, you \d+:\d\d; submitted\)$/);
    assert.deepEqual(groundTruthSeen(server, forbiddenStrings(await sampleTask())), []);

    // "Export Session as Inspect Log…" without a folder: this window's session
    const log = path.join(path.dirname(root), 'window-session.eval');
    const exported = await vscode.commands.executeCommand<{ file: string; task: string; scores: string[] }>('expbench.exportSessionInspect', { format: 'inspect-eval', out: log });
    assert.equal(exported.task, TASK);
    assert.deepEqual(exported.scores, ['expbench_judge', 'expbench_verify']);
    const back: Trajectory[] = [];
    await importFiles([log], (t) => { back.push(t); });
    assert.equal(back[0].steps.filter((x) => x.kind === 'model').length, 7);
  });
});
