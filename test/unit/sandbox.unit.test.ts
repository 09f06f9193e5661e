/**
 * The sandbox against the real Docker engine and the real expbench/sandbox:1 image: create, exec,
 * non-root uid, the workspace mount, limits (configured AND observed inside the container),
 * network off, copy-in, removal, reattach and orphan cleanup. Every test's containers are removed
 * and the after hook checks that none is left.
 */
import * as assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { PassThrough } from 'node:stream';
import type Docker from 'dockerode';
import { isExpBenchError } from '../../src/core/errors';
import {
  CONTRACT_LABEL, DEFAULT_IMAGE, type Limits, createContainer, createWorkContainer, ensureImage, ensureWorkContainer,
  execText, findWorkContainer, inspectImage, listProjectContainers, removeContainer, removeOrphans,
  removeDeadWorkContainers, removeWorkContainer, startExec,
} from '../../src/core/sandbox';
import { assertNoContainers, ensureTestImage, requireDocker } from '../harness/docker';

const MiB = 1024 * 1024;
const run = `t${process.pid}-${Date.now().toString(36)}`;
let counter = 0;

describe('sandbox (real Docker)', function () {
  this.timeout(120_000);
  let docker: Docker;
  const sessions = new Set<string>();
  const tmpDirs: string[] = [];
  const newSession = () => { const s = `${run}-${++counter}`; sessions.add(s); return s; };
  const newWorkspace = (files: Record<string, string> = {}) => {
    const root = fs.mkdtempSync(path.join(os.tmpdir(), 'expbench-sandbox-'));
    tmpDirs.push(root);
    const ws = path.join(root, 'workspace');
    fs.mkdirSync(ws);
    for (const [rel, text] of Object.entries(files)) {
      fs.mkdirSync(path.dirname(path.join(ws, rel)), { recursive: true });
      fs.writeFileSync(path.join(ws, rel), text);
    }
    return ws;
  };
  const noNet: Limits = { network: false };

  before(async function () {
    this.timeout(15 * 60_000); // first build of the image takes minutes
    await ensureTestImage();
    docker = await requireDocker(this);
  });

  afterEach(async function () {
    if (!docker) return;
    // Only this run's own sessions are looked at: other runs on the same engine keep theirs.
    // A passing test must have removed its containers itself; after a failure they are cleaned up here.
    const left = (await Promise.all([...sessions].map((s) => listProjectContainers(docker, { session: s })))).flat();
    for (const c of left) await removeContainer(docker, c.Id);
    if (this.currentTest?.state === 'passed') {
      assert.deepEqual(left.map((c) => `${c.Id.slice(0, 12)} (${c.Labels?.['expbench.session']}, ${c.State})`), [], 'the test left containers behind');
    }
    await assertNoContainers(docker, sessions);
  });

  after(() => { for (const d of tmpDirs) fs.rmSync(d, { recursive: true, force: true }); });

  it('the default image carries the contract label', async () => {
    const info = await ensureImage(docker, DEFAULT_IMAGE);
    assert.equal(info.contract, '1');
    assert.match(info.id, /^sha256:[0-9a-f]{64}$/);
    assert.equal(await inspectImage(docker, 'expbench/no-such-image:0'), undefined);
    await assert.rejects(ensureImage(docker, 'expbench/no-such-image:0'),
      (e) => isExpBenchError(e, 'IMAGE_MISSING') && e.message.includes('expbench/no-such-image:0'));
    await assert.rejects(ensureImage(docker, `expbench/sandbox-base:${(await docker.getImage(DEFAULT_IMAGE).inspect()).Config.Labels['expbench.base'].split(':')[1]}`),
      (e) => isExpBenchError(e, 'BAD_INPUT') && e.message.includes(CONTRACT_LABEL));
  });

  it('creates a labelled work container: non-root solver, /workspace mounted and writable both ways', async () => {
    const session = newSession();
    const ws = newWorkspace({ 'data/in put.txt': 'from the host\n', 'run.sh': 'echo hi\n' });
    execFileSync('git', ['init', '-q'], { cwd: ws });
    const { container, id } = await createWorkContainer(docker, { task: 'neurips2024/1/0', session, workspaceDir: ws, image: DEFAULT_IMAGE, limits: noNet });
    const info = await container.inspect();
    assert.equal(info.State.Running, true);
    assert.deepEqual([info.Config.Labels['expbench.task'], info.Config.Labels['expbench.session'], info.Config.Labels['expbench.role']], ['neurips2024/1/0', session, 'work']);
    assert.equal(info.Config.WorkingDir, '/workspace');

    const who = await execText(container, { cmd: ['sh', '-c', 'id -u; id -un; pwd; hostname'] });
    assert.deepEqual(who.stdout.trim().split('\n'), ['1000', 'solver', '/workspace', 'task']);

    const rw = await execText(container, { cmd: ['bash', '-c', 'cat "data/in put.txt" && echo made-inside > out.txt && echo more >> run.sh && mkdir -p results/a && touch results/a/b && git status --porcelain'] });
    assert.equal(rw.exitCode, 0, rw.stderr);
    assert.match(rw.stdout, /^from the host\n/);
    assert.match(rw.stdout, /\?\? out\.txt/); // the solver's git works on a workspace it does not own
    assert.equal(fs.readFileSync(path.join(ws, 'out.txt'), 'utf8'), 'made-inside\n');
    assert.equal(fs.readFileSync(path.join(ws, 'run.sh'), 'utf8'), 'echo hi\nmore\n');
    assert.equal(fs.statSync(path.join(ws, 'results/a/b')).uid, 1000);
    // The host's git still works: the workspace kept its owner (no "dubious ownership").
    const hostStatus = execFileSync('git', ['status', '--porcelain'], { cwd: ws, encoding: 'utf8' });
    assert.match(hostStatus, /\?\? out\.txt/);
    assert.equal(fs.statSync(ws).uid, process.getuid!());

    assert.equal(await removeContainer(docker, id), true);
    assert.equal(await removeContainer(docker, id), false, 'removing twice is not an error');
    await assert.rejects(docker.getContainer(id).inspect(), (e: { statusCode?: number }) => e.statusCode === 404);
  });

  it('exec: separate stdout/stderr, exit code, env, workdir, stdin to EOF', async () => {
    const session = newSession();
    const { container } = await createWorkContainer(docker, { task: 't/1/0', session, workspaceDir: newWorkspace(), image: DEFAULT_IMAGE, limits: noNet });
    const r = await execText(container, { cmd: ['bash', '-c', 'echo "out $FOO"; echo err >&2; pwd; exit 7'], env: { FOO: 'bar' }, workdir: '/tmp' });
    assert.equal(r.exitCode, 7);
    assert.equal(r.stdout, 'out bar\n/tmp\n');
    assert.equal(r.stderr, 'err\n');
    assert.ok(r.durationMs >= 0 && r.aborted === false);

    const input = new PassThrough();
    const p = execText(container, { cmd: ['sh', '-c', 'wc -l; cat /dev/null'], stdin: input });
    input.end('a\nb\nc\n');
    const wc = await p;
    assert.equal(wc.stdout.trim(), '3');
    await removeWorkContainer(docker, session);
  });

  it('exec: aborting kills the whole process group', async () => {
    const session = newSession();
    const { container } = await createWorkContainer(docker, { task: 't/1/0', session, workspaceDir: newWorkspace(), image: DEFAULT_IMAGE, limits: noNet });
    const ac = new AbortController();
    const out: string[] = [];
    const s = await startExec(container, { cmd: ['bash', '-c', 'sleep 300 & sleep 301 & echo started; wait'], signal: ac.signal, onStdout: (c) => out.push(c.toString()) });
    while (!out.join('').includes('started')) await new Promise((r) => setTimeout(r, 20));
    ac.abort();
    const r = await s.done;
    assert.equal(r.aborted, true);
    assert.ok(r.exitCode !== 0, `exit code ${r.exitCode}`);
    assert.ok(r.durationMs < 10_000, `took ${r.durationMs} ms`);
    // The container's own main process is `sleep infinity`: count only the exec's sleeps.
    const ps = await execText(container, { cmd: ['sh', '-c', 'ps -eo comm,args | grep -c -E "^sleep +sleep 30[01]$" || true'] });
    assert.equal(ps.stdout.trim(), '0', 'the background sleeps were killed too');
    await removeWorkContainer(docker, session);
  });

  it('exec with a TTY: resize reaches the terminal, input is echoed, exit code returned', async () => {
    const session = newSession();
    const { container } = await createWorkContainer(docker, { task: 't/1/0', session, workspaceDir: newWorkspace(), image: DEFAULT_IMAGE, limits: noNet });
    let out = '';
    const s = await startExec(container, { cmd: ['bash', '--norc', '-i'], tty: true, size: { cols: 100, rows: 40 }, onStdout: (c) => { out += c.toString(); } });
    await s.resize(123, 45);
    s.write('stty size; exit 3\r');
    const r = await s.done;
    assert.equal(r.exitCode, 3);
    assert.match(out, /45 123/);
    await removeWorkContainer(docker, session);
  });

  it('exec with a TTY: Ctrl-C (\\x03 typed into the TTY) interrupts the foreground command, the shell lives on', async () => {
    const session = newSession();
    const { container } = await createWorkContainer(docker, { task: 't/1/0', session, workspaceDir: newWorkspace(), image: DEFAULT_IMAGE, limits: noNet });
    let out = '';
    const s = await startExec(container, { cmd: ['bash', '--norc', '-i'], tty: true, onStdout: (c) => { out += c.toString(); } });
    const waitFor = async (re: RegExp) => {
      for (let i = 0; i < 200 && !re.test(out); i++) await new Promise((r) => setTimeout(r, 25));
      assert.match(out, re);
    };
    s.write('sleep 30; echo "after=$?"\r');
    await waitFor(/sleep 30/);
    await new Promise((r) => setTimeout(r, 300)); // let sleep start
    const t0 = Date.now();
    s.write('\x03');
    s.write('echo "status=$?"; exit 4\r');
    const r = await s.done;
    assert.ok(Date.now() - t0 < 10_000, 'Ctrl-C ended the sleep at once');
    assert.equal(r.exitCode, 4);
    assert.match(out, /status=130/); // 128 + SIGINT
    assert.doesNotMatch(out, /after=0/);
    await removeWorkContainer(docker, session);
  });

  it('limits: configured in HostConfig and enforced inside (memory, pids, cpus)', async () => {
    const session = newSession();
    const limits: Limits = { network: false, cpus: 0.5, memoryBytes: 128 * MiB, pids: 50 };
    const { container } = await createWorkContainer(docker, { task: 't/1/0', session, workspaceDir: newWorkspace(), image: DEFAULT_IMAGE, limits });
    const hc = (await container.inspect()).HostConfig;
    assert.equal(hc.NanoCpus, 500_000_000);
    assert.equal(hc.Memory, 128 * MiB);
    assert.equal(hc.MemorySwap, 128 * MiB);
    assert.equal(hc.PidsLimit, 50);
    assert.equal(hc.NetworkMode, 'none');

    // The cgroup the container sees (v1 or v2 layout).
    const cg = await execText(container, { cmd: ['sh', '-c',
      'cat /sys/fs/cgroup/memory.max 2>/dev/null || cat /sys/fs/cgroup/memory/memory.limit_in_bytes; ' +
      'cat /sys/fs/cgroup/pids.max 2>/dev/null || cat /sys/fs/cgroup/pids/pids.max; ' +
      'cat /sys/fs/cgroup/cpu.max 2>/dev/null || echo "$(cat /sys/fs/cgroup/cpu/cpu.cfs_quota_us) $(cat /sys/fs/cgroup/cpu/cpu.cfs_period_us)"'] });
    assert.deepEqual(cg.stdout.trim().split('\n'), [String(128 * MiB), '50', '50000 100000']);

    // Starting more processes than the pids limit: 80 sleeps against 50; the limit holds
    // (bounded count; every started sleep is killed afterwards).
    const fork = await execText(container, { cmd: ['python3', '-c', [
      'import subprocess',
      'procs, refused = [], 0',
      'for i in range(80):',
      '    try:\n        procs.append(subprocess.Popen(["sleep", "30"]))',
      '    except OSError:\n        refused += 1',
      'for p in procs:\n    p.kill(); p.wait()',
      'print(len(procs), refused)',
    ].join('\n')] });
    const [started, refused] = fork.stdout.trim().split(' ').map(Number);
    assert.equal(fork.exitCode, 0, fork.stderr);
    assert.ok(started > 0 && started < 50, `sleeps started: ${started}`);
    assert.equal(started + refused, 80);

    // Allocating past the memory limit: the process is OOM-killed (137), the container survives.
    const mem = await execText(container, { cmd: ['python3', '-c', 'b = bytearray(400 * 1024 * 1024); print("allocated")'] });
    assert.equal(mem.exitCode, 137, `exit ${mem.exitCode}: ${mem.stdout}${mem.stderr}`);
    assert.equal((await execText(container, { cmd: ['true'] })).exitCode, 0);
    await removeWorkContainer(docker, session);
  });

  it('network off is really off: only lo, unreachable addresses fail at once, no DNS', async () => {
    const off = newSession();
    const { container } = await createWorkContainer(docker, { task: 't/1/0', session: off, workspaceDir: newWorkspace(), image: DEFAULT_IMAGE, limits: noNet });
    const r = await execText(container, { cmd: ['python3', '-c', [
      'import os, socket, time',
      'print(sorted(os.listdir("/sys/class/net")))',
      's = socket.socket(); s.settimeout(5); t = time.time()',
      'try:\n  s.connect(("10.255.255.1", 9)); print("connected")\nexcept OSError as e:\n  print("connect failed", e.errno, round(time.time() - t, 1))',
      'try:\n  socket.getaddrinfo("example.invalid.expbench", 80); print("resolved")\nexcept OSError as e:\n  print("dns failed")',
    ].join('\n')] });
    const [ifaces, connect, dns] = r.stdout.trim().split('\n');
    assert.equal(ifaces, "['lo']");
    assert.match(connect, /^connect failed 101 0\.\d$/); // ENETUNREACH, immediately
    assert.equal(dns, 'dns failed');

    // The same check sees an interface when the network is on (so it can fail).
    const on = newSession();
    const c2 = await createContainer(docker, { image: DEFAULT_IMAGE, labels: { task: 't/1/0', session: on, role: 'verify' }, limits: { network: true }, user: 'solver', workdir: '/workspace' });
    const r2 = await execText(c2.container, { cmd: ['ls', '/sys/class/net'] });
    assert.ok(r2.stdout.split(/\s+/).filter(Boolean).length > 1, r2.stdout);
    await removeContainer(docker, c2.id);
    await removeWorkContainer(docker, off);
  });

  it('copyIn: a directory into a verify container, owned by solver, before start', async () => {
    const session = newSession();
    const src = newWorkspace({ 'reproduce_exp_bench.sh': 'echo ok\n', 'a dir/file with spaces.py': 'print(1)\n', 'ignored/big.bin': 'x' });
    fs.symlinkSync('reproduce_exp_bench.sh', path.join(src, 'link.sh'));
    const { copyIn } = await import('../../src/core/sandbox');
    const c = await createContainer(docker, { image: DEFAULT_IMAGE, labels: { task: 't/1/0', session, role: 'verify' }, limits: noNet, user: 'solver', workdir: '/workspace', start: false });
    const bytes = await copyIn(c.container, src, { ignore: (p) => p.startsWith('ignored') });
    assert.ok(bytes && bytes > 0);
    await c.container.start();
    const r = await execText(c.container, { cmd: ['bash', '-c', 'find . -mindepth 1 | sort; stat -c %u "a dir/file with spaces.py"; readlink link.sh; bash reproduce_exp_bench.sh && echo more >> reproduce_exp_bench.sh'] });
    assert.equal(r.exitCode, 0, r.stderr);
    assert.deepEqual(r.stdout.trim().split('\n'), ['./a dir', './a dir/file with spaces.py', './link.sh', './reproduce_exp_bench.sh', '1000', 'reproduce_exp_bench.sh', 'ok']);
    await assert.rejects(copyIn(c.container, path.join(src, 'nope')), (e) => isExpBenchError(e, 'BAD_INPUT'));
    await removeContainer(docker, c.id);
  });

  it('reattaches to the session work container, restarting it when stopped', async () => {
    const session = newSession();
    const ws = newWorkspace();
    const opts = { task: 't/1/0', session, workspaceDir: ws, image: DEFAULT_IMAGE, limits: noNet };
    const first = await ensureWorkContainer(docker, opts);
    assert.equal(first.reattached, false);
    await first.container.stop({ t: 0 });
    const again = await ensureWorkContainer(docker, opts);
    assert.deepEqual([again.reattached, again.id], [true, first.id]);
    assert.equal((await again.container.inspect()).State.Running, true);
    assert.equal((await findWorkContainer(docker, session))?.id, first.id);
    const other = await ensureWorkContainer(docker, { ...opts, workspaceDir: newWorkspace() });
    assert.equal(other.reattached, false, 'another workspace replaces the container');
    assert.equal((await listProjectContainers(docker, { session })).length, 1);
    assert.equal(await removeWorkContainer(docker, session), 1);
  });

  it('removeOrphans removes containers of dead sessions only', async () => {
    const alive = newSession();
    const dead = newSession();
    // role 'work': a concurrent verify run (another process on this engine) sweeps stopped 'verify' containers.
    const mk = (session: string) => createContainer(docker, { image: DEFAULT_IMAGE, labels: { task: 't/1/0', session, role: 'work' }, limits: noNet, user: 'solver', workdir: '/workspace' });
    const a = await mk(alive);
    const d1 = await mk(dead);
    const d2 = await mk(dead);
    await d2.container.stop({ t: 0 });
    const removed = await removeOrphans(docker, (s) => s !== dead);
    assert.deepEqual(removed.sort(), [d1.id, d2.id].sort());
    assert.equal((await listProjectContainers(docker, { session: alive })).length, 1);
    await removeContainer(docker, a.id);
  });

  it('start-up cleanup removes work containers whose session workspace was deleted, and only those', async () => {
    const gone = newSession();
    const kept = newSession();
    const goneWs = newWorkspace();
    const a = await createWorkContainer(docker, { task: 't/1/0', session: gone, workspaceDir: goneWs, image: DEFAULT_IMAGE, limits: noNet });
    const b = await createWorkContainer(docker, { task: 't/1/0', session: kept, workspaceDir: newWorkspace(), image: DEFAULT_IMAGE, limits: noNet });
    fs.rmSync(path.dirname(goneWs), { recursive: true, force: true });
    const removed = await removeDeadWorkContainers(docker);
    assert.ok(removed.includes(a.id), 'the container of the deleted session was removed');
    assert.ok(!removed.includes(b.id), 'the live session keeps its container');
    assert.equal((await listProjectContainers(docker, { session: gone })).length, 0);
    assert.equal((await listProjectContainers(docker, { session: kept })).length, 1);
    await removeWorkContainer(docker, kept);
  });

  it('a container removed mid-exec gives CONTAINER_FAILED, not a hang', async () => {
    const session = newSession();
    const { container, id } = await createWorkContainer(docker, { task: 't/1/0', session, workspaceDir: newWorkspace(), image: DEFAULT_IMAGE, limits: noNet });
    const s = await startExec(container, { cmd: ['sleep', '60'] });
    await removeContainer(docker, id);
    await assert.rejects(s.done, (e) => isExpBenchError(e, 'CONTAINER_FAILED'));
  });

  it('rejects bad limits and a missing workspace before creating anything', async () => {
    const session = newSession();
    await assert.rejects(createWorkContainer(docker, { task: 't/1/0', session, workspaceDir: newWorkspace(), image: DEFAULT_IMAGE, limits: { network: false, pids: 0, memoryBytes: -1 } }),
      (e) => isExpBenchError(e, 'BAD_INPUT') && /pids=0/.test(e.message) && /memoryBytes=-1/.test(e.message));
    await assert.rejects(createWorkContainer(docker, { task: 't/1/0', session, workspaceDir: '/nonexistent/ws', image: DEFAULT_IMAGE, limits: noNet }),
      (e) => isExpBenchError(e, 'BAD_INPUT') && e.message.includes('/nonexistent/ws'));
    await assert.rejects(createContainer(docker, { image: 'expbench/no-such-image:0', labels: { task: 't/1/0', session, role: 'verify' }, limits: noNet, user: 'solver', workdir: '/' }),
      (e) => isExpBenchError(e, 'IMAGE_MISSING') && e.message.includes('expbench/no-such-image:0'));
  });

  it('GPUs are requested only when the engine supports them', async () => {
    const session = newSession();
    const { gpusAvailable } = await import('../../src/core/sandbox');
    const c = await createContainer(docker, { image: DEFAULT_IMAGE, labels: { task: 't/1/0', session, role: 'verify' }, limits: { network: false, gpus: true }, user: 'solver', workdir: '/workspace' });
    const available = await gpusAvailable(docker);
    assert.equal(c.gpus, available);
    const requests = (await c.container.inspect()).HostConfig.DeviceRequests ?? [];
    assert.equal(requests.length, available ? 1 : 0);
    await removeContainer(docker, c.id);
  });
});
