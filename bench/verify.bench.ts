/**
 * Benchmark: the verifier (`runVerification`, clean mode: clean tree, new container, tar copy,
 * run, changed-files archive, claims check, record, removal) against its baseline, measured in
 * the same run, interleaved: `docker run --rm IMAGE true` plus the script's own time.
 * The script's own time is measured INSIDE a plain `docker run` (date before and after
 * `bash reproduce_exp_bench.sh`, on a copy of the same workspace), so it excludes any container cost.
 * Target (issue 4): verifier ≤ 1.2× (docker run --rm IMAGE true + the script's own time).
 *
 * Three sessions: the sample task's real solution (sample/toycal/0, prepared with prepareSession),
 * a script that sleeps 1 s, and a script that only echoes (own time ≈ 0: the worst case).
 * Prints medians of RUNS runs (env BENCH_RUNS, default 7) in ms, the ratios, the load average, and
 * where the verifier's time goes ({@link VerifyTiming}: before the start, the start, the script,
 * archiving and exit, after the container exited).
 */
import { execFile } from 'node:child_process';
import { promises as fsp } from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { promisify } from 'node:util';
import { DEFAULT_IMAGE, ensureImage } from '../src/core/sandbox/images';
import { connectDocker, ensureEngine } from '../src/core/sandbox/connection';
import { SessionLayout } from '../src/core/layout';
import { findTask, loadDatasets } from '../src/core/tasks/loader';
import { runVerification } from '../src/core/verify';
import { prepareSession } from '../src/core/workspace/prepare';
import { adoptWorkspace } from '../test/fixtures/hostRepo';

const exec = promisify(execFile);
const RUNS = Number(process.env.BENCH_RUNS ?? 7);
const REPO = path.resolve(__dirname, '..', '..');
const IMAGE = process.env.BENCH_IMAGE ?? DEFAULT_IMAGE;

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];

async function git(cwd: string, ...args: string[]): Promise<void> {
  await exec('git', ['-c', 'user.name=bench', '-c', 'user.email=bench@localhost', ...args], { cwd });
}

/** A minimal session: one "task start" commit (in the host repository too, as prepare makes it) plus an uncommitted reproduce_exp_bench.sh. */
async function scriptSession(root: string, body: string): Promise<string> {
  const ws = new SessionLayout(root).workspace;
  await fsp.mkdir(ws, { recursive: true });
  await fsp.writeFile(path.join(ws, 'README_task.txt'), 'bench\n');
  await git(ws, 'init', '-q');
  await git(ws, 'add', '-A');
  await git(ws, 'commit', '-q', '-m', 'task start');
  adoptWorkspace(root);
  await fsp.writeFile(path.join(ws, 'reproduce_exp_bench.sh'), `#!/bin/bash\n${body}\n`);
  await fsp.mkdir(new SessionLayout(root).private, { recursive: true });
  await fsp.writeFile(new SessionLayout(root).answers, JSON.stringify({ design: 'd', conclusion: 'We get 0.93.' }));
  return root;
}

/** The sample task with its real solution, as the CLI's prepare + copy + submit would leave it. */
async function sampleSession(root: string): Promise<string> {
  const task = findTask(await loadDatasets([path.join(REPO, 'samples', 'exp-bench')]), 'sample/toycal/0');
  if (!task?.paper?.localRepo) throw new Error('the bundled sample task sample/toycal/0 was not found');
  await prepareSession({ task, source: task.paper.localRepo, outDir: root, cacheDir: path.join(root, '..', 'cache') });
  const sol = path.join(REPO, 'samples', 'solutions', 'toy-calibration');
  const layout = new SessionLayout(root);
  await fsp.mkdir(path.join(layout.workspace, 'experiments'), { recursive: true });
  await fsp.copyFile(path.join(sol, 'temperature_scaling.py'), path.join(layout.workspace, 'experiments', 'temperature_scaling.py'));
  await fsp.copyFile(path.join(sol, 'reproduce_exp_bench.sh'), path.join(layout.workspace, 'reproduce_exp_bench.sh'));
  await fsp.mkdir(layout.private, { recursive: true });
  await fsp.copyFile(path.join(sol, 'answers.json'), layout.answers);
  return root;
}

async function dockerRunTrue(): Promise<number> {
  const t0 = performance.now();
  await exec('docker', ['run', '--rm', '--network', 'none', IMAGE, 'true']);
  return performance.now() - t0;
}

/** The script's own time, ms, measured inside a plain container on a copy of the workspace. */
async function ownTime(workspace: string): Promise<number> {
  const cmd = 'cp -r /src /tmp/w && cd /tmp/w && s=$(date +%s%N) && { bash reproduce_exp_bench.sh >/dev/null 2>&1; e=$(date +%s%N); }; echo $(( (e - s) / 1000 ))';
  const { stdout } = await exec('docker', ['run', '--rm', '--network', 'none', '-v', `${workspace}:/src:ro`, IMAGE, 'bash', '-c', cmd]);
  return Number(stdout.trim()) / 1000;
}

