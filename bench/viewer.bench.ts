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
import { HEAD_LINES, header, stepDetail, viewRows } from '../src/extension/trajectory/viewer/detail';
import { TrajHostMessageSchema, type TrajHostMessage } from '../src/protocol/trajectory';

const STEPS = 100_000;
const RUNS = 5;
const PHASES = ['design', 'implementation', 'execution', 'conclusion'] as const;
const WORDS = 'the model trains on cifar with seed learning rate loss accuracy epoch batch gradient optimizer checkpoint dataset split validation baseline ablation table figure'.split(' ');

/** Deterministic pseudo-random numbers (mulberry32). */
function rng(seed: number): () => number {
  let a = seed >>> 0;
  return () => { a = (a + 0x6d2b79f5) >>> 0; let t = a; t = Math.imul(t ^ (t >>> 15), t | 1); t ^= t + Math.imul(t ^ (t >>> 7), t | 61); return ((t ^ (t >>> 14)) >>> 0) / 4294967296; };
}

export async function makeEvents(file: string): Promise<number> {
  const r = rng(17);
  const words = (n: number) => Array.from({ length: n }, () => WORDS[Math.floor(r() * WORDS.length)]).join(' ');
  const out = createWriteStream(file);
  const write = (o: unknown) => new Promise<void>((resolve) => { if (out.write(`${JSON.stringify(o)}\n`)) resolve(); else out.once('drain', resolve); });
  let t = Date.parse('2026-12-01T10:00:00Z');
  let phase = 0;
  let steps = 0;
  const at = () => new Date((t += 1000 + Math.floor(r() * 4000))).toISOString();
  await write({ v: 1, at: at(), type: 'session.opened', client: 'bench', restored: false, taskId: 'sample/toycal/0' }); steps++;
  while (steps < STEPS) {
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
    const load = (await fsp.readFile('/proc/loadavg', 'utf8').catch(() => '?')).split(' ').slice(0, 3).join(' ');
    console.log(`viewer: ${res.steps} steps, ${res.fileMB.toFixed(0)} MB events.jsonl; load average ${load} on ${os.cpus().length} CPUs; medians of ${RUNS}`);
    console.log(`  baseline read + JSON.parse of every line ${base.toFixed(0)} ms; import ${res.importMs.toFixed(0)} ms (${(res.importMs / base).toFixed(2)}× the baseline)`);
    console.log(`  first rows after open, import included (progressive: the first ${HEAD_LINES} lines imported, header + first page posted): ${res.firstRowsProgressiveMs.toFixed(0)} ms (target ≤ 1000 ms)`);
    console.log(`  whole import + rows: ${res.wholeImportAndRowsMs.toFixed(0)} ms (the header says "loading… N steps so far" until then); rows alone on the whole import ${res.firstRowsExclImportMs.toFixed(0)} ms (${(res.firstRowsExclImportMs / base).toFixed(2)}× the baseline; ${(bytes / 1024).toFixed(0)} KiB posted); last run: ${Object.entries(parts).map(([k, v]) => `${k} ${v.toFixed(0)} ms`).join(', ')}`);
    console.log(`  move to another step (detail built + serialised + validated): p50 ${res.moveP50Ms.toFixed(2)} ms, p90 ${res.moveP90Ms.toFixed(2)} ms (target ≤ 16 ms), max ${res.moveMaxMs.toFixed(1)} ms`);
    console.log(`  search over all steps: index built once in ${indexMs.toFixed(0)} ms; median ${res.searchMedianMs.toFixed(1)} ms, max ${res.searchMaxMs.toFixed(1)} ms of 9 queries (target ≤ 200 ms; ${(res.searchMedianMs / base).toFixed(2)}× the baseline)`);
    return res;
  } finally {
    await fsp.rm(dir, { recursive: true, force: true });
  }
}
