/**
 * Benchmark (issue 17): the trajectory viewer's host and protocol work on a synthetic session
 * event log of 100,000 steps (this project's own `events.jsonl`: phase changes, commands with
 * output, file edits with diffs, notes, and imported model steps with tokens and cost; about
 * 60 MB), against the baseline of reading the same file and `JSON.parse` of every line, in the
 * same run. Figures:
 * - first rows after open, import included, as the viewer opens a session log progressively (the
 *   first HEAD_LINES lines imported, then timeline rows, facets, the unfiltered view, phase bands,
 *   the header and the first page of 200 rows, each message serialised and validated as the
 *   webview does): target ≤ 1 s; and apart, the whole import + the same on the whole file (when
 *   the header's "loading…" ends);
 * - moving the selection to another step: the detail of a random step built, serialised and
 *   validated (host + protocol), p90 of 2,000 moves: target ≤ 16 ms (one frame);
 * - a search over all steps (index built once, reported apart): median of 9 queries, target ≤ 200 ms.
 * Medians of RUNS runs; ratios against the baseline; the machine's load (`/proc/loadavg`).
 * The file is generated in a temporary folder and removed afterwards. The e2e test
 * (test/e2e/trajectoryViewer.e2e.test.ts) logs the same move as a frame measured in Chromium.
 */
import { createWriteStream, promises as fsp } from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { importFiles } from '../src/core/trajectory/import';
import { importOwnEvents } from '../src/core/trajectory/own';
import type { Trajectory } from '../src/core/trajectory/types';
import { Timeline } from '../src/core/viewer/timeline';
import { makeInspectEval } from '../test/harness/bigInspectLog';
import { execFile } from 'node:child_process';
import { chromium, type ChromiumFigures } from './viewerChromium';
import { spawnChild, type ChildResult } from './trajectory.bench';
import { HEAD_LINES, header, stepDetail, viewRows } from '../src/extension/trajectory/viewer/detail';
import { TrajHostMessageSchema, type TrajHostMessage } from '../src/protocol/trajectory';

const STEPS = 100_000;
const SHARED = path.resolve(__dirname, '../../../shared/data/trajectories');
const RUNS = 5;
const PHASES = ['design', 'implementation', 'execution', 'conclusion'] as const;
const WORDS = 'the model trains on cifar with seed learning rate loss accuracy epoch batch gradient optimizer checkpoint dataset split validation baseline ablation table figure'.split(' ');

/** Deterministic pseudo-random numbers (mulberry32). */
function rng(seed: number): () => number {
  let a = seed >>> 0;
  return () => { a = (a + 0x6d2b79f5) >>> 0; let t = a; t = Math.imul(t ^ (t >>> 15), t | 1); t ^= t + Math.imul(t ^ (t >>> 7), t | 61); return ((t ^ (t >>> 14)) >>> 0) / 4294967296; };
}

