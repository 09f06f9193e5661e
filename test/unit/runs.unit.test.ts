import * as assert from 'node:assert/strict';
import { promises as fsp } from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import fc from 'fast-check';
import { conversationFromEvents } from '../../src/core/agent/history';
import { agentBrief } from '../../src/core/agent/prompt';
import { isExpBenchError } from '../../src/core/errors';
import {
  pinSpecPaths,
  createRunSet, foldRunSet, orchestrate, parseSpec, planRunSet, readRunSet, readSpec, RunSetLayout, RunSetLog, runSetStatus, selectTasks,
} from '../../src/core/runs';
import { wildcard } from '../../src/core/runs/wildcard';
import type { SessionEvent } from '../../src/core/session/events';
import { loadDatasets } from '../../src/core/tasks/loader';
import { buildRunSetFixture, FIXTURE_TASKS, nextReply, unitScript } from '../harness/runSetFixture';
import { cli, OFFLINE_ENV } from './cli.helpers';
import { boardHeader, formatBoard, pickRows, TerminalBoard } from '../../src/cli/runsBoard';
import { boardRows } from '../../src/core/runs/status';
import { applyRecord } from '../../src/core/runs/fold';
import { sampleTask } from './agent.fixtures';

const SPEC = (extra = '') => `{
  // the fixture paper's six tasks, one agent
  "version": 1,
  "name": "fixture six",
  "datasets": ["exp-bench"],
  "tasks": ["fixture2026/90001/*"],
  "agent": { "name": "scripted", "model": "scripted-agent", "maxSteps": 20 },
  "concurrency": 2,${extra}
}`;

