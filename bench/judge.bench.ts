/**
 * Benchmark: judge overhead per task, model latency excluded (issue 5: ≤ 50 ms per task).
 *
 * Two prepared sessions (real prepareSession, real git patch): the bundled sample task
 * `sample/toycal/0` solved with samples/solutions/toy-calibration, and the judge test fixture
 * (test/harness/judgeFixture.ts, task iclr2024/99999/0). Each repetition, interleaved, per session:
 *  - heuristic: `judgeSession` without an endpoint (the offline pre-judge);
 *  - llm: `judgeSession` against test/harness/fakeOpenAIServer.ts (same process, answers at once with
 *    the scripted valid model of judgeFixture.ts) through the real `openai` client, with a fresh cache
 *    so every call goes over HTTP; the server's own time per request (`serverMs`) is subtracted;
 *  - llm cached: the same judgement again on the now-filled cache (zero HTTP requests);
 *  - baseline: the same request bodies replayed through a fresh `openai` client with the same
 *    concurrency (4), the same count of raw HTTP round trips, server time subtracted too.
 * Prints medians over RUNS repetitions (after WARMUP) in ms per task, and judge − baseline.
 * Env: BENCH_JUDGE_RUNS (default 21).
 */
import { promises as fsp } from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import OpenAI from 'openai';
import pLimit from 'p-limit';
import { judgeSession } from '../src/core/flows/judge';
import type { JudgeSessionOptions } from '../src/core/judge/session';
import { SessionLayout } from '../src/core/layout';
import { HARNESS_FILES } from '../src/core/layout';
import { findTask, loadDatasets } from '../src/core/tasks/loader';
import type { Task } from '../src/core/tasks/types';
import { makePatch } from '../src/core/workspace/patch';
import { prepareSession } from '../src/core/workspace/prepare';
import { FakeOpenAIServer, type RecordedRequest } from '../test/harness/fakeOpenAIServer';
import { makeJudgeFixture, scriptedModel } from '../test/harness/judgeFixture';

const ROOT = path.resolve(__dirname, '..', '..');
const RUNS = Number(process.env.BENCH_JUDGE_RUNS ?? 21);
const WARMUP = 3;
const CONCURRENCY = 4; // judgeWithModel's default

interface Sample { name: string; sessionDir: string; task: Task }

/** Prepares `sample/toycal/0` from the bundled repository and applies the bundled solution (as the CLI user would). */
async function prepareToycal(root: string): Promise<Sample> {
  const loaded = await loadDatasets([path.join(ROOT, 'samples', 'exp-bench')]);
  const task = findTask(loaded, 'sample/toycal/0');
  if (!task) throw new Error('sample/toycal/0 not found in samples/exp-bench');
  const sessionDir = path.join(root, 'toycal');
  await prepareSession({
    task, source: task.paper?.localRepo ?? path.join(ROOT, 'samples', 'repos', 'toy-calibration'),
    outDir: sessionDir, cacheDir: path.join(root, 'pristine-cache'), owner: null,
  });
  const l = new SessionLayout(sessionDir);
  const solution = path.join(ROOT, 'samples', 'solutions', 'toy-calibration');
  await fsp.mkdir(path.join(l.workspace, 'experiments'), { recursive: true });
  await fsp.copyFile(path.join(solution, 'temperature_scaling.py'), path.join(l.workspace, 'experiments', 'temperature_scaling.py'));
  await fsp.copyFile(path.join(solution, 'reproduce_exp_bench.sh'), l.script);
  await fsp.mkdir(path.dirname(l.answers), { recursive: true });
  await fsp.copyFile(path.join(solution, 'answers.json'), l.answers);
  await fsp.mkdir(l.harness, { recursive: true });
  await fsp.writeFile(path.join(l.harness, HARNESS_FILES.patch), (await makePatch(l.workspace)).patch);
  const events = [
    { v: 1, at: '2026-11-29T08:00:00.000Z', type: 'session.opened', client: 'cli', restored: false },
    { v: 1, at: '2026-11-29T08:01:00.000Z', type: 'command.run', command: 'ls toycal', exitCode: 0, durationMs: 5, outputExcerpt: 'data.py metrics.py model.py' },
    { v: 1, at: '2026-11-29T08:05:00.000Z', type: 'command.run', command: 'bash reproduce_exp_bench.sh', exitCode: 0, durationMs: 4000, outputExcerpt: 'ECE 0.0322 -> 0.0123' },
  ];
  await fsp.appendFile(l.events, events.map((e) => JSON.stringify(e)).join('\n') + '\n');
  return { name: 'sample/toycal/0', sessionDir, task };
}

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];
const sum = (xs: number[]) => xs.reduce((a, b) => a + b, 0);

interface Timing {
  wallMs: number;
  /** CPU time of this process meanwhile (user + system, every thread; child processes such as git not counted), ms: what a loaded machine inflates less. */
  cpuMs: number;
  serverMs: number;
  requests: number;
}

