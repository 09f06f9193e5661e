/**
 * Benchmark of run sets (issue 27), three figures, each against its target:
 *
 * 1. Status of a 500-unit run set, in process (node's own start excluded): `runSetStatus` on a
 *    state file of 500 units with the records a finished run leaves (planned, placed, pending,
 *    started, progress ×4, finished with its outcome: 4500 lines). Median of 15. Target ≤ 200 ms.
 * 2. Throughput of N verify-only units at concurrency 2 against the same containers started by
 *    hand with `xargs -P 2 docker run …`, in one run. A verify-only unit is an imported run of the
 *    reference harness's format (the agent's patch and answers; test/harness/runSetFixture.ts
 *    `writeHarnessRecords`) re-verified, not judged: `expbench runs start` with
 *    `"import"`, `"judge": false`, through the bundled CLI and the local placement (a process of
 *    the CLI per unit: state read, key check, preparation from the warm pristine cache, patch
 *    applied, submission, the verifier's clean run, record). The baseline runs the same script
 *    (`bash reproduce_exp_bench.sh` of the same tree, network none, the same image) by
 *    `xargs -P 2 -n 1 docker run --rm …`. The script runs the toy experiment, then a CPU-bound
 *    loop of S seconds standing for the experiment's length (BENCH_RUNS_SECONDS, default 0,5,20:
 *    the ratio depends on it, so each is printed). Target ≥ 0.9× (throughput ratio = baseline
 *    wall time / run-set wall time).
 * 3. Overhead per unit ex container and model: the orchestrator's own CPU time per unit in that
 *    run (planning aside: the `runs start` process's CPU from orchestrator.started to the end,
 *    from /proc, divided by N), and the scheduling gap (a unit's end to the next unit's start).
 *    Target ≤ 50 ms. Also printed, for the record: each unit process's own time beyond its
 *    verifier's container run (CLI start, preparation, import, clean tree, record).
 *
 * The machine's load (1-minute load average before and after, CPUs) is printed with the figures:
 * this machine is shared.
 */
import { execFile, spawn } from 'node:child_process';
import { promises as fsp, readFileSync } from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { promisify } from 'node:util';
import { RunSetLayout, RunSetLog, runSetStatus, readRunSet, foldRunSet } from '../src/core/runs';
import { DEFAULT_IMAGE, ensureImage } from '../src/core/sandbox/images';
import { connectDocker, ensureEngine } from '../src/core/sandbox/connection';
import { SessionLayout } from '../src/core/layout';
import { readLatestRecord } from '../src/core/verify/record';
import { buildRunSetFixture, writeHarnessRecords } from '../test/harness/runSetFixture';
import { AGENT_RUNNER, AGENT_SCRIPT } from '../test/unit/agent.fixtures';

const exec = promisify(execFile);
const REPO = path.resolve(__dirname, '..', '..');
const CLI = path.join(REPO, 'dist', 'cli.js');
const UNITS = Number(process.env.BENCH_RUNS_UNITS ?? 8);
const SECONDS = (process.env.BENCH_RUNS_SECONDS ?? '0,5,20').split(',').map(Number);
const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];
const load = () => os.loadavg()[0].toFixed(2);

/** `reproduce_exp_bench.sh`: the toy experiment, then `s` seconds of a CPU-bound loop (the experiment's length). */
const runner = (s: number) => `${AGENT_RUNNER}${s > 0 ? `python3 -c 'import time\nt = time.time()\nwhile time.time() - t < ${s}: pass'\n` : ''}`;

