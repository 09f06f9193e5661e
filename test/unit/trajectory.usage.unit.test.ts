import * as assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { promises as fsp } from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import * as zlib from 'node:zlib';
import { decompress as zstd } from 'fzstd';
import * as yauzl from 'yauzl';
import { importFiles } from '../../src/core/trajectory/import';
import type { Trajectory } from '../../src/core/trajectory/types';
import { Timeline } from '../../src/core/viewer/timeline';
import { callCost, usageTotals } from '../../src/core/viewer/usage';
import { header } from '../../src/extension/trajectory/viewer/detail';
import { repoRoot } from '../harness/paths';

/**
 * Issue 30, "usage as the source counts it": for every shared trajectory file, the viewer's
 * header (the same `header()` the panel posts) states the file's own token totals, read here from
 * the file itself without the importer (JSON.parse, yauzl + zlib/fzstd for the zip entries):
 * Inspect `model_usage` per sample and `stats.model_usage` per file (cache reads counted), OpenHands
 * V0 `metrics.accumulated_token_usage`, OpenHands V1 the last `stats` update, SWE-agent
 * `info.model_stats`, mini-swe-agent the calls' `usage` (its `model_stats` holds only cost and
 * calls), ATIF `final_metrics`; the per-step counts sum to the same where the log has them.
 */
const DATA = path.resolve(repoRoot, '..', 'shared', 'data', 'trajectories');
const CLI = path.join(repoRoot, 'out', 'src', 'cli', 'main.js');

type Obj = Record<string, unknown>;
const o = (v: unknown) => (v ?? {}) as Obj;
const n = (v: unknown) => (typeof v === 'number' ? v : 0);

/** Every entry of a zip as parsed JSON (stored, deflate, zstd), read with yauzl and the codecs directly. */
function zipJson(file: string): Promise<Map<string, unknown>> {
  return new Promise((resolve, reject) => {
    yauzl.open(file, { lazyEntries: true }, (err, zip) => {
      if (err || !zip) return reject(err);
      const out = new Map<string, unknown>();
      zip.on('entry', (e: yauzl.Entry) => {
        zip.openReadStream(e, { decodeFileData: false }, (e2, s) => {
          if (e2 || !s) return reject(e2);
          const parts: Buffer[] = [];
          s.on('data', (d: Buffer) => parts.push(d));
          s.on('end', () => {
            const raw = Buffer.concat(parts);
            const data = e.compressionMethod === 0 ? raw : e.compressionMethod === 8 ? zlib.inflateRawSync(raw) : Buffer.from(zstd(raw));
            if (e.fileName.endsWith('.json')) out.set(e.fileName, JSON.parse(data.toString('utf8')));
            zip.readEntry();
          });
        });
      });
      zip.on('end', () => resolve(out));
      zip.readEntry();
    });
  });
}

const sumUsage = (mu: unknown, k: string) => Object.values(o(mu)).reduce<number>((a, u) => a + n(o(u)[k]), 0);

async function load(file: string): Promise<Trajectory[]> {
  const ts: Trajectory[] = [];
  await importFiles([file], (t) => { ts.push(t); });
  return ts;
}

function shown(list: Trajectory[], i: number) {
  return header(list[i].file, path.basename(list[i].file), list, i, new Timeline(list[i]), [], { live: false, can: { pins: false, review: false, repository: false }, pinned: 0 });
}

function cli(...args: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    execFile(process.execPath, [CLI, ...args], { cwd: repoRoot, maxBuffer: 64 * 1024 * 1024 }, (err, stdout, stderr) => resolve({ code: err ? (typeof err.code === 'number' ? err.code : 1) : 0, stdout, stderr }));
  });
}

