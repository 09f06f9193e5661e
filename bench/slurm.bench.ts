/**
 * Benchmark: the Slurm placement's scheduling overhead per unit on the local Slurm
 * (scripts/setup-slurm.sh), against baselines measured in the same run, interleaved:
 * - bare: `docker run --rm --network none IMAGE true` from this process (the unit's container, nothing else);
 * - CLI start: `node dist/cli.js --version` (one start of the project's CLI, as on the node);
 * - by hand: `sbatch --parsable` of a script running one CLI start and that container, then
 *   `squeue -t all` every 20 ms until the job ended, then one `sacct` (its exit code);
 * - placement: `SlurmPlacement.submit` of one unit doing exactly the same (its CLI entry is bash
 *   running the CLI start and the container), then `poll` every 20 ms until ended.
 * The project's overhead beyond sbatch, sacct and one start of the CLI is placement − by hand
 * (target, issue 28: ≤ 0.2 s per unit), as the difference of the medians and as the median of the
 * paired (same run) differences; the target is met when both are within it. Units run one at a time, so that each figure is one
 * unit's latency. Prints medians of RUNS runs (env BENCH_RUNS, default 7) in ms and the load.
 */
import { execFile } from 'node:child_process';
import { existsSync, promises as fsp } from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { promisify } from 'node:util';
import { SlurmPlacement, type PlacementRef } from '../src/core/placement';
import { DEFAULT_IMAGE } from '../src/core/sandbox/images';

const exec = promisify(execFile);
const RUNS = Number(process.env.BENCH_RUNS ?? 7);
const REPO = path.resolve(__dirname, '..', '..');
const IMAGE = process.env.BENCH_IMAGE ?? DEFAULT_IMAGE;
const CLI = path.join(REPO, 'dist', 'cli.js');
const POLL_MS = 20;

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const FINAL = /^(COMPLETED|FAILED|CANCELLED|TIMEOUT|PREEMPTED|NODE_FAIL|OUT_OF_MEMORY|BOOT_FAIL|DEADLINE)/;

async function timed(f: () => Promise<void>): Promise<number> {
  const t = performance.now();
  await f();
  return performance.now() - t;
}

/** The unit: one start of the CLI, then the sandbox container with no network. */
const UNIT = `node ${JSON.stringify(CLI)} --version >/dev/null && docker run --rm --network none ${IMAGE} true`;

export async function run(): Promise<Record<string, unknown>> {
  if (!process.env.SLURM_CONF) {
    const local = path.join(process.env.EXPBENCH_SLURM_DIR ?? path.join(REPO, '.cache', 'slurm'), 'etc', 'slurm.conf');
    if (existsSync(local)) process.env.SLURM_CONF = local;
  }
  try {
    await exec('sinfo', ['-h']);
  } catch (e) {
    console.log(`slurm.bench: skipped: no Slurm answers (${(e as Error).message.split('\n')[0]}); bash scripts/setup-slurm.sh makes one`);
    return { skipped: 'no Slurm' };
  }
  const tmp = await fsp.mkdtemp(path.join(os.tmpdir(), 'expbench-bench-slurm-'));
  const hand = path.join(tmp, 'hand.sh');
  await fsp.writeFile(hand, `#!/bin/bash\n#SBATCH --cpus-per-task=1\n#SBATCH --mem=256M\n#SBATCH --time=10\n#SBATCH --output=/dev/null\n${UNIT}\n`);
  const placement = new SlurmPlacement({ spec: { kind: 'slurm', container: 'docker' }, cli: { exe: '/bin/bash', args: ['-c', UNIT], env: {} } });
  const t = { bare: [] as number[], cli: [] as number[], hand: [] as number[], placement: [] as number[] };
  try {
    await exec('docker', ['run', '--rm', '--network', 'none', IMAGE, 'true']); // warm
    await placement.capacity(); // read once per run set, as the orchestrator does
    for (let i = 0; i < RUNS; i++) {
      t.bare.push(await timed(async () => { await exec('docker', ['run', '--rm', '--network', 'none', IMAGE, 'true']); }));
      t.cli.push(await timed(async () => { await exec(process.execPath, [CLI, '--version']); }));
      t.hand.push(await timed(async () => {
        const id = (await exec('sbatch', ['--parsable', hand])).stdout.trim().split(';')[0];
        for (;;) {
          const s = (await exec('squeue', ['-h', '-t', 'all', '-j', id, '-o', '%T'])).stdout.trim();
          if (FINAL.test(s)) break;
          await sleep(POLL_MS);
        }
        await exec('sacct', ['-n', '-X', '-P', '-j', id, '-o', 'JobID,State,ExitCode']);
      }));
      const unit = `u${i}`;
      const log = path.join(tmp, 'exec', unit, 'try-1.log');
      await fsp.mkdir(path.dirname(log), { recursive: true });
      t.placement.push(await timed(async () => {
        const refs: PlacementRef[] = await placement.submit([{
          runSet: 'bench', unit, name: unit, args: [], resources: { cpus: 1, memoryMiB: 256, gpus: 0, timeSeconds: 600 }, logFile: log, cwd: tmp, passEnv: ['PATH', 'HOME'],
        }], { throttle: 1 });
        for (;;) {
          const [s] = await placement.poll(refs);
          if (s.phase === 'ended') { if (s.exitCode !== 0 && s.exitCode !== undefined) throw new Error(`the bench unit failed: ${await placement.log(refs[0])}`); break; }
          await sleep(POLL_MS);
        }
      }));
    }
  } finally {
    placement.dispose();
    await fsp.rm(tmp, { recursive: true, force: true }).catch(() => undefined);
  }
  const m = { bare: median(t.bare), cli: median(t.cli), hand: median(t.hand), placement: median(t.placement) };
  const overhead = m.placement - m.hand;
  // The same, paired: each run's placement − by hand (the two are interleaved, so a load spike hits both).
  const paired = median(t.placement.map((x, i) => x - t.hand[i]));
  const met = overhead <= 200 && paired <= 200;
  const load = os.loadavg().map((x) => x.toFixed(1)).join(' ');
  console.log(`slurm.bench (median of ${RUNS}, ms; load ${load}, ${os.availableParallelism()} CPUs):`);
  console.log(`  bare docker run ${m.bare.toFixed(0)} | CLI start ${m.cli.toFixed(0)} | sbatch+squeue+sacct by hand (CLI start + docker run) ${m.hand.toFixed(0)} | Slurm placement ${m.placement.toFixed(0)}`);
  console.log(`  scheduling overhead per unit against bare docker run: ${(m.placement - m.bare).toFixed(0)} ms (by hand: ${(m.hand - m.bare).toFixed(0)} ms, of which the CLI start ≈ ${m.cli.toFixed(0)} ms)`);
  console.log(`  the project's overhead beyond sbatch, sacct and one CLI start: ${overhead.toFixed(0)} ms per unit as a difference of medians, ${paired.toFixed(0)} ms as the median of paired differences (target ≤ 200 ms, both): ${met ? 'met' : 'NOT met'}`);
  return { runs: RUNS, load, medianMs: m, samplesMs: t, overheadMs: overhead, pairedOverheadMs: paired, target: 200, met };
}
