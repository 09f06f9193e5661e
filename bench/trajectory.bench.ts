/**
 * Benchmark (issue 16): importing a large Inspect `.eval` (about 200 MB of sample JSON, 100,000
 * events, made by repeating the real sample of ../shared/data/trajectories/inspect-eval/
 * UKGovernmentBEIS__inspect_ai/log_message_deduplication.eval under new ids) against the baseline
 * of unzipping, decompressing and `JSON.parse` of the same entries with the same zip reader, in
 * the same run. Targets: time ≤ 1.5× the baseline; peak RSS above the baseline's own peak ≤ 2× the
 * largest sample's JSON. Each measurement runs in a fresh child process (RSS sampled every 5 ms),
 * baseline and import alternately; medians are reported, with CPU time beside wall time.
 *
 * Also, for a single large `.json` log (64 MB, streamed sample by sample): the import against the
 * streaming floor (stream-json parsing and assembling the same samples, nothing else) and against
 * `JSON.parse` of the whole document.
 *
 * The files are generated in a temporary folder at bench time and removed afterwards.
 */
import { execFile } from 'node:child_process';
import { createReadStream, createWriteStream, promises as fsp } from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { chain } from 'stream-chain';
import { parser } from 'stream-json';
import { pick } from 'stream-json/filters/Pick';
import { streamArray } from 'stream-json/streamers/StreamArray';
import * as yazl from 'yazl';
import { importFiles } from '../src/core/trajectory/import';
import { openZip } from '../src/core/trajectory/zip';

const SOURCE = path.resolve(__dirname, '../../../shared/data/trajectories/inspect-eval/UKGovernmentBEIS__inspect_ai/log_message_deduplication.eval');
const TARGET_EVENTS = 100_000;

export interface ChildResult { ms: number; cpuMs: number; maxRssKb: number; samples: number; events: number; steps?: number; headMs?: number; headSteps?: number }

async function makeEval(dir: string): Promise<{ file: string; samples: number; events: number; jsonBytes: number; largest: number }> {
  const z = await openZip(SOURCE);
  const sample = JSON.parse((await z.read('samples/0_epoch_1.json')).toString('utf8'));
  const header = (await z.read('header.json')).toString('utf8');
  z.close();
  const perSample = sample.events.length as number;
  const n = Math.ceil(TARGET_EVENTS / perSample);
  const file = path.join(dir, 'large.eval');
  const zip = new yazl.ZipFile();
  let jsonBytes = 0; let largest = 0;
  for (let i = 0; i < n; i++) {
    const text = JSON.stringify({ ...sample, id: `s${i}`, uuid: `u${i}` });
    jsonBytes += Buffer.byteLength(text); largest = Math.max(largest, Buffer.byteLength(text));
    zip.addBuffer(Buffer.from(text), `samples/s${i}_epoch_1.json`, { compress: true });
  }
  zip.addBuffer(Buffer.from(header), 'header.json');
  zip.end();
  await new Promise<void>((resolve, reject) => { zip.outputStream.pipe(createWriteStream(file)).on('close', resolve).on('error', reject); });
  return { file, samples: n, events: n * perSample, jsonBytes, largest };
}