describe('trajectory usage: the header states each shared file\'s own token totals (issue 30)', function () {
  this.timeout(120_000);

  it('Inspect .eval and .json: each sample\'s total is its model_usage (cache reads and writes, reasoning counted), the file\'s its stats.model_usage', async () => {
    const files = ['inspect-eval/METR__inspect-action/2025-12-13T23-15-44+00-00_class-eval_XDtHXBaqEHGUBoFoinn2wS.eval', 'inspect-eval/UKGovernmentBEIS__inspect_ai/log_message_deduplication.eval', 'inspect-eval/meridianlabs-ai__ts-mono/original/ais-decoder.eval', 'inspect-json/UKGovernmentBEIS__inspect_ai/2025-05-12T20-27-36-04-00_browser.json'];
    let cached = 0;
    for (const rel of files) {
      const file = path.join(DATA, rel);
      let samples: Obj[]; let stats: unknown;
      if (file.endsWith('.eval')) {
        const z = await zipJson(file);
        samples = [...z.entries()].filter(([k]) => /^samples\/[^/]+\.json$/.test(k)).map(([, v]) => o(v));
        stats = o(o(z.get('header.json')).stats).model_usage;
      } else {
        const d = o(JSON.parse(await fsp.readFile(file, 'utf8')));
        samples = (d.samples as Obj[]);
        stats = o(d.stats).model_usage;
      }
      const list = await load(file);
      assert.equal(list.length, samples.length, rel);
      for (const s of samples) {
        const i = list.findIndex((t) => t.sample?.id === String(s.id) && t.sample?.epoch === (s.epoch ?? 1));
        assert.ok(i >= 0, `${rel}: sample ${String(s.id)}`);
        const h = shown(list, i);
        const own = sumUsage(s.model_usage, 'total_tokens');
        assert.equal(h.usage.totalTokens, own, `${rel} ${String(s.id)}: header ${h.usage.totalTokens}, the sample's model_usage ${own}`);
        assert.equal(h.usage.cacheReadTokens, sumUsage(s.model_usage, 'input_tokens_cache_read'));
        assert.equal(h.usage.cacheWriteTokens, sumUsage(s.model_usage, 'input_tokens_cache_write'));
        assert.equal(h.usage.reasoningTokens, sumUsage(s.model_usage, 'reasoning_tokens'));
        assert.equal(h.usage.inputTokens + h.usage.outputTokens + h.usage.cacheReadTokens + h.usage.cacheWriteTokens, own, 'the kinds add up to the total');
        // the steps' own counts sum to the same (each model event's usage)
        if (own) assert.equal(h.usage.stepTokens, own);
        cached += h.usage.cacheReadTokens;
        if (Object.keys(o(stats)).length) assert.equal(h.fileUsage?.totalTokens, sumUsage(stats, 'total_tokens'), `${rel}: the file's stats.model_usage`);
      }
    }
    // ais-decoder's 114,816 cache reads are in its header (input 8,066 + output 5,574 alone would be 13,640)
    assert.ok(cached >= 114_816, `cache reads counted: ${cached}`);
  });

  it('OpenHands V0 output.jsonl (metrics.accumulated_token_usage), the V1 events.jsonl (its last stats update), the V1 output.jsonl (no counts)', async () => {
    const v0 = path.join(DATA, 'openhands-v0/OpenHands__OpenHands/output.jsonl');
    const lines = (await fsp.readFile(v0, 'utf8')).split('\n').filter(Boolean).map((l) => o(JSON.parse(l)));
    const list = await load(v0);
    lines.forEach((l, i) => {
      const acc = o(o(l.metrics).accumulated_token_usage);
      const own = n(acc.prompt_tokens) + n(acc.completion_tokens);
      const h = shown(list, i);
      assert.equal(list[i].id, l.instance_id);
      assert.equal(h.usage.totalTokens, own, `${String(l.instance_id)}: header ${h.usage.totalTokens}, metrics ${own}`);
      assert.equal(h.usage.stepTokens, own, 'each response counted once (several actions of one response carry the same usage)');
      assert.equal(h.usage.cacheReadTokens, n(acc.cache_read_tokens));
      assert.equal(h.usage.costUsd, n(o(l.metrics).accumulated_cost));
    });
    const v1 = path.join(DATA, 'openhands-v1/OpenHands__software-agent-sdk/events.jsonl');
    const events = (await fsp.readFile(v1, 'utf8')).split('\n').filter(Boolean).map((l) => o(JSON.parse(l)));
    const last = events.filter((e) => e.key === 'stats').pop()!;
    const own = Object.values(o(o(last.value).usage_to_metrics)).reduce<number>((a, m) => { const u = o(o(m).accumulated_token_usage); return a + n(u.prompt_tokens) + n(u.completion_tokens); }, 0);
    const cache = Object.values(o(o(last.value).usage_to_metrics)).reduce<number>((a, m) => a + n(o(o(m).accumulated_token_usage).cache_read_tokens), 0);
    const h1 = shown(await load(v1), 0);
    assert.equal(h1.usage.totalTokens, own);
    assert.equal(h1.usage.stepTokens, own);
    assert.equal(h1.usage.cacheReadTokens, cache);
    assert.ok(cache > 0);
    const bench = await load(path.join(DATA, 'openhands-v1/OpenHands__benchmarks/output.jsonl'));
    for (let i = 0; i < bench.length; i++) {
      const h = shown(bench, i);
      assert.deepEqual([h.usage.totalTokens, h.usage.perStep, h.usage.costUsd], [0, false, null], 'the log has no counts: none are made up');
    }
  });

  it('SWE-agent (info.model_stats), mini-swe-agent (the calls\' usage; model_stats\' cost), ATIF (final_metrics), a GUI export (each response once)', async () => {
    for (const rel of ['swe-agent/SWE-agent__SWE-agent/6e44b9__sweagenttestrepo-1c2844.traj', 'swe-agent/SWE-agent__SWE-agent/swe-agent__test-repo-i1.traj']) {
      const d = o(JSON.parse(await fsp.readFile(path.join(DATA, rel), 'utf8')));
      const ms = o(o(d.info).model_stats);
      const h = shown(await load(path.join(DATA, rel)), 0);
      assert.equal(h.usage.totalTokens, n(ms.tokens_sent) + n(ms.tokens_received), rel);
      assert.equal(h.usage.outputTokens, n(ms.tokens_received));
      assert.equal(h.usage.costUsd, n(ms.instance_cost));
      assert.equal(h.usage.calls, n(ms.api_calls));
      assert.equal(h.usage.perStep, false, 'SWE-agent records no per-call counts');
    }
    for (const rel of ['mini-swe-agent/gruckion__mini-swe-agent/django__django-16255.traj.json', 'mini-swe-agent/gruckion__mini-swe-agent/sympy__sympy-20154.traj.json']) {
      const d = o(JSON.parse(await fsp.readFile(path.join(DATA, rel), 'utf8')));
      const usages = (d.messages as Obj[]).map((m) => o(o(o(m.extra).response).usage)).filter((u) => 'total_tokens' in u);
      const h = shown(await load(path.join(DATA, rel)), 0);
      assert.equal(h.usage.totalTokens, usages.reduce((a, u) => a + n(u.total_tokens), 0), rel);
      assert.equal(h.usage.cacheReadTokens, usages.reduce((a, u) => a + n(o(u.prompt_tokens_details).cached_tokens), 0));
      assert.equal(h.usage.reasoningTokens, usages.reduce((a, u) => a + n(o(u.completion_tokens_details).reasoning_tokens), 0));
      assert.ok(Math.abs((h.usage.costUsd ?? -1) - n(o(o(d.info).model_stats).instance_cost)) < 1e-9);
    }
    const atif = path.join(DATA, 'atif/meridianlabs-ai__inspect_scout/openhands_hello-world.trajectory.json');
    const fm = o(o(JSON.parse(await fsp.readFile(atif, 'utf8'))).final_metrics);
    const ha = shown(await load(atif), 0);
    assert.equal(ha.usage.totalTokens, n(fm.total_prompt_tokens) + n(fm.total_completion_tokens));
    assert.equal(ha.usage.costUsd, n(fm.total_cost_usd));
    const gui = path.join(DATA, 'openhands-v0/OpenHands__OpenHands/basic_gui_mode.json');
    const byResponse = new Map<string, number>();
    for (const e of JSON.parse(await fsp.readFile(gui, 'utf8')) as Obj[]) {
      const r = o(o(e.tool_call_metadata).model_response);
      if (typeof r.id === 'string') byResponse.set(r.id, n(o(r.usage).total_tokens));
    }
    const hg = shown(await load(gui), 0);
    assert.equal(hg.usage.totalTokens, [...byResponse.values()].reduce((a, b) => a + b, 0));
    assert.ok(byResponse.size > 0);
  });

  it('the EXP-Bench harness records state no tokens: the header says 0, from the steps', async () => {
    const dir = path.join(DATA, 'exp-bench/Just-Curieous__Curie/azure-gpt-4o');
    const list = await load(path.join(dir, '93022_task_index_0_iter_1_duration_0.67_eval_gen.json'));
    assert.deepEqual([shown(list, 0).usage.totalTokens, shown(list, 0).usage.from], [0, 'the steps']);
  });

  it('cost per token kind from a price table; a model or a kind without a price is unpriced, never guessed', () => {
    const prices = { m: { inputPerMTok: 1, outputPerMTok: 4, cacheReadPerMTok: 0.1 } };
    assert.deepEqual(callCost({ model: 'm', inputTokens: 1e6, outputTokens: 5e5, cacheReadTokens: 2e6 }, prices), { usd: 1 + 2 + 0.2, from: 'table' });
    assert.deepEqual(callCost({ model: 'm', inputTokens: 10, cacheWriteTokens: 5 }, prices), { unpriced: true }, 'a cache write with no price');
    assert.deepEqual(callCost({ model: 'other', inputTokens: 10 }, prices), { unpriced: true });
    assert.deepEqual(callCost({ model: 'other', inputTokens: 10, costUsd: 0.5 }, prices), { usd: 0.5, from: 'source' }, 'the source\'s cost first');
    const t: Trajectory = { version: 1, id: 'x', format: 'atif', file: 'x', sourceEvents: 2, mappedEvents: 2, skippedEvents: 0, timed: 0, redactions: 0, problems: [],
      steps: [{ index: 0, kind: 'model', actor: 'agent', phase: 'design', source: { file: 'x' }, model: { model: 'm', inputTokens: 1e6 } }, { index: 1, kind: 'model', actor: 'agent', phase: 'design', source: { file: 'x' }, model: { model: 'z', inputTokens: 1 } }] };
    const u = usageTotals(t, prices);
    assert.deepEqual([u.costUsd, u.costFrom, u.unpricedCalls], [1, 'the price table', 1]);
    assert.deepEqual([usageTotals(t).costUsd, usageTotals(t).unpricedCalls], [null, 2]);
  });

  it('`traj show --json` carries totalTokens and fileTotals; without --id it shows the first sample by (id, epoch); --prices prices the calls', async () => {
    const cls = path.join(DATA, 'inspect-eval/METR__inspect-action/2025-12-13T23-15-44+00-00_class-eval_XDtHXBaqEHGUBoFoinn2wS.eval');
    const r = await cli('traj', 'show', cls, '--json');
    assert.equal(r.code, 0, r.stderr);
    const out = JSON.parse(r.stdout);
    // the zip holds ClassEval_1 first; by id the first is ClassEval_0 (3,473 tokens in its model_usage)
    assert.equal(out.id, 'ClassEval_0');
    assert.equal(out.totalTokens, 3473);
    assert.deepEqual([out.fileTotals.totalTokens, out.fileTotals.from], [18126, 'the log\'s stats.model_usage']);
    assert.equal(out.usage.reasoningTokens, 2112);
    const epochs = await fsp.mkdtemp(path.join(os.tmpdir(), 'expbench-usage-'));
    try {
      // ids 10, 2 and 2#2: numeric order, then epoch → 2 (epoch 1) first
      const sample = (id: number, epoch: number) => ({ id, epoch, input: 'q', target: 't', events: [{ event: 'model', timestamp: '2026-01-01T00:00:00Z', model: 'm', input: [], output: { choices: [{ message: { role: 'assistant', content: 'a' } }], usage: { input_tokens: 10 * id, output_tokens: epoch, total_tokens: 10 * id + epoch } } }], model_usage: { m: { input_tokens: 10 * id, output_tokens: epoch, total_tokens: 10 * id + epoch } } });
      const f = path.join(epochs, 'log.json');
      await fsp.writeFile(f, JSON.stringify({ version: 2, status: 'success', eval: { task: 't', model: 'm' }, stats: { model_usage: { m: { input_tokens: 140, output_tokens: 4, total_tokens: 144 } } }, samples: [sample(10, 1), sample(2, 2), sample(2, 1)] }));
      const s = JSON.parse((await cli('traj', 'show', f, '--json')).stdout);
      assert.deepEqual([s.id, s.totalTokens, s.fileTotals.totalTokens], ['2', 21, 144]);
      const prices = path.join(epochs, 'prices.json');
      await fsp.writeFile(prices, JSON.stringify({ m: { inputPerMTok: 1e6, outputPerMTok: 0 } }));
      const priced = JSON.parse((await cli('traj', 'show', f, '--json', '--prices', prices)).stdout);
      assert.deepEqual([priced.usage.costUsd, priced.usage.costFrom], [20, 'the price table']);
      const text = (await cli('traj', 'show', f)).stdout;
      assert.match(text, /tokens 21 \(sample model_usage\): input 20, output 1, cache read 0, cache write 0, reasoning 0; cost unpriced/);
    } finally { await fsp.rm(epochs, { recursive: true, force: true }); }
  });
});