async function statusFigure(root: string): Promise<Record<string, number>> {
  const dir = path.join(root, 'status500');
  await fsp.mkdir(dir, { recursive: true });
  const log = new RunSetLog(new RunSetLayout(dir).state);
  const lines: unknown[] = [];
  const rec = (r: Record<string, unknown>) => lines.push({ v: 1, at: new Date().toISOString(), ...r });
  rec({ type: 'runset.created', id: 'bench-500', name: 'bench', spec: { version: 1, name: 'bench', tasks: ['x/y/*'], agent: { model: 'm' } }, specFile: '/s', tool: '0' });
  for (let i = 0; i < 500; i++) {
    const unit = `${String(i).padStart(8, '0')}${'a'.repeat(56)}`;
    const ref = { kind: 'local', unit, id: `${os.hostname()}/${1000 + i}/${i}`, logFile: `${dir}/exec/u${i}/try-1.log`, submittedAt: new Date().toISOString() };
    rec({ type: 'unit.planned', unit, name: `c-p-${i}.agent.a1`, task: `conf2026/${90000 + Math.floor(i / 6)}/${i % 6}`, attempt: 1, actor: { kind: 'agent', name: 'agent', model: 'm', maxSteps: 50 },
      resources: { cpus: 1, memoryMiB: 2048, gpus: 0, timeSeconds: 7800 }, keyParts: { task: 't'.repeat(64), actor: 'a'.repeat(64), image: 'expbench/sandbox:1', pin: 'p'.repeat(64) },
      dir: `units/c-p-${i}.agent.a1`, source: '/repos/x', commit: null, image: 'expbench/sandbox:1' });
    rec({ type: 'unit.placed', unit, try: 1, ref });
    rec({ type: 'unit.pending', unit, try: 1, reason: '2 of 2 running (concurrency 2)' });
    rec({ type: 'unit.started', unit, try: 1, ref, host: os.hostname() });
    for (const phase of ['design', 'implementation', 'execution', 'conclusion']) rec({ type: 'unit.progress', unit, phase, steps: 3, tokens: 1200, costUsd: 0.01, workingMs: 5000 });
    rec({ type: 'unit.finished', unit, try: 1, status: 'done', message: 'submitted; verify: E_clean pass (exit 0, 1.0 s), claims 4/4 found; judge: heuristic: design 7/7 matched', outcome: { submitted: true, E: true, D: true, I: true, C: null, All: null, AllE: null, tokens: 4800, costUsd: 0.04, workingMs: 20000 }, log: `exec/u${i}/try-1.log` });
  }
  await fsp.writeFile(log.file, lines.map((l) => JSON.stringify(l)).join('\n') + '\n');
  await runSetStatus(dir); // warm-up (module code, page cache)
  const ms: number[] = [];
  for (let i = 0; i < 15; i++) {
    const t0 = performance.now();
    const s = await runSetStatus(dir);
    ms.push(performance.now() - t0);
    if (s.rows.length !== 500 || s.counts.done !== 500) throw new Error('bench: the status did not read 500 done units');
  }
  const m = median(ms);
  console.log(`runs: status of a 500-unit run set (${lines.length} lines, ${(await fsp.stat(log.file)).size} bytes) in process: median ${m.toFixed(1)} ms of 15 (target ≤ 200 ms)`);
  return { status500Ms: m, status500Lines: lines.length };
}

/** CPU time (user + system) of a process so far, ms, from /proc (Linux). */
function cpuMsOf(pid: number): number | undefined {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    const f = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    return ((Number(f[11]) + Number(f[12])) * 1000) / 100; // clock ticks (USER_HZ 100)
  } catch {
    return undefined;
  }
}

interface Side { wallMs: number }

async function runSetSide(root: string, s: number, env: NodeJS.ProcessEnv, units = UNITS, tag = String(s)): Promise<Side & { orchestratorCpuMsPerUnit: number; gapMs: number; unitOwnMs: number; containerMs: number }> {
  const folder = path.join(root, `records-${tag}`);
  await writeHarnessRecords(folder, [...Array(units).keys()], () => runner(s));
  const spec = path.join(root, `spec-${tag}.jsonc`);
  await fsp.writeFile(spec, JSON.stringify({ version: 1, name: `bench ${tag}`, datasets: [path.join(root, 'exp-bench')], tasks: ['fixture2026/90001/*'], import: { from: [folder] }, verify: true, judge: false, concurrency: 2 }));
  const dir = path.join(root, `run-${tag}`);
  const t0 = performance.now();
  const child = spawn(process.execPath, [CLI, 'runs', 'start', spec, '--out', dir], { env, stdio: ['ignore', 'ignore', 'pipe'] });
  let err = '';
  child.stderr.on('data', (d: Buffer) => { err += d; });
  // The orchestrator's CPU from when it took the run set (planning aside) to its last reading before exit.
  let cpuAtStart: number | undefined;
  let cpuLast: number | undefined;
  const sampler = setInterval(() => {
    const c = cpuMsOf(child.pid!);
    if (c === undefined) return;
    cpuLast = c;
    if (cpuAtStart === undefined && err.includes(' start: ')) cpuAtStart = c;
  }, 20);
  const code = await new Promise<number | null>((r) => child.once('exit', r));
  clearInterval(sampler);
  const wallMs = performance.now() - t0;
  if (code !== 0) throw new Error(`bench: runs start exited ${code}: ${err.slice(-2000)}`);
  const v = foldRunSet((await readRunSet(new RunSetLayout(dir).state))!.records)!;
  if (v.counts.done !== units || v.units.some((u) => u.outcome?.E !== true)) throw new Error(`bench: not every unit verified E_clean: ${JSON.stringify(v.counts)}`);
  const read = (await readRunSet(new RunSetLayout(dir).state))!.records;
  const starts = read.filter((r) => r.type === 'unit.started').map((r) => Date.parse(r.at)).sort((a, b) => a - b);
  const ends = read.filter((r) => r.type === 'unit.finished').map((r) => Date.parse(r.at)).sort((a, b) => a - b);
  // after the first two (concurrency 2), each start follows an end: the gap between them
  const gaps = starts.slice(2).map((t, i) => t - ends[i]);
  const own: number[] = [];
  const cont: number[] = [];
  for (const u of v.units) {
    const rec = (await readLatestRecord(new SessionLayout(new RunSetLayout(dir).session(u.dir)))).record;
    const runMs = rec?.durationMs ?? 0;
    cont.push(runMs);
    own.push(Date.parse(u.endedAt!) - Date.parse(u.startedAt!) - runMs);
  }
  const cpu = cpuAtStart !== undefined && cpuLast !== undefined ? (cpuLast - cpuAtStart) / units : NaN;
  return { wallMs, orchestratorCpuMsPerUnit: cpu, gapMs: median(gaps), unitOwnMs: median(own), containerMs: median(cont) };
}

