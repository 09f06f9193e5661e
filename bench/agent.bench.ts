/**
 * Benchmark: the built-in agent (src/core/agent), against the real container and a scripted
 * OpenAI-compatible server (test/harness/fakeOpenAIServer.ts) driven by the real `openai` client.
 *
 * 1. Loop overhead per step, excluding model latency and the tool's own time: the wall time of
 *    `runAgent` minus the recorded `durationMs` of every `agent.model_call` (the request as the
 *    client saw it) and every `agent.tool_call` (the tool's run), divided by the steps. What is
 *    left is the loop's own work: event appends (fsync'd), phase changes, the conversation's
 *    serialisation, limit checks. Target (issue 18): ≤ 20 ms. STEPS steps (env BENCH_AGENT_STEPS,
 *    default 30), each one `list_files` call.
 * 2. A shell tool call (`runTool(ctx, 'shell', {command})`) against the same command through the
 *    engine's exec API directly (`execText(container, {cmd: ['bash', '-lc', command]})`),
 *    interleaved in the same run, RUNS each (env BENCH_RUNS, default 15), medians. Target ≤ 1.2×.
 */
import { promises as fsp } from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { runAgent } from '../src/core/agent/loop';
import { agentBrief } from '../src/core/agent/prompt';
import { runTool, type ToolContext } from '../src/core/agent/tools';
import { SessionService } from '../src/core/flows/sessionService';
import { DEFAULT_IMAGE, connectDocker, ensureEngine, ensureImage, execText } from '../src/core/sandbox';
import { ensureWorkContainer, removeWorkContainer } from '../src/core/sandbox/work';
import { readEvents } from '../src/core/session/events';
import { writeSessionMarker } from '../src/core/session/marker';
import { bundledDatasetDir } from '../src/core/paths';
import { findTask, loadDatasets } from '../src/core/tasks/loader';
import { prepareSession } from '../src/core/workspace/prepare';
import { FakeOpenAIServer } from '../test/harness/fakeOpenAIServer';

const STEPS = Number(process.env.BENCH_AGENT_STEPS ?? 30);
const RUNS = Number(process.env.BENCH_RUNS ?? 15);
const COMMAND = 'echo hello; ls /workspace >/dev/null';
const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];

export async function run(): Promise<Record<string, unknown>> {
  const docker = connectDocker();
  await ensureEngine(docker);
  await ensureImage(docker, DEFAULT_IMAGE);
  const task = findTask(await loadDatasets([bundledDatasetDir()]), 'sample/toycal/0');
  if (!task) throw new Error('the bundled sample task is missing');
  const tmp = await fsp.mkdtemp(path.join(os.tmpdir(), 'expbench-agent-bench-'));
  const out = path.join(tmp, `bench-agent-${process.pid}`);
  const sessionId = path.basename(out);
  const server = await new FakeOpenAIServer().start();
  const service = new SessionService();
  try {
    await prepareSession({ task, source: task.paper!.localRepo!, outDir: out, cacheDir: path.join(tmp, 'cache') });
    await writeSessionMarker(out, task);
    const handle = await service.open(out, { client: 'agent', taskId: task.id });
    const { container } = await ensureWorkContainer(docker, { task: task.id, session: sessionId, workspaceDir: handle.layout.workspace, image: DEFAULT_IMAGE, limits: { network: false } });

    // 1. loop overhead
    server.handler = () => ({ toolCalls: [{ name: 'list_files', arguments: { path: 'toycal' } }] });
    // The same handle, with the time spent in event appends (durable: fsync'd) summed.
    let recordMs = 0;
    const timed = new Proxy(handle, {
      get(target, prop) {
        if (prop !== 'record') { const v = Reflect.get(target, prop, target); return typeof v === 'function' ? v.bind(target) : v; }
        return async (e: Parameters<typeof handle.record>[0]) => { const a = performance.now(); try { return await target.record(e); } finally { recordMs += performance.now() - a; } };
      },
    });
    const t0 = performance.now();
    const r = await runAgent({
      session: timed, container, brief: agentBrief(task), limits: { maxSteps: STEPS },
      endpoint: { name: 'agent', baseURL: server.baseURL, apiKey: 'no-key', model: 'bench-agent' },
    });
    const wall = performance.now() - t0;
    const { events } = await readEvents(handle.layout.events);
    let modelMs = 0; let toolMs = 0;
    for (const e of events) {
      if (e.type === 'agent.model_call') modelMs += e.durationMs;
      if (e.type === 'agent.tool_call') toolMs += e.durationMs;
    }
    const perStep = (wall - modelMs - toolMs) / r.steps;
    const serverMs = server.requests.reduce((s, q) => s + (q.serverMs ?? 0), 0) / server.count;

    // 2. shell tool vs exec, interleaved
    const ctx: ToolContext = { session: handle, container, shellTimeoutMs: 60_000, outputCap: 16_000, remainingMs: () => Infinity };
    const tool: number[] = []; const direct: number[] = [];
    for (let i = 0; i < RUNS + 2; i++) {
      const a = performance.now();
      const x = await runTool(ctx, 'shell', JSON.stringify({ command: COMMAND }));
      const b = performance.now();
      const y = await execText(container, { cmd: ['bash', '-lc', COMMAND], workdir: '/workspace' });
      const c = performance.now();
      if (x.exitCode !== 0 || y.exitCode !== 0) throw new Error(`the command failed: ${x.result} / ${y.stderr}`);
      if (i >= 2) { tool.push(b - a); direct.push(c - b); } // two warm-up rounds
    }
    const ratio = median(tool) / median(direct);
    await handle.release();

    const res = {
      steps: r.steps, stop: r.stop, wallMs: Math.round(wall), modelMs: Math.round(modelMs), toolMs: Math.round(toolMs),
      loopOverheadPerStepMs: Number(perStep.toFixed(2)), loopOverheadTargetMs: 20, eventAppendsPerStepMs: Number((recordMs / r.steps).toFixed(2)), fakeServerOwnMsPerRequest: Number(serverMs.toFixed(2)),
      shellToolMedianMs: Number(median(tool).toFixed(1)), execDirectMedianMs: Number(median(direct).toFixed(1)), shellRatio: Number(ratio.toFixed(3)), shellRatioTarget: 1.2, runs: RUNS,
    };
    console.log(`agent loop: ${r.steps} steps (${r.stop}) in ${res.wallMs} ms; model requests ${res.modelMs} ms, tools ${res.toolMs} ms; loop overhead ${res.loopOverheadPerStepMs} ms/step (target ≤ 20), event appends (overlapping the requests and tools) ${res.eventAppendsPerStepMs} ms/step`);
    console.log(`agent shell tool: median ${res.shellToolMedianMs} ms vs exec API ${res.execDirectMedianMs} ms over ${RUNS} interleaved runs: ${res.shellRatio}× (target ≤ 1.2)`);
    return res;
  } finally {
    await service.dispose();
    await server.close();
    await removeWorkContainer(docker, sessionId).catch(() => undefined);
    await fsp.rm(tmp, { recursive: true, force: true }).catch(() => undefined);
  }
}

if (require.main === module) void run().catch((e) => { console.error(e); process.exitCode = 1; });
