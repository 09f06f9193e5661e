import * as assert from 'node:assert/strict';
import { spawn, type ChildProcess } from 'node:child_process';
import { promises as fsp } from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import type Docker from 'dockerode';
import { SessionLayout } from '../../src/core/layout';
import { foldRunSet, readRunSet, RunSetLayout, type RunSetView } from '../../src/core/runs';
import { listRunSetContainers } from '../../src/core/sandbox';
import { readEvents } from '../../src/core/session/events';
import { readLatestRecord } from '../../src/core/verify/record';
import { requireDocker } from '../harness/docker';
import type { FakeOpenAIServer } from '../harness/fakeOpenAIServer';
import { buildRunSetFixture, nextReply, startUnitModel, taskOf } from '../harness/runSetFixture';
import { requireSlurm, sacctByName, slurm, squeueOf } from '../harness/slurm';
import { CLI, cli, OFFLINE_ENV } from './cli.helpers';
import { until as pollUntil } from '../harness/until';

const SPEC = (tasks: number[], extra = '') => `{
  "version": 1, "name": "fixture on Slurm", "datasets": ["exp-bench"], "tasks": [${tasks.map((i) => `"fixture2026/90001/${i}"`).join(', ')}],
  "agent": { "name": "scripted", "model": "scripted-agent", "maxSteps": 20 }, "concurrency": 2,
  "placement": { "kind": "slurm", "container": "docker" }${extra}
}`;

async function state(dir: string): Promise<RunSetView | undefined> {
  const r = await readRunSet(new RunSetLayout(dir).state).catch(() => undefined);
  return r ? foldRunSet(r.records) : undefined;
}

async function records(dir: string): Promise<Array<Record<string, unknown> & { type: string }>> {
  return ((await readRunSet(new RunSetLayout(dir).state))?.records ?? []) as never;
}

const until = <T>(what: string, f: () => Promise<T | undefined>, ms = 900_000): Promise<T> => pollUntil(what, f, ms, 200);

/** The run set's jobs in Slurm now (queued or running), by their names. */
async function activeJobs(id: string) {
  return (await squeueOf()).filter((l) => l.name.startsWith(`expbench-${id}-`) && /PENDING|RUNNING|COMPLETING|CONFIGURING/.test(l.state));
}