export async function makeEvents(file: string, count = STEPS): Promise<number> {
  const r = rng(17);
  const words = (n: number) => Array.from({ length: n }, () => WORDS[Math.floor(r() * WORDS.length)]).join(' ');
  const out = createWriteStream(file);
  const write = (o: unknown) => new Promise<void>((resolve) => { if (out.write(`${JSON.stringify(o)}\n`)) resolve(); else out.once('drain', resolve); });
  let t = Date.parse('2026-12-01T10:00:00Z');
  let phase = 0;
  let steps = 0;
  const at = () => new Date((t += 1000 + Math.floor(r() * 4000))).toISOString();
  await write({ v: 1, at: at(), type: 'session.opened', client: 'bench', restored: false, taskId: 'sample/toycal/0' }); steps++;
  while (steps < count) {
    const x = r();
    if (x < 0.002 && phase < 3) { await write({ v: 1, at: at(), type: 'phase.changed', from: PHASES[phase], to: PHASES[phase + 1] }); phase++; }
    else if (x < 0.35) await write({ v: 1, at: at(), type: 'command.run', command: `python train.py --seed ${steps % 97} --lr 0.0${steps % 9}`, exitCode: x < 0.05 ? 1 : 0, durationMs: Math.floor(r() * 9000), outputExcerpt: `${words(60)}\nepoch ${steps % 50} loss ${(r() * 2).toFixed(4)} acc ${r().toFixed(4)}\n${words(20)}` });
    else if (x < 0.6) {
      const p = `src/module_${steps % 40}.py`;
      await write({ v: 1, at: at(), type: 'file.edited', path: p, diff: `--- a/${p}\n+++ b/${p}\n@@ -${steps % 200},3 +${steps % 200},3 @@\n def f():\n-    return ${words(6)}\n+    return ${words(7)}\n     # ${words(5)}\n` });
    } else if (x < 0.7) await write({ v: 1, at: at(), type: 'note.added', text: words(25) });
    else {
      await write({ v: 1, at: at(), type: 'trajectory.step', trajectory: 'agent', step: {
        index: steps, kind: 'model', actor: 'agent', phase: PHASES[phase], text: words(40),
        model: { model: 'bench-model', inputTokens: 1000 + Math.floor(r() * 5000), outputTokens: 50 + Math.floor(r() * 500), costUsd: r() / 100 },
        source: { file: 'agent.jsonl', line: steps + 1 },
      } });
    }
    steps++;
  }
  await new Promise<void>((resolve) => out.end(resolve));
  return steps;
}

/** A one-sample Inspect `.eval` of about `mb` MB (deflated): test/harness/bigInspectLog.ts. */
export async function makeEval(file: string, mb: number): Promise<{ events: number; jsonBytes: number }> {
  return makeInspectEval(file, { mb });
}

/** One child run of trajectory.bench.ts's `--child` modes (`baseline-eval`: unzip + decompress + JSON.parse; `import`): wall ms. */
function child(mode: string, file: string): Promise<number> {
  return new Promise((resolve, reject) => {
    execFile(process.execPath, [path.join(__dirname, 'trajectory.bench.js'), '--child', mode, file], { maxBuffer: 1024 * 1024 }, (err, stdout, stderr) => {
      if (err) return reject(new Error(`${mode}: ${stderr || err.message}`));
      resolve((JSON.parse(stdout.trim().split('\n').pop()!) as { ms: number }).ms);
    });
  });
}

/** `uptime`'s load averages (1, 5, 15 minutes). */
async function loadNow(): Promise<string> {
  return (await fsp.readFile('/proc/loadavg', 'utf8').catch(() => '?')).split(' ').slice(0, 3).join(' ');
}

/** Serialise as postMessage does (structured clone ≈ JSON) and validate as the webview does. */
function cross(m: TrajHostMessage): number {
  const text = JSON.stringify(m);
  TrajHostMessageSchema.parse(JSON.parse(text));
  return text.length;
}

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];
const pct = (xs: number[], p: number) => [...xs].sort((a, b) => a - b)[Math.min(xs.length - 1, Math.floor(xs.length * p))];

function firstRows(t: Trajectory, file: string): { ms: number; bytes: number; parts: Record<string, number> } {
  const t0 = performance.now();
  const tl = new Timeline(t);
  const t1 = performance.now();
  const h = header(file, path.basename(file), [t], 0, tl, [], { live: false, can: { pins: false, review: true, repository: false }, pinned: 0 });
  let bytes = cross({ type: 'loaded', header: h });
  const t2 = performance.now();
  const view = tl.filter({});
  bytes += cross({ type: 'view', seq: 1, total: view.length, hits: [], occurrences: 0, searchMs: 0, bands: tl.bands(view) });
  const t3 = performance.now();
  bytes += cross({ type: 'rows', seq: 1, start: 0, rows: viewRows(tl, view, 0, 200, new Map(), new Map()) });
  const t4 = performance.now();
  return { ms: t4 - t0, bytes, parts: { timeline: t1 - t0, header: t2 - t1, view: t3 - t2, rows: t4 - t3 } };
}