/**
 * Where one verification's time goes, ms: `beforeMs` call → container about to start; `startMs`
 * → the script starts (engine start, the clean tree extracted: the record's `scriptStartedAt`);
 * `runMs` the script (the record's duration); `exitMs` script end → container exit (the wrapper
 * archives the changed files; the engine's `containerExitedAt`); `afterMs` container exit → the
 * verifier returns (claims, record, container removal); `afterMs` + `exitMs` + `startMs` is what
 * was one "after" figure before.
 */
interface VerifyTiming { totalMs: number; beforeMs: number; startMs: number; runMs: number; exitMs: number; afterMs: number; ok: boolean }

async function verifyOnce(root: string): Promise<VerifyTiming> {
  const t0 = performance.now();
  let started = t0;
  const r = await runVerification(root, { image: IMAGE, limits: { timeoutMs: 600_000 }, onStarted: () => { started = performance.now(); } });
  const end = performance.now();
  const wallAt = (perf: number) => Date.now() - (performance.now() - perf); // a performance.now() time on the wall clock
  const runMs = r.durationMs ?? 0;
  const scriptStart = r.scriptStartedAt ? Date.parse(r.scriptStartedAt) : wallAt(started);
  const exited = r.containerExitedAt ? Date.parse(r.containerExitedAt) : scriptStart + runMs;
  return {
    totalMs: end - t0, beforeMs: started - t0, startMs: scriptStart - wallAt(started), runMs, exitMs: exited - (scriptStart + runMs),
    afterMs: wallAt(end) - exited, ok: r.exitCode === 0,
  };
}

export async function run(): Promise<Record<string, number>> {
  const docker = connectDocker();
  await ensureEngine(docker);
  await ensureImage(docker, IMAGE);
  const root = await fsp.mkdtemp(path.join(os.tmpdir(), 'expbench-bench-verify-'));
  try {
    const cases = {
      sample: await sampleSession(path.join(root, 'sample')),
      sleep1: await scriptSession(path.join(root, 'sleep1'), 'sleep 1\necho "result 0.93"'),
      echo: await scriptSession(path.join(root, 'echo'), 'echo "result 0.93"'),
    };
    const names = Object.keys(cases) as Array<keyof typeof cases>;
    // Warm-up: page cache, image layers, node's module cache.
    await dockerRunTrue();
    for (const n of names) { await ownTime(new SessionLayout(cases[n]).workspace); await verifyOnce(cases[n]); }
    const base: number[] = [];
    const own: Record<string, number[]> = {};
    const ver: Record<string, VerifyTiming[]> = {};
    for (let i = 0; i < RUNS; i++) {
      base.push(await dockerRunTrue());
      for (const n of names) {
        (own[n] ??= []).push(await ownTime(new SessionLayout(cases[n]).workspace));
        const v = await verifyOnce(cases[n]);
        if (!v.ok) throw new Error(`bench: the ${n} script failed under the verifier`);
        (ver[n] ??= []).push(v);
      }
    }
    const baseMs = median(base);
    const out: Record<string, number> = { runs: RUNS, dockerRunTrueMs: baseMs };
    console.log(`verify: image ${IMAGE}; medians of ${RUNS} interleaved runs; docker run --rm IMAGE true ${baseMs.toFixed(0)} ms; load average ${os.loadavg().map((x) => x.toFixed(2)).join(' ')}`);
    for (const n of names) {
      const ownMs = median(own[n]);
      const m = (k: keyof VerifyTiming) => median(ver[n].map((v) => v[k] as number));
      const ratio = m('totalMs') / (baseMs + ownMs);
      console.log(`verify: ${n.padEnd(6)} script own ${ownMs.toFixed(0)} ms; verifier ${m('totalMs').toFixed(0)} ms ` +
        `(before start ${m('beforeMs').toFixed(0)}, start ${m('startMs').toFixed(0)}, run ${m('runMs').toFixed(0)}, archive and exit ${m('exitMs').toFixed(0)}, after exit ${m('afterMs').toFixed(0)}); ` +
        `ratio ${ratio.toFixed(2)}× of (docker run true + own) (target ≤ 1.2×)`);
      Object.assign(out, { [`${n}OwnMs`]: ownMs, [`${n}VerifyMs`]: m('totalMs'), [`${n}BeforeMs`]: m('beforeMs'), [`${n}StartMs`]: m('startMs'), [`${n}RunMs`]: m('runMs'),
        [`${n}ExitMs`]: m('exitMs'), [`${n}AfterMs`]: m('afterMs'), [`${n}Ratio`]: ratio });
    }
    return out;
  } finally {
    await fsp.rm(root, { recursive: true, force: true });
  }
}

if (require.main === module) void run();