describe('run sets on Slurm (bundled CLI, the local Slurm, real Docker, the scripted model)', function () {
  this.timeout(1_800_000);
  let tmp: string;
  let docker: Docker;
  let model: FakeOpenAIServer;
  let env: NodeJS.ProcessEnv;
  const started: ChildProcess[] = [];

  before(async function () {
    const conf = await requireSlurm(this);
    docker = await requireDocker(this);
    tmp = await fsp.mkdtemp(path.join(os.tmpdir(), 'expbench-runs-slurm-'));
    await buildRunSetFixture(tmp);
    model = await startUnitModel(300);
    env = { ...OFFLINE_ENV, SLURM_CONF: conf, EXPBENCH_AGENT_BASE_URL: model.baseURL, XDG_CACHE_HOME: path.join(tmp, 'cache') };
  });
  afterEach(async () => {
    for (const c of started.splice(0)) if (c.exitCode === null && c.signalCode === null) c.kill('SIGKILL');
  });
  after(async () => {
    await model?.close();
    if (tmp) await fsp.rm(tmp, { recursive: true, force: true }).catch(() => undefined);
  });

  it('four tasks by the built-in agent placed on Slurm: `runs start` killed, `runs status` from a new process re-attaches, `runs resume` waits for the same jobs (none submitted twice); sacct shows them; E_clean on all; each session records its job id', async () => {
    await fsp.writeFile(path.join(tmp, 'spec.jsonc'), SPEC([0, 1, 2, 3], ', "limits": {"cpus": 1, "memoryMiB": 2048}'));
    const dir = path.join(tmp, 'four');
    const start = spawn(process.execPath, [CLI, 'runs', 'start', path.join(tmp, 'spec.jsonc'), '--out', dir], { env, stdio: ['ignore', 'pipe', 'pipe'] });
    started.push(start);
    let out = '';
    start.stdout!.on('data', (d: Buffer) => { out += d; });
    start.stderr!.on('data', (d: Buffer) => { out += d; });
    // Killed once every unit is in Slurm and two run; the units' containers, made by the CLI in the
    // job, are looked at on the way: as strict as locally.
    const inspected = new Map<string, Docker.ContainerInspectInfo>();
    const dataset = path.join(tmp, 'exp-bench');
    const look = async (id: string) => {
      for (const c of await listRunSetContainers(docker, id)) {
        if (inspected.has(c.Id)) continue;
        const info = await docker.getContainer(c.Id).inspect().catch(() => undefined);
        if (info) inspected.set(c.Id, info);
      }
    };
    await until('four units placed, two running', async () => {
      const v = await state(dir);
      if (v?.id) await look(v.id);
      return v && v.units.every((u) => u.ref) && v.counts.running >= 2 ? v : undefined;
    });
    start.kill('SIGKILL');
    await new Promise((r) => (start.exitCode !== null || start.signalCode !== null ? r(null) : start.once('exit', r)));
    const v0 = (await state(dir))!;
    assert.ok((await activeJobs(v0.id)).length >= 1, `the jobs outlive the killed orchestrator: ${out}`);

    // A new process reads the units' state from Slurm.
    const st = await cli(['runs', 'status', dir, '--json'], { env });
    assert.equal(st.code, 0, st.stderr);
    const status = JSON.parse(st.stdout) as { orchestrator: { alive: boolean }; orphaned: number; rows: Array<{ status: string; engine?: string }> };
    assert.equal(status.orchestrator.alive, false);
    const engines = status.rows.map((r) => r.engine).filter(Boolean) as string[];
    assert.ok(engines.length >= 2 && engines.every((e) => /^(running on \S+|pending(: .+)?|ended: exited.*)$/.test(e)), engines.join('; '));
    assert.ok(engines.some((e) => e.startsWith('running on ')), engines.join('; '));
    const text = await cli(['runs', 'status', dir], { env });
    assert.match(text.stdout, /`runs resume` re-attaches to their jobs/);

    const resume = cli(['runs', 'resume', dir], { env });
    let resumed = false;
    void resume.finally(() => { resumed = true; });
    while (!resumed) { await look(v0.id); await new Promise((res) => setTimeout(res, 300)); }
    const r = await resume;
    assert.equal(r.code, 0, r.stdout + r.stderr);
    assert.ok(inspected.size >= 1, 'a container of the run set was seen while the units ran');
    for (const info of inspected.values()) {
      const what = `${info.Name} (${info.Config.Labels['expbench.role'] ?? '?'})`;
      assert.equal(info.HostConfig.NetworkMode, 'none', `${what}: no network`);
      assert.ok(info.Config.User && !/^(0|root)(:|$)/.test(info.Config.User), `${what}: not root (User=${info.Config.User})`);
      for (const m of info.Mounts) assert.ok(!path.resolve(m.Source).startsWith(dataset), `${what}: the dataset (ground truth) is not mounted: ${m.Source}`);
    }
    assert.doesNotMatch(r.stderr, /reaped/);
    const v = (await state(dir))!;
    assert.deepEqual(v.counts, { pending: 0, running: 0, done: 4, failed: 0, cancelled: 0 }, r.stderr);
    // Each unit went to Slurm once: every placement of a unit names one job element, try 1.
    const placed = (await records(dir)).filter((x) => x.type === 'unit.placed') as unknown as Array<{ unit: string; try: number; ref: { id: string } }>;
    const jobOf = new Map<string, string>();
    for (const p of placed) {
      assert.equal(p.try, 1);
      assert.equal(jobOf.get(p.unit) ?? p.ref.id, p.ref.id, 'a unit placed again got the job it had');
      jobOf.set(p.unit, p.ref.id);
    }
    assert.equal(new Set(jobOf.values()).size, 4);
    const names = [...new Set(await Promise.all(v.units.map(async (u) => JSON.parse(await fsp.readFile(`${new RunSetLayout(dir).log(u.name, 1)}.slurm.json`, 'utf8')).name as string)))];
    const acct = await until('sacct has the four jobs ended', async () => {
      const a = await sacctByName(names);
      return a.length === 4 && a.every((l) => l.state === 'COMPLETED') ? a : undefined;
    }, 60_000);
    assert.deepEqual(acct.map((l) => l.id).sort(), [...jobOf.values()].sort(), 'sacct shows exactly the recorded jobs');
    for (const u of v.units) {
      const layout = new SessionLayout(new RunSetLayout(dir).session(u.dir));
      const rec = (await readLatestRecord(layout)).record;
      assert.equal(rec?.E_clean, true, `${u.name}: ${JSON.stringify(rec?.E_clean)}`);
      const { events } = await readEvents(layout.events);
      const opened = events.filter((e) => e.type === 'session.opened');
      assert.ok(opened.length >= 1);
      for (const e of opened) assert.equal(e.type === 'session.opened' && e.job?.id, jobOf.get(u.unit), `${u.name}: session.opened records its Slurm job`);
    }
    assert.deepEqual(await listRunSetContainers(docker, v.id), [], 'no container of the run set is left');
    assert.deepEqual(await activeJobs(v.id), []);
    assert.match(r.stdout, /scripted\theuristic\t4\t/, 'the report table has the four units');
  });

  it('a second run set: "pending: Resources" on the board while the node is full, and `runs cancel` leaves squeue without its jobs', async () => {
    await fsp.writeFile(path.join(tmp, 'spec-cancel.jsonc'), SPEC([4, 5], ', "limits": {"cpus": 2, "memoryMiB": 2048}'));
    const dir = path.join(tmp, 'cancel');
    const start = spawn(process.execPath, [CLI, 'runs', 'start', path.join(tmp, 'spec-cancel.jsonc'), '--out', dir], { env, stdio: 'ignore' });
    started.push(start);
    const v0 = await until('one unit running, the other pending: Resources', async () => {
      const v = await state(dir);
      return v && v.counts.running === 1 && v.units.some((u) => u.detail === 'pending: Resources') ? v : undefined;
    });
    assert.equal((await activeJobs(v0.id)).length, 2);
    const board = await cli(['runs', 'status', dir], { env });
    assert.match(board.stdout, /pending: Resources/);
    const c = await cli(['runs', 'cancel', dir], { env });
    assert.equal(c.code, 0, c.stderr);
    assert.match(c.stdout, /^cancelled: the running orchestrator stopped its units \(2 units cancelled\)/);
    const code = await new Promise((r) => (start.exitCode !== null ? r(start.exitCode) : start.once('exit', r)));
    assert.equal(code, 1);
    assert.deepEqual(await activeJobs(v0.id), [], 'squeue holds none of its jobs');
    const v = (await state(dir))!;
    assert.deepEqual(v.counts, { pending: 0, running: 0, done: 0, failed: 0, cancelled: 2 });
    assert.deepEqual(await listRunSetContainers(docker, v.id), []);
  });

  it('a task whose curation file asks for a GPU: its unit is submitted with --gres=gpu:1, held (--hold), seen in scontrol show job, then `runs cancel`', async () => {
    // A dataset of its own: the curation file speaks for the whole paper.
    const gpuDir = path.join(tmp, 'gpu-dataset');
    await buildRunSetFixture(gpuDir);
    await fsp.writeFile(path.join(gpuDir, 'exp-bench', 'tasks', 'fixture2026', '90001', 'curation.jsonc'), '{ "version": 1, "environment": { "gpus": 1 } }');
    const spec = SPEC([0]).replace('"datasets": ["exp-bench"]', `"datasets": [${JSON.stringify(path.join(gpuDir, 'exp-bench'))}]`)
      .replace('"container": "docker" }', '"container": "docker", "extraArgs": ["--hold"] }');
    await fsp.writeFile(path.join(tmp, 'spec-gpu.jsonc'), spec);
    const dir = path.join(tmp, 'gpu');
    const start = spawn(process.execPath, [CLI, 'runs', 'start', path.join(tmp, 'spec-gpu.jsonc'), '--out', dir], { env, stdio: 'ignore' });
    started.push(start);
    const v0 = await until('the GPU unit held in Slurm', async () => {
      const v = await state(dir);
      return v && v.units[0]?.ref && v.units[0].detail === 'pending: JobHeldUser' ? v : undefined;
    }, 120_000);
    assert.equal(v0.units[0].resources.gpus, 1, 'the curation file\'s GPU');
    const show = (await slurm('scontrol', ['show', 'job', v0.units[0].ref!.id])).stdout;
    assert.match(show, /TresPerNode=gres:gpu:1/);
    assert.match(show, /JobState=PENDING Reason=JobHeldUser/);
    const c = await cli(['runs', 'cancel', dir], { env });
    assert.equal(c.code, 0, c.stderr);
    await new Promise((r) => (start.exitCode !== null ? r(start.exitCode) : start.once('exit', r)));
    assert.deepEqual(await activeJobs(v0.id), [], 'squeue holds none of its jobs');
    assert.deepEqual((await state(dir))!.counts, { pending: 0, running: 0, done: 0, failed: 0, cancelled: 1 });
  });

  it('a node failure under a running unit: NODE_FAIL from Slurm, the unit requeued as try 2 in a new job, resumed from its session, done with E_clean', async () => {
    await fsp.writeFile(path.join(tmp, 'spec-fail.jsonc'), SPEC([5], ', "limits": {"cpus": 1, "memoryMiB": 2048}'));
    const dir = path.join(tmp, 'fail');
    const start = spawn(process.execPath, [CLI, 'runs', 'start', path.join(tmp, 'spec-fail.jsonc'), '--out', dir], { env, stdio: 'ignore' });
    started.push(start);
    const v0 = await until('the unit running, its agent under way', async () => {
      const v = await state(dir);
      const u = v?.units[0];
      if (!v || !u || v.counts.running !== 1) return undefined;
      const { events } = await readEvents(new SessionLayout(new RunSetLayout(dir).session(u.dir)).events).catch(() => ({ events: [] as Array<{ type: string }> }));
      return events.filter((e) => e.type.startsWith('agent.')).length >= 3 ? v : undefined;
    }, 300_000);
    const first = v0.units[0].ref!.id;
    let seenBefore = 0;
    const node = (await slurm('squeue', ['-h', '-j', first.split('_')[0], '-o', '%N'])).stdout.trim().split('\n')[0];
    try {
      assert.equal((await slurm('scontrol', ['update', `nodename=${node}`, 'state=down', 'reason=expbench-test-node-fail'])).code, 0);
      await until('the unit requeued', async () => ((await records(dir)).some((x) => x.type === 'unit.requeued') ? true : undefined), 120_000);
      seenBefore = model.requests.length;
    } finally {
      await slurm('scontrol', ['update', `nodename=${node}`, 'state=resume']);
    }
    const code = await new Promise((r) => (start.exitCode !== null ? r(start.exitCode) : start.once('exit', r)));
    const recs = await records(dir);
    assert.equal(code, 0, JSON.stringify(recs.slice(-6)));
    const requeued = recs.find((x) => x.type === 'unit.requeued') as unknown as { try: number; end: string };
    assert.deepEqual([requeued.try, requeued.end], [1, 'node_fail']);
    const placed = recs.filter((x) => x.type === 'unit.placed') as unknown as Array<{ try: number; ref: { id: string } }>;
    const second = placed.find((p) => p.try === 2)!.ref.id;
    assert.notEqual(second.split('_')[0], first.split('_')[0], 'try 2 is a job of its own');
    const v = (await state(dir))!;
    assert.deepEqual(v.counts, { pending: 0, running: 0, done: 1, failed: 0, cancelled: 0 });
    const layout = new SessionLayout(new RunSetLayout(dir).session(v.units[0].dir));
    const { events } = await readEvents(layout.events);
    const jobs = events.filter((e) => e.type === 'session.opened').map((e) => (e.type === 'session.opened' ? e.job?.id : undefined));
    assert.deepEqual([jobs[0], jobs[jobs.length - 1]], [first, second], 'the session records both jobs, in order');
    // Try 2 went on from the conversation its session recorded, not from the start.
    const resumedCall = model.requests.slice(seenBefore).find((q) => taskOf(q) === 'fixture2026/90001/5');
    assert.ok(resumedCall, 'try 2 asked the model');
    assert.ok(nextReply(resumedCall.body?.messages ?? []) >= 1, `try 2's first request carries the earlier tool calls (${nextReply(resumedCall.body?.messages ?? [])})`);
    assert.equal((await readLatestRecord(layout)).record?.E_clean, true);
    assert.deepEqual(await activeJobs(v.id), []);
  });
});