export async function run(): Promise<Record<string, number>> {
  // (the step-move and first-rows figures in Chromium: bench/viewerChromium.ts; BENCH_VIEWER_CHROMIUM=0 leaves them out)
  const dir = await fsp.mkdtemp(path.join(os.tmpdir(), 'expbench-viewer-bench-'));
  try {
    const file = path.join(dir, 'events.jsonl');
    await makeEvents(file);
    const size = (await fsp.stat(file)).size;
    const baseline: number[] = []; const imports: number[] = []; const first: number[] = []; const progressive: number[] = [];
    let t!: Trajectory; let bytes = 0; let parts: Record<string, number> = {};
    for (let i = 0; i < RUNS; i++) {
      const b0 = performance.now();
      const text = await fsp.readFile(file, 'utf8');
      let n = 0;
      for (const line of text.split('\n')) if (line) { JSON.parse(line); n++; }
      baseline.push(performance.now() - b0);
      if (n !== STEPS) throw new Error(`the synthetic file has ${n} lines, not ${STEPS}`);
      // progressive open (what the viewer does): the first HEAD_LINES lines imported, the first page posted
      const h0 = performance.now();
      const head = await importOwnEvents(file, { maxLines: HEAD_LINES });
      firstRows(head, file);
      progressive.push(performance.now() - h0);
      const i0 = performance.now();
      const got: Trajectory[] = [];
      await importFiles([file], (x) => { got.push(x); });
      imports.push(performance.now() - i0);
      t = got[0];
      const f = firstRows(t, file);
      first.push(f.ms); bytes = f.bytes; parts = f.parts;
    }
    if (t.steps.length !== STEPS) throw new Error(`the import made ${t.steps.length} steps of ${STEPS} events (problems: ${t.problems.slice(0, 3).map((p) => p.message).join('; ')})`);
    const tl = new Timeline(t);
    // moving the selection: a random step's detail, host + protocol
    const r = rng(4);
    const moves: number[] = [];
    for (let i = 0; i < 2000; i++) {
      const s = Math.floor(r() * STEPS);
      const m0 = performance.now();
      cross({ type: 'detail', detail: stepDetail(file, tl, s, { limit: 6000, pins: [], judgements: [] }) });
      moves.push(performance.now() - m0);
    }
    // search over all steps
    const x0 = performance.now();
    tl.searchIndex();
    const indexMs = performance.now() - x0;
    const searches: number[] = [];
    let hits = 0;
    for (const q of ['cifar', 'seed 42', 'LOSS 1.2', 'module_7.py', 'zzz-none', 'return', 'acc 0.9', 'gradient optimizer', 'python train.py --seed 96']) {
      const s = tl.search(q);
      searches.push(s.ms); hits += s.positions.length;
    }
    const base = median(baseline);
    const res = {
      steps: t.steps.length, fileMB: size / 1e6, baselineParseMs: base, importMs: median(imports),
      firstRowsExclImportMs: median(first), firstRowsProgressiveMs: median(progressive), wholeImportAndRowsMs: median(imports) + median(first), firstRowsBytes: bytes,
      moveP50Ms: pct(moves, 0.5), moveP90Ms: pct(moves, 0.9), moveMaxMs: Math.max(...moves),
      searchIndexMs: indexMs, searchMedianMs: median(searches), searchMaxMs: Math.max(...searches), searchHits: hits,
    };
    const load = await loadNow();
    console.log(`viewer: ${res.steps} steps, ${res.fileMB.toFixed(0)} MB events.jsonl; load average ${load} on ${os.cpus().length} CPUs; medians of ${RUNS}`);
    console.log(`  baseline read + JSON.parse of every line ${base.toFixed(0)} ms; import ${res.importMs.toFixed(0)} ms (${(res.importMs / base).toFixed(2)}× the baseline)`);
    console.log(`  first rows after open, import included (progressive: the first ${HEAD_LINES} lines imported, header + first page posted): ${res.firstRowsProgressiveMs.toFixed(0)} ms (target ≤ 1000 ms)`);
    console.log(`  whole import + rows: ${res.wholeImportAndRowsMs.toFixed(0)} ms (the header says "loading… N steps so far" until then); rows alone on the whole import ${res.firstRowsExclImportMs.toFixed(0)} ms (${(res.firstRowsExclImportMs / base).toFixed(2)}× the baseline; ${(bytes / 1024).toFixed(0)} KiB posted); last run: ${Object.entries(parts).map(([k, v]) => `${k} ${v.toFixed(0)} ms`).join(', ')}`);
    console.log(`  move to another step (detail built + serialised + validated): p50 ${res.moveP50Ms.toFixed(2)} ms, p90 ${res.moveP90Ms.toFixed(2)} ms (target ≤ 16 ms), max ${res.moveMaxMs.toFixed(1)} ms`);
    console.log(`  search over all steps: index built once in ${indexMs.toFixed(0)} ms; median ${res.searchMedianMs.toFixed(1)} ms, max ${res.searchMaxMs.toFixed(1)} ms of 9 queries (target ≤ 200 ms; ${(res.searchMedianMs / base).toFixed(2)}× the baseline)`);

    // a 10 MB Inspect .eval: the whole import against unzip + decompress + JSON.parse (child processes, alternating, medians of 5)
    const evalFile = path.join(dir, 'bench-10mb.eval');
    const ev = await makeEval(evalFile, 10);
    const evalMB = (await fsp.stat(evalFile)).size / 1e6;
    const bl: number[] = []; const im: number[] = [];
    for (let i = 0; i < 5; i++) { bl.push(await child('baseline-eval', evalFile)); im.push(await child('import', evalFile)); }
    const importRatio = median(im) / median(bl);
    console.log(`  a ${evalMB.toFixed(1)} MB Inspect .eval (${ev.events} events, ${(ev.jsonBytes / 1e6).toFixed(0)} MB of JSON): unzip + decompress + JSON.parse ${median(bl).toFixed(0)} ms, the whole import ${median(im).toFixed(0)} ms: ${importRatio.toFixed(2)}× (target ≤ 1.5×)`);
    const out: Record<string, number> = { ...res, evalMB, evalBaselineMs: median(bl), evalImportMs: median(im), importRatio };

    // a 100,000-step Inspect .eval (one sample): the head the viewer shows first, and the whole import, against unzip + decompress + JSON.parse
    const bigEval = path.join(dir, 'react-100k-steps.eval');
    const big = await makeInspectEval(bigEval, { steps: STEPS, words: [30, 20, 40, 40] });
    const bb: ChildResult[] = []; const bi: ChildResult[] = []; const loads: string[] = [];
    for (let i = 0; i < 3; i++) { loads.push(await loadNow()); bb.push(await spawnChild('baseline-eval', bigEval)); bi.push(await spawnChild('import', bigEval)); }
    if (bi[0].steps !== STEPS) throw new Error(`the 100,000-step log imported as ${bi[0].steps} steps`);
    const m = (xs: ChildResult[], k: 'ms' | 'cpuMs' | 'headMs') => median(xs.map((x) => x[k] ?? NaN));
    console.log(`  a ${((await fsp.stat(bigEval)).size / 1e6).toFixed(1)} MB Inspect .eval of ${STEPS} steps (${big.events} events, ${(big.jsonBytes / 1e6).toFixed(0)} MB of JSON), medians of 3, load average before each run ${loads.join(' / ')}:`);
    console.log(`    unzip + decompress + JSON.parse ${m(bb, 'ms').toFixed(0)} ms (CPU ${m(bb, 'cpuMs').toFixed(0)} ms); the head (first ${bi[0].headSteps} steps, what the viewer shows first) at ${m(bi, 'headMs').toFixed(0)} ms (${(m(bi, 'headMs') / m(bb, 'ms')).toFixed(2)}× the parse); the whole import ${m(bi, 'ms').toFixed(0)} ms (${(m(bi, 'ms') / m(bb, 'ms')).toFixed(2)}×; CPU ${m(bi, 'cpuMs').toFixed(0)} ms, ${(m(bi, 'cpuMs') / m(bb, 'cpuMs')).toFixed(2)}×)`);
    Object.assign(out, { big100kBaselineMs: m(bb, 'ms'), big100kHeadMs: m(bi, 'headMs'), big100kImportMs: m(bi, 'ms'), big100kRatio: m(bi, 'ms') / m(bb, 'ms'), big100kCpuRatio: m(bi, 'cpuMs') / m(bb, 'cpuMs') });
    await fsp.rm(bigEval, { force: true });

    // in Chromium through code-server: first rows after the command, and the step move
    if (process.env.BENCH_VIEWER_CHROMIUM !== '0') {
      const log10 = path.join(dir, 'session-10mb', 'events.jsonl');
      await fsp.mkdir(path.dirname(log10), { recursive: true });
      await makeEvents(log10, 18_000);
      const big = path.join(dir, 'session-55mb', 'events.jsonl');
      await fsp.mkdir(path.dirname(big), { recursive: true });
      await fsp.rename(file, big);
      const rel = (p: string) => path.join(SHARED, p);
      const named = async (src: string, name: string) => { const p = path.join(dir, name); await fsp.copyFile(src, p); return p; };
      const files = [
        { file: rel('inspect-eval/meridianlabs-ai__ts-mono/original/ais-decoder.eval'), label: 'Inspect ais-decoder.eval (48 KB, 88 steps)', moves: true },
        { file: rel('inspect-eval/METR__inspect-action/2025-12-13T23-15-44+00-00_class-eval_XDtHXBaqEHGUBoFoinn2wS.eval'), label: 'Inspect class-eval (276 KB, 5 samples)' },
        { file: rel('openhands-v0/OpenHands__OpenHands/output.jsonl'), label: 'OpenHands output.jsonl (690 KB, 3 instances)', moves: true },
        { file: rel('swe-agent/SWE-agent__SWE-agent/swe-agent__test-repo-i1.traj'), label: 'SWE-agent test-repo-i1.traj (52 KB)', moves: true },
        { file: evalFile, label: `a ${evalMB.toFixed(1)} MB Inspect .eval (one sample, ${ev.events} events)`, moves: true },
        { file: await named(log10, 'session-10mb.jsonl'), label: `a ${((await fsp.stat(log10)).size / 1e6).toFixed(1)} MB session log (18,000 steps)` },
        { file: await named(big, 'session-55mb.jsonl'), label: `a ${(size / 1e6).toFixed(0)} MB session log (100,000 steps, progressive)` },
      ];
      let c: ChromiumFigures | undefined;
      try { c = await chromium(files); } catch (e) { console.log(`  Chromium: not measured (${e instanceof Error ? e.message : String(e)})`); }
      if (c) {
        console.log(`  in Chromium (code-server, headless), load average ${c.load} on ${os.cpus().length} CPUs:`);
        for (const [k, v] of Object.entries(c.firstRowsMs)) console.log(`    first rows after "Open as Trajectory": ${k}: ${v.toFixed(0)} ms (target ≤ 1000 ms up to 10 MB)`);
        for (const [k, v] of Object.entries(c.failed)) console.log(`    not measured: ${k}: ${v}`);
        for (const [k, v] of Object.entries(c.moves)) console.log(`    step move (j → the frame after the next detail drawn), ${k}: p50 ${v.p50.toFixed(1)} ms, p90 ${v.p90.toFixed(1)} ms over ${v.n} moves (target p90 ≤ 16 ms); the webview's own: p50 ${v.own50.toFixed(1)}, p90 ${v.own90.toFixed(1)} ms`);
        Object.entries(c.firstRowsMs).forEach(([k, v], i) => { out[`firstRowsChromium${i}Ms`] = v; void k; });
        Object.values(c.moves).forEach((v, i) => { out[`moveChromium${i}P50Ms`] = v.p50; out[`moveChromium${i}P90Ms`] = v.p90; });
      }
    }
    return out;
  } finally {
    await fsp.rm(dir, { recursive: true, force: true });
  }
}
