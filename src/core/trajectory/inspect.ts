import { createReadStream } from 'node:fs';
import { chain } from 'stream-chain';
import { parser } from 'stream-json';
import { pick } from 'stream-json/filters/Pick';
import { streamArray } from 'stream-json/streamers/StreamArray';
import { streamValues } from 'stream-json/streamers/StreamValues';
import { errorMessage } from '../util/errors';
import { HEAD_EVENTS, type ImportContext } from './context';
import { inspectSampleToTrajectory, inspectSampleToTrajectoryAsync, usageOfModelUsage, type InspectSampleContext } from './inspectSample';
import { arr, isObj, obj, ptr, str, type Obj } from './json';
import type { SourceUsage, Trajectory } from './types';
import { openZip, type ZipReader } from './zip';

/**
 * Inspect AI logs (inspect_ai `log/_recorders/eval.py`, `json.py`).
 *
 * `.eval`: a zip with `header.json` (the run: `eval`, `plan`, `results`, `status`), one entry per
 * sample — flat `samples/<id>_epoch_<n>.json`, or chunked `samples/<id>_epoch_<n>/sample.json`
 * (the shell) with `events/<start>.json`, `messages/<start>.json`, `calls/<start>.json`,
 * `attachments/<start>.json` chunks and an optional `metadata.json` — plus `summaries.json`,
 * `reductions.json` and `_journal/`. Entries are read one sample at a time.
 *
 * `.json`: one document `{version, status, eval, plan, results, stats, samples: [...]}`; files
 * above 32 MB (detect.ts) and broken ones are streamed sample by sample (stream-json), so the
 * samples before a cut are still read; smaller ones are parsed whole.
 */

function runInfo(header: Obj | undefined): { task?: string; run: Obj; agent?: string; fileUsage?: SourceUsage } {
  const ev = obj(header?.eval) ?? {};
  const run: Obj = {};
  for (const k of ['task', 'task_id', 'run_id', 'model', 'created', 'dataset', 'solver', 'eval_id']) if (ev[k] !== undefined) run[k] = ev[k];
  if (header?.status !== undefined) run.status = header.status;
  if (header?.version !== undefined) run.logVersion = header.version;
  // the agent: the eval's solver, else the plan's solver names (`plan.steps[].solver`)
  const solver = str(ev.solver) ?? (arr(obj(header?.plan)?.steps) ?? []).map((x) => str(obj(x)?.solver)).filter(Boolean).join(' → ');
  const fileUsage = usageOfModelUsage(obj(header?.stats)?.model_usage, 'the log\'s stats.model_usage');
  return { ...(str(ev.task) ? { task: str(ev.task) } : {}), run, ...(solver ? { agent: solver } : {}), ...(fileUsage ? { fileUsage } : {}) };
}

const FLAT = /^samples\/([^/]+)\.json$/;
const CHUNK = /^samples\/([^/]+)\/(events|messages|calls|attachments)\/(\d+)\.json$/;

