import * as assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { promises as fsp } from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import * as zlib from 'node:zlib';
import { StepSchema } from '../../src/core/steps/step';
import { importFiles } from '../../src/core/trajectory/import';
import { redactString } from '../../src/core/trajectory/redact';
import type { Trajectory } from '../../src/core/trajectory/types';
import { repoRoot } from '../harness/paths';

/**
 * Files of each format that are not in ../shared/data/trajectories, built here from each format's
 * documented shape (inspect_ai `log/_log.py` + `_recorders/eval.py` and the chunked layout of
 * ts-mono `log_data/chunked/format.ts`; software-agent-sdk `event/`; SWE-agent `types.py`;
 * OpenHands V0 `events/serialization`; docs/events.md), and bad inputs.
 */
const CLI = path.join(repoRoot, 'out', 'src', 'cli', 'main.js');
const DATA = path.resolve(repoRoot, '..', 'shared', 'data', 'trajectories');
const KEY = 'sk-proj-PLANTEDsecretKEY0123456789abcdefXYZ';
const GHP = 'ghp_PLANTEDgithubTOKEN0123456789abcdefAB';
const AWS = 'AKIAPLANTED012345678';

function cli(...args: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    execFile(process.execPath, [CLI, ...args], { cwd: repoRoot, maxBuffer: 256 * 1024 * 1024 }, (err, stdout, stderr) => {
      resolve({ code: err ? (typeof err.code === 'number' ? err.code : 1) : 0, stdout, stderr });
    });
  });
}

/** A zstd frame of raw (stored) blocks: valid per RFC 8878 §3.1, decoded by any zstd reader. */
function zstdRawFrame(data: Buffer): Buffer {
  const parts: Buffer[] = [Buffer.from([0x28, 0xb5, 0x2f, 0xfd, 0xe0])]; // magic; single segment, 8-byte content size
  const fcs = Buffer.alloc(8); fcs.writeBigUInt64LE(BigInt(data.length)); parts.push(fcs);
  const MAX = 128 * 1024;
  for (let off = 0; off === 0 || off < data.length; off += MAX) {
    const chunk = data.subarray(off, off + MAX);
    const last = off + MAX >= data.length ? 1 : 0;
    const h = (chunk.length << 3) | (0 << 1) | last; // block type 0 = raw
    parts.push(Buffer.from([h & 0xff, (h >> 8) & 0xff, (h >> 16) & 0xff]), chunk);
    if (data.length === 0) break;
  }
  return Buffer.concat(parts);
}

/** A zip archive (PKWARE APPNOTE 4.3) of `entries`, each stored with method 0, 8 (deflate) or 93 (zstd). */
function zipOf(entries: Array<{ name: string; data: Buffer | string; method: 0 | 8 | 93 }>): Buffer {
  const locals: Buffer[] = []; const central: Buffer[] = [];
  let offset = 0;
  for (const e of entries) {
    const data = Buffer.isBuffer(e.data) ? e.data : Buffer.from(e.data, 'utf8');
    const comp = e.method === 0 ? data : e.method === 8 ? zlib.deflateRawSync(data) : zstdRawFrame(data);
    const name = Buffer.from(e.name, 'utf8');
    const crc = zlib.crc32(data);
    const lh = Buffer.alloc(30);
    lh.writeUInt32LE(0x04034b50, 0); lh.writeUInt16LE(63, 4); lh.writeUInt16LE(0x800, 6); lh.writeUInt16LE(e.method, 8);
    lh.writeUInt16LE(0, 10); lh.writeUInt16LE(0x21, 12); lh.writeUInt32LE(crc, 14); lh.writeUInt32LE(comp.length, 18);
    lh.writeUInt32LE(data.length, 22); lh.writeUInt16LE(name.length, 26); lh.writeUInt16LE(0, 28);
    locals.push(lh, name, comp);
    const ch = Buffer.alloc(46);
    ch.writeUInt32LE(0x02014b50, 0); ch.writeUInt16LE(63, 4); ch.writeUInt16LE(63, 6); ch.writeUInt16LE(0x800, 8); ch.writeUInt16LE(e.method, 10);
    ch.writeUInt16LE(0, 12); ch.writeUInt16LE(0x21, 14); ch.writeUInt32LE(crc, 16); ch.writeUInt32LE(comp.length, 20); ch.writeUInt32LE(data.length, 24);
    ch.writeUInt16LE(name.length, 28); ch.writeUInt32LE(offset, 42);
    central.push(ch, name);
    offset += 30 + name.length + comp.length;
  }
  const cd = Buffer.concat(central);
  const eocd = Buffer.alloc(22);
  eocd.writeUInt32LE(0x06054b50, 0); eocd.writeUInt16LE(entries.length, 8); eocd.writeUInt16LE(entries.length, 10);
  eocd.writeUInt32LE(cd.length, 12); eocd.writeUInt32LE(offset, 16);
  return Buffer.concat([...locals, cd, eocd]);
}

