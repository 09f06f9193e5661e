import * as assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { existsSync, promises as fsp } from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { isExpBenchError } from '../../src/core/errors';
import { exitFileOf, LocalPlacement, type CliEntry } from '../../src/core/placement';
import type { Capacity, PlacementJob, PlacementRef, PlacementState } from '../../src/core/placement';
import { createContainer, DEFAULT_IMAGE, ENV_RUNSET, ENV_RUNSET_UNIT, LABEL_RUNSET, LABEL_UNIT, listRunSetContainers, removeContainer } from '../../src/core/sandbox';
import { ownerGone, ownerToken } from '../../src/core/sandbox/processes';
import { requireDocker } from '../harness/docker';
import { until as pollUntil } from '../harness/until';

/**
 * A stand-in for the CLI: node running a script given as the first argument. A unit's "args"
 * are then `[script, …]`; the script sees the unit's environment as the CLI would.
 */
const NODE: CliEntry = { exe: process.execPath, args: ['-e'], env: {} };

/** Exits with the code in the file `go` once that file exists (the test decides when, by state). */
const WAIT_FOR_FILE = `
const fs = require('fs');
const go = process.argv[1];
const t = setInterval(() => { if (fs.existsSync(go)) { clearInterval(t); process.exit(Number(fs.readFileSync(go, 'utf8')) || 0); } }, 50);
process.on('SIGTERM', () => { fs.writeFileSync(go + '.term', String(process.env.${ENV_RUNSET_UNIT})); process.exit(143); });
console.log('unit', process.env.${ENV_RUNSET_UNIT}, 'of', process.env.${ENV_RUNSET});
fs.writeFileSync(go + '.ready', '1');
`;

const CAP: Capacity = { where: 'the test machine (2 CPUs)', perUnit: { cpus: 2, memoryMiB: 8192, gpus: 0 }, total: { cpus: 2, memoryMiB: 8192, gpus: 0 } };

const until = <T>(what: string, f: () => Promise<T | undefined>, ms = 30_000): Promise<T> => pollUntil(what, f, ms, 50);

