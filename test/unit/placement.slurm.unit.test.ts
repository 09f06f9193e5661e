import * as assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { existsSync, promises as fsp } from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import fc from 'fast-check';
import { isExpBenchError } from '../../src/core/errors';
import { schedulerJobOf, SlurmPlacement, SlurmPlacementSpec, unfit, type CliEntry, type PlacementJob, type PlacementRef, type PlacementState } from '../../src/core/placement';
import { readSubmission, submissionFile, writeSubmission } from '../../src/core/placement/slurm/journal';
import { gpusOfGres, lineHasElement, parseSacct, parseSinfo, parseSlurmTime, parseSqueue, slurmMinutes, slurmState } from '../../src/core/placement/slurm/parse';
import { jobScript, shq } from '../../src/core/placement/slurm/script';
import { RunSetSpecSchema } from '../../src/core/runs/spec';
import { DEFAULT_IMAGE, LABEL_RUNSET, LABEL_UNIT, listRunSetContainers } from '../../src/core/sandbox';
import { requireDocker } from '../harness/docker';
import { repoRoot } from '../harness/paths';
import { requireSlurm, sacctByName, slurm, squeueOf } from '../harness/slurm';
import { until as pollUntil } from '../harness/until';

const FIXTURES = path.join(repoRoot, 'test', 'fixtures', 'slurm');

const until = <T>(what: string, f: () => Promise<T | undefined>, ms = 120_000): Promise<T> => pollUntil(what, f, ms, 100);