const T = (s: number) => new Date(Date.UTC(2026, 0, 2, 3, 4, s)).toISOString();

/** An Inspect sample: 7 events → 5 steps (span_begin is structural; `telemetry_v9` is unknown). */
function inspectSample(id: string, pooled: boolean): Record<string, unknown> {
  const messages = [
    { id: 'm-sys', role: 'system', content: 'attachment://aaa111' },
    { id: 'm-user', role: 'user', content: 'Reproduce table 2.', source: 'input' },
  ];
  return {
    id, epoch: 1, input: 'Reproduce table 2.', target: '0.93', scores: { match: { value: 'C', explanation: 'ok' } }, metadata: { note: `key ${KEY}` },
    attachments: { aaa111: `You are a careful agent. OPENAI_API_KEY=${KEY}` },
    ...(pooled ? { events_data: { messages, calls: [] } } : {}),
    events: [
      { event: 'span_begin', timestamp: T(0), id: 's1', name: 'solvers', type: 'solvers' },
      { event: 'sample_init', timestamp: T(1), sample: { input: 'Reproduce table 2.', id }, state: { messages: [messages[1]] } },
      { event: 'model', timestamp: T(2), completed: T(4), model: 'openai/gpt-test', input: pooled ? [] : messages, ...(pooled ? { input_refs: [[0, 2]] } : {}),
        output: { model: 'gpt-test', choices: [{ message: { id: 'm-a1', role: 'assistant', content: [{ type: 'text', text: 'I will run it.' }], tool_calls: [{ id: 'c1', function: 'bash', arguments: { command: 'python train.py --seed 1' } }] } }],
          usage: { input_tokens: 120, output_tokens: 30, input_tokens_cache_read: 100, total_cost: 0.002 } } },
      { event: 'tool', timestamp: T(5), completed: T(9), id: 'c1', function: 'bash', arguments: { command: 'python train.py --seed 1' }, result: `acc 0.93\nexport GITHUB_TOKEN=${GHP}` },
      { event: 'sandbox', timestamp: T(6), action: 'exec', cmd: 'bash -c "python train.py --seed 1"', result: 0, output: 'acc 0.93' },
      { event: 'telemetry_v9', timestamp: T(7), payload: { x: 1 } },
      { event: 'score', timestamp: T(10), score: { value: 'C', explanation: `matched; Authorization: Bearer abcdefghijklmnop1234` }, target: '0.93' },
    ],
  };
}