describe('local placement (src/core/placement/local.ts): real child processes, real Docker', function () {
  this.timeout(120_000);
  let tmp: string;
  const runSet = `test-${process.pid}`;
  const placements: LocalPlacement[] = [];
  const made = (o: ConstructorParameters<typeof LocalPlacement>[0] = {}) => { const p = new LocalPlacement({ cli: NODE, capacity: CAP, ...o }); placements.push(p); return p; };
  const job = (unit: string, cpus = 1, extra: Partial<PlacementJob> = {}): PlacementJob => ({
    runSet, unit, name: `unit ${unit}`, args: [WAIT_FOR_FILE, path.join(tmp, `${unit}.go`)],
    resources: { cpus, memoryMiB: 512, gpus: 0, timeSeconds: 600 }, logFile: path.join(tmp, 'exec', unit, 'try-1.log'), passEnv: [], ...extra,
  });
  const go = (unit: string, code = 0) => fsp.writeFile(path.join(tmp, `${unit}.go`), String(code));
  /** Every ref a test submitted, so that afterEach waits for each process to end before removing the folder. */
  const submitted: Array<{ p: LocalPlacement; refs: PlacementRef[] }> = [];
  const submit = async (p: LocalPlacement, jobs: PlacementJob[], throttle: number) => {
    const refs = await p.submit(jobs, { throttle });
    submitted.push({ p, refs });
    return refs;
  };
  const states = async (p: LocalPlacement, refs: PlacementRef[]) => Object.fromEntries((await p.poll(refs)).map((s) => [s.unit, s]));

  beforeEach(async () => {
    tmp = await fsp.mkdtemp(path.join(os.tmpdir(), 'expbench-placement-'));
    for (const u of ['a', 'b', 'c', 'd', 'big']) await fsp.mkdir(path.join(tmp, 'exec', u), { recursive: true });
  });
  afterEach(async () => {
    for (const u of ['a', 'b', 'c', 'd', 'big']) await go(u).catch(() => undefined);
    for (const { p, refs } of submitted.splice(0)) await until('the test\'s units ended', async () => ((await p.poll(refs)).every((x) => x.phase === 'ended') ? true : undefined));
    for (const p of placements.splice(0)) p.dispose();
    await fsp.rm(tmp, { recursive: true, force: true });
  });

  it('throttles a run set to `throttle` units, starts the next when one exits, and reads exit codes back from the exit records', async () => {
    const p = made();
    const refs = await submit(p, [job('a'), job('b'), job('c')], 2);
    assert.deepEqual(refs.map((r) => r.unit), ['a', 'b', 'c']);
    let s = await until('a and b running', async () => { const x = await states(p, refs); return x.a.phase === 'running' && x.b.phase === 'running' ? x : undefined; });
    assert.equal(s.c.phase, 'queued');
    assert.equal(s.c.reason, '2 of 2 running (concurrency 2)');
    assert.match(s.a.ref.id, new RegExp(`^${os.hostname()}/\\d+/\\d+$`), 'the ref names the process by pid and start time');
    await go('a', 3);
    s = await until('a ended and c running', async () => { const x = await states(p, refs); return x.a.phase === 'ended' && x.c.phase === 'running' ? x : undefined; });
    assert.equal(s.a.end, 'exited');
    assert.equal(s.a.exitCode, 3);
    const log = await p.log(s.a.ref);
    assert.match(log, new RegExp(`^unit a of ${runSet}\\n`), 'the unit got its labels in its environment and wrote to its log');
    // Another process (a new placement, as a restarted orchestrator) reads the same states from the refs.
    const other = made();
    const seen = await states(other, [s.a.ref, s.b.ref, s.c.ref]);
    assert.deepEqual([seen.a.phase, seen.a.end, seen.a.exitCode, seen.b.phase, seen.c.phase], ['ended', 'exited', 3, 'running', 'running']);
    await go('b'); await go('c');
    await until('all ended', async () => ((await p.poll(refs)).every((x) => x.phase === 'ended') ? true : undefined));
  });

  it('starts a unit only when the CPUs the running ones leave are enough, and refuses one that can never fit', async () => {
    const p = made();
    const refs = await submit(p, [job('a', 1), job('big', 2)], 4);
    const s = await until('a running', async () => { const x = await states(p, refs); return x.a.phase === 'running' ? x : undefined; });
    assert.equal(s.big.phase, 'queued');
    assert.equal(s.big.reason, 'needs 2 CPUs, 1 free');
    await go('a');
    await until('big running', async () => ((await states(p, refs)).big.phase === 'running' ? true : undefined));
    await assert.rejects(p.submit([job('d', 1, { resources: { cpus: 1, memoryMiB: 512, gpus: 8, timeSeconds: 60 } })], { throttle: 1 }),
      (e: unknown) => isExpBenchError(e, 'BAD_INPUT') && /unit d: cannot run on the test machine \(2 CPUs\): needs 8 GPUs, 0 here/.test((e as Error).message));
  });

  it('a queued unit of a process that is gone, and a unit killed together with its watcher, are `lost`; a reap stops only the recorded process', async () => {
    const p = made();
    const queuedRef: PlacementRef = { kind: 'local', unit: 'a', id: 'queued:a', logFile: path.join(tmp, 'exec', 'a', 'try-1.log'), submittedAt: new Date().toISOString() };
    const [q] = await p.poll([queuedRef]);
    assert.deepEqual([q.phase, q.end, q.reason], ['ended', 'lost', 'queued in a process that is gone']);

    // Two processes started outside any placement (as a dead orchestrator's units would be).
    const start = (unit: string) => {
      const c = spawn(process.execPath, ['-e', WAIT_FOR_FILE, path.join(tmp, `${unit}.go`)], { detached: true, stdio: 'ignore', env: { ...process.env, [ENV_RUNSET_UNIT]: unit } });
      c.unref();
      return c.pid!;
    };
    const killedPid = start('b');
    const livePid = start('c');
    // both running their script (its SIGTERM handler installed: node takes a while to start on a loaded machine)
    await until('both scripts running', async () => (existsSync(path.join(tmp, 'b.go.ready')) && existsSync(path.join(tmp, 'c.go.ready')) ? true : undefined));
    const killed: PlacementRef = { ...queuedRef, unit: 'b', id: ownerToken(killedPid), logFile: path.join(tmp, 'exec', 'b', 'try-1.log') };
    const live: PlacementRef = { ...queuedRef, unit: 'c', id: ownerToken(livePid), logFile: path.join(tmp, 'exec', 'c', 'try-1.log') };
    // The same pid with another start time: a pid the kernel gave to another process since.
    const [host, pid, ticks] = live.id.split('/');
    const reused: PlacementRef = { ...live, unit: 'd', id: `${host}/${pid}/${Number(ticks) + 1}` };
    process.kill(killedPid, 'SIGKILL');
    const lost: PlacementState = await until('b gone', async () => { const [x] = await p.poll([killed]); return x.phase === 'ended' ? x : undefined; });
    assert.deepEqual([lost.end, lost.reason], ['lost', 'its process is gone and left no exit record']);

    const spared = await p.reap(runSet, [reused], { graceMs: 5000 });
    assert.deepEqual(spared.stopped, [], 'a ref whose start time does not match is never signalled');
    assert.equal(ownerGone(live.id), false, 'the process is alive');

    const report = await p.reap(runSet, [live], { graceMs: 10_000 });
    assert.deepEqual(report.stopped.map((s) => [s.unit, s.how]), [['c', 'SIGTERM']]);
    assert.equal(await fsp.readFile(path.join(tmp, 'c.go.term'), 'utf8'), 'c', 'the unit itself got SIGTERM (it can stop cleanly)');
    const [after] = await p.poll([live]);
    assert.deepEqual([after.phase, after.end], ['ended', 'cancelled']);
    assert.equal(JSON.parse(await fsp.readFile(exitFileOf(live.logFile), 'utf8')).stoppedBy, 'reap');
  });

  it('containers are found and removed by the run set\'s labels only: another run set\'s container stays', async function () {
    const docker = await requireDocker(this);
    const p = made({ docker });
    const mk = async (rs: string, unit: string) => {
      const saved = { rs: process.env[ENV_RUNSET], u: process.env[ENV_RUNSET_UNIT] };
      process.env[ENV_RUNSET] = rs;
      process.env[ENV_RUNSET_UNIT] = unit;
      try {
        return (await createContainer(docker, { image: DEFAULT_IMAGE, labels: { task: 'test/placement/0', session: `placement-${unit}-${process.pid}`, role: 'verify' }, limits: { network: false }, user: 'solver', workdir: '/tmp' })).id;
      } finally {
        if (saved.rs === undefined) delete process.env[ENV_RUNSET]; else process.env[ENV_RUNSET] = saved.rs;
        if (saved.u === undefined) delete process.env[ENV_RUNSET_UNIT]; else process.env[ENV_RUNSET_UNIT] = saved.u;
      }
    };
    const other = `${runSet}-other`;
    const ids = { a: await mk(runSet, 'a'), b: await mk(runSet, 'b'), foreign: await mk(other, 'a') };
    try {
      const info = await docker.getContainer(ids.a).inspect();
      assert.equal(info.Config.Labels[LABEL_RUNSET], runSet);
      assert.equal(info.Config.Labels[LABEL_UNIT], 'a');
      assert.equal(info.Config.Labels['expbench.role'], 'verify', 'the usual labels stay');
      assert.deepEqual((await listRunSetContainers(docker, runSet)).map((c) => c.Id).sort(), [ids.a, ids.b].sort());
      const removed = await p.cleanUp(runSet, new Set(['b']));
      assert.deepEqual(removed, [ids.a], 'a running unit keeps its container');
      const stopped = await p.cancel(runSet, [{ kind: 'local', unit: 'b', id: `${os.hostname()}/0/0`, logFile: path.join(tmp, 'exec', 'b', 'try-1.log'), submittedAt: '' }]);
      assert.deepEqual(stopped.containers, [ids.b]);
      assert.deepEqual(await listRunSetContainers(docker, runSet), []);
      assert.equal((await listRunSetContainers(docker, other)).length, 1, 'the other run set is untouched');
    } finally {
      for (const id of Object.values(ids)) await removeContainer(docker, id);
    }
    assert.equal(existsSync(tmp), true);
  });
});
