import * as assert from 'node:assert/strict';
import { promises as fsp } from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import fc from 'fast-check';
import { StepSchema } from '../../src/core/steps/step';
import { importFiles } from '../../src/core/trajectory/import';
import type { Trajectory } from '../../src/core/trajectory/types';
import { usageTotals } from '../../src/core/viewer/usage';

/**
 * Issue 33: the importers' tolerance, as properties (fast-check). Each format's small valid file
 * (written here from its documented shape) is mutated — members deleted, members added, values
 * replaced by JSON of another type, arrays emptied or doubled, spans nested deep, the text cut at
 * any byte — and imported. Never a crash: `importFiles` returns; every file is read (steps that
 * fit the step model, a trajectory without steps saying why) or refused with a problem that names
 * it; usage totals are numbers.
 */
type J = unknown;
const T = (s: number) => new Date(Date.UTC(2026, 0, 1, 0, 0, s)).toISOString();

const SEEDS: Record<string, { name: string; doc: J; jsonl?: boolean }> = {
  inspect: { name: 'log.json', doc: { version: 2, status: 'success', eval: { task: 't', model: 'm', solver: 'react' }, stats: { model_usage: { m: { input_tokens: 5, output_tokens: 2, total_tokens: 7 } } }, samples: [{
    id: 1, epoch: 1, input: 'do it', target: 'x', scores: { s: { value: 'C', answer: 'a', explanation: 'e' } }, model_usage: { m: { input_tokens: 5, output_tokens: 2, total_tokens: 7 } },
    events: [
      { event: 'span_begin', id: 'i', type: 'init', name: 'init', timestamp: T(0) }, { event: 'sample_init', span_id: 'i', timestamp: T(0), sample: { input: 'do it' } }, { event: 'span_end', id: 'i' },
      { event: 'span_begin', id: 's', type: 'solvers', name: 'solvers' }, { event: 'span_begin', id: 'g', parent_id: 's', type: 'solver', name: 'generate' },
      { event: 'model', span_id: 'g', timestamp: T(1), model: 'm', input: [{ role: 'user', content: 'do it' }], output: { choices: [{ message: { role: 'assistant', content: [{ type: 'reasoning', reasoning: 'hm', redacted: false }, { type: 'text', text: 'ok' }], tool_calls: [{ id: 'c1', function: 'bash', arguments: { cmd: 'ls' } }] } }], usage: { input_tokens: 5, output_tokens: 2, total_tokens: 7 } } },
      { event: 'span_begin', id: 't1', parent_id: 'g', type: 'tool', name: 'bash' }, { event: 'tool', span_id: 'g', id: 'c1', function: 'bash', arguments: { cmd: 'ls' }, result: 'a.py', timestamp: T(2) },
      { event: 'sandbox', span_id: 't1', action: 'exec', cmd: 'ls', result: 0, output: 'a.py', timestamp: T(2) }, { event: 'span_end', id: 't1' }, { event: 'span_end', id: 'g' }, { event: 'span_end', id: 's' },
      { event: 'span_begin', id: 'sc', type: 'scorers', name: 'scorers' }, { event: 'score', span_id: 'sc', score: { value: 'C' }, timestamp: T(3) }, { event: 'span_end', id: 'sc' },
    ] }] } },
  openhandsV0: { name: 'gui.json', doc: [
    { id: 0, timestamp: T(0), source: 'user', action: 'message', args: { content: 'fix it' } },
    { id: 1, timestamp: T(1), source: 'agent', action: 'edit', args: { path: 'a.py', old_str: 'x', new_str: 'y', thought: 't' }, tool_call_metadata: { function_name: 'str_replace_editor', tool_call_id: 'c', model_response: { id: 'r1', usage: { prompt_tokens: 10, completion_tokens: 2, total_tokens: 12 } } } },
    { id: 2, timestamp: T(2), source: 'agent', cause: 1, observation: 'edit', content: 'done', extras: { diff: '' } },
    { id: 3, timestamp: T(3), source: 'environment', observation: 'agent_state_changed', content: '', extras: { agent_state: 'finished' } },
  ] },
  openhandsV1: { name: 'events.jsonl', jsonl: true, doc: [
    { kind: 'MessageEvent', id: 'm', timestamp: T(0), source: 'user', llm_message: { role: 'user', content: [{ type: 'text', text: 'go' }] } },
    { kind: 'ConversationStateUpdateEvent', id: 's', timestamp: T(1), key: 'stats', value: { usage_to_metrics: { agent: { accumulated_token_usage: { prompt_tokens: 9, completion_tokens: 3, cache_read_tokens: 4 }, accumulated_cost: 0.1 } } } },
    { kind: 'ActionEvent', id: 'a', timestamp: T(2), source: 'agent', thought: [{ type: 'text', text: 'run' }], action: { kind: 'TerminalAction', command: 'ls' }, tool_name: 'terminal', tool_call_id: 'c', llm_response_id: 'r' },
    { kind: 'ObservationEvent', id: 'o', timestamp: T(3), source: 'environment', action_id: 'a', tool_call_id: 'c', observation: { content: [{ type: 'text', text: 'a.py' }], exit_code: 0 } },
  ] },
  swe: { name: 'x.traj', doc: { environment: 'main', trajectory: [
    { action: 'str_replace_editor str_replace /r/a.py --old_str x --new_str y', observation: 'ok', response: 'r', thought: 't', state: { open_file: '/r/a.py' } },
    { action: 'submit', observation: 'diff', response: 'r', thought: 't', state: '{}' },
  ], history: [{ role: 'system', content: 'sys' }, { role: 'user', content: 'the issue' }, { role: 'assistant', content: 't', action: 'edit', tool_calls: [{ id: 'c', function: { name: 'str_replace_editor', arguments: '{"command":"str_replace","path":"/r/a.py","old_str":"x","new_str":"y"}' } }] }],
  info: { submission: 'diff --git a/a.py b/a.py\n--- a/a.py\n+++ b/a.py\n@@ -1 +1 @@\n-x\n+y\n', exit_status: 'submitted', model_stats: { tokens_sent: 10, tokens_received: 2, instance_cost: 0.01, api_calls: 1 } } } },
  sweHistory: { name: 'h.traj', doc: { history: [{ role: 'system', content: 's' }, { role: 'user', content: 'issue' }, { role: 'assistant', content: 'look', action: 'ls' }, { role: 'tool', content: 'a.py' }] } },
  mini: { name: 'm.traj.json', doc: { trajectory_format: 'mini-swe-agent-1', instance_id: 'r-1', info: { exit_status: 'Submitted', submission: 'diff', model_stats: { instance_cost: 0.1, api_calls: 1 } }, messages: [
    { role: 'system', content: 's' }, { role: 'user', content: 'task' },
    { role: 'assistant', content: 'THOUGHT: x\n\n```bash\nls\n```', extra: { response: { model: 'm', usage: { prompt_tokens: 5, completion_tokens: 1, total_tokens: 6 } } } }, { role: 'user', content: '<returncode>0</returncode>' },
  ] } },
  atif: { name: 't.json', doc: { schema_version: 'ATIF-v1.5', session_id: 's', agent: { name: 'a', version: '1' }, final_metrics: { total_prompt_tokens: 5, total_completion_tokens: 2 }, steps: [
    { step_id: 1, timestamp: T(0), source: 'user', message: 'hi' },
    { step_id: 2, timestamp: T(1), source: 'agent', message: 'ok', reasoning_content: 'hm', tool_calls: [{ tool_call_id: 'c', function_name: 'bash', arguments: { command: 'make' } }, { tool_call_id: 'd', function_name: 'bash', arguments: { command: 'ls' } }], observation: { results: [{ source_call_id: 'c', content: 'built' }] }, metrics: { prompt_tokens: 5, completion_tokens: 2 } },
  ] } },
  evalOutput: { name: 'output.jsonl', jsonl: true, doc: [{ instance_id: 'i-1', instruction: 'fix', test_result: { git_patch: 'diff --git a/a b/a\n' }, metrics: { accumulated_token_usage: { prompt_tokens: 3, completion_tokens: 1 } }, history: [
    { id: 0, source: 'user', action: 'message', args: { content: 'fix' }, timestamp: T(0) },
    { id: 1, source: 'agent', action: 'run', args: { command: 'ls' }, timestamp: T(1) }, { id: 2, source: 'agent', cause: 1, observation: 'run', content: 'a', extras: { exit_code: 0 } },
  ] }] },
};

