/**
 * Faults of the verifier (issue 12, groups 4, 7 (verifier parts), 8 and 9), against the real
 * Docker engine, the real image and the real command line: a neighbour's sweep, a full disk
 * (tmpfs), kill -9 at chosen moments, damaged records, hostile limits and workspaces (50,000
 * files). After each case: the user's work is intact (workspace files, answers), the next command
 * says what happened and what to do with no raw stack, and no container of the case's sessions
 * and no temp file of the project (each case's processes get their own TMPDIR) is left.
 * Figures: test/harness/faults-verify-tasks.ts.
 */
import * as assert from 'node:assert/strict';
import { ChildProcess, execFileSync, spawn, spawnSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import type Docker from 'dockerode';
import { isExpBenchError } from '../../src/core/errors';
import { SessionLayout } from '../../src/core/layout';
import { adoptWorkspace } from '../fixtures/hostRepo';
import { collectOutcomes } from '../../src/core/interop/collect';
import { createContainer, LABEL_OWNER, listProjectContainers, removeContainer } from '../../src/core/sandbox/containers';
import { ownerToken } from '../../src/core/sandbox/processes';
import { latestRecordPath, readRecord, runVerification, saveRecord, VerificationRecord } from '../../src/core/verify';
import { WRAPPER_DIR } from '../../src/core/verify/container-io';
import { ensurePristine } from '../../src/core/workspace/cache';
import { classifySource } from '../../src/core/workspace/source';
import { requireDocker } from '../harness/docker';
import { caseTmp, cli, CLI, expectHeld, hasStack, printFiguresAtEnd, projectTempFiles } from '../harness/faults-verify-tasks';

printFiguresAtEnd();

const roots: string[] = [];
const git = (cwd: string, ...args: string[]) => execFileSync('git', ['-c', 'user.name=t', '-c', 'user.email=t@localhost', ...args], { cwd, stdio: 'pipe' });

/** A session folder: a workspace with one "task start" commit, the solver's files uncommitted, answers. */
function makeSession(o: { base?: Record<string, string>; solver: Record<string, string>; conclusion?: string; parent?: string }): string {
  const root = fs.mkdtempSync(path.join(o.parent ?? os.tmpdir(), 'expbench-fv-'));
  roots.push(root);
  const layout = new SessionLayout(root);
  fs.mkdirSync(layout.workspace, { recursive: true });
  const write = (files: Record<string, string>) => {
    for (const [rel, text] of Object.entries(files)) {
      fs.mkdirSync(path.dirname(path.join(layout.workspace, rel)), { recursive: true });
      fs.writeFileSync(path.join(layout.workspace, rel), text);
    }
  };
  write({ 'README_task.txt': 'masked\n', ...o.base });
  git(layout.workspace, 'init', '-q');
  git(layout.workspace, 'add', '-A');
  git(layout.workspace, 'commit', '-q', '-m', 'task start');
  adoptWorkspace(root);
  write(o.solver);
  fs.mkdirSync(layout.private, { recursive: true });
  fs.writeFileSync(layout.answers, JSON.stringify({ design: 'd', conclusion: o.conclusion ?? 'the value is 7' }));
  return root;
}
const script = (body: string) => ({ 'reproduce_exp_bench.sh': `#!/bin/bash\n${body}\n` });
const sessionOf = (root: string) => path.basename(root);

/** Every file of the workspace and the answers, as bytes (what must survive any fault). */
function snapshot(root: string): Map<string, Buffer> {
  const out = new Map<string, Buffer>();
  const walk = (dir: string) => {
    for (const e of fs.readdirSync(dir, { withFileTypes: true })) {
      const p = path.join(dir, e.name);
      if (e.isDirectory()) walk(p);
      else if (e.isFile() && fs.statSync(p).size < 64 * 1024 * 1024) out.set(path.relative(root, p), fs.readFileSync(p));
    }
  };
  walk(path.join(root, 'workspace'));
  out.set('private/answers.json', fs.readFileSync(path.join(root, 'private', 'answers.json')));
  return out;
}
function intact(before: Map<string, Buffer>, root: string): boolean {
  for (const [rel, bytes] of before) {
    if (rel.startsWith('workspace/.git/')) continue; // git's own files (index stat data) may be refreshed
    const p = path.join(root, rel);
    if (!fs.existsSync(p) || !fs.readFileSync(p).equals(bytes)) return false;
  }
  return true;
}

async function containersOf(docker: Docker, ...roots_: string[]): Promise<Docker.ContainerInfo[]> {
  const all: Docker.ContainerInfo[] = [];
  for (const r of roots_) all.push(...await listProjectContainers(docker, { session: sessionOf(r) }));
  return all;
}

/** Starts the CLI; resolves once `pattern` shows on its stderr (then the caller may kill it). */
function startCli(args: string[], env: NodeJS.ProcessEnv): { child: ChildProcess; stderr: () => string; seen: (re: RegExp, ms?: number) => Promise<void>; exit: Promise<number | null> } {
  const child = spawn(process.execPath, [CLI, ...args], { env: { ...process.env, ...env }, stdio: ['ignore', 'pipe', 'pipe'] });
  let err = '';
  child.stderr!.on('data', (c: Buffer) => { err += c.toString(); });
  child.stdout!.resume();
  const exit = new Promise<number | null>((r) => child.once('exit', (code) => r(code)));
  const seen = async (re: RegExp, ms = 60_000) => {
    const until = Date.now() + ms;
    while (!re.test(err)) {
      if (Date.now() > until || child.exitCode !== null) throw new Error(`never saw ${re} (stderr: ${err.slice(-500)})`);
      await new Promise((r) => setTimeout(r, 20));
    }
  };
  return { child, stderr: () => err, seen, exit };
}

async function waitFor<T>(what: string, fn: () => Promise<T | undefined | false> | T | undefined | false, ms = 30_000): Promise<T> {
  const until = Date.now() + ms;
  for (;;) {
    const v = await fn();
    if (v) return v;
    if (Date.now() > until) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

/** A pid that no process has now (a process that ran and ended). */
function deadPid(): number {
  const r = spawnSync('sh', ['-c', 'echo $$']);
  return Number(r.stdout.toString().trim());
}

describe('faults: the verifier', function () {
  this.timeout(180_000);
  let docker: Docker;
  before(async function () { docker = await requireDocker(this); });
  after(async () => {
    for (const r of roots) {
      for (const c of await listProjectContainers(docker, { session: sessionOf(r) }).catch(() => [])) await removeContainer(docker, c.Id).catch(() => undefined);
      execFileSync('rm', ['-rf', r]); // 50,000 files: coreutils is much faster than Node's recursive rm
    }
  });

  it('group 4: another session\'s verify keeps a killed run\'s uncollected container; --collect then gets its result; collected and ownerless leftovers are swept', async () => {
    const tmp = caseTmp('g4');
    const a = makeSession({ solver: script('echo started; sleep 1; echo seven 7') });
    const b = makeSession({ solver: script('echo b') });
    const beforeA = snapshot(a);
    // A's verifier is killed while its script runs: the container exits on its own, uncollected.
    const run = startCli(['verify', a], { TMPDIR: tmp });
    await run.seen(/Z started$/m);
    run.child.kill('SIGKILL');
    await run.exit;
    const [aContainer] = await waitFor('A\'s container to exit', async () => {
      const cs = await containersOf(docker, a);
      return cs.length === 1 && cs[0].State === 'exited' ? cs : undefined;
    });
    // Planted leftovers, as a killed verifier leaves them: a created container whose owner is gone, and
    // an exited one whose result was collected (its record finished) but whose removal failed.
    const c = makeSession({ solver: script('echo c') });
    const cLayout = new SessionLayout(c);
    const created = await createContainer(docker, {
      image: 'expbench/sandbox:1', labels: { task: 't', session: sessionOf(c), role: 'verify' }, limits: { network: false },
      user: 'solver', workdir: '/workspace', cmd: ['true'], start: false, extraLabels: { [LABEL_OWNER]: ownerToken().replace(/\/\d+\/\d+$/, `/${deadPid()}/1`) },
    });
    const runId = '20261201T000000Z-abcdef';
    const out = path.join(cLayout.verify, runId, 'out');
    fs.mkdirSync(out, { recursive: true });
    const collected = await createContainer(docker, {
      image: 'expbench/sandbox:1', labels: { task: 't', session: sessionOf(c), role: 'verify' }, limits: { network: false },
      user: 'solver', workdir: '/workspace', cmd: ['true'], binds: [{ hostPath: out, containerPath: WRAPPER_DIR }],
      extraLabels: { [LABEL_OWNER]: ownerToken().replace(/\/\d+\/\d+$/, `/${deadPid()}/1`) },
    });
    await collected.container.wait();
    const finishedRecord: VerificationRecord = {
      version: 1, runId, status: 'finished', mode: 'clean', imageId: 'sha256:x', image: 'expbench/sandbox:1', containerId: collected.id,
      command: ['bash', 'reproduce_exp_bench.sh'], user: 'solver', gpusPassed: false,
      limits: { timeoutMs: 1000, memoryBytes: 0, cpus: 0, pids: 0, network: false, gpus: false },
      startedAt: new Date().toISOString(), exitCode: 0, timedOut: false, cancelled: false,
      logs: { stdout: 'a', stderr: 'b', combined: 'c' }, logTruncated: false, logCapBytes: 1024, E_exit: true, E_clean: true,
      E_claims: { claims: [], allFound: true }, changedFiles: [], lint: [],
    };
    await saveRecord(cLayout, finishedRecord);

    // B's verify sweeps.
    const rb = await cli(['verify', b, '--json'], { env: { TMPDIR: tmp } });
    assert.equal(rb.code, 0, rb.stderr);
    const left = (await containersOf(docker, a, c)).map((x) => x.Id);
    assert.ok(left.includes(aContainer.Id), 'A\'s uncollected result is kept');
    assert.ok(!left.includes(created.id), 'a created container of a gone owner is swept');
    assert.ok(!left.includes(collected.id), 'a collected container of a gone owner is swept');
    const ra = await cli(['verify', a, '--collect', '--json'], { env: { TMPDIR: tmp } });
    const rec = JSON.parse(ra.stdout || '{}') as VerificationRecord;
    expectHeld('group 4: a neighbour\'s sweep', {
      workIntact: intact(beforeA, a),
      noCrash: !hasStack(ra.stderr + rb.stderr),
      says: ra.code === 0 && rec.status === 'finished' && rec.E_clean === true && rec.E_claims.allFound,
      clean: (await containersOf(docker, a, b, c)).length === 0 && projectTempFiles(tmp).length === 0,
      detail: `${ra.code} ${ra.stderr.slice(-400)} temp: ${projectTempFiles(tmp).join(',')}`,
    });
  });

  it('group 7: a full disk during verify (2 MiB tmpfs) ends with "the disk is full" and what to do, no stack, no container', async function () {
    const mnt = fs.mkdtempSync(path.join(os.tmpdir(), 'expbench-fv-tmpfs-'));
    try {
      execFileSync('mount', ['-t', 'tmpfs', '-o', 'size=2m', 'tmpfs', mnt], { stdio: 'pipe' });
    } catch {
      fs.rmSync(mnt, { recursive: true, force: true });
      this.skip(); // visible as pending: this machine cannot mount a tmpfs (not root)
    }
    const tmp = caseTmp('g7disk');
    try {
      const s = makeSession({ parent: mnt, solver: script('for i in $(seq 1 60000); do echo "line $i of output that fills the disk"; done') });
      const before = snapshot(s);
      const r = await cli(['verify', s], { env: { TMPDIR: tmp }, ms: 90_000 });
      const collect = await cli(['verify', s, '--collect'], { env: { TMPDIR: tmp } });
      expectHeld('group 7: full disk during verify', {
        workIntact: intact(before, s),
        noCrash: !r.timedOut && !hasStack(r.stderr + collect.stderr) && !/Unhandled|ENOSPC: no space left on device, (write|open)\s*$/m.test(r.stderr),
        says: r.code === 1 && /disk is full.*free some space/.test(r.stderr) && /disk is full|free some space|gone before/.test(collect.stderr + collect.stdout),
        clean: (await containersOf(docker, s)).length === 0 && projectTempFiles(tmp).length === 0,
        detail: `${r.code} ${r.stderr.slice(-600)} || ${collect.code} ${collect.stderr.slice(-300)}`,
      });
    } finally {
      execFileSync('umount', ['-l', mnt]);
      fs.rmSync(mnt, { recursive: true, force: true });
    }
  });

  it('group 7: --log-cap 0 and a log cap of 0 in the core are refused at once (they hung for 10 minutes)', async () => {
    const tmp = caseTmp('g7cap');
    const s = makeSession({ solver: script('echo 7') });
    const before = snapshot(s);
    const r = await cli(['verify', s, '--log-cap', '0'], { env: { TMPDIR: tmp }, ms: 20_000 });
    const t0 = Date.now();
    const core = await runVerification(s, { logCapBytes: 0, docker }).then(() => undefined, (e: unknown) => e);
    assert.ok(isExpBenchError(core, 'BAD_INPUT'), String(core));
    assert.ok(Date.now() - t0 < 5000);
    expectHeld('group 7: --log-cap 0', {
      workIntact: intact(before, s),
      noCrash: !r.timedOut && !hasStack(r.stderr),
      says: r.code !== 0 && /--log-cap must be between 1024/.test(r.stderr) && /cap of each stored log must be a whole number of bytes ≥ 1024/.test((core as Error).message),
      clean: (await containersOf(docker, s)).length === 0 && projectTempFiles(tmp).length === 0 && !fs.existsSync(path.join(s, 'private', 'verify', 'latest.json')),
      detail: r.stderr.slice(0, 300),
    });
  });

  it('group 7: a non-JSON verify/latest.json: verify runs (and replaces it), --collect says so and uses the newest run record', async () => {
    const tmp = caseTmp('g7latest');
    const s = makeSession({ solver: script('echo seven 7') });
    const before = snapshot(s);
    const layout = new SessionLayout(s);
    fs.mkdirSync(layout.verify, { recursive: true });
    fs.writeFileSync(latestRecordPath(layout), '{"version": 1, "runId": "cut sh');
    const first = await cli(['verify', s, '--json'], { env: { TMPDIR: tmp } });
    assert.equal(first.code, 0, first.stderr);
    const runId = (JSON.parse(first.stdout) as VerificationRecord).runId;
    assert.equal((await readRecord(latestRecordPath(layout)))?.runId, runId, 'the damaged copy was replaced');
    fs.writeFileSync(latestRecordPath(layout), 'not json at all');
    const collect = await cli(['verify', s, '--collect'], { env: { TMPDIR: tmp } });
    // No run record to fall back on: said, with what to do.
    fs.rmSync(path.join(layout.verify, runId), { recursive: true });
    const none = await cli(['verify', s, '--collect'], { env: { TMPDIR: tmp } });
    expectHeld('group 7: non-JSON latest.json', {
      workIntact: intact(before, s),
      noCrash: !hasStack(first.stderr + collect.stderr + none.stderr),
      says: collect.code === 0 && /latest\.json: not a verification record: not (valid )?JSON.*newest run record/.test(collect.stderr) && collect.stdout.includes(runId)
        && none.code === 1 && /latest\.json: not a verification record: not (valid )?JSON.*run the verifier again/.test(none.stderr),
      clean: (await containersOf(docker, s)).length === 0 && projectTempFiles(tmp).length === 0,
      detail: `${collect.stderr.slice(0, 300)} || ${none.stderr.slice(0, 300)}`,
    });
  });

  it('group 8: --timeout above 2,147,483 s is refused with the limit (it timed out at once); the core refuses it too', async () => {
    const tmp = caseTmp('g8timeout');
    const s = makeSession({ solver: script('echo seven 7') });
    const before = snapshot(s);
    const r = await cli(['verify', s, '--timeout', '3000000', '--json'], { env: { TMPDIR: tmp } });
    const core = await runVerification(s, { limits: { timeoutMs: 3_000_000_000 }, docker }).then((x) => x, (e: unknown) => e);
    const ok = await cli(['verify', s, '--timeout', '2147483', '--json'], { env: { TMPDIR: tmp } });
    const rec = JSON.parse(ok.stdout || '{}') as VerificationRecord;
    expectHeld('group 8: --timeout 3000000', {
      workIntact: intact(before, s),
      noCrash: !hasStack(r.stderr + ok.stderr),
      says: r.code !== 0 && /--timeout must be between 0\.001 and 2147483 seconds/.test(r.stderr)
        && isExpBenchError(core, 'BAD_INPUT') && /at most 2147483\.647 s/.test(core.message)
        && rec.timedOut === false && rec.E_clean === true,
      clean: (await containersOf(docker, s)).length === 0 && projectTempFiles(tmp).length === 0,
      detail: `${r.stderr.slice(0, 200)} || ${String(core)} || ${ok.stderr.slice(0, 200)}`,
    });
  });

  it('group 8: a verify killed while sending the clean tree is collected as interrupted (error, reason), not as exit 125', async () => {
    const tmp = caseTmp('g8feed');
    // 200 MB of zeros (compressed by git in a moment, slower to send): the copy lasts long enough to be killed in.
    const s = makeSession({ solver: script('echo seven 7') });
    const big = path.join(s, 'workspace', 'data.bin');
    const fd = fs.openSync(big, 'w');
    const chunk = Buffer.alloc(8 * 1024 * 1024);
    for (let i = 0; i < 25; i++) fs.writeSync(fd, chunk);
    fs.closeSync(fd);
    const before = snapshot(s);
    const run = startCli(['verify', s], { TMPDIR: tmp });
    await run.seen(/copying the clean tree into the container/, 90_000);
    await new Promise((r) => setTimeout(r, 150));
    run.child.kill('SIGKILL');
    await run.exit;
    const layout = new SessionLayout(s);
    const collect = await cli(['verify', s, '--collect', '--json'], { env: { TMPDIR: tmp } });
    const rec = await readRecord(latestRecordPath(layout));
    const next = await cli(['verify', s, '--json'], { env: { TMPDIR: tmp }, ms: 120_000 });
    expectHeld('group 8: killed while sending the tree', {
      workIntact: intact(before, s),
      noCrash: !hasStack(collect.stderr + next.stderr),
      says: rec?.status === 'error' && /did not arrive complete.*interrupted.*run the verifier again/.test(rec.error?.message ?? '')
        && rec.exitCode === null && collect.code === 1 && /interrupted/.test(collect.stderr) && next.code === 0,
      clean: (await containersOf(docker, s)).length === 0 && projectTempFiles(tmp).length === 0,
      detail: `${JSON.stringify({ status: rec?.status, exit: rec?.exitCode, error: rec?.error })} || ${collect.stderr.slice(0, 300)} || temp ${projectTempFiles(tmp).join(',')}`,
    });
  });

  it('group 8/hostile: 50,000 files and a 0.3 s script under --timeout 5: the tree copy does not count against the limit', async function () {
    this.timeout(360_000);
    const tmp = caseTmp('g8files');
    const base: Record<string, string> = {};
    const s = makeSession({ base, solver: script('sleep 0.3; echo files $(find . -name "f*.txt" | wc -l)'), conclusion: 'we saw 50000 files' });
    const ws = path.join(s, 'workspace');
    for (let d = 0; d < 100; d++) {
      fs.mkdirSync(path.join(ws, `d${d}`));
      for (let f = 0; f < 500; f++) fs.writeFileSync(path.join(ws, `d${d}`, `f${f}.txt`), `${d}/${f}\n`);
    }
    const before = snapshot(s);
    const r = await cli(['verify', s, '--timeout', '5', '--json'], { env: { TMPDIR: tmp }, ms: 300_000 });
    const rec = JSON.parse(r.stdout || '{}') as VerificationRecord;
    const setupS = rec.scriptStartedAt ? (Date.parse(rec.scriptStartedAt) - Date.parse(rec.startedAt)) / 1000 : NaN;
    process.stdout.write(`      ${JSON.stringify({ startedAt: rec.startedAt, scriptStartedAt: rec.scriptStartedAt, endedAt: rec.endedAt })}\n`);
    process.stdout.write(`      50,000 files: copy before the script ${setupS.toFixed(1)} s, script ${(rec.durationMs ?? NaN) / 1000} s, limit 5 s\n`);
    expectHeld('group 8: 50,000 files under --timeout 5', {
      workIntact: intact(before, s),
      noCrash: !r.timedOut && !hasStack(r.stderr),
      says: r.code === 0 && rec.timedOut === false && rec.E_clean === true && rec.E_claims.allFound && (rec.durationMs ?? 1e9) < 5000,
      clean: (await containersOf(docker, s)).length === 0 && projectTempFiles(tmp).length === 0,
      detail: `${r.code} ${JSON.stringify({ timedOut: rec.timedOut, E: rec.E_clean, ms: rec.durationMs, claims: rec.E_claims })} ${r.stderr.slice(-300)}`,
    });
  });

  it('group 9/hostile: a 300 MB sparse file: verify passes without filling the temp folder, the file stays sparse', async () => {
    const tmp = caseTmp('g9sparse');
    const s = makeSession({ solver: script('test "$(stat -c %s data.bin)" = 314572800 && echo size 7') });
    const file = path.join(s, 'workspace', 'data.bin');
    execFileSync('truncate', ['-s', '300M', file]);
    const before = snapshot(s);
    let peak = 0;
    const du = () => { try { peak = Math.max(peak, Number(execFileSync('du', ['-sm', tmp]).toString().split('\t')[0])); } catch { /* between runs */ } };
    const timer = setInterval(du, 200);
    const r = await cli(['verify', s, '--json'], { env: { TMPDIR: tmp } });
    clearInterval(timer);
    const rec = JSON.parse(r.stdout || '{}') as VerificationRecord;
    const st = fs.statSync(file);
    process.stdout.write(`      300 MB sparse file: temp folder peak ${peak} MB\n`);
    expectHeld('group 9: sparse file', {
      workIntact: intact(before, s) && st.size === 300 * 1024 * 1024 && st.blocks * 512 < 1024 * 1024,
      noCrash: !hasStack(r.stderr),
      says: r.code === 0 && rec.E_clean === true && rec.E_claims.allFound && peak < 64,
      clean: (await containersOf(docker, s)).length === 0 && projectTempFiles(tmp).length === 0,
      detail: `${r.code} peak ${peak} MB ${r.stderr.slice(-300)}`,
    });
  });

  it('group 8: a script that fakes the wrapper\'s "ended" marker is still stopped at its time limit', async () => {
    const tmp = caseTmp('g8cheat');
    const s = makeSession({ solver: script(`touch ${WRAPPER_DIR}/end; sleep 20; echo seven 7`) });
    const before = snapshot(s);
    const t0 = Date.now();
    const r = await cli(['verify', s, '--timeout', '2', '--json'], { env: { TMPDIR: tmp } });
    const ms = Date.now() - t0;
    const rec = JSON.parse(r.stdout || '{}') as VerificationRecord;
    expectHeld('group 8: faked end marker', {
      workIntact: intact(before, s),
      noCrash: !hasStack(r.stderr),
      says: r.code === 0 && rec.timedOut === true && rec.E_clean === false && rec.exitCode === null && ms < 15_000,
      clean: (await containersOf(docker, s)).length === 0 && projectTempFiles(tmp).length === 0,
      detail: `${ms} ms ${JSON.stringify({ timedOut: rec.timedOut, E: rec.E_clean, exit: rec.exitCode })}`,
    });
  });

  it('group 8: report never takes a judge file planted in the workspace of an unjudged session', async () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'expbench-fv-report-'));
    roots.push(dir);
    const s = path.join(dir, 's1');
    fs.mkdirSync(path.join(s, 'workspace', 'results'), { recursive: true });
    fs.mkdirSync(path.join(s, 'private'), { recursive: true });
    const planted = { task_id: 'iclr2024/1/0', design_score: 100, setup_score: 100, conclusion_score: 100, judge_kind: 'llm' };
    fs.writeFileSync(path.join(s, 'workspace', 'results', 'judge.json'), JSON.stringify(planted));
    fs.writeFileSync(path.join(s, 'workspace', 'judge.json'), JSON.stringify(planted));
    const { outcomes, skipped } = await collectOutcomes([dir]);
    const r = await cli(['report', dir, '--json']);
    // Nothing judged: the report says so and exits 1 (issue 15), naming the skipped session and why;
    // it prints no table (so no planted score can reach one).
    expectHeld('group 8: planted judge file', {
      workIntact: fs.existsSync(path.join(s, 'workspace', 'judge.json')),
      noCrash: !hasStack(r.stderr),
      says: outcomes.length === 0 && skipped.some((k) => k.file === s && /not judged yet.*expbench judge/.test(k.reason))
        && r.code === 1 && r.stdout === '' && r.stderr.includes(`skipped ${s}: `) && /nothing to report/.test(r.stderr),
      clean: true, detail: JSON.stringify({ outcomes: outcomes.length, skipped, out: r.stdout.slice(0, 300), err: r.stderr.slice(0, 300), code: r.code }),
    });
  });

  it('group 9: a verify killed while building the tree leaves a temp tree, indexes and a created container: the next verify removes them (owner gone)', async () => {
    const tmp = caseTmp('g9verify');
    const a = makeSession({ solver: { ...script('echo seven 7'), ...Object.fromEntries(Array.from({ length: 3000 }, (_, i) => [`gen/f${i}.txt`, `${i}\n`])) } });
    const b = makeSession({ solver: script('echo b') });
    const before = snapshot(a);
    const run = startCli(['verify', a], { TMPDIR: tmp });
    await run.seen(/creating the verify container/);
    await waitFor('the temp tree', () => projectTempFiles(tmp).some((n) => n.startsWith('expbench-verify-tree-')), 20_000);
    await waitFor('A\'s container', async () => (await containersOf(docker, a)).length > 0, 20_000);
    run.child.kill('SIGKILL');
    await run.exit;
    const leftAfterKill = projectTempFiles(tmp);
    const containersAfterKill = (await containersOf(docker, a)).map((x) => x.State);
    assert.ok(leftAfterKill.length > 0, 'the kill left temp files (the case is real)');
    const rb = await cli(['verify', b, '--json'], { env: { TMPDIR: tmp } });
    const ra = await cli(['verify', a, '--collect'], { env: { TMPDIR: tmp } });
    const again = await cli(['verify', a, '--json'], { env: { TMPDIR: tmp } });
    const rec = JSON.parse(again.stdout || '{}') as VerificationRecord;
    expectHeld('group 9: killed verify leftovers', {
      workIntact: intact(before, a),
      noCrash: !hasStack(rb.stderr + ra.stderr + again.stderr),
      // killed before or after its `running` record was saved, before or after its start reached the
      // engine: no record; one said gone or never started; or one said interrupted (tree cut)
      says: rb.code === 0 && /was gone before its result|never started|no verification record to collect|interrupted.*run the verifier again/.test(ra.stderr + ra.stdout)
        && again.code === 0 && rec.E_clean === true,
      clean: (await containersOf(docker, a, b)).length === 0 && projectTempFiles(tmp).length === 0,
      detail: `after kill: ${leftAfterKill.join(',')} ${containersAfterKill.join(',')}; now: ${projectTempFiles(tmp).join(',')}; ${ra.stderr.slice(0, 300)}`,
    });
  });

  it('group 9: index files of a killed patch/submit and partial clones of a killed cold preparation are removed once their process is gone (only then)', async () => {
    const tmp = caseTmp('g9patch');
    const s = makeSession({ solver: script('echo 7') });
    const before = snapshot(s);
    const dead = deadPid();
    const stale = path.join(tmp, `expbench-patch-${dead}-0123abcd.index`);
    const live = path.join(tmp, `expbench-patch-${process.pid}-89abcdef.index`);
    fs.writeFileSync(stale, Buffer.alloc(264 * 1024));
    fs.writeFileSync(live, 'x');
    const r = await cli(['patch', s], { env: { TMPDIR: tmp } });
    assert.equal(r.code, 0, r.stderr);
    // A cold preparation's partial clone, in a cache: the next cold clone into that cache removes a dead one.
    const cache = fs.mkdtempSync(path.join(os.tmpdir(), 'expbench-fv-cache-'));
    roots.push(cache);
    const src = makeSession({ solver: {} });
    const partialDead = path.join(cache, `paper-0123456789abcdef.git.tmp-${dead}-0badc0de`);
    const partialLive = path.join(cache, `paper-0123456789abcdef.git.tmp-${process.pid}-0badc0df`);
    for (const p of [partialDead, partialLive]) { fs.mkdirSync(path.join(p, 'objects', 'pack'), { recursive: true }); fs.writeFileSync(path.join(p, 'objects', 'pack', 'tmp_pack_x'), 'partial'); }
    await ensurePristine({ source: await classifySource(path.join(src, 'workspace')), cacheDir: cache });
    expectHeld('group 9: patch index and partial clone leftovers', {
      workIntact: intact(before, s),
      noCrash: !hasStack(r.stderr),
      says: true,
      clean: !fs.existsSync(stale) && fs.existsSync(live) && !fs.existsSync(partialDead) && fs.existsSync(partialLive),
      detail: JSON.stringify({ stale: fs.existsSync(stale), live: fs.existsSync(live), partialDead: fs.existsSync(partialDead), partialLive: fs.existsSync(partialLive) }),
    });
    fs.rmSync(live, { force: true });
  });
});