export async function importInspectEval(ctx: ImportContext): Promise<void> {
  let zip: ZipReader;
  try { zip = await openZip(ctx.file); } catch (e) {
    ctx.problem({ pointer: '', severity: 'error', message: `unreadable zip archive: ${errorMessage(e)}` });
    throw new UnreadableError(errorMessage(e));
  }
  try {
    if (zip.recovered) ctx.problem({ pointer: '', severity: 'error', message: `damaged zip archive (${zip.recoveryReason}); read ${zip.entries.length} entries found before the damage` });
    const names = new Set(zip.entries.map((e) => e.name));
    const readJson = async (name: string): Promise<unknown> => {
      const buf = await zip.read(name);
      return JSON.parse(buf.toString('utf8'));
    };
    let header: Obj | undefined;
    for (const h of ['header.json', '_journal/start.json']) {
      if (!names.has(h)) continue;
      try { header = obj(await readJson(h)); break; } catch (e) { ctx.problem({ pointer: '', entry: h, severity: 'warning', message: `unreadable ${h}: ${errorMessage(e)}` }); }
    }
    if (!header) ctx.problem({ pointer: '', severity: 'warning', message: 'no readable header.json: run metadata and task name unknown' });
    const { task, run, agent, fileUsage } = runInfo(header);
    const flat: string[] = [];
    const chunked = new Map<string, Map<string, Array<{ start: number; name: string }>>>();
    for (const e of zip.entries) {
      const m = FLAT.exec(e.name);
      if (m) { flat.push(e.name); continue; }
      const c = CHUNK.exec(e.name);
      if (c) {
        const seqs = chunked.get(c[1]) ?? new Map();
        chunked.set(c[1], seqs);
        const list = seqs.get(c[2]) ?? [];
        list.push({ start: Number(c[3]), name: e.name });
        seqs.set(c[2], list);
      } else if (/^samples\/[^/]+\/sample\.json$/.test(e.name) && !chunked.has(e.name.split('/')[1])) chunked.set(e.name.split('/')[1], new Map());
    }
    for (const name of flat) {
      let sample: Obj | undefined;
      try { sample = obj(await readJson(name)); } catch (e) {
        ctx.problem({ pointer: '', entry: name, severity: 'error', message: `sample entry unreadable: ${errorMessage(e)}` });
        continue;
      }
      if (!sample) { ctx.problem({ pointer: '', entry: name, severity: 'error', message: 'sample entry is not a JSON object' }); continue; }
      const sc: InspectSampleContext = { file: ctx.file, format: 'inspect-eval', entry: name, base: '', task, run, agent, fileUsage };
      await ctx.emit(await mapWithHead(ctx, sample, sc));
    }
    for (const [prefix, seqs] of chunked) {
      const shellName = `samples/${prefix}/sample.json`;
      let sample: Obj | undefined;
      try { sample = names.has(shellName) ? obj(await readJson(shellName)) : undefined; } catch (e) {
        ctx.problem({ pointer: '', entry: shellName, severity: 'error', message: `sample shell unreadable: ${errorMessage(e)}` });
      }
      if (!sample) { ctx.problem({ pointer: '', entry: shellName, severity: 'error', message: 'chunked sample without a readable sample.json; skipped' }); continue; }
      const seq = async (kind: string): Promise<unknown[] | Obj> => {
        const parts = (seqs.get(kind) ?? []).sort((a, b) => a.start - b.start);
        const items: unknown[] = [];
        const dict: Obj = {};
        let isDict = false;
        for (const p of parts) {
          try {
            const v = await readJson(p.name);
            if (Array.isArray(v)) {
              if (p.start !== items.length) ctx.problem({ pointer: '', entry: p.name, severity: 'warning', message: `chunk starts at ${p.start} but ${items.length} items precede it` });
              items.push(...v);
            } else if (isObj(v)) { isDict = true; Object.assign(dict, v); }
          } catch (e) { ctx.problem({ pointer: '', entry: p.name, severity: 'error', message: `chunk unreadable: ${errorMessage(e)}` }); }
        }
        return isDict ? dict : items;
      };
      const events = await seq('events');
      const messages = await seq('messages');
      const calls = await seq('calls');
      const att = await seq('attachments');
      const attachments: Obj = { ...(obj(sample.attachments) ?? {}) };
      if (Array.isArray(att)) att.forEach((v, i) => { attachments[String(i)] = v; }); else Object.assign(attachments, att);
      const mdName = `samples/${prefix}/metadata.json`;
      let metadata = sample.metadata;
      if (names.has(mdName)) { try { metadata = await readJson(mdName); } catch (e) { ctx.problem({ pointer: '', entry: mdName, severity: 'warning', message: `metadata unreadable: ${errorMessage(e)}` }); } }
      const full: Obj = { ...sample, events: Array.isArray(events) ? events : [], events_data: { messages: Array.isArray(messages) ? messages : [], calls: Array.isArray(calls) ? calls : [] }, attachments, metadata };
      const sc: InspectSampleContext = { file: ctx.file, format: 'inspect-eval', entry: shellName, base: '', task, run, agent, fileUsage };
      await ctx.emit(await mapWithHead(ctx, full, sc));
    }
    if (flat.length === 0 && chunked.size === 0) ctx.problem({ pointer: '', severity: 'info', message: `the log holds no samples${header?.status ? ` (status ${String(header.status)})` : ''}` });
  } finally { zip.close(); }
}