/** One mutation: an op at a path (indices taken modulo the sizes met on the way). */
const Mutation = fc.record({
  path: fc.array(fc.nat(), { maxLength: 6 }),
  op: fc.constantFrom('delete', 'replace', 'extra', 'empty', 'double', 'nest'),
  value: fc.jsonValue({ maxDepth: 2 }),
  key: fc.constantFrom('id', 'events', 'event', 'span_id', 'parent_id', 'type', 'role', 'content', 'kind', 'history', 'trajectory', 'steps', 'usage', 'model_usage', 'tool_calls', 'action', 'observation', 'x'),
});
type Mutation = { path: number[]; op: string; value: J; key: string };

function mutate(doc: J, m: Mutation): J {
  const root = structuredClone(doc);
  let parent: Record<string, J> | J[] | undefined; let at: string | number | undefined; let cur: J = root;
  for (const n of m.path) {
    if (Array.isArray(cur) && cur.length) { parent = cur; at = n % cur.length; cur = cur[at]; } else if (cur && typeof cur === 'object') {
      const keys = Object.keys(cur as object);
      if (!keys.length) break;
      parent = cur as Record<string, J>; at = keys[n % keys.length]; cur = (cur as Record<string, J>)[at];
    } else break;
  }
  const set = (v: J) => { if (parent === undefined) return v; (parent as Record<string | number, J>)[at as string] = v; return root; };
  switch (m.op) {
    case 'delete': if (parent !== undefined) { if (Array.isArray(parent)) parent.splice(at as number, 1); else delete (parent as Record<string, J>)[at as string]; } return root;
    case 'replace': return set(m.value);
    case 'extra': if (cur && typeof cur === 'object' && !Array.isArray(cur)) (cur as Record<string, J>)[m.key] = m.value; else if (Array.isArray(cur)) cur.push(m.value); return root;
    case 'empty': return set(Array.isArray(cur) ? [] : cur && typeof cur === 'object' ? {} : '');
    case 'double': return set(Array.isArray(cur) ? [...cur, ...structuredClone(cur)] : cur);
    case 'nest': {
      // spans (or any objects) nested deep: a chain of 300 parents
      let v: J = m.value;
      for (let k = 0; k < 300; k++) v = { [m.key]: v, parent_id: `p${k}`, id: `p${k + 1}`, event: 'span_begin', type: 'tool', name: 'bash' };
      return set(v);
    }
  }
  return root;
}