describe('Slurm placement, pure parts (src/core/placement/slurm/): what Slurm prints, the job script, the spec', () => {
  it('maps every job state of squeue(1)/sacct(1) onto phase and end; an unknown word is not taken for an end', () => {
    const table: Array<[string, string, string | undefined]> = [
      ['PENDING', 'pending', undefined], ['REQUEUED', 'pending', undefined], ['SUSPENDED', 'pending', undefined],
      ['RUNNING', 'running', undefined], ['COMPLETING', 'running', undefined], ['CONFIGURING', 'running', undefined],
      ['COMPLETED', 'ended', 'exited'], ['FAILED', 'ended', 'exited'], ['OUT_OF_MEMORY', 'ended', 'exited'],
      ['CANCELLED by 0', 'ended', 'cancelled'], ['CANCELLED+', 'ended', 'cancelled'], ['TIMEOUT', 'ended', 'timeout'], ['DEADLINE', 'ended', 'timeout'],
      ['PREEMPTED', 'ended', 'preempted'], ['NODE_FAIL', 'ended', 'node_fail'], ['BOOT_FAIL', 'ended', 'node_fail'],
      ['SOMETHING_NEW', 'running', undefined],
    ];
    for (const [s, phase, end] of table) assert.deepEqual([slurmState(s).phase, slurmState(s).end], [phase, end], s);
  });

  it('reads durations in every form of --time (property: D-HH:MM:SS, H:M:S and M:S read back)', () => {
    assert.equal(parseSlurmTime('infinite'), undefined);
    assert.equal(parseSlurmTime('UNLIMITED'), undefined);
    assert.equal(parseSlurmTime('10:00'), 600);
    assert.equal(parseSlurmTime('90'), 5400);
    assert.equal(parseSlurmTime('1-00:00:00'), 86400);
    assert.equal(parseSlurmTime('2-12'), 2 * 86400 + 12 * 3600);
    assert.ok(Number.isNaN(parseSlurmTime('soon')!));
    fc.assert(fc.property(fc.nat(30), fc.nat(23), fc.nat(59), fc.nat(59), (d, h, m, s) => {
      const p2 = (n: number) => String(n).padStart(2, '0');
      assert.equal(parseSlurmTime(`${d}-${p2(h)}:${p2(m)}:${p2(s)}`), d * 86400 + h * 3600 + m * 60 + s);
      assert.equal(parseSlurmTime(`${h}:${p2(m)}:${p2(s)}`), h * 3600 + m * 60 + s);
      assert.equal(parseSlurmTime(`${m}:${p2(s)}`), m * 60 + s);
    }));
    fc.assert(fc.property(fc.integer({ min: 1, max: 10 ** 7 }), (s) => { const m = slurmMinutes(s); assert.ok(m * 60 >= s && (m - 1) * 60 < s); }));
  });

  it('knows which element an array id names, split (`12_3`) or as a range sacct keeps (`12_[0-5:2,9%2]`) (property against the expanded list)', () => {
    assert.ok(lineHasElement('18_[0-5%1]', '18', 4));
    assert.ok(!lineHasElement('18_[0-5%1]', '18', 6));
    assert.ok(!lineHasElement('18_[0-5%1]', '19', 1));
    const part = fc.tuple(fc.nat(40), fc.nat(10), fc.integer({ min: 1, max: 4 }));
    fc.assert(fc.property(fc.array(part, { minLength: 1, maxLength: 4 }), fc.nat(60), fc.option(fc.integer({ min: 1, max: 9 })), (parts, index, k) => {
      const text = parts.map(([lo, len, step]) => (len === 0 ? `${lo}` : `${lo}-${lo + len}${step > 1 ? `:${step}` : ''}`)).join(',');
      const members = new Set(parts.flatMap(([lo, len, step]) => Array.from({ length: len + 1 }, (_, j) => lo + j).filter((x) => (x - lo) % (len === 0 ? 1 : step) === 0)));
      assert.equal(lineHasElement(`7_[${text}${k ? `%${k}` : ''}]`, '7', index), members.has(index), text);
      assert.equal(lineHasElement(`7_${index}`, '7', index), true);
    }));
  });

  it('counts the GPUs of a node\'s Gres (slurm.conf(5) forms)', () => {
    assert.equal(gpusOfGres('gpu:1'), 1);
    assert.equal(gpusOfGres('gpu:a100:4(S:0-1)'), 4);
    assert.equal(gpusOfGres('gpu:tesla:2,gpu:k80:2,mps:200'), 4);
    assert.equal(gpusOfGres('gpu:a100:4(S:0-1),mps:400(S:0)'), 4);
    assert.equal(gpusOfGres('gpu:a100:2(S:0,1),gpu:v100:1(S:1)'), 3, 'a comma inside the socket list is not an entry');
    assert.equal(gpusOfGres('(null)'), 0);
    assert.equal(gpusOfGres('mps:100'), 0);
  });

  it('reads squeue, sacct and sinfo output recorded from Slurm 22.05 (test/fixtures/slurm), and mutated lines without throwing', async () => {
    const sq = parseSqueue(await fsp.readFile(path.join(FIXTURES, 'squeue-22.05.txt'), 'utf8'));
    assert.deepEqual(sq.map((l) => [l.id, l.state, l.reason ?? null]).slice(0, 3), [['10_1', 'FAILED', 'NonZeroExitCode'], ['10_0', 'FAILED', 'NonZeroExitCode'], ['12_2', 'PENDING', 'JobArrayTaskLimit']]);
    assert.equal(sq.find((l) => l.id === '13')?.reason, 'JobHeldUser');
    assert.equal(sq.find((l) => l.id === '12_0')?.node, 'vm');
    assert.ok(sq.find((l) => l.id === '12_0')?.start?.endsWith('Z'));
    // squeue -O with the raw exit status: the controller's word on how a job ended, before accounting has it.
    const sf = parseSqueue(await fsp.readFile(path.join(FIXTURES, 'squeue-format-22.05.txt'), 'utf8'));
    assert.deepEqual(sf.map((l) => [l.id, l.state, l.exitCode ?? null, l.signal ?? null, l.end ?? null]), [
      ['329', 'COMPLETED', 0, 0, new Date('2026-12-02T02:24:58').toISOString()], ['330', 'FAILED', 3, 0, new Date('2026-12-02T02:24:59').toISOString()],
      ['331', 'FAILED', 0, 9, new Date('2026-12-02T02:25:00').toISOString()], ['332_1', 'PENDING', null, null, null], ['332_2', 'PENDING', null, null, null],
      ['332_3', 'PENDING', null, null, null], ['333', 'PENDING', null, null, null], ['332_0', 'RUNNING', null, null, null]]);
    assert.equal(sf.find((l) => l.id === '333')?.reason, 'JobHeldUser');
    const sa = parseSacct(await fsp.readFile(path.join(FIXTURES, 'sacct-22.05.txt'), 'utf8'));
    assert.deepEqual(sa.find((l) => l.id === '10_0'), { id: '10_0', state: 'FAILED', node: 'vm', start: new Date('2026-12-02T00:24:34').toISOString(), end: new Date('2026-12-02T00:24:37').toISOString(), exitCode: 3, signal: 0 });
    assert.equal(slurmState(sa.find((l) => l.id === '7')!.state).end, 'cancelled');
    assert.equal(sa.find((l) => l.id === '7')!.node, undefined, '"None assigned" is no node');
    assert.equal(slurmState(sa.find((l) => l.id === '8')!.state).end, 'timeout');
    const range = parseSacct(await fsp.readFile(path.join(FIXTURES, 'sacct-array-cancelled-22.05.txt'), 'utf8'));
    assert.ok(lineHasElement(range[0].id, '18', 3) && slurmState(range[0].state).end === 'cancelled');
    const nodes = parseSinfo(await fsp.readFile(path.join(FIXTURES, 'sinfo-22.05.txt'), 'utf8'));
    assert.deepEqual(nodes.map((n) => [n.partition, n.isDefault, n.cpus, n.gpus, n.maxTimeSeconds]), [['main', true, 2, 1, undefined], ['short', false, 2, 1, 600]]);
    // Mutations: fields dropped, swapped, garbage: parsed or left out, never a throw.
    const lines = (await fsp.readFile(path.join(FIXTURES, 'sacct-22.05.txt'), 'utf8')).split('\n');
    fc.assert(fc.property(fc.array(fc.tuple(fc.nat(lines.length - 1), fc.nat(8), fc.string({ maxLength: 12 }))), (muts) => {
      const m = lines.map((l) => l.split('|'));
      for (const [li, fi, s] of muts) if (m[li]) m[li][fi] = s;
      const text = m.map((f) => f.join('|')).join('\n');
      for (const l of parseSacct(text)) slurmState(l.state);
      parseSqueue(text); parseSinfo(text);
    }));
  });

  it('shell-quotes any string so that bash reads it back unchanged (property, real bash)', () => {
    fc.assert(fc.property(fc.array(fc.string({ unit: 'binary', maxLength: 30 }).map((s) => s.replace(/\0/g, '')), { minLength: 1, maxLength: 40 }), (xs) => {
      const script = xs.map((x) => `printf '%s\\0' ${shq(x)}`).join('\n');
      const out = execFileSync('bash', ['-c', script], { encoding: 'utf8' });
      assert.deepEqual(out.split('\0').slice(0, -1), xs);
    }), { numRuns: 25 });
  });

  it('writes a job script bash can parse, with the shape\'s #SBATCH lines and the passed variables\' names only (no value)', () => {
    const text = jobScript({
      name: 'expbench-rs-abc', runSet: 'rs', title: 'a task\nwith a newline', resources: { cpus: 2, memoryMiB: 4096, gpus: 2, timeSeconds: 90 },
      elements: [{ unit: 'k0', args: ['runs', 'exec', "/d/it's here", '--unit', 'k0', '--try', '1'], logFile: '/d/exec/a/try-1.log' }, { unit: 'k1', args: ['runs', 'exec', '/d', '--unit', 'k1', '--try', '2'], logFile: '/d/exec/b/try-2.log' }],
      throttle: 3, partition: 'gpu', account: 'lab', qos: 'normal', exportNames: ['OPENAI_API_KEY', 'PATH'], env: { PLAIN: 'x y' }, cwd: '/d', node: '/usr/bin/node', cliArgs: ['/opt/expbench/dist/cli.js'], container: 'podman',
    });
    execFileSync('bash', ['-n'], { input: text });
    const sb = text.split('\n').filter((l) => l.startsWith('#SBATCH'));
    assert.deepEqual(sb, ['--job-name=expbench-rs-abc', '--array=0-1%3', '--nodes=1', '--ntasks=1', '--cpus-per-task=2', '--mem=4096M', '--time=2', '--gres=gpu:2',
      '--partition=gpu', '--account=lab', '--qos=normal', '--no-requeue', '--export=ALL'].map((o) => `#SBATCH ${o}`));
    assert.ok(!/\n[^#\n]*\n?a task\nwith/.test(text), 'a newline in the title does not end the comment');
    assert.match(text, /^# The environment from the submitter: OPENAI_API_KEY PATH /m);
    assert.match(text, /podman system service/);
    assert.match(text, /0\) set -- 'runs' 'exec' '\/d\/it'\\''s here'/);
  });

  it('the spec member: container required, sbatch options of its own refused by name, a relative sharedDir refused', () => {
    const ok = SlurmPlacementSpec.safeParse({ kind: 'slurm', container: 'docker', partition: 'gpu,debug', extraArgs: ['--constraint=a100', '--hold'], sharedDir: '/shared/runs' });
    assert.ok(ok.success, JSON.stringify(ok.error?.issues));
    const bad = (v: unknown) => { const r = SlurmPlacementSpec.safeParse(v); assert.ok(!r.success, JSON.stringify(v)); return r.error.issues.map((i) => i.message).join('; '); };
    assert.match(bad({ kind: 'slurm' }), /docker|podman|expected/i);
    assert.match(bad({ kind: 'slurm', container: 'docker', extraArgs: ['--export=ALL'] }), /--export is set by the placement/);
    assert.match(bad({ kind: 'slurm', container: 'docker', extraArgs: ['--array=0-9'] }), /--array is set by the placement/);
    assert.match(bad({ kind: 'slurm', container: 'docker', extraArgs: ['-p gpu'] }), /long sbatch option/);
    assert.match(bad({ kind: 'slurm', container: 'docker', extraArgs: ['--comment=a b'] }), /without white space/);
    assert.match(bad({ kind: 'slurm', container: 'docker', sharedDir: 'runs' }), /absolute/);
    assert.match(bad({ kind: 'slurm', container: 'docker', partition: 'gpu;rm' }), /Slurm name/);
    const spec = RunSetSpecSchema.safeParse({ version: 1, name: 'n', tasks: ['a/b/0'], agent: { model: 'm' }, placement: { kind: 'slurm', container: 'podman' } });
    assert.ok(spec.success, 'a run-set spec takes it');
  });

  it('the scheduler job of a process, from Slurm\'s environment (sbatch(1) OUTPUT ENVIRONMENT VARIABLES)', () => {
    assert.equal(schedulerJobOf({}), undefined);
    assert.deepEqual(schedulerJobOf({ SLURM_JOB_ID: '41', SLURM_ARRAY_JOB_ID: '40', SLURM_ARRAY_TASK_ID: '1', SLURMD_NODENAME: 'n1', SLURM_CLUSTER_NAME: 'c' }), { scheduler: 'slurm', id: '40_1', jobId: '41', node: 'n1', cluster: 'c' });
    assert.deepEqual(schedulerJobOf({ SLURM_JOB_ID: '7' }), { scheduler: 'slurm', id: '7', jobId: '7' });
    assert.equal(schedulerJobOf({ SLURM_JOB_ID: '7; rm -rf' }), undefined);
  });
});

/**
 * A stand-in for the CLI on the node: `node fake.js <mode>` (the unit's arguments are its own).
 * It writes its exit record as `runs exec` does, and says what it saw.
 */
const FAKE_CLI = `
const fs = require('fs');
const { execFileSync } = require('child_process');
const mode = process.argv[2];
const done = (code) => { try { fs.writeFileSync(process.env.EXPBENCH_PLACEMENT_EXIT_FILE, JSON.stringify({ exitCode: code, signal: null, at: new Date().toISOString() })); } catch {} process.exit(code); };
console.log('fake-cli', JSON.stringify({ mode, unit: process.env.EXPBENCH_RUNSET_UNIT, runSet: process.env.EXPBENCH_RUNSET, secret: process.env.EXPBENCH_TEST_SECRET ?? null, other: process.env.EXPBENCH_TEST_NOT_PASSED ?? null, job: process.env.SLURM_ARRAY_JOB_ID + '_' + process.env.SLURM_ARRAY_TASK_ID, cwd: process.cwd() }));
if (mode === 'ok') done(0);
if (mode === 'exit3') done(3);
if (mode === 'wait') {
  process.on('SIGTERM', () => { console.log('fake-cli got SIGTERM'); setTimeout(() => done(75), 200); });
  setTimeout(() => done(0), 600000);
}
if (mode === 'killed') {
  execFileSync('docker', ['run', '-d', '--network', 'none', '--label', 'expbench.runset=' + process.env.EXPBENCH_RUNSET, '--label', 'expbench.unit=' + process.env.EXPBENCH_RUNSET_UNIT, process.argv[3], 'sleep', '600']);
  process.kill(process.pid, 'SIGKILL');
}
`;

describe('Slurm placement on a real Slurm (scripts/setup-slurm.sh): job arrays, state from squeue/sacct, cancel, GPUs held', function () {
  this.timeout(240_000);
  let tmp: string;
  let cli: CliEntry;
  const runSet = `t${process.pid}-${Date.now().toString(36)}`;
  const placements: SlurmPlacement[] = [];
  const made = (spec: Partial<SlurmPlacementSpec> = {}) => { const p = new SlurmPlacement({ spec: { kind: 'slurm', container: 'docker', ...spec }, cli }); placements.push(p); return p; };
  const job = (unit: string, mode: string, r: Partial<PlacementJob['resources']> = {}, extra: Partial<PlacementJob> = {}): PlacementJob => ({
    runSet, unit, name: `unit ${unit}`, args: [mode, DEFAULT_IMAGE], resources: { cpus: 1, memoryMiB: 256, gpus: 0, timeSeconds: 600, ...r },
    logFile: path.join(tmp, 'exec', unit, 'try-1.log'), cwd: tmp, passEnv: ['EXPBENCH_TEST_SECRET', 'PATH', 'HOME'], ...extra,
  });
  const pollUntil = (p: SlurmPlacement, refs: PlacementRef[], ok: (s: PlacementState[]) => boolean, seen?: (s: PlacementState[]) => void) =>
    until('the states asked for', async () => { const s = await p.poll(refs); seen?.(s); return ok(s) ? s : undefined; });
  const ended = (s: PlacementState[]) => s.every((x) => x.phase === 'ended');
  const SECRET = `sk-test-${Math.random().toString(36).slice(2)}`;

  before(async function () {
    await requireSlurm(this);
    tmp = await fsp.mkdtemp(path.join(os.tmpdir(), 'expbench-slurm-'));
    const fake = path.join(tmp, 'fake-cli.js');
    await fsp.writeFile(fake, FAKE_CLI);
    cli = { exe: process.execPath, args: [fake], env: {} };
    process.env.EXPBENCH_TEST_SECRET = SECRET;
    process.env.EXPBENCH_TEST_NOT_PASSED = 'not-for-the-job';
  });
  beforeEach(async () => {
    for (const u of ['a', 'b', 'c', 'd', 'gpu', 'big1', 'big2', 'k']) await fsp.rm(path.join(tmp, 'exec', u), { recursive: true, force: true }).then(() => fsp.mkdir(path.join(tmp, 'exec', u), { recursive: true }));
  });
  afterEach(async () => {
    // Nothing of the run set is left queued or running after a test.
    const left = (await squeueOf()).filter((l) => l.name.startsWith(`expbench-${runSet}-`) && /PENDING|RUNNING|COMPLETING/.test(l.state));
    if (left.length) await slurm('scancel', left.map((l) => l.id));
    for (const p of placements.splice(0)) p.dispose();
    assert.deepEqual(left, [], 'jobs of the run set left queued or running');
  });
  after(async () => {
    delete process.env.EXPBENCH_TEST_SECRET;
    delete process.env.EXPBENCH_TEST_NOT_PASSED;
    if (tmp) await fsp.rm(tmp, { recursive: true, force: true }).catch(() => undefined);
  });

  it('capacity from sinfo: the node\'s CPUs, memory and the GPU gres; a partition\'s MaxTime makes a longer unit unfit; an unknown partition is named', async () => {
    const cap = await made().capacity();
    assert.equal(cap.perUnit.cpus, Number((await slurm('sinfo', ['-h', '-N', '-o', '%c'])).stdout.trim().split('\n')[0]));
    assert.ok(cap.perUnit.memoryMiB > 1024 && cap.perUnit.gpus >= 1, JSON.stringify(cap));
    assert.equal(cap.maxTimeSeconds, undefined, 'main has no time limit');
    const short = await made({ partition: 'short' }).capacity();
    assert.equal(short.maxTimeSeconds, 600);
    assert.equal(unfit({ cpus: 1, memoryMiB: 256, gpus: 0, timeSeconds: 3600 }, short), 'needs 60 min, at most 10 min here');
    await assert.rejects(made({ partition: 'nosuch' }).capacity(), (e: unknown) => isExpBenchError(e, 'BAD_INPUT') && /partition nosuch: has no node \(sinfo lists the partitions main, short\)/.test(e.message));
  });

  it('one array per shape with the throttle as %k: never more than k running, ends read back with exit codes, logs in place, the secret only in the job\'s environment, a second submit adopts the same jobs', async () => {
    const p = made();
    const jobs = [job('a', 'ok'), job('b', 'exit3'), job('c', 'ok'), job('d', 'ok', { cpus: 2 })];
    const refs = await p.submit(jobs, { throttle: 2 });
    const arrays = [...new Set(refs.map((r) => r.id.split('_')[0]))];
    assert.equal(arrays.length, 2, 'two shapes, two arrays');
    assert.deepEqual(refs.map((r) => r.id.split('_')[1]), ['0', '1', '2', '0']);
    const show = (await slurm('scontrol', ['show', 'job', arrays[0]])).stdout;
    assert.match(show, /ArrayTaskThrottle=2/);
    let most = 0;
    const reasons = new Set<string>();
    const states = await pollUntil(p, refs, ended, (s) => {
      most = Math.max(most, s.slice(0, 3).filter((x) => x.phase === 'running').length);
      for (const x of s) if (x.phase === 'pending' && x.reason) reasons.add(x.reason);
    });
    assert.ok(most <= 2, `at most 2 of the array ran at once (${most})`);
    assert.deepEqual(states.map((s) => [s.unit, s.end, s.exitCode]), [['a', 'exited', 0], ['b', 'exited', 3], ['c', 'exited', 0], ['d', 'exited', 0]], JSON.stringify(states, null, 1) + await p.log(refs[1]));
    assert.ok(states.every((s) => s.host && s.startedAt && s.endedAt), JSON.stringify(states[0]));
    assert.ok([...reasons].some((r) => /JobArrayTaskLimit|Resources|Priority/.test(r)), `a pending reason in Slurm's words: ${[...reasons].join(', ')}`);
    // Each element wrote into its unit's log; the job's environment had the passed secret and not the other variable.
    for (const [i, u] of ['a', 'b', 'c', 'd'].entries()) {
      const line = (await p.log(refs[i])).split('\n').find((l) => l.startsWith('fake-cli '))!;
      const seen = JSON.parse(line.slice('fake-cli '.length));
      assert.deepEqual([seen.unit, seen.runSet, seen.secret, seen.other, seen.job, seen.cwd], [u, runSet, SECRET, null, refs[i].id, tmp]);
    }
    // The secret is in no script, no #SBATCH line, no record of Slurm's.
    const names = [...new Set((await Promise.all(jobs.map((j) => readSubmission(j.logFile)))).map((s) => s!.name))];
    for (const n of names) assert.ok(!(await fsp.readFile(path.join(tmp, 'slurm', `${n}.sh`), 'utf8')).includes(SECRET));
    for (const a of arrays) assert.ok(!(await slurm('scontrol', ['show', 'job', '-d', a])).stdout.includes(SECRET));
    // Accounting lags behind the controller (right after the end a job's name may read "allocation"): wait for it.
    const acct = await until('sacct lists the four elements by name', async () => { const a = await sacctByName(names); return a.length >= 4 ? a : undefined; }, 60_000);
    assert.equal(acct.length, 4, JSON.stringify(acct));
    assert.ok(acct.every((l) => !l.submitLine.includes(SECRET) && /^sbatch --parsable /.test(l.submitLine)), acct[0].submitLine);
    // The same tries again: adopted, nothing submitted.
    const again = await made().submit(jobs, { throttle: 2 });
    assert.deepEqual(again.map((r) => r.id), refs.map((r) => r.id));
    assert.equal((await sacctByName(names)).length, 4, 'no job submitted twice');
  });

  it('a try whose submitter died between sbatch and recording the job id is found by its job name and adopted; one Slurm never had is submitted', async () => {
    const p = made();
    const refs = await p.submit([job('a', 'ok'), job('b', 'ok')], { throttle: 2 });
    await pollUntil(p, refs, ended);
    // As if the process died right after sbatch: the records say no job id.
    const sa = (await readSubmission(job('a', 'ok').logFile))!;
    await writeSubmission(job('a', 'ok').logFile, { ...sa, jobId: null });
    await writeSubmission(job('b', 'ok').logFile, { ...sa, jobId: null, name: `expbench-${runSet}-never`, index: 0 });
    const next = made();
    const again = await next.submit([job('a', 'ok'), job('b', 'ok')], { throttle: 2 });
    assert.equal(again[0].id, refs[0].id, 'found by name and adopted');
    assert.equal((await readSubmission(job('a', 'ok').logFile))!.jobId, refs[0].id.split('_')[0], 'the record has the id now');
    assert.notEqual(again[1].id.split('_')[0], refs[0].id.split('_')[0], 'submitted anew');
    assert.ok(existsSync(submissionFile(job('b', 'ok').logFile)));
    await pollUntil(next, again, ended);
  });

  it('a unit asking for a GPU is submitted with --gres=gpu:1, held (--hold), seen in scontrol show job, then cancelled', async () => {
    const p = made({ extraArgs: ['--hold'] });
    const [ref] = await p.submit([job('gpu', 'ok', { gpus: 1 })], { throttle: 1 });
    const [s] = await pollUntil(p, [ref], (x) => x[0].phase === 'pending' && x[0].reason === 'JobHeldUser');
    assert.equal(s.reason, 'JobHeldUser');
    const show = (await slurm('scontrol', ['show', 'job', ref.id])).stdout;
    assert.match(show, /TresPerNode=gres:gpu:1/);
    assert.match(show, /JobState=PENDING Reason=JobHeldUser/);
    const name = (await readSubmission(ref.logFile))!.name;
    assert.match(await fsp.readFile(path.join(tmp, 'slurm', `${name}.sh`), 'utf8'), /^#SBATCH --gres=gpu:1$/m);
    const report = await p.cancel(runSet, [ref], { graceMs: 5000 });
    assert.deepEqual(report.stopped.map((x) => [x.id, x.how]), [[ref.id, 'scancel']]);
    const [after] = await p.poll([ref]);
    assert.equal(after.end, 'cancelled');
    assert.deepEqual((await squeueOf([ref.id.split('_')[0]])).filter((l) => l.state === 'PENDING'), []);
  });

  it('"pending: Resources" while the node is full; cancel sends SIGTERM to the running unit (it stops cleanly) and leaves squeue without the run set\'s jobs', async () => {
    const p = made();
    const refs = await p.submit([job('big1', 'wait', { cpus: 2 }), job('big2', 'wait', { cpus: 2 })], { throttle: 2 });
    const s = await pollUntil(p, refs, (x) => x.some((y) => y.phase === 'running') && x.some((y) => y.phase === 'pending' && y.reason === 'Resources'));
    assert.deepEqual(s.map((x) => x.phase).sort(), ['pending', 'running']);
    const running = refs[s.findIndex((x) => x.phase === 'running')];
    await until('the running unit started its CLI', async () => ((await p.log(running)).includes('fake-cli ') ? true : undefined));
    const report = await p.cancel(runSet, refs, { graceMs: 10_000 });
    assert.equal(report.stopped.length, 2);
    const after = await p.poll(refs);
    assert.deepEqual(after.map((x) => x.end), ['cancelled', 'cancelled']);
    assert.match(await p.log(running), /fake-cli got SIGTERM/, 'Slurm\'s SIGTERM reached the CLI');
    assert.doesNotMatch(await p.log(running), /SIGTERM again|leaving now/);
    assert.deepEqual((await squeueOf()).filter((l) => l.name.startsWith(`expbench-${runSet}-`) && /PENDING|RUNNING/.test(l.state)), []);
  });

  it('a node failure ends the running unit as node_fail (scontrol sets the node down, then resumes it)', async () => {
    const p = made();
    const [ref] = await p.submit([job('k', 'wait')], { throttle: 1 });
    const [s] = await pollUntil(p, [ref], (x) => x[0].phase === 'running');
    try {
      const r = await slurm('scontrol', ['update', `nodename=${s.host}`, 'state=down', 'reason=expbench-test-node-fail']);
      assert.equal(r.code, 0, r.stderr);
      const [e] = await pollUntil(p, [ref], ended);
      assert.equal(e.end, 'node_fail');
    } finally {
      await slurm('scontrol', ['update', `nodename=${s.host}`, 'state=resume']);
      await until('the node up again', async () => (/^(idle|mix|alloc)/.test((await slurm('sinfo', ['-h', '-N', '-o', '%t'])).stdout.trim()) ? true : undefined));
    }
  });

  it('a unit whose CLI is killed has its containers on the node removed by its job script (by label)', async function () {
    const docker = await requireDocker(this);
    const p = made();
    const [ref] = await p.submit([job('k', 'killed')], { throttle: 1 });
    const [e] = await pollUntil(p, [ref], ended);
    assert.equal(e.end, 'exited');
    assert.match(await p.log(ref), /its containers here removed/);
    assert.deepEqual(await listRunSetContainers(docker, runSet, 'k'), []);
    assert.equal(LABEL_RUNSET, 'expbench.runset');
    assert.equal(LABEL_UNIT, 'expbench.unit');
  });

  it('the time limit ends a unit as timeout after Slurm\'s SIGTERM reached it (--time from the unit\'s limit)', async () => {
    const p = made();
    const [ref] = await p.submit([job('k', 'wait', { timeSeconds: 30 })], { throttle: 1 });
    assert.match((await slurm('scontrol', ['show', 'job', ref.id])).stdout, /TimeLimit=00:01:00/);
    const [e] = await until('the time limit', async () => { const s = await p.poll([ref]); return ended(s) ? s : undefined; }, 200_000);
    assert.equal(e.end, 'timeout');
    assert.match(await p.log(ref), /fake-cli got SIGTERM/);
  });
});