/**
 * Maps a sample; for a sample of more than {@link HEAD_EVENTS} events when `ctx.head` is given,
 * first hands it the first {@link HEAD_EVENTS} events mapped as the whole will be. The mapping changes what it maps in place (attachments resolved, secrets redacted and
 * counted), so the head maps a copy of those events and of the sample's small fields; the message
 * pool and attachments are shared (only read, or resolved in place as the whole would).
 */
async function mapWithHead(ctx: ImportContext, sample: Obj, sc: InspectSampleContext): Promise<Trajectory> {
  const events = arr(sample.events);
  if (!ctx.head || !events || events.length <= HEAD_EVENTS) return inspectSampleToTrajectory(sample, sc);
  const { events: _e, messages: _m, events_data: eventsData, attachments, ...rest } = sample;
  void _e; void _m;
  const copy: Obj = { ...structuredClone(rest), events: structuredClone(events.slice(0, HEAD_EVENTS)), ...(eventsData !== undefined ? { events_data: eventsData } : {}), ...(attachments !== undefined ? { attachments } : {}) };
  ctx.head(inspectSampleToTrajectory(copy, sc));
  // the rest with turns of the event loop between parts, so that the head is shown meanwhile
  return inspectSampleToTrajectoryAsync(sample, sc);
}

/** Thrown by an importer when the file could not be read at all (exit code 2). */
export class UnreadableError extends Error {}

/** `doc`: the document when detection already parsed it; undefined streams the file. */
export async function importInspectJson(ctx: ImportContext, doc?: unknown): Promise<void> {
  if (doc === undefined) return streamInspectJson(ctx);
  const d = obj(doc) ?? {};
  const { task, run, agent, fileUsage } = runInfo(d);
  const samples = arr(d.samples) ?? [];
  for (let i = 0; i < samples.length; i++) {
    const s = obj(samples[i]);
    if (!s) { ctx.problem({ pointer: ptr('samples', i), severity: 'error', message: 'sample is not an object' }); continue; }
    const sc: InspectSampleContext = { file: ctx.file, format: 'inspect-json', base: ptr('samples', i), task, run, agent, fileUsage };
    await ctx.emit(await mapWithHead(ctx, s, sc));
  }
  if (samples.length === 0) ctx.problem({ pointer: '/samples', severity: 'info', message: `the log holds no samples${d.status ? ` (status ${String(d.status)})` : ''}` });
}

/** Large `.json` logs: the run's `eval` first (stream-json `pick`), then each sample as it is parsed. */
async function streamInspectJson(ctx: ImportContext): Promise<void> {
  const header: Obj = {};
  await new Promise<void>((resolve, reject) => {
    // `eval` comes before `samples` in Inspect's writer: stop reading once it is parsed
    const rs = createReadStream(ctx.file);
    const p = chain([rs, parser(), pick({ filter: 'eval' }), streamValues()]);
    p.on('data', (d: { value: unknown }) => { header.eval = d.value; rs.destroy(); p.destroy(); resolve(); });
    p.on('end', resolve); p.on('close', resolve); p.on('error', reject);
  }).catch((e) => ctx.problem({ pointer: '/eval', severity: 'warning', message: `run header unreadable: ${errorMessage(e)}` }));
  const { task, run } = runInfo(header);
  let i = 0;
  const pipeline = chain([createReadStream(ctx.file), parser(), pick({ filter: 'samples' }), streamArray()]);
  try {
    for await (const item of pipeline as AsyncIterable<{ key: number; value: unknown }>) {
      const s = obj(item.value);
      if (s) {
        const sc: InspectSampleContext = { file: ctx.file, format: 'inspect-json', base: ptr('samples', item.key), task, run };
        await ctx.emit(await mapWithHead(ctx, s, sc));
      }
      else ctx.problem({ pointer: ptr('samples', item.key), severity: 'error', message: 'sample is not an object' });
      i++;
    }
  } catch (e) {
    ctx.problem({ pointer: ptr('samples', i), severity: 'error', message: `JSON ends or breaks inside sample ${i}: ${errorMessage(e)}` });
  }
}