function text(seed: { doc: J; jsonl?: boolean }, doc: J): string {
  return seed.jsonl && Array.isArray(doc) ? doc.map((x) => JSON.stringify(x)).join('\n') + '\n' : JSON.stringify(doc);
}

/** The property every import holds (see the file's comment). */
async function holds(file: string): Promise<void> {
  const ts: Trajectory[] = [];
  const r = await importFiles([file], (t) => { ts.push(t); });
  assert.equal(r.files.length, 1);
  if (r.files[0].unreadable) {
    assert.ok(r.problems.some((p) => p.file === file && p.message.length > 0), 'refused, with a problem naming the file');
    return;
  }
  if (!ts.length) assert.ok(r.problems.length > 0 || r.files[0].format === 'exp-bench-harness', 'no trajectory and no word');
  for (const t of ts) {
    for (const s of t.steps) StepSchema.parse(s);
    assert.ok(t.steps.every((s, i) => s.index === i));
    if (!t.steps.length) assert.ok(t.problems.some((p) => p.severity !== 'info'), `${t.format} ${t.id}: no steps, no reason`);
    const u = usageTotals(t);
    for (const v of [u.totalTokens, u.inputTokens, u.outputTokens, u.cacheReadTokens, u.stepTokens]) assert.equal(typeof v, 'number');
    JSON.stringify(t);
  }
}

describe('trajectory import tolerance: mutated variants of each format never crash, always a named problem (issue 33, fast-check)', function () {
  this.timeout(600_000);
  let dir: string;
  before(async () => { dir = await fsp.mkdtemp(path.join(os.tmpdir(), 'expbench-fuzz-')); });
  after(async () => { await fsp.rm(dir, { recursive: true, force: true }); });

  for (const [fmt, seed] of Object.entries(SEEDS)) {
    it(`${fmt}: the seed reads; members deleted, added, retyped, emptied, doubled, nested deep`, async () => {
      const base = path.join(dir, `${fmt}-seed-${seed.name}`);
      await fsp.writeFile(base, text(seed, seed.doc));
      const ts: Trajectory[] = [];
      const r = await importFiles([base], (t) => { ts.push(t); });
      assert.equal(r.files[0].unreadable, false, `the ${fmt} seed: ${r.problems.map((p) => p.message).join('; ')}`);
      assert.ok(ts.length > 0 && ts[0].steps.length > 0);
      let n = 0;
      await fc.assert(fc.asyncProperty(fc.array(Mutation, { minLength: 1, maxLength: 4 }), async (ms) => {
        let doc = seed.doc;
        for (const m of ms) doc = mutate(doc, m);
        const file = path.join(dir, `${fmt}-${n++}-${seed.name}`);
        await fsp.writeFile(file, text(seed, doc));
        await holds(file);
        await fsp.rm(file, { force: true });
      }), { numRuns: Number(process.env.EXPBENCH_FUZZ_RUNS ?? 150), seed: Number(process.env.EXPBENCH_FUZZ_SEED ?? 33) });
    });

    it(`${fmt}: cut at any byte`, async () => {
      const full = Buffer.from(text(seed, seed.doc));
      let n = 0;
      await fc.assert(fc.asyncProperty(fc.integer({ min: 0, max: full.length - 1 }), async (cutAt) => {
        const file = path.join(dir, `${fmt}-cut-${n++}-${seed.name}`);
        await fsp.writeFile(file, full.subarray(0, cutAt));
        await holds(file);
        await fsp.rm(file, { force: true });
      }), { numRuns: Number(process.env.EXPBENCH_FUZZ_RUNS ?? 100), seed: 30 });
    });
  }
});