/** The baseline: the same trees (the record's patch applied to the repository), the same script, by `xargs -P 2 docker run`. */
async function xargsSide(root: string, s: number, image: string): Promise<Side> {
  const trees: string[] = [];
  for (let i = 0; i < UNITS; i++) {
    const t = path.join(root, `trees-${s}`, String(i));
    await fsp.cp(path.join(root, 'repos', 'toy-calibration'), t, { recursive: true, filter: (src) => !src.includes(`${path.sep}.git`) });
    await fsp.rm(path.join(t, 'experiments', 'temperature_scaling.py'), { force: true }); // masked, as in the unit's tree
    await fsp.writeFile(path.join(t, 'experiments', 'calibrate_agent.py'), AGENT_SCRIPT);
    await fsp.writeFile(path.join(t, 'reproduce_exp_bench.sh'), runner(s), { mode: 0o755 });
    await fsp.chmod(t, 0o777);
    trees.push(t);
  }
  const t0 = performance.now();
  await new Promise<void>((resolve, reject) => {
    const x = spawn('xargs', ['-P', '2', '-I{}', 'docker', 'run', '--rm', '--network', 'none', '-v', '{}:/workspace', '-w', '/workspace', image, 'bash', 'reproduce_exp_bench.sh'], { stdio: ['pipe', 'ignore', 'pipe'] });
    let err = '';
    x.stderr.on('data', (d: Buffer) => { err += d; });
    x.once('exit', (c) => (c === 0 ? resolve() : reject(new Error(`xargs docker run exited ${c}: ${err.slice(-1000)}`))));
    x.stdin.end(trees.join('\n') + '\n');
  });
  return { wallMs: performance.now() - t0 };
}

export async function run(): Promise<Record<string, number | string>> {
  const docker = connectDocker();
  await ensureEngine(docker);
  await ensureImage(docker, DEFAULT_IMAGE);
  const root = await fsp.mkdtemp(path.join(os.tmpdir(), 'expbench-bench-runs-'));
  const out: Record<string, number | string> = { cpus: os.availableParallelism(), loadBefore: load() };
  console.log(`runs: machine ${os.availableParallelism()} CPUs, load average (1 min) ${load()} before`);
  try {
    Object.assign(out, await statusFigure(root));
    await buildRunSetFixture(root, UNITS);
    const env: NodeJS.ProcessEnv = Object.fromEntries(Object.entries(process.env).filter(([k]) => !/^(OPENAI_|EXPBENCH_JUDGE_|EXPBENCH_AGENT_)/.test(k)));
    env.XDG_CACHE_HOME = path.join(root, 'cache');
    // Warm-up: the pristine cache, the image's layers, node's and docker's first starts.
    await exec('docker', ['run', '--rm', '--network', 'none', DEFAULT_IMAGE, 'true']);
    await runSetSide(root, 0, env, 2, 'warm-up');
    for (const s of SECONDS) {
      const base = await xargsSide(root, s, DEFAULT_IMAGE);
      const rs = await runSetSide(root, s, env);
      const ratio = base.wallMs / rs.wallMs;
      console.log(`runs: ${UNITS} verify-only units, script = toy experiment + ${s} s CPU loop, concurrency 2: xargs -P 2 docker run ${(base.wallMs / 1000).toFixed(1)} s, `
        + `run set ${(rs.wallMs / 1000).toFixed(1)} s: throughput ${ratio.toFixed(2)}× (target ≥ 0.9×); container run median ${rs.containerMs.toFixed(0)} ms; `
        + `orchestrator CPU ${rs.orchestratorCpuMsPerUnit.toFixed(1)} ms/unit, gap end → next start median ${rs.gapMs.toFixed(0)} ms (target ≤ 50 ms); `
        + `each unit process's own time beyond its container run median ${rs.unitOwnMs.toFixed(0)} ms; load ${load()}`);
      Object.assign(out, {
        [`s${s}XargsMs`]: base.wallMs, [`s${s}RunSetMs`]: rs.wallMs, [`s${s}Throughput`]: ratio, [`s${s}ContainerMs`]: rs.containerMs,
        [`s${s}OrchestratorCpuMsPerUnit`]: rs.orchestratorCpuMsPerUnit, [`s${s}GapMs`]: rs.gapMs, [`s${s}UnitOwnMs`]: rs.unitOwnMs,
      });
    }
    out.loadAfter = load();
    console.log(`runs: load average (1 min) ${load()} after`);
    return out;
  } finally {
    await fsp.rm(root, { recursive: true, force: true }).catch(() => undefined);
  }
}

if (require.main === module) void run();