async function makeJson(dir: string, bytes: number): Promise<{ file: string; samples: number }> {
  const z = await openZip(SOURCE);
  const sample = (await z.read('samples/0_epoch_1.json')).toString('utf8');
  const header = JSON.parse((await z.read('header.json')).toString('utf8'));
  z.close();
  const file = path.join(dir, 'large.json');
  const out = createWriteStream(file);
  const head = JSON.stringify({ version: header.version, status: header.status, eval: header.eval, plan: header.plan, results: header.results, stats: header.stats });
  out.write(head.slice(0, -1) + ',"samples":[');
  let n = 0; let written = head.length;
  while (written < bytes) {
    const s = (n ? ',' : '') + sample.replace(/^\{"id": ?"?0"?/, `{"id":"s${n}"`);
    out.write(s); written += s.length; n++;
  }
  out.write(']}');
  await new Promise<void>((resolve) => out.end(resolve));
  return { file, samples: n };
}

/** Child-process work: `baseline-eval`, `import`, `floor-json`, `parse-json`. */
async function child(mode: string, file: string): Promise<ChildResult> {
  // peak RSS sampled every 5 ms (getrusage's maxRSS survives fork+exec on Linux: a child would
  // report its parent's high-water mark)
  let peak = process.memoryUsage.rss();
  const timer = setInterval(() => { peak = Math.max(peak, process.memoryUsage.rss()); }, 5);
  const t0 = performance.now();
  const c0 = process.cpuUsage();
  let samples = 0; let events = 0; let steps = 0; let headMs: number | undefined; let headSteps: number | undefined;
  if (mode === 'baseline-eval') {
    const z = await openZip(file);
    for (const e of z.entries) {
      const v = JSON.parse((await z.read(e.name)).toString('utf8'));
      if (e.name.startsWith('samples/')) { samples++; events += v.events.length; }
    }
    z.close();
  } else if (mode === 'import') {
    // with a head, as the viewer imports (ImportContext.head: the first events of a large sample first)
    await importFiles([file], (t) => { samples++; events += t.sourceEvents; steps += t.steps.length; }, { onHead: (t) => { if (headMs === undefined) { headMs = performance.now() - t0; headSteps = t.steps.length; } } });
  } else if (mode === 'floor-json') {
    const p = chain([createReadStream(file), parser(), pick({ filter: 'samples' }), streamArray()]);
    for await (const item of p as AsyncIterable<{ value: { events: unknown[] } }>) { samples++; events += item.value.events.length; }
  } else if (mode === 'parse-json') {
    const d = JSON.parse(await fsp.readFile(file, 'utf8'));
    for (const s of d.samples) { samples++; events += s.events.length; }
  }
  const c = process.cpuUsage(c0);
  const ms = performance.now() - t0;
  clearInterval(timer);
  peak = Math.max(peak, process.memoryUsage.rss());
  return { ms, cpuMs: (c.user + c.system) / 1000, maxRssKb: peak / 1024, samples, events, ...(mode === 'import' ? { steps } : {}), ...(headMs !== undefined ? { headMs, headSteps } : {}) };
}

export function spawnChild(mode: string, file: string): Promise<ChildResult> {
  return new Promise((resolve, reject) => {
    execFile(process.execPath, [__filename, '--child', mode, file], { maxBuffer: 1024 * 1024 }, (err, stdout, stderr) => {
      if (err) return reject(new Error(`${mode}: ${stderr || err.message}`));
      resolve(JSON.parse(stdout.trim().split('\n').pop()!));
    });
  });
}

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];

async function compare(modes: string[], file: string, runs: number): Promise<Record<string, { ms: number; cpuMs: number; maxRssKb: number; last: ChildResult }>> {
  const got: Record<string, ChildResult[]> = Object.fromEntries(modes.map((m) => [m, []]));
  for (let i = 0; i < runs; i++) for (const m of modes) got[m].push(await spawnChild(m, file));
  return Object.fromEntries(modes.map((m) => [m, { ms: median(got[m].map((r) => r.ms)), cpuMs: median(got[m].map((r) => r.cpuMs)), maxRssKb: median(got[m].map((r) => r.maxRssKb)), last: got[m][got[m].length - 1] }]));
}

