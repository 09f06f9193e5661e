/**
 * How `verify` and `agent run` end (issue 33, the fault round's findings): SIGTERM and SIGHUP (what
 * a terminal closing, `kill`, systemd, CI and `timeout` send) ended them like kill -9: the work or
 * verify container kept running, the clock segment stayed open, the verification record said
 * `running`. Only SIGINT was clean. Now each of SIGINT, SIGTERM and SIGHUP ends them as Ctrl-C does
 * (exit 1 with a message, no container left, the clock paused, the record cancelled); a full disk
 * under an agent run ends it with the disk named; and what a kill -9 leaves (a `running` record of a
 * process that is gone, its container still running) is repaired by the next `verify`.
 * The real engine, the bundled CLI (`dist/cli.js`), the agent's endpoint a local server the test
 * starts (test/harness/fakeOpenAIServer.ts, the real `openai` client in the CLI).
 */
import * as assert from 'node:assert/strict';
import { execFileSync, spawn, type ChildProcess } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import type Docker from 'dockerode';
import { SessionLayout } from '../../src/core/layout';
import { adoptWorkspace } from '../fixtures/hostRepo';
import { listProjectContainers, removeContainer } from '../../src/core/sandbox/containers';
import { readEvents } from '../../src/core/session/events';
import type { SessionState } from '../../src/core/session/state';
import { latestRecordPath, readRecord, type VerificationRecord } from '../../src/core/verify';
import { requireDocker } from '../harness/docker';
import { FakeOpenAIServer } from '../harness/fakeOpenAIServer';
import { hasStack } from '../harness/faults';
import { CLI, OFFLINE_ENV, ROOT } from './cli.helpers';

const SIGNALS = ['SIGINT', 'SIGTERM', 'SIGHUP'] as const;
const git = (cwd: string, ...args: string[]) => execFileSync('git', ['-c', 'user.name=t', '-c', 'user.email=t@localhost', ...args], { cwd, stdio: 'pipe' });

/** The CLI as a child; `seen(re)` resolves once its stderr matches. */
function start(args: string[], env: NodeJS.ProcessEnv = OFFLINE_ENV): { child: ChildProcess; out: () => string; err: () => string; seen: (re: RegExp, ms?: number) => Promise<void>; exit: Promise<{ code: number | null; signal: NodeJS.Signals | null }> } {
  const child = spawn(process.execPath, [CLI, ...args], { cwd: ROOT, env, stdio: ['ignore', 'pipe', 'pipe'] });
  let out = '';
  let err = '';
  child.stdout!.on('data', (d: Buffer) => { out += d.toString(); });
  child.stderr!.on('data', (d: Buffer) => { err += d.toString(); });
  const exit = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((r) => child.once('close', (code, signal) => r({ code, signal })));
  const seen = async (re: RegExp, ms = 90_000) => {
    const until = Date.now() + ms;
    while (!re.test(err)) {
      if (Date.now() > until || child.exitCode !== null) throw new Error(`never saw ${re} (stderr: ${err.slice(-800)})`);
      await new Promise((r) => setTimeout(r, 20));
    }
  };
  return { child, out: () => out, err: () => err, seen, exit };
}

/** Resolves with the exit, or rejects once `ms` passed (the process is then killed). */
async function within<T>(p: Promise<T>, ms: number, child: ChildProcess, what: string): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  try {
    return await Promise.race([p, new Promise<T>((_, reject) => { timer = setTimeout(() => { child.kill('SIGKILL'); reject(new Error(`${what} still running ${ms} ms after the signal`)); }, ms); })]);
  } finally { clearTimeout(timer); }
}

