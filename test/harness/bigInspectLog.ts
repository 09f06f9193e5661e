/**
 * Large Inspect AI logs made at test and bench time (never committed): a one-sample `.eval` (a zip
 * with `header.json` and `samples/<id>_epoch_1.json`, inspect_ai `log/_recorders/eval.py`) whose
 * events are a react agent's, in the shape Inspect writes them (inspect_ai `event/_*.py`): the task
 * (`sample_init` in the `init` span), then over and over a `model` event (reasoning and reply
 * content, one `bash` tool call, usage with cache reads) and the tool call in its own `tool` span
 * (`span_begin`, the `tool` event, its `sandbox` exec, `span_end`), then a `score` event in the
 * `scorers` span. Words vary (a seeded generator), so the entry does not deflate to nothing.
 *
 * The importer (src/core/trajectory/inspectSample.ts) makes one step of the task, two of each
 * round (the model call, shown as `→ bash`, and the tool call with its exec folded into it) and
 * one of the score: `rounds = (steps - 2) / 2`.
 */
import { createWriteStream } from 'node:fs';
import * as yazl from 'yazl';

const WORDS = 'the model trains on cifar with seed learning rate loss accuracy epoch batch gradient optimizer checkpoint dataset split validation baseline ablation table figure'.split(' ');

/** Deterministic pseudo-random numbers in [0, 1) (mulberry32). */
export function rng(seed: number): () => number {
  let a = seed >>> 0;
  return () => { a = (a + 0x6d2b79f5) >>> 0; let t = a; t = Math.imul(t ^ (t >>> 15), t | 1); t ^= t + Math.imul(t ^ (t >>> 7), t | 61); return ((t ^ (t >>> 14)) >>> 0) / 4294967296; };
}

export interface BigEvalOptions {
  /** Steps the importer makes of the log (even, ≥ 4); else `mb`. */
  steps?: number;
  /** About this many MB of zip (deflated), when `steps` is not given. */
  mb?: number;
  /** Words of each text: [reasoning, reply, tool result, exec output]; default [60, 40, 120, 120]. */
  words?: [number, number, number, number];
  /** A text appended to the first round's tool result (a secret, to test that it is redacted once). */
  firstResult?: string;
}

export interface BigEval {
  /** Events in the sample. */
  events: number;
  /** Steps the importer makes (task + 2 per round + score). */
  steps: number;
  /** Characters of the sample's JSON. */
  jsonBytes: number;
  /** The sample's own token total (`model_usage`, cache included). */
  totalTokens: number;
}

/**
 * Writes the log to `file`; the sample's JSON is built as one string (as Inspect writes it), so a
 * 100,000-step log needs a few hundred MB of memory while it is made.
 */
export async function makeInspectEval(file: string, o: BigEvalOptions): Promise<BigEval> {
  const r = rng(30);
  const [wr, wt, wo, wx] = o.words ?? [60, 40, 120, 120];
  const words = (n: number) => Array.from({ length: n }, () => WORDS[Math.floor(r() * WORDS.length)] + (r() < 0.3 ? String(Math.floor(r() * 1000)) : '')).join(' ');
  let t = Date.parse('2026-01-01T00:00:00Z');
  const iso = () => new Date((t += 1000)).toISOString();
  const input = words(80);
  const parts: string[] = [];
  let bytes = 0; let events = 0;
  const push = (e: unknown) => { const s = JSON.stringify(e); parts.push(s); bytes += s.length + 1; events++; };
  push({ event: 'span_begin', id: 'init', type: 'init', name: 'init', timestamp: iso() });
  push({ event: 'sample_init', span_id: 'init', timestamp: iso(), sample: { input, target: 'x' } });
  push({ event: 'span_end', id: 'init', timestamp: iso() });
  push({ event: 'span_begin', id: 'solvers', type: 'solvers', name: 'solvers', timestamp: iso() });
  push({ event: 'span_begin', id: 'g', parent_id: 'solvers', type: 'solver', name: 'react', timestamp: iso() });
  const rounds = o.steps !== undefined ? Math.max(1, Math.floor((o.steps - 2) / 2)) : Infinity;
  const target = (o.mb ?? 10) * 1e6 * 3.2; // deflate keeps about 1/3 of such text
  let input_tokens = 0; let output_tokens = 0; let cache = 0; let total = 0; let made = 0;
  for (let k = 0; k < rounds && (o.steps !== undefined || bytes < target); k++) {
    const id = `c${k}`; const span = `t${k}`;
    const cmd = `python train.py --seed ${k % 97} --lr 0.0${k % 9}`;
    const u = { input_tokens: 1000 + (k % 5000), output_tokens: 200, input_tokens_cache_read: 5000, total_tokens: 6200 + (k % 5000) };
    input_tokens += u.input_tokens; output_tokens += u.output_tokens; cache += u.input_tokens_cache_read; total += u.total_tokens;
    push({ event: 'model', span_id: 'g', timestamp: iso(), model: 'openai/bench', input: [], output: { model: 'openai/bench', choices: [{ message: { role: 'assistant', content: [{ type: 'reasoning', reasoning: words(wr) }, { type: 'text', text: words(wt) }], tool_calls: [{ id, function: 'bash', arguments: { cmd } }] } }], usage: u } });
    push({ event: 'span_begin', id: span, parent_id: 'g', type: 'tool', name: 'bash', timestamp: iso() });
    push({ event: 'tool', span_id: 'g', id, function: 'bash', arguments: { cmd }, result: words(wo) + (k === 0 && o.firstResult ? ` ${o.firstResult}` : ''), timestamp: iso() });
    push({ event: 'sandbox', span_id: span, action: 'exec', cmd: `bash -c '${cmd}'`, result: 0, output: words(wx), timestamp: iso() });
    push({ event: 'span_end', id: span, timestamp: iso() });
    made++;
  }
  push({ event: 'span_end', id: 'g', timestamp: iso() });
  push({ event: 'span_end', id: 'solvers', timestamp: iso() });
  push({ event: 'span_begin', id: 'scorers', type: 'scorers', name: 'scorers', timestamp: iso() });
  push({ event: 'score', span_id: 'scorers', timestamp: iso(), score: { value: 'C', answer: 'done', explanation: words(20) }, target: 'x' });
  push({ event: 'span_end', id: 'scorers', timestamp: iso() });
  const usage = { input_tokens, output_tokens, input_tokens_cache_read: cache, total_tokens: total };
  const head = JSON.stringify({ id: 'bench', epoch: 1, input, target: 'x', messages: [{ role: 'user', content: input }] });
  const tail = JSON.stringify({ scores: { s: { value: 'C', answer: 'done' } }, model_usage: { 'openai/bench': usage } });
  const sample = `${head.slice(0, -1)},"events":[${parts.join(',')}],${tail.slice(1)}`;
  parts.length = 0;
  const zip = new yazl.ZipFile();
  zip.addBuffer(Buffer.from(JSON.stringify({ version: 2, status: 'success', eval: { task: 'bench', model: 'openai/bench', solver: 'react' }, stats: { model_usage: { 'openai/bench': usage } } })), 'header.json');
  zip.addBuffer(Buffer.from(sample), 'samples/bench_epoch_1.json', { compress: true });
  zip.end();
  await new Promise<void>((resolve, reject) => { zip.outputStream.pipe(createWriteStream(file)).on('close', resolve).on('error', reject); });
  return { events, steps: 2 + 2 * made, jsonBytes: sample.length, totalTokens: total };
}
