/**
 * Benchmark: load + validate all shared EXP-Bench task files and paper lists with the loader,
 * against raw `JSON.parse` of the same bytes (read from disk in both cases), in the same run.
 * Target (issue 2): loader ≤ 2× raw. Prints medians of N runs after warm-up, in ms, and the ratio.
 */
import { promises as fsp } from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { loadDatasets } from '../src/core/tasks/loader';

/** The shared task files (env BENCH_TASKS_DATA, default `../shared/data/exp-bench` beside the repository). */
const DATA = process.env.BENCH_TASKS_DATA ?? path.resolve(__dirname, '../../../shared/data/exp-bench');

async function listFiles(dir: string): Promise<string[]> {
  const entries = await fsp.readdir(dir, { recursive: true, withFileTypes: true });
  return entries.filter((e) => e.isFile() && /\.jsonl?$/.test(e.name)).map((e) => path.join(e.parentPath, e.name));
}

async function raw(): Promise<number> {
  const files = await listFiles(DATA);
  let n = 0;
  const texts = await Promise.all(files.map((f) => fsp.readFile(f, 'utf8')));
  texts.forEach((t, i) => {
    if (files[i].endsWith('.jsonl')) for (const line of t.split('\n')) { if (line.trim()) { JSON.parse(line); n++; } }
    else n += JSON.parse(t).questions.length;
  });
  return n;
}

async function loader(): Promise<number> {
  const r = await loadDatasets([DATA]);
  return r.tasks.length;
}

/** Runs `a` and `b` alternately (so machine noise hits both alike) and returns their median times, ms. */
async function interleavedMedians(a: () => Promise<unknown>, b: () => Promise<unknown>, runs: number): Promise<[number, number]> {
  const ta: number[] = [];
  const tb: number[] = [];
  for (let i = 0; i < runs; i++) {
    let t0 = performance.now();
    await a();
    ta.push(performance.now() - t0);
    t0 = performance.now();
    await b();
    tb.push(performance.now() - t0);
  }
  const med = (xs: number[]) => xs.sort((x, y) => x - y)[Math.floor(xs.length / 2)];
  return [med(ta), med(tb)];
}

export async function run(): Promise<Record<string, number>> {
  for (let i = 0; i < 5; i++) { await raw(); await loader(); }
  const [rawMs, loaderMs] = await interleavedMedians(raw, loader, 31);
  const ratio = loaderMs / rawMs;
  const load = os.loadavg().map((x) => x.toFixed(2)).join(' ');
  console.log(`tasks: raw JSON.parse ${rawMs.toFixed(1)} ms, load+validate ${loaderMs.toFixed(1)} ms, ratio ${ratio.toFixed(2)}× (target ≤ 2×); load average ${load}`);
  return { rawMs, loaderMs, ratio, loadAverage1: os.loadavg()[0] };
}

if (require.main === module) void run();