describe('run sets (src/core/runs): spec, keys, state, planning; no engine needed', function () {
  this.timeout(120_000);
  let tmp: string;
  let dataset: string;
  const taskFile = () => path.join(dataset, 'tasks', 'fixture2026', '90001', '90001_complete_final.json');

  beforeEach(async () => {
    tmp = await fsp.mkdtemp(path.join(os.tmpdir(), 'expbench-runs-'));
    dataset = await buildRunSetFixture(tmp);
  });
  afterEach(async () => { await fsp.rm(tmp, { recursive: true, force: true }); });

  it('reads a JSONC spec (comments, trailing commas), makes its paths absolute, and names the field of a bad one', async () => {
    const file = path.join(tmp, 'spec.jsonc');
    await fsp.writeFile(file, SPEC());
    const { spec } = await readSpec(file);
    assert.deepEqual(spec.datasets, [dataset]);
    assert.equal(spec.agent?.model, 'scripted-agent');
    const bad = (text: string, re: RegExp) => assert.throws(() => parseSpec(text, file), (e: unknown) => isExpBenchError(e, 'BAD_INPUT') && re.test((e as Error).message) && (e as Error).message.startsWith(file));
    bad(SPEC(' "concurency": 3,'), /not a valid run-set spec: \(root\): Unrecognized key: "concurency"/);
    bad(SPEC(' "concurrency": 0,'), /\/concurrency: Too small/);
    bad(SPEC(' "import": {"from": ["x"]},'), /give exactly one of "agent"\/"agents" or "import"/);
    bad(SPEC().replace('"version": 1', '"version": 2'), /run-set spec version 2 is not known \(this tool reads version 1\)/);
    bad('{ "version": 1, ', /not JSON \(with comments\): .* at line 1/);
    bad(SPEC(' "agents": [{"model": "m"}, {"model": "m"}],').replace(/"agent": \{[^}]*\},/, ''), /two agents are named m/);
  });

  it('`runs start` records the caller\'s datasets as absolute folders: a relative $EXPBENCH_DATASETS is read from the caller\'s folder, not the unit\'s', async () => {
    const file = path.join(tmp, 'spec.jsonc');
    await fsp.writeFile(file, SPEC().replace('"datasets": ["exp-bench"],', ''));
    const { spec, text } = await readSpec(file);
    assert.equal(spec.datasets, undefined);
    const caller = path.join(tmp, 'caller');
    await fsp.mkdir(caller);
    const pinned = pinSpecPaths(spec, { EXPBENCH_DATASETS: path.join('..', 'exp-bench') }, caller);
    assert.equal(pinned.datasets?.[0], dataset);
    assert.ok(pinned.datasets!.every((d) => path.isAbsolute(d)), pinned.datasets!.join(', '));
    assert.deepEqual(pinSpecPaths({ ...spec, datasets: ['/x'] }, { EXPBENCH_DATASETS: 'y' }, caller).datasets, ['/x'], 'the spec\'s own datasets win');
    const dir = path.join(tmp, 'run');
    await createRunSet(dir, pinned, text, file, (await planRunSet(pinned, { env: {} })).units);
    const created = JSON.parse((await fsp.readFile(path.join(dir, 'runset.jsonl'), 'utf8')).split('\n')[0]) as { type: string; spec: { datasets: string[] } };
    assert.equal(created.type, 'runset.created');
    assert.equal(created.spec.datasets[0], dataset, 'the run set holds the absolute folder, whatever folder a unit runs in');
  });

  it('a spec that plans nothing says, per import input, which files it looked at and what each lacked', async () => {
    const empty = path.join(tmp, 'only-readme');
    const odd = path.join(tmp, 'odd');
    await fsp.mkdir(empty); await fsp.mkdir(odd);
    await fsp.writeFile(path.join(empty, 'README.md'), '# not a run\n');
    await fsp.writeFile(path.join(odd, 'notes.json'), '{"hello": 1}');
    const file = path.join(tmp, 'spec.jsonc');
    await fsp.writeFile(file, SPEC().replace(/"agent": \{[^}]*\},/, `"import": {"from": ["only-readme", "odd"]},`));
    const r = await cli(['runs', 'start', file, '--out', path.join(tmp, 'run')], { env: OFFLINE_ENV });
    assert.equal(r.code, 1, r.stderr);
    assert.match(r.stderr, /not imported: only-readme: no file to read \(looked for \*\.json/);
    assert.match(r.stderr, /not imported: odd: looked at 1 file\(s\), none is a run:\n {4}notes\.json: no known trajectory format/);
    assert.match(r.stderr, /the spec plans no unit: no input gave a run/);
  });

  it('the board header counts units in the singular for one and in the plural otherwise, and names the failed state `failed`', () => {
    const counts = { done: 0, running: 0, pending: 0, failed: 1, cancelled: 0 } as never;
    assert.match(boardHeader({ name: 'n', id: 'i', counts, units: [{}] as never }), /^run set n \(i\): 1 unit: 0 done, 0 running, 0 pending, 1 failed, 0 cancelled$/);
    assert.match(boardHeader({ name: 'n', id: 'i', counts, units: [{}, {}] as never }), /: 2 units: /);
  });

  it('selects tasks by id, glob and split file (in order, each once); a selector that matches nothing is an error naming it', async () => {
    const loaded = await loadDatasets([dataset]);
    const split = path.join(tmp, 'split.txt');
    await fsp.writeFile(split, '# dev split\nfixture2026/90001/4\nfixture2026/*/1  # a glob\n');
    const got = await selectTasks({ tasks: ['fixture2026/90001/3', { file: split }, 'fixture*/9000?/*'.replace('?', '1')] }, loaded);
    assert.deepEqual(got.map((t) => t.id), ['fixture2026/90001/3', 'fixture2026/90001/4', 'fixture2026/90001/1', 'fixture2026/90001/0', 'fixture2026/90001/2', 'fixture2026/90001/5']);
    await assert.rejects(selectTasks({ tasks: ['iclr2024/*/*'] }, loaded), (e: unknown) => isExpBenchError(e, 'BAD_INPUT') && /iclr2024\/\*\/\* \(the spec\): matches no task/.test((e as Error).message));
    await fsp.writeFile(split, 'fixture2026/90001\n');
    await assert.rejects(selectTasks({ tasks: [{ file: split }] }, loaded), (e: unknown) => /fixture2026\/90001 \(.*split\.txt:1\): a task selector is <conference>\/<paperId>\/<index>/.test((e as Error).message));
  });

  it('wildcard matches as a regular expression of the same pattern would (property test), in bounded steps', () => {
    const alpha = fc.constantFrom('a', 'b', '*');
    fc.assert(fc.property(fc.array(alpha, { maxLength: 8 }), fc.array(fc.constantFrom('a', 'b'), { maxLength: 10 }), (p, t) => {
      const pattern = p.join('');
      const re = new RegExp(`^${pattern.replace(/\*+/g, '.*')}$`);
      return wildcard(pattern, t.join('')) === re.test(t.join(''));
    }), { numRuns: 2000 });
    const long = 'a'.repeat(5000);
    const t0 = performance.now();
    assert.equal(wildcard('*a*a*a*a*a*b', long), false);
    assert.ok(performance.now() - t0 < 2000, 'no exponential backtracking');
  });

  it('keys units by content: the same spec gives the same keys; an edit of one task changes only its units; resources come from the curation file', async () => {
    const spec = parseSpec(SPEC(' "attempts": 2,'), path.join(tmp, 'spec.jsonc'));
    const a = await planRunSet(spec);
    assert.equal(a.units.length, 12);
    assert.deepEqual(a.units.slice(0, 2).map((u) => u.name), ['fixture2026-90001-0.scripted.a1', 'fixture2026-90001-0.scripted.a2']);
    assert.notEqual(a.units[0].unit, a.units[1].unit, 'attempts are distinct units');
    assert.deepEqual(a.units[0].resources, { cpus: 1, memoryMiB: 2048, gpus: 0, timeSeconds: 60 * 60 + 3600 + 600 });
    const b = await planRunSet(spec);
    assert.deepEqual(b.units.map((u) => u.unit), a.units.map((u) => u.unit));
    const doc = JSON.parse(await fsp.readFile(taskFile(), 'utf8'));
    doc.questions[3].expected_outcome += ' (edited)';
    await fsp.writeFile(taskFile(), JSON.stringify(doc));
    await fsp.writeFile(path.join(path.dirname(taskFile()), 'curation.jsonc'), '{ "version": 1, "environment": { "gpus": 1, "limits": { "cpus": 2, "memoryMiB": 4096, "timeSeconds": 120 } } }');
    const c = await planRunSet(spec);
    const changed = c.units.filter((u, i) => u.keyParts.task !== a.units[i].keyParts.task).map((u) => u.task);
    assert.deepEqual([...new Set(changed)], ['fixture2026/90001/3'], 'only the edited task\'s version changed');
    assert.deepEqual(c.units[0].resources, { cpus: 2, memoryMiB: 4096, gpus: 1, timeSeconds: 3600 + 120 + 600 });
    assert.equal(c.units[0].keyParts.pin, a.units[0].keyParts.pin, 'a curation file without a repository keeps the pin');
  });

  it('`runs start SPEC2 --out DIR` on an existing run set exits non-zero naming the units whose key changed, and runs nothing', async () => {
    const file = path.join(tmp, 'spec.jsonc');
    await fsp.writeFile(file, SPEC());
    const { spec, text } = await readSpec(file);
    const dir = path.join(tmp, 'run');
    const made = await createRunSet(dir, spec, text, file, (await planRunSet(spec)).units);
    assert.equal(made.created, true);
    const before = await fsp.readFile(path.join(dir, 'runset.jsonl'), 'utf8');
    const spec2 = path.join(tmp, 'spec2.jsonc');
    await fsp.writeFile(spec2, SPEC().replace('"maxSteps": 20', '"maxSteps": 21'));
    const r = await cli(['runs', 'start', spec2, '--out', dir], { env: OFFLINE_ENV });
    assert.equal(r.code, 1, r.stderr);
    assert.match(r.stderr, /the spec changes 6 unit\(s\) of this run set, so it is refused and nothing runs/);
    for (const t of FIXTURE_TASKS) assert.match(r.stderr, new RegExp(`\\n  ${t} scripted a1: the actor changed`));
    assert.equal(await fsp.readFile(path.join(dir, 'runset.jsonl'), 'utf8'), before, 'the state is untouched');
    // One task edited, one task dropped: each named with what changed.
    const doc = JSON.parse(await fsp.readFile(taskFile(), 'utf8'));
    doc.questions[2].method += ' Also report the NLL.';
    await fsp.writeFile(taskFile(), JSON.stringify(doc));
    await fsp.writeFile(spec2, SPEC().replace('"fixture2026/90001/*"', '"fixture2026/90001/0", "fixture2026/90001/2", "fixture2026/90001/3", "fixture2026/90001/4", "fixture2026/90001/5"'));
    const r2 = await cli(['runs', 'start', spec2, '--out', dir], { env: OFFLINE_ENV });
    assert.equal(r2.code, 1);
    assert.match(r2.stderr, /the spec changes 2 unit\(s\)/);
    assert.match(r2.stderr, /fixture2026\/90001\/1 scripted a1: no longer in the spec/);
    assert.match(r2.stderr, /fixture2026\/90001\/2 scripted a1: the task changed/);
    // `runs resume` sees the edited task file too.
    const r3 = await cli(['runs', 'resume', dir], { env: OFFLINE_ENV });
    assert.equal(r3.code, 1);
    assert.match(r3.stderr, /1 unit\(s\) of this run set changed since it was planned[\s\S]*fixture2026\/90001\/2 scripted a1: the task changed/);
  });

  it('a unit that can never fit is `waiting: needs 8 GPUs, 0 here`, not failed; the run ends with exit code 1 and the board says why', async () => {
    await fsp.writeFile(path.join(path.dirname(taskFile()), 'curation.jsonc'), '{ "version": 1, "environment": { "gpus": 8 } }');
    const file = path.join(tmp, 'spec.jsonc');
    await fsp.writeFile(file, SPEC().replace('"fixture2026/90001/*"', '"fixture2026/90001/0", "fixture2026/90001/1"'));
    const { spec, text } = await readSpec(file);
    const dir = path.join(tmp, 'run');
    await createRunSet(dir, spec, text, file, (await planRunSet(spec)).units);
    const r = await orchestrate({ dir, command: 'start', env: OFFLINE_ENV });
    assert.equal(r.exitCode, 1);
    assert.deepEqual(r.view.units.map((u) => [u.status, u.detail]), [['pending', 'waiting: needs 8 GPUs, 0 here'], ['pending', 'waiting: needs 8 GPUs, 0 here']]);
    assert.match(r.report, /fixture2026\/90001\/0 scripted a1: pending: waiting: needs 8 GPUs, 0 here/);
    const s = await runSetStatus(dir);
    assert.deepEqual(s.rows.map((x) => x.detail), ['waiting: needs 8 GPUs, 0 here', 'waiting: needs 8 GPUs, 0 here']);
    assert.equal(s.orchestrator, null, 'the orchestrator released the run set');
  });

  it('the state: appended whole lines, a torn last line skipped and isolated; the fold gives each unit its status and detail', async () => {
    const file = path.join(tmp, 'runset.jsonl');
    const log = new RunSetLog(file);
    /** A unit key (64 hex digits) per short name. */
    const key = (u: string) => u.replace('u', '').padStart(64, '0');
    const ref = (unit: string) => ({ kind: 'local', unit: key(unit), id: `${os.hostname()}/1/1`, logFile: '/x.log', submittedAt: '2026-01-01T00:00:00Z' });
    await log.append({ type: 'runset.created', id: 'rs-1', name: 'n', spec: {}, specFile: '/s', tool: '0' });
    const planned = (unit: string) => ({
      type: 'unit.planned' as const, unit: key(unit), name: `p-${unit}.a.a1`, task: `c/p/${unit}`, attempt: 1, actor: { kind: 'agent' as const, name: 'a', model: 'm' },
      resources: { cpus: 1, memoryMiB: 1, gpus: 0, timeSeconds: 60 }, keyParts: { task: 't', actor: 'a', image: 'i', pin: 'p' }, dir: `units/${unit}`, source: '/s', commit: null, image: 'i',
    });
    for (const u of ['u1', 'u2', 'u3', 'u4', 'u5']) await log.append(planned(u));
    await log.append({ type: 'unit.placed', unit: key('u1'), try: 1, ref: ref('u1') });
    await log.append({ type: 'unit.started', unit: key('u1'), try: 1, ref: ref('u1'), host: 'h' });
    await log.append({ type: 'unit.progress', unit: key('u1'), phase: 'execution', steps: 4, tokens: 480, costUsd: 0.01 });
    await log.append({ type: 'unit.placed', unit: key('u2'), try: 1, ref: ref('u2') });
    await log.append({ type: 'unit.retry', unit: key('u2'), try: 1, reason: 'model endpoint: 503', after: '2026-01-01T10:00:05.000Z' });
    await log.append({ type: 'unit.placed', unit: key('u3'), try: 1, ref: ref('u3') });
    await log.append({ type: 'unit.finished', unit: key('u3'), try: 1, status: 'done', message: 'submitted', outcome: { submitted: true, E: true, D: true, I: true, C: true, All: true, AllE: true } });
    await log.append({ type: 'unit.waiting', unit: key('u4'), reason: 'needs 8 GPUs, 0 here' });
    await log.append({ type: 'unit.cancelled', unit: key('u5') });
    await fsp.appendFile(file, `{"v":1,"at":"2026-01-01T00:00:00Z","type":"unit.finished","unit":"${key('u1')}"`); // a writer killed mid-line
    const read = await readRunSet(file);
    assert.equal(read!.invalid.length, 0, 'the torn line is not read yet (no newline)');
    await log.append({ type: 'unit.progress', unit: key('u1'), steps: 5 });
    const again = await readRunSet(file);
    assert.equal(again!.invalid.length, 1, 'the torn line became one invalid line of its own');
    const v = foldRunSet(again!.records)!;
    const st = Object.fromEntries(v.units.map((u) => [u.name.split('.')[0].slice(2), [u.status, u.detail]]));
    assert.deepEqual(st, {
      u1: ['running', 'on h'], u2: ['pending', 'retry 2 after 10:00:05: model endpoint: 503'], u3: ['done', 'submitted'],
      u4: ['pending', 'waiting: needs 8 GPUs, 0 here'], u5: ['cancelled', 'cancelled: `runs resume` continues it'],
    });
    assert.deepEqual(v.counts, { pending: 2, running: 1, done: 1, failed: 0, cancelled: 1 });
    assert.equal(v.byKey.get(key('u1'))!.tokens, 480);
    assert.equal(v.byKey.get(key('u1'))!.steps, 5, 'the record after the torn line is whole');
    await assert.rejects(log.append({ type: 'unit.placed', unit: key('u1'), try: 0, ref: ref('u1') } as never), (e: unknown) => isExpBenchError(e, 'BAD_INPUT') && /try: Too small/.test((e as Error).message));
    await assert.rejects(log.append({ ...planned('u9'), dir: 'units/../../etc' }), (e: unknown) => isExpBenchError(e, 'BAD_INPUT') && /a unit folder is units\/<name>/.test((e as Error).message), 'a unit folder outside units/ is refused');
  });

  it('the agent\'s conversation is rebuilt from an event log: turns, results, nudges, interrupted and cut calls', async () => {
    const task = await sampleTask();
    const at = '2026-01-01T00:00:00.000Z';
    const mc = (toolCalls?: string[], text?: string, error?: string) => ({ v: 1, at, type: 'agent.model_call', model: 'm', inputTokens: 10, outputTokens: 5, costUsd: 0.001, durationMs: 1, finishReason: error ? null : 'tool_calls', ...(toolCalls ? { toolCalls } : {}), ...(text ? { text } : {}), ...(error ? { error, retry: true } : {}) });
    const tc = (tool: string, callId: string, args: string, result: string, error?: string) => ({ v: 1, at, type: 'agent.tool_call', tool, callId, arguments: args, result, durationMs: 1, ...(error ? { error } : {}) });
    const events = [
      { v: 1, at, type: 'session.opened', client: 'agent', restored: false },
      mc(undefined, undefined, 'HTTP 503'), mc(['list_files'], 'Looking first.'), tc('list_files', 'c1', '{}', 'a.py'),
      mc(undefined, 'thinking aloud'),
      mc(['write_file'], undefined), tc('write_file', 'c2', '{"path":"x.py","content":"\n… [120 characters omitted] …\n', 'wrote x.py'),
      tc('shell', 'c9', '{"command":"ls"}', 'outside', undefined),
      mc(['shell', 'shell']), tc('shell', 'c3', '{"command":"python x.py"}', 'error: the shell failed (exit 143)', 'the shell failed (exit 143)'),
      { v: 1, at, type: 'note.added', text: 'agent stopped: cancelled: cancelled by the user' },
    ] as unknown as SessionEvent[];
    (events[7] as unknown as { client: string }).client = 'claude-code';
    const r = conversationFromEvents(events, agentBrief(task))!;
    assert.equal(r.steps, 4);
    assert.equal(r.toolCalls, 3, 'the outside agent\'s call is not the built-in agent\'s');
    assert.equal(r.tokens, 75, 'the failed attempt was paid too');
    assert.deepEqual(r.interrupted, ['shell', 'shell'], 'the call the stop interrupted and the one never started');
    assert.equal(r.cut, 1);
    const roles = r.messages.map((m) => m.role);
    assert.deepEqual(roles, ['system', 'user', 'assistant', 'tool', 'assistant', 'user', 'assistant', 'tool', 'assistant', 'tool', 'user']);
    const m = r.messages as Array<{ role: string; content: string | null; tool_calls?: Array<{ id: string; function: { name: string; arguments: string } }> }>;
    assert.equal(m[1].content, r.messages[1].content);
    assert.ok(!JSON.stringify(r.messages).includes(task.expectedOutcome), 'no ground truth');
    assert.equal(m[6].tool_calls![0].function.arguments, '{}', 'cut arguments are not sent as broken JSON');
    assert.match(m[7].content!, /^\[the arguments of this call were cut in the record/);
    assert.match(m[10].content!, /Your tool call\(s\) shell, shell did not finish/);
    assert.equal(conversationFromEvents(events.slice(0, 1), agentBrief(task)), undefined, 'nothing to resume');
  });

  it('the scripted model of the fixture asks again for a call whose result was an error (a stop interrupted it)', () => {
    const s = unitScript();
    assert.equal(s.every((r) => 'toolCalls' in r && r.toolCalls.length === 1), true, 'one tool call per reply');
    const call = (id: string) => ({ role: 'assistant', content: null, tool_calls: [{ id }] });
    assert.equal(nextReply([{ role: 'system' }, { role: 'user' }]), 0);
    assert.equal(nextReply([{ role: 'user' }, call('a'), { role: 'tool', tool_call_id: 'a', content: 'ok' } as never, call('b'), { role: 'tool', tool_call_id: 'b', content: 'error: x' } as never]), 1);
  });

  it('the terminal board: on a TTY one block updated in place (cursor up, clear), else one plain line per record worth telling', async () => {
    const file = path.join(tmp, 'spec.jsonc');
    await fsp.writeFile(file, SPEC());
    const { spec, text } = await readSpec(file);
    const dir = path.join(tmp, 'run');
    const made = await createRunSet(dir, spec, text, file, (await planRunSet(spec)).units);
    const view = made.view;
    const layout = new RunSetLayout(dir);
    const sink = (tty: boolean) => {
      let out = '';
      const stream = { write: (t: string) => { out += t; return true; }, columns: 120, rows: 30, isTTY: tty } as unknown as NodeJS.WriteStream;
      return { stream, text: () => out };
    };
    const u = view.units[0];
    const ref = { kind: 'local', unit: u.unit, id: `${os.hostname()}/1/1`, logFile: path.join(dir, 'x.log'), submittedAt: new Date().toISOString() };
    const recs = [
      { v: 1 as const, at: '2026-01-01T10:00:00.000Z', type: 'unit.placed' as const, unit: u.unit, try: 1, ref },
      { v: 1 as const, at: '2026-01-01T10:00:01.000Z', type: 'unit.started' as const, unit: u.unit, try: 1, ref, host: 'h' },
      { v: 1 as const, at: '2026-01-01T10:00:02.000Z', type: 'unit.progress' as const, unit: u.unit, phase: 'design', steps: 1 },
      { v: 1 as const, at: '2026-01-01T10:00:09.000Z', type: 'unit.finished' as const, unit: u.unit, try: 1, status: 'failed' as const, message: 'out of retries (2): model endpoint: 503', log: `exec/${u.name}/try-1.log` },
    ];
    const plain = sink(false);
    const board = new TerminalBoard(layout, plain.stream, false);
    for (const r of recs) { applyRecord(view, r); board.update(r, view); }
    board.close();
    assert.deepEqual(plain.text().split('\n').filter(Boolean), [
      '10:00:00 fixture2026/90001/0 scripted a1: placed (try 1)',
      '10:00:01 fixture2026/90001/0 scripted a1: running (try 1)',
      `10:00:09 fixture2026/90001/0 scripted a1: failed: out of retries (2): model endpoint: 503 (log exec/${u.name}/try-1.log)`,
    ], 'progress records print no line');
    const tty = sink(true);
    const live = new TerminalBoard(layout, tty.stream, true);
    live.update(recs[0], view);
    live.update(recs[1], view); // within 250 ms: drawn once more later, not now
    assert.equal(tty.text().split('\x1b[').length, 1, 'the first block has no cursor movement');
    live.close();
    const blocks = tty.text().split(/\x1b\[(\d+)F\x1b\[J/);
    assert.equal(blocks.length, 3, 'the second draw moved the cursor up over the first block and cleared it');
    assert.equal(Number(blocks[1]), blocks[0].trimEnd().split('\n').length, 'by exactly the first block\'s lines');
    assert.match(blocks[2], /^run set fixture six \(.*\): 6 units: 0 done, 0 running, 5 pending, 1 failed, 0 cancelled/);
    assert.match(blocks[2], /fixture2026\/90001\/0 +scripted a1 +failed ⚠ +1 design +0:08\/2:10:00 /);
    // Many units on a small terminal: the running and failed first, then a line saying how many more.
    const rows = boardRows(view, layout);
    const picked = pickRows([...rows, ...rows, ...rows], 6);
    assert.equal(picked.length, 6);
    assert.equal(picked[0].status, 'failed');
    assert.match(formatBoard('h', picked), /13 more .*`runs status DIR` lists every unit/);
  });

  it('status of the run set reads the state only (no session is opened): rows with elapsed vs limit and the orchestrator named', async () => {
    const file = path.join(tmp, 'spec.jsonc');
    await fsp.writeFile(file, SPEC());
    const { spec, text } = await readSpec(file);
    const dir = path.join(tmp, 'run');
    await createRunSet(dir, spec, text, file, (await planRunSet(spec)).units);
    const s = await runSetStatus(dir);
    assert.equal(s.rows.length, 6);
    assert.deepEqual(s.rows.map((r) => [r.status, r.limitMs, r.elapsedMs]), Array(6).fill(['pending', (3600 + 3600 + 600) * 1000, null]));
    assert.equal(s.rows[0].session, path.join(new RunSetLayout(dir).units, 'fixture2026-90001-0.scripted.a1'));
    await assert.rejects(runSetStatus(tmp), (e: unknown) => isExpBenchError(e, 'BAD_INPUT') && /not a run set/.test((e as Error).message));
    const r = await cli(['runs', 'status', dir, '--json'], { env: OFFLINE_ENV });
    assert.equal(r.code, 0, r.stderr);
    assert.equal(JSON.parse(r.stdout).rows.length, 6);
  });
});