describe('trajectory import: formats not in the shared data, secrets, bad input', function () {
  this.timeout(120_000);
  let dir: string;
  before(async () => { dir = await fsp.mkdtemp(path.join(os.tmpdir(), 'expbench-traj-')); });
  after(async () => { await fsp.rm(dir, { recursive: true, force: true }); });
  const write = async (name: string, data: string | Buffer) => { const f = path.join(dir, name); await fsp.writeFile(f, data); return f; };
  const load = async (...files: string[]) => { const ts: Trajectory[] = []; const r = await importFiles(files, (t) => { ts.push(t); }); return { ts, r }; };

  it('an Inspect .eval with zstd entries, a message pool with input_refs, attachments, the bash tool\'s `command`, and a chunked sample', async () => {
    const chunkedEvents = (inspectSample('b', true).events as unknown[]);
    const shell = { ...inspectSample('b', true) } as Record<string, unknown>;
    delete shell.events; delete shell.events_data; delete shell.attachments;
    const zip = zipOf([
      { name: 'samples/a_epoch_1.json', data: JSON.stringify(inspectSample('a', true)), method: 93 },
      { name: 'samples/b_epoch_1/sample.json', data: JSON.stringify(shell), method: 93 },
      { name: 'samples/b_epoch_1/events/0.json', data: JSON.stringify(chunkedEvents.slice(0, 3)), method: 93 },
      { name: 'samples/b_epoch_1/events/3.json', data: JSON.stringify(chunkedEvents.slice(3)), method: 8 },
      { name: 'samples/b_epoch_1/messages/0.json', data: JSON.stringify((inspectSample('b', true).events_data as { messages: unknown[] }).messages), method: 93 },
      { name: 'samples/b_epoch_1/attachments/0.json', data: JSON.stringify({ aaa111: 'You are a chunked agent.' }), method: 0 },
      { name: 'header.json', data: JSON.stringify({ version: 3, status: 'success', eval: { task: 'synthetic_task', model: 'openai/gpt-test' } }), method: 93 },
    ]);
    const f = await write('synthetic.eval', zip);
    const { ts, r } = await load(f);
    assert.deepEqual(r.files.map((x) => [x.format, x.unreadable]), [['inspect-eval', false]]);
    assert.deepEqual(ts.map((t) => [t.id, t.task, t.steps.length, t.sourceEvents, t.mappedEvents, t.skippedEvents]), [['a', 'synthetic_task', 6, 7, 5, 1], ['b', 'synthetic_task', 6, 7, 5, 1]]);
    const a = ts[0];
    // sample_init (user), system message from the pool (not seen before), model, tool, sandbox, score
    assert.deepEqual(a.steps.map((s) => `${s.actor}:${s.kind}`), ['user:message', 'system:message', 'agent:model', 'tool:tool', 'environment:environment', 'system:score']);
    assert.equal(a.steps[1].text, 'You are a careful agent. OPENAI_API_KEY=[REDACTED:secret]');
    assert.deepEqual(a.steps[2].model, { model: 'openai/gpt-test', inputTokens: 120, outputTokens: 30, cacheReadTokens: 100, costUsd: 0.002 });
    assert.equal(a.steps[2].time?.durationMs, 2000);
    assert.equal(a.steps[3].action?.command, 'python train.py --seed 1');
    assert.equal(a.steps[3].phase, 'execution');
    assert.equal(a.steps[3].phaseInferred, true);
    assert.equal(a.steps[3].time?.relMs, 4000, 'relative to sample_init at +1 s');
    assert.ok(a.problems.some((p) => /unknown event kind "telemetry_v9" \(1×\)/.test(p.message)));
    assert.equal(ts[1].steps[1].text, 'You are a chunked agent.', 'chunked attachments resolved');
    for (const t of ts) for (const s of t.steps) StepSchema.parse(s);
    const res = await cli('traj', 'import', f, '--json');
    assert.equal(res.code, 0);
    const out = JSON.parse(res.stdout);
    assert.deepEqual(out.trajectories.map((t: { mappedShare: number; steps: number }) => [t.steps, t.mappedShare]), [[6, 0.833], [6, 0.833]]);
  });

  it('an OpenHands V1 events.jsonl with an unknown event kind and both names of the terminal action', async () => {
    const ev = (kind: string, extra: Record<string, unknown>, s: number) => JSON.stringify({ id: `e${s}`, timestamp: `2026-03-01T10:00:${String(s).padStart(2, '0')}.000000`, kind, ...extra });
    const f = await write('events.jsonl', [
      ev('SystemPromptEvent', { source: 'agent', system_prompt: { type: 'text', text: 'You are OpenHands.' }, tools: [] }, 0),
      ev('MessageEvent', { source: 'user', llm_message: { role: 'user', content: [{ type: 'text', text: 'Run the tests.' }] } }, 1),
      ev('ActionEvent', { source: 'agent', thought: [{ type: 'text', text: 'Running.' }], action: { kind: 'ExecuteBashAction', command: 'pytest -q' }, tool_name: 'execute_bash', tool_call_id: 't1' }, 2),
      ev('ObservationEvent', { source: 'environment', action_id: 'e2', tool_call_id: 't1', tool_name: 'execute_bash', observation: { kind: 'ExecuteBashObservation', output: '3 passed', exit_code: 0 } }, 4),
      ev('HologramEvent', { source: 'environment', shimmer: true }, 5),
      ev('ActionEvent', { source: 'agent', thought: [], action: { kind: 'TerminalAction', command: 'cat results.txt' }, tool_name: 'terminal', tool_call_id: 't2' }, 6),
      ev('ObservationEvent', { source: 'environment', action_id: 'e6', tool_call_id: 't2', tool_name: 'terminal', observation: { kind: 'TerminalObservation', content: [{ type: 'text', text: `acc=0.9 AWS ${AWS}` }], exit_code: 0 } }, 7),
      ev('ActionEvent', { source: 'agent', thought: [], action: { kind: 'FinishAction', message: 'Done: 3 passed.' }, tool_name: 'finish', tool_call_id: 't3' }, 8),
    ].join('\n') + '\n');
    const res = await cli('traj', 'import', f, '--json');
    assert.equal(res.code, 0, res.stderr);
    const out = JSON.parse(res.stdout);
    assert.equal(out.trajectories.length, 1);
    const t = out.trajectories[0];
    assert.equal(t.format, 'openhands-v1');
    assert.equal(t.steps, 5, 'system, user, 2 terminal actions with their observations, finish');
    assert.equal(t.mappedShare, 0.875, '7 of 8 events (the unknown kind is not mapped)');
    assert.equal(t.redactions, 1);
    assert.ok(t.problems.some((p: { message: string }) => /unknown event kind "HologramEvent"/.test(p.message)));
    const { ts } = await load(f);
    const steps = ts[0].steps;
    assert.deepEqual(steps.map((s) => s.action?.command ?? null), [null, null, 'pytest -q', 'cat results.txt', null]);
    assert.equal(steps[2].observation?.text, '3 passed');
    assert.equal(steps[2].observation?.exitCode, 0);
    assert.equal(steps[2].time?.durationMs, 2000);
    assert.equal(steps[4].phase, 'conclusion');
  });

  it('SWE-agent 0.x (state as a JSON string), a history-only .traj, OpenHands V0 legacy pairs, ATIF and mini-swe-agent built from their schemas', async () => {
    const swe0 = await write('x.traj', JSON.stringify({
      environment: 'swe_main',
      trajectory: [
        { action: 'open src/a.py\n', observation: '[File: src/a.py]', response: 'Open it.', thought: 'Open it.', state: '{"open_file": "src/a.py", "working_dir": "/repo"}' },
        { action: 'python -m pytest\n', observation: '1 passed', response: 'Test.', thought: 'Test.', state: '{"open_file": "src/a.py"}' },
      ],
      history: [{ role: 'system', content: 'sys' }], info: { submission: 'diff --git a/src/a.py b/src/a.py\n', exit_status: 'submitted' },
    }));
    const hist = await write('h.traj', JSON.stringify({ environment: 'main', info: { exit_status: 'autosubmit' }, history: [
      { role: 'system', content: 'sys', agent: 'main' }, { role: 'user', content: 'issue', agent: 'main' },
      { role: 'assistant', content: 'look', thought: 'look', action: 'ls', agent: 'main' }, { role: 'tool', content: 'a.py', agent: 'main' },
      { role: 'assistant', content: 'done', thought: 'done', action: 'submit', agent: 'main' }, { role: 'tool', content: 'submitted', agent: 'main' },
    ] }));
    const pairs = await write('legacy.json', JSON.stringify([
      [{ action: 'run', args: { command: 'ls', thought: 'list' }, timestamp: '2024-05-01T10:00:00' }, { observation: 'run', content: 'a.py', extras: { exit_code: 0 } }],
      [{ action: 'write', args: { path: 'b.py', content: 'print(1)' }, timestamp: '2024-05-01T10:00:05' }, { observation: 'write', content: '' }],
    ]));
    const atif = await write('t.json', JSON.stringify({ schema_version: 'ATIF-v1.2', session_id: 's-9', agent: { name: 'x' }, steps: [
      { step_id: 1, timestamp: '2026-01-01T00:00:00Z', source: 'user', message: 'hi' },
      { step_id: 2, timestamp: '2026-01-01T00:00:03Z', source: 'agent', message: 'ok', model_name: 'm', tool_calls: [{ tool_call_id: 'c', function_name: 'bash', arguments: { command: 'make' } }], observation: { results: [{ source_call_id: 'c', content: 'built' }] }, metrics: { prompt_tokens: 5, completion_tokens: 2, cost_usd: 0.01 } },
    ] }));
    const mini = await write('m.traj.json', JSON.stringify({ trajectory_format: 'mini-swe-agent-1', instance_id: 'r__r-1', info: { exit_status: 'Submitted', submission: 'diff' }, messages: [
      { role: 'system', content: 's' }, { role: 'user', content: 'task' },
      { role: 'assistant', content: 'THOUGHT: x\n\n```bash\nsed -i s/a/b/ f.py\n```' }, { role: 'user', content: '<returncode>0</returncode>' },
    ] }));
    const { ts, r } = await load(swe0, hist, pairs, atif, mini);
    assert.deepEqual(r.files.map((f) => f.format), ['swe-agent', 'swe-agent', 'openhands-v0', 'atif', 'mini-swe-agent']);
    // swe0: the system prompt from `history`, two actions, the submission; mini: system, task, one action, the submission
    assert.deepEqual(ts.map((t) => t.steps.length), [4, 4, 2, 2, 4]);
    assert.equal(ts[0].steps[0].purpose, 'system-prompt');
    assert.deepEqual(ts[0].steps[1].extra?.state, { open_file: 'src/a.py', working_dir: '/repo' });
    assert.equal(ts[0].patch, 'diff --git a/src/a.py b/src/a.py\n');
    assert.equal(ts[0].steps[2].phase, 'execution');
    assert.deepEqual([ts[0].steps[3].purpose, ts[0].steps[3].kind, ts[0].steps[3].source.pointer], ['submission', 'edit', '/info/submission']);
    assert.deepEqual(ts[1].steps.map((s) => s.purpose ?? null), ['system-prompt', 'task', null, null]);
    assert.equal(ts[4].steps[1].purpose, 'task');
    assert.equal(ts[4].steps[3].purpose, 'submission');
    assert.deepEqual(ts[1].steps.map((s) => s.observation?.text ?? null), [null, null, 'a.py', 'submitted']);
    assert.equal(ts[2].steps[0].observation?.exitCode, 0);
    assert.deepEqual(ts[2].steps[1].edits, [{ path: 'b.py', op: 'write', after: 'print(1)' }]);
    assert.equal(ts[3].steps[1].time?.relMs, 3000);
    assert.equal(ts[3].steps[1].model?.costUsd, 0.01);
    assert.equal(ts[4].steps[2].action?.command, 'sed -i s/a/b/ f.py');
    assert.equal(ts[4].steps[2].phase, 'implementation');
    const res = await cli('traj', 'import', swe0, hist, pairs, atif, mini, '--json');
    assert.equal(res.code, 0);
    assert.deepEqual(JSON.parse(res.stdout).trajectories.map((t: { mappedShare: number }) => t.mappedShare), [1, 1, 1, 1, 1]);
  });

  it('this project\'s own events.jsonl: exact phases from phase.changed, clock events without rows', async () => {
    const ev = (type: string, s: number, extra: Record<string, unknown> = {}) => JSON.stringify({ v: 1, at: T(s), type, ...extra });
    const sess = path.join(dir, 'sess1', 'private');
    await fsp.mkdir(sess, { recursive: true });
    const f = path.join(sess, 'events.jsonl');
    await fsp.writeFile(f, [
      ev('session.opened', 0, { client: 'vscode', restored: false, taskId: 'sample/toycal/0' }), ev('clock.started', 1, { workingMs: 0 }),
      ev('phase.changed', 2, { from: 'design', to: 'implementation' }), ev('file.edited', 3, { path: 'run.py', diff: '+x' }),
      ev('phase.changed', 4, { from: 'implementation', to: 'execution' }), ev('script.run', 5, { runId: 'r1', exitCode: 0, durationMs: 900, log: 'ok' }),
      ev('submitted', 6, { workingMs: 6000, answers: 'a', design: 'd', patch: 'p', patchBytes: 10, script: 's' }),
      '{"v":1,"at":"bad"',
    ].join('\n') + '\n');
    const { ts } = await load(f);
    assert.equal(ts[0].format, 'expbench-events');
    assert.equal(ts[0].id, 'sess1');
    assert.equal(ts[0].task, 'sample/toycal/0');
    assert.deepEqual(ts[0].steps.map((s) => s.phase), ['design', 'implementation', 'implementation', 'execution', 'execution', 'execution']);
    assert.equal(ts[0].steps.every((s) => s.phaseInferred === false), true);
    assert.deepEqual([ts[0].sourceEvents, ts[0].mappedEvents], [8, 6]);
    assert.ok(ts[0].problems.some((p) => p.line === 8 && /not JSON/.test(p.message)));
  });

  it('a planted API key, GitHub token, AWS key and bearer token are redacted everywhere they could be shown', async () => {
    const v0 = await write('gui.json', JSON.stringify([
      { id: 0, timestamp: '2025-01-01T00:00:00', source: 'environment', observation: 'agent_state_changed', content: '', extras: { agent_state: 'init', env: `OPENAI_API_KEY=${KEY}` } },
      { id: 1, timestamp: '2025-01-01T00:00:01', source: 'user', message: `use ${KEY}`, action: 'message', args: { content: `my key is ${KEY}`, api_key: 'plain-config-value-123' } },
      { id: 2, timestamp: '2025-01-01T00:00:02', source: 'agent', message: 'run', action: 'run', args: { command: `curl -H "Authorization: Bearer ${KEY}" https://x` } },
      { id: 3, timestamp: '2025-01-01T00:00:03', source: 'agent', cause: 2, observation: 'run', content: `token ${GHP} aws ${AWS}`, extras: { metadata: { exit_code: 0 } } },
    ]));
    const ev = await write('secret.eval', zipOf([{ name: 'samples/a_epoch_1.json', data: JSON.stringify(inspectSample('a', false)), method: 8 }, { name: 'header.json', data: JSON.stringify({ eval: { task: 't' } }), method: 8 }]));
    const { ts } = await load(v0, ev);
    const all = JSON.stringify(ts);
    for (const s of [KEY, GHP, AWS, 'plain-config-value-123', 'abcdefghijklmnop1234']) assert.equal(all.includes(s), false, `${s} leaked`);
    // the env dump in extras, the message content, args.api_key (by its key), the bearer token in the command and its arguments, the GitHub and AWS keys
    assert.equal(ts[0].redactions, 7);
    assert.ok(ts[1].redactions >= 4);
    for (const args of [['traj', 'show', v0], ['traj', 'show', v0, '--json'], ['traj', 'show', v0, '--step', '2'], ['traj', 'show', ev, '--json'], ['traj', 'import', v0, ev, '--json']]) {
      const res = await cli(...args);
      assert.equal(res.code, 0, res.stderr);
      for (const s of [KEY, GHP, AWS]) assert.equal((res.stdout + res.stderr).includes(s), false, `${s} shown by ${args.join(' ')}`);
      assert.match(res.stdout, /REDACTED|"redactions": [1-9]/);
    }
    assert.deepEqual(redactString('token = tokens[i]; max_tokens=100 OPENAI_API_KEY=None').count, 0, 'code and masked values are not secrets');
  });

  it('an Inspect .json above 32 MB is streamed sample by sample; cut short, it yields the samples before the cut and a problem', async () => {
    const doc = JSON.parse(await fsp.readFile(path.join(DATA, 'inspect-json/UKGovernmentBEIS__inspect_ai/2025-05-12T20-27-36-04-00_browser.json'), 'utf8'));
    const sample = JSON.stringify(doc.samples[0]);
    const n = Math.ceil((33 * 1024 * 1024) / sample.length);
    const head = JSON.stringify({ version: doc.version, status: doc.status, eval: doc.eval, plan: doc.plan });
    const text = `${head.slice(0, -1)},"samples":[${Array.from({ length: n }, (_, i) => sample.replace(/^\{"id":\s*\d+/, `{"id":"s${i}"`)).join(',')}]}`;
    const f = await write('big-log.json', text);
    const { ts, r } = await load(f);
    assert.deepEqual(r.files.map((x) => [x.format, x.unreadable, x.trajectories]), [['inspect-json', false, n]]);
    // 11 steps: the browser sample's 10 sandbox calls are folded into its 4 tool calls (counted in trajectory.shared.unit.test.ts)
    assert.deepEqual([ts[0].id, ts[n - 1].id, ts[0].task, ts[0].steps.length], ['s0', `s${n - 1}`, 'browser', 11]);
    assert.equal(ts[n - 1].steps[0].source.pointer, `/samples/${n - 1}/events/${ts[n - 1].steps[0].source.pointer!.split('/')[4]}`);
    const cut = await write('big-log-cut.json', text.slice(0, Math.floor(text.length * 0.5)));
    const c = await load(cut);
    assert.ok(c.ts.length > 0 && c.ts.length < n, `${c.ts.length} samples before the cut`);
    assert.ok(c.r.problems.some((p) => p.file === cut && p.pointer === `/samples/${c.ts.length}` && /JSON ends or breaks inside sample/.test(p.message)), JSON.stringify(c.r.problems));
  });

  it('bad input: truncated zip, truncated JSON line, lone surrogates, a 10 MB observation, missing timestamps, a cut patch, no known format', async () => {
    // truncated zip: the METR log (5 samples, header at the end) cut at 60 %
    const full = await fsp.readFile(path.join(DATA, 'inspect-eval/METR__inspect-action/2025-12-13T23-15-44+00-00_class-eval_XDtHXBaqEHGUBoFoinn2wS.eval'));
    const cutZip = await write('cut.eval', full.subarray(0, Math.floor(full.length * 0.6)));
    // truncated JSON line at the end of a V1 events.jsonl
    const good = (await fsp.readFile(path.join(DATA, 'openhands-v1/OpenHands__software-agent-sdk/events.jsonl'), 'utf8')).split('\n').filter(Boolean);
    const torn = await write('torn.jsonl', good.slice(0, 9).join('\n') + '\n' + good[9].slice(0, 200));
    // lone surrogate in an ATIF message; a 10 MB observation with no timestamps in an OpenHands V0 export
    const lone = await write('lone.json', '{"schema_version":"ATIF-v1.5","session_id":"s","steps":[{"step_id":1,"source":"user","message":"half \\ud800 of a pair"}]}');
    const big = 'x'.repeat(10 * 1024 * 1024);
    const huge = await write('huge.json', JSON.stringify([
      { id: 1, source: 'agent', action: 'run', args: { command: 'cat big.log' }, timestamp: '2025-01-01T00:00:00' },
      { id: 2, source: 'agent', cause: 1, observation: 'run', content: big, extras: { exit_code: 0 } },
      { id: 3, source: 'agent', action: 'message', args: { content: 'done' } },
    ]));
    // a harness record whose patch is cut in the middle of a hunk
    const patch = await write('7_task_index_0_iter_1_duration_1_eval_gen.patch', 'diff -urN a/x.py b/x.py\n--- a/x.py\t2025-01-01\n+++ b/x.py\t2025-01-01\n@@ -1,3 +1,4 @@\n line1\n+added\n');
    const gen = await write('7_task_index_0_iter_1_duration_1_eval_gen.json', JSON.stringify({ design: 'd', conclusion: 'c' }));
    const { ts, r } = await load(cutZip, torn, lone, huge, patch, gen);
    assert.deepEqual(r.files.map((f) => f.unreadable), [false, false, false, false, false, false]);
    const cut = ts.filter((t) => t.file === cutZip);
    assert.ok(cut.length >= 1 && cut.length < 5, `some samples of the cut archive are read (${cut.length})`);
    assert.ok(r.problems.some((p) => p.file === cutZip && p.severity === 'error' && /damaged zip archive/.test(p.message)));
    assert.ok(r.problems.some((p) => p.file === cutZip && /entry truncated/.test(p.message)));
    const tornT = ts.find((t) => t.file === torn)!;
    assert.equal(tornT.sourceEvents, 9);
    assert.ok(r.problems.some((p) => p.file === torn && p.line === 10 && /truncated last line/.test(p.message)));
    const loneT = ts.find((t) => t.file === lone)!;
    assert.equal(loneT.steps[0].text, 'half \uFFFD of a pair');
    assert.ok(loneT.problems.some((p) => /lone UTF-16 surrogates/.test(p.message)));
    const hugeT = ts.find((t) => t.file === huge)!;
    assert.equal(hugeT.steps[0].observation?.text.length, big.length, 'the full observation is kept');
    assert.ok(hugeT.problems.some((p) => /1 of 2 steps have no timestamp/.test(p.message)));
    const rec = ts.find((t) => t.format === 'exp-bench-harness')!;
    assert.equal(rec.task, 'unknown/7/0');
    assert.ok(rec.problems.some((p) => p.file === patch && p.line === 1 && /x\.py: hunk at line 4 is short of 2 old and 2 new line\(s\): the patch was cut or damaged and will not apply/.test(p.message)), JSON.stringify(rec.problems));

    // no known format: exit 2, the good files still imported
    const text = await write('notes.txt', 'just some notes\n');
    const other = await write('other.json', '{"hello": "world"}');
    const broken = await write('broken.json', '{"eval": {"task": ');
    const res = await cli('traj', 'import', text, other, broken, lone, '--json');
    assert.equal(res.code, 2);
    const out = JSON.parse(res.stdout);
    assert.equal(out.trajectories.length, 1);
    assert.deepEqual(out.files.map((f: { unreadable: boolean }) => f.unreadable), [true, true, true, false]);
    assert.match(out.problems.find((p: { file: string }) => p.file === other).message, /no known trajectory format: JSON of no known trajectory shape \(keys hello\)/);
    assert.match(out.problems.find((p: { file: string }) => p.file === broken).message, /not JSON/);
    const shown = await cli('traj', 'show', huge);
    assert.equal(shown.code, 0);
    assert.ok(shown.stdout.length < 5000, `the 10 MB observation is cut for display (${shown.stdout.length} characters shown)`);
    assert.match(shown.stdout, /\[10485460 more characters; --step N shows all\]/);
    const whole = await cli('traj', 'show', huge, '--step', '0', '--json');
    assert.equal(JSON.parse(whole.stdout).observation.text.length, big.length);
    const show = await cli('traj', 'show', text);
    assert.equal(show.code, 2);
    const step = await cli('traj', 'show', lone, '--step', '5');
    assert.equal(step.code, 1);
    assert.match(step.stderr, /no step 5 \(the trajectory has 1 step, 0\.\.0\)/);
  });
});