describe('faults: SIGTERM and SIGHUP end verify and agent run as SIGINT does; a kill -9 is repaired by the next run', function () {
  this.timeout(300_000);
  let docker: Docker;
  let base: string;
  const roots: string[] = [];
  let n = 0;

  before(async function () {
    docker = await requireDocker(this);
    base = fs.mkdtempSync(path.join(os.tmpdir(), 'expbench-faults-signals-'));
  });
  after(async () => {
    for (const r of roots) for (const c of await listProjectContainers(docker, { session: path.basename(r) }).catch(() => [])) await removeContainer(docker, c.Id).catch(() => undefined);
    if (base) fs.rmSync(base, { recursive: true, force: true });
  });

  /** A session folder: a "task start" repository, the solver's script, answers. */
  function session(scriptBody: string): string {
    const root = path.join(base, `s${++n}`);
    roots.push(root);
    const l = new SessionLayout(root);
    fs.mkdirSync(l.workspace, { recursive: true });
    fs.writeFileSync(path.join(l.workspace, 'README_task.txt'), 'masked\n');
    git(l.workspace, 'init', '-q');
    git(l.workspace, 'add', '-A');
    git(l.workspace, 'commit', '-q', '-m', 'task start');
    adoptWorkspace(root); // the host repository that prepare makes (the verifier's task start)
    fs.writeFileSync(path.join(l.workspace, 'reproduce_exp_bench.sh'), `#!/bin/bash\n${scriptBody}\n`);
    fs.mkdirSync(l.private, { recursive: true });
    fs.writeFileSync(l.answers, JSON.stringify({ design: 'd', conclusion: 'the value is 7' }));
    return root;
  }
  const containers = async (root: string) => listProjectContainers(docker, { session: path.basename(root) });

  for (const sig of SIGNALS) {
    it(`verify ended by ${sig}: exit 1 saying so, no container, the record cancelled (not running)`, async () => {
      const s = session('echo started; sleep 120; echo seven 7');
      const run = start(['verify', s]);
      await run.seen(/Z started$/m);
      run.child.kill(sig);
      const end = await within(run.exit, 45_000, run.child, `verify after ${sig}`);
      assert.equal(end.signal, null, `died of ${end.signal}: ${run.err().slice(-400)}`);
      assert.equal(end.code, 1, run.err().slice(-400));
      assert.ok(!hasStack(run.err()), run.err());
      assert.match(run.err(), /cancel/i);
      assert.deepEqual((await containers(s)).map((c) => c.State), [], 'no verify container left');
      const rec = await readRecord(latestRecordPath(new SessionLayout(s)));
      assert.notEqual(rec?.status, 'running', JSON.stringify(rec));
      assert.equal(rec?.cancelled, true);
    });
  }

  describe('agent run', () => {
    let server: FakeOpenAIServer;
    before(async () => { server = await new FakeOpenAIServer().start(); });
    after(async () => { await server?.close(); });
    const cache = () => path.join(base, 'cache');

    for (const sig of SIGNALS) {
      it(`agent run ended by ${sig} during a shell command: exit 1 (cancelled), no work container, the clock paused`, async () => {
        server.enqueue({ toolCalls: [{ name: 'shell', arguments: { command: 'echo busy; sleep 120', timeout_seconds: 300 } }] });
        server.handler = () => ({ status: 400, message: 'the scripted sequence is over' });
        const out = path.join(base, `agent-${sig}-${++n}`);
        roots.push(out);
        const run = start(['agent', 'run', 'sample/toycal/0', '--model', 'scripted-agent', '--out', out, '--cache', cache(), '--no-verify', '--no-judge'],
          { ...OFFLINE_ENV, EXPBENCH_AGENT_BASE_URL: server.baseURL });
        await run.seen(/^\[1\] model → shell$/m);
        run.child.kill(sig);
        const end = await within(run.exit, 45_000, run.child, `agent run after ${sig}`).catch((e: Error) => { throw new Error(`${e.message}: ${run.err().slice(-1200)}`); });
        assert.equal(end.signal, null, `died of ${end.signal}: ${run.err().slice(-400)}`);
        assert.equal(end.code, 1, run.err().slice(-400));
        assert.ok(!hasStack(run.err()), run.err());
        assert.match(run.out(), /stopped \(cancelled/);
        assert.deepEqual((await containers(out)).map((c) => c.State), [], 'no work container left');
        const l = new SessionLayout(out);
        const state = JSON.parse(fs.readFileSync(l.state, 'utf8')) as SessionState;
        assert.ok(state.clock.segments.every((x) => x.end !== undefined), `an open clock segment: ${JSON.stringify(state.clock.segments)}`);
        const { events } = await readEvents(l.events);
        assert.ok(events.some((e) => e.type === 'note.added' && /^agent stopped: cancelled/.test(e.text)));
      });
    }

    it('agent run killed (kill -9) during a shell command: the next agent run removes the container it left', async () => {
      server.enqueue({ toolCalls: [{ name: 'shell', arguments: { command: 'echo busy; sleep 120', timeout_seconds: 300 } }] });
      server.handler = () => ({ status: 400, message: 'the scripted sequence is over' });
      const killed = path.join(base, `agent-killed-${++n}`);
      roots.push(killed);
      const env = { ...OFFLINE_ENV, EXPBENCH_AGENT_BASE_URL: server.baseURL };
      const run = start(['agent', 'run', 'sample/toycal/0', '--model', 'scripted-agent', '--out', killed, '--cache', cache(), '--no-verify', '--no-judge'], env);
      await run.seen(/^\[1\] model → shell$/m);
      run.child.kill('SIGKILL');
      await run.exit;
      assert.equal((await containers(killed)).filter((c) => c.State === 'running').length, 1, 'the kill left the work container running (the case is real)');
      const next = path.join(base, `agent-next-${++n}`);
      roots.push(next);
      const again = start(['agent', 'run', 'sample/toycal/0', '--model', 'scripted-agent', '--out', next, '--cache', cache(), '--no-verify', '--no-judge'], env);
      const end = await within(again.exit, 90_000, again.child, 'the next agent run');
      assert.equal(end.code, 1, again.err().slice(-600)); // the endpoint refuses: model_error
      assert.match(again.err(), new RegExp(`removed the work container of ${path.basename(killed)}, left running by an agent run that was killed`));
      assert.deepEqual((await containers(killed)).map((c) => c.State), [], 'the killed run\'s container is gone');
    });

    it('agent run on a full disk (the agent fills it): ends with the disk named, no stack, no work container', async function () {
      const mnt = fs.mkdtempSync(path.join(os.tmpdir(), 'expbench-faults-signals-tmpfs-'));
      try {
        execFileSync('mount', ['-t', 'tmpfs', '-o', 'size=24m', 'tmpfs', mnt], { stdio: 'pipe' });
      } catch {
        fs.rmdirSync(mnt);
        this.skip(); // not root: no tmpfs (pending, visible)
      }
      try {
        // The agent's shell command fills the workspace's file system, then it keeps working.
        server.enqueue({ toolCalls: [{ name: 'shell', arguments: { command: 'head -c 64m /dev/zero > fill.bin; echo filled', timeout_seconds: 120 } }] });
        server.handler = () => ({ toolCalls: [{ name: 'write_file', arguments: { path: 'notes.md', content: 'x'.repeat(20_000) } }, { name: 'set_conclusion', arguments: { text: 'y'.repeat(50_000) } }] });
        const out = path.join(mnt, 'agent');
        roots.push(out);
        const run = start(['agent', 'run', 'sample/toycal/0', '--model', 'scripted-agent', '--out', out, '--cache', cache(), '--no-verify', '--no-judge', '--max-steps', '20'],
          { ...OFFLINE_ENV, EXPBENCH_AGENT_BASE_URL: server.baseURL });
        const end = await within(run.exit, 120_000, run.child, 'agent run on a full disk');
        const all = run.err() + run.out();
        assert.equal(end.signal, null);
        assert.ok(!hasStack(all), all.slice(-1500));
        assert.equal(end.code, 1, all.slice(-800));
        assert.match(all, /disk is full/);
        assert.match(run.out(), /stopped \(error: .*disk is full/, all.slice(-1500));
        assert.deepEqual((await containers(out)).map((c) => c.State), [], 'no work container left');
      } finally {
        execFileSync('umount', ['-l', mnt]);
        fs.rmSync(mnt, { recursive: true, force: true });
      }
    });
  });

  it('verify killed (kill -9) while its script runs: the next verify repairs the `running` record (the container stopped, the record an error naming the end) and runs', async () => {
    const s = session('echo started; sleep 120; echo seven 7');
    const run = start(['verify', s]);
    await run.seen(/Z started$/m);
    run.child.kill('SIGKILL');
    await run.exit;
    const l = new SessionLayout(s);
    const killed = await readRecord(latestRecordPath(l)) as VerificationRecord;
    assert.equal(killed.status, 'running', 'the kill left a running record (the case is real)');
    assert.equal((await containers(s)).filter((c) => c.State === 'running').length, 1, 'and its container running');
    fs.writeFileSync(l.script, '#!/bin/bash\necho seven 7\n');
    const next = start(['verify', s, '--json']);
    const end = await within(next.exit, 120_000, next.child, 'the next verify');
    assert.equal(end.code, 0, next.err().slice(-800));
    const repaired = await readRecord(path.join(l.verify, killed.runId, 'record.json'));
    assert.equal(repaired?.status, 'error', JSON.stringify(repaired));
    assert.match(repaired?.error?.message ?? '', /verifier .*ended .*before the run finished/);
    assert.match(next.err(), new RegExp(`${killed.runId}`), 'the next verify says what it repaired');
    const now = JSON.parse(next.out()) as VerificationRecord;
    assert.equal(now.status, 'finished');
    assert.equal(now.E_clean, true);
    assert.deepEqual((await containers(s)).map((c) => c.State), [], 'no container left');
  });
});