export async function run(): Promise<Record<string, number>> {
  const dir = await fsp.mkdtemp(path.join(os.tmpdir(), 'expbench-traj-bench-'));
  try {
    const ev = await makeEval(dir);
    const evalBytes = (await fsp.stat(ev.file)).size;
    const r = await compare(['baseline-eval', 'import'], ev.file, 5);
    const b = r['baseline-eval']; const i = r.import;
    if (i.last.events !== ev.events || b.last.events !== ev.events) throw new Error(`event counts differ: generated ${ev.events}, baseline ${b.last.events}, import ${i.last.events}`);
    const ratio = i.ms / b.ms;
    const cpuRatio = i.cpuMs / b.cpuMs;
    const rssAboveKb = i.maxRssKb - b.maxRssKb;
    const rssBound = (2 * ev.largest) / 1024;
    console.log(`trajectory .eval: ${ev.samples} samples, ${ev.events} events, ${(ev.jsonBytes / 1e6).toFixed(0)} MB of sample JSON (${(evalBytes / 1e6).toFixed(1)} MB zipped), largest sample ${(ev.largest / 1024).toFixed(0)} KiB`);
    console.log(`  baseline unzip+inflate+JSON.parse ${b.ms.toFixed(0)} ms (peak RSS ${(b.maxRssKb / 1024).toFixed(0)} MiB); import ${i.ms.toFixed(0)} ms (peak RSS ${(i.maxRssKb / 1024).toFixed(0)} MiB, ${i.last.steps} steps)`);
    console.log(`  ratio ${ratio.toFixed(2)}× wall (target ≤ 1.5×), ${cpuRatio.toFixed(2)}× CPU time (${b.cpuMs.toFixed(0)} vs ${i.cpuMs.toFixed(0)} ms); RSS above the baseline's peak ${(rssAboveKb / 1024).toFixed(1)} MiB (target ≤ 2× largest sample = ${(rssBound / 1024).toFixed(2)} MiB)`);

    const js = await makeJson(dir, 64 * 1024 * 1024);
    const jr = await compare(['floor-json', 'import', 'parse-json'], js.file, 3);
    const jsonRatio = jr.import.ms / jr['floor-json'].ms;
    console.log(`trajectory .json: ${js.samples} samples, ${((await fsp.stat(js.file)).size / 1e6).toFixed(0)} MB: streaming floor (stream-json parse+assemble) ${jr['floor-json'].ms.toFixed(0)} ms (peak RSS ${(jr['floor-json'].maxRssKb / 1024).toFixed(0)} MiB); import ${jr.import.ms.toFixed(0)} ms (${(jr.import.maxRssKb / 1024).toFixed(0)} MiB), ${jsonRatio.toFixed(2)}× the floor; whole-document JSON.parse ${jr['parse-json'].ms.toFixed(0)} ms (${(jr['parse-json'].maxRssKb / 1024).toFixed(0)} MiB)`);
    return {
      evalSamples: ev.samples, evalEvents: ev.events, evalJsonMB: ev.jsonBytes / 1e6, largestSampleKiB: ev.largest / 1024,
      baselineMs: b.ms, importMs: i.ms, ratio, baselineCpuMs: b.cpuMs, importCpuMs: i.cpuMs, cpuRatio, baselineMaxRssMiB: b.maxRssKb / 1024, importMaxRssMiB: i.maxRssKb / 1024, rssAboveBaselineMiB: rssAboveKb / 1024, rssBoundMiB: rssBound / 1024,
      jsonSamples: js.samples, jsonFloorMs: jr['floor-json'].ms, jsonImportMs: jr.import.ms, jsonRatioToFloor: jsonRatio, jsonParseWholeMs: jr['parse-json'].ms,
      jsonFloorMaxRssMiB: jr['floor-json'].maxRssKb / 1024, jsonImportMaxRssMiB: jr.import.maxRssKb / 1024, jsonParseWholeMaxRssMiB: jr['parse-json'].maxRssKb / 1024,
    };
  } finally {
    await fsp.rm(dir, { recursive: true, force: true });
  }
}

if (require.main === module) {
  const k = process.argv.indexOf('--child');
  if (k > 0) void child(process.argv[k + 1], process.argv[k + 2]).then((r) => process.stdout.write(JSON.stringify(r) + '\n'));
  else void run();
}