export async function run(): Promise<Record<string, unknown>> {
  const root = await fsp.mkdtemp(path.join(os.tmpdir(), 'expbench-bench-judge-'));
  const server = await new FakeOpenAIServer().start();
  server.handler = scriptedModel();
  const fixtures: string[] = [];
  try {
    const fx = await makeJudgeFixture();
    fixtures.push(fx.root);
    const samples: Sample[] = [await prepareToycal(root), { name: fx.task.id, sessionDir: fx.sessionDir, task: fx.task }];
    const endpoint = { baseURL: server.baseURL, apiKey: 'bench-key-not-secret', model: 'bench-model', timeoutMs: 10_000, maxRetries: 0 };
    let n = 0;

    /** Runs `f` and returns its wall time plus the requests the server saw meanwhile. */
    const timed = async (f: () => Promise<unknown>): Promise<Timing & { reqs: RecordedRequest[] }> => {
      const from = server.requests.length;
      const t0 = performance.now();
      const c0 = process.cpuUsage();
      await f();
      const wallMs = performance.now() - t0;
      const c = process.cpuUsage(c0);
      const reqs = server.requests.slice(from);
      return { wallMs, cpuMs: (c.user + c.system) / 1000, serverMs: sum(reqs.map((r) => r.serverMs ?? 0)), requests: reqs.length, reqs };
    };
    const heuristic = (s: Sample) => timed(() => judgeSession(s.sessionDir, { task: s.task }));
    const llm = async (s: Sample) => {
      const opts: JudgeSessionOptions = { task: s.task, endpoint, cacheDir: path.join(root, `cache-${n++}`) };
      const first = await timed(async () => {
        const { record } = await judgeSession(s.sessionDir, opts);
        if (record.kind !== 'llm' || record.harnessErrors.length) throw new Error(`${s.name}: unexpected judgement: ${JSON.stringify(record.harnessErrors)}`);
      });
      const cached = await timed(() => judgeSession(s.sessionDir, opts));
      if (cached.requests !== 0) throw new Error(`${s.name}: the cached re-run sent ${cached.requests} request(s)`);
      await fsp.rm(opts.cacheDir!, { recursive: true, force: true });
      return { first, cached };
    };
    const baseline = (bodies: unknown[]) => timed(async () => {
      const client = new OpenAI({ apiKey: endpoint.apiKey, baseURL: endpoint.baseURL, timeout: endpoint.timeoutMs, maxRetries: 0 });
      const limit = pLimit(CONCURRENCY);
      await Promise.all(bodies.map((b) => limit(() => client.chat.completions.create(b as OpenAI.ChatCompletionCreateParamsNonStreaming))));
    });

    type Series = Record<'heuristic' | 'llm' | 'llmCached' | 'baseline', Timing[]>;
    const series: Record<string, Series> = Object.fromEntries(samples.map((s) => [s.name, { heuristic: [], llm: [], llmCached: [], baseline: [] }]));
    for (let i = 0; i < WARMUP + RUNS; i++) {
      for (const s of samples) {
        const h = await heuristic(s);
        const l = await llm(s);
        const b = await baseline(l.first.reqs.map((r) => r.body));
        if (i < WARMUP) continue;
        const out = series[s.name];
        out.heuristic.push(h); out.llm.push(l.first); out.llmCached.push(l.cached); out.baseline.push(b);
      }
    }

    const result: Record<string, unknown> = { runs: RUNS, concurrency: CONCURRENCY };
    const net = (t: Timing) => t.wallMs - t.serverMs;
    for (const [name, s] of Object.entries(series)) {
      const r = {
        heuristicMs: median(s.heuristic.map((t) => t.wallMs)),
        heuristicCpuMs: median(s.heuristic.map((t) => t.cpuMs)),
        llmWallMs: median(s.llm.map((t) => t.wallMs)),
        llmServerMs: median(s.llm.map((t) => t.serverMs)),
        llmNetMs: median(s.llm.map(net)),
        llmRequests: median(s.llm.map((t) => t.requests)),
        llmCachedMs: median(s.llmCached.map((t) => t.wallMs)),
        baselineWallMs: median(s.baseline.map((t) => t.wallMs)),
        baselineNetMs: median(s.baseline.map(net)),
        llmMinusBaselineMs: median(s.llm.map((t, i) => net(t) - net(s.baseline[i]))),
      };
      result[name] = r;
      const f = (x: number) => x.toFixed(1);
      console.log(`judge ${name}: medians of ${RUNS}, ms per task (target ≤ 50 ms); load average ${os.loadavg()[0].toFixed(1)} on ${os.cpus().length} CPUs:`);
      console.log(`  heuristic ${f(r.heuristicMs)} ms (CPU time of the process ${f(r.heuristicCpuMs)} ms; git's child processes not counted)`);
      console.log(`  llm ${f(r.llmNetMs)} ms net (wall ${f(r.llmWallMs)} − fake server ${f(r.llmServerMs)}; ${r.llmRequests} HTTP requests, concurrency ${CONCURRENCY}); cached re-run ${f(r.llmCachedMs)} ms (0 requests)`);
      console.log(`  baseline: the same ${r.llmRequests} requests through the openai client ${f(r.baselineNetMs)} ms net (wall ${f(r.baselineWallMs)}); llm − baseline ${f(r.llmMinusBaselineMs)} ms`);
    }
    return result;
  } finally {
    await server.close();
    for (const d of [root, ...fixtures]) await fsp.rm(d, { recursive: true, force: true });
  }
}

if (require.main === module) void run();
