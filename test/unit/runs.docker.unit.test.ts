import * as assert from 'node:assert/strict';
import { spawn, type ChildProcess } from 'node:child_process';
import { createHash } from 'node:crypto';
import { existsSync, promises as fsp } from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import type Docker from 'dockerode';
import { SessionLayout } from '../../src/core/layout';
import { createRunSet, foldRunSet, orchestrate, planRunSet, readRunSet, readSpec, RunSetLayout, RunSetLog, type RunSetView } from '../../src/core/runs';
import { writeUnitResult } from '../../src/core/runs/result';
import { listRunSetContainers, LABEL_UNIT } from '../../src/core/sandbox';
import { readEvents } from '../../src/core/session/events';
import { readLatestRecord } from '../../src/core/verify/record';
import { readJudgeRecord } from '../../src/core/judge/session';
import { requireDocker } from '../harness/docker';
import type { FakeOpenAIServer } from '../harness/fakeOpenAIServer';
import { buildRunSetFixture, FIXTURE_TASKS, startUnitModel, unitScript, writeHarnessRecords } from '../harness/runSetFixture';
import { AGENT_RUNNER, forbiddenStrings, groundTruthSeen, ROOT } from './agent.fixtures';
import { CLI, cli, OFFLINE_ENV } from './cli.helpers';
import { findTask, loadDatasets } from '../../src/core/tasks/loader';
import { until as pollUntil } from '../harness/until';

/** Where the shared data lies (the folder beside the repository, or EXPBENCH_SHARED). */
const SHARED = process.env.EXPBENCH_SHARED ?? path.resolve(ROOT, '..', 'shared');
/** A clone of the paper repository of neurips2024/93022 (github.com/bjing2016/mdgen), made by hand; never committed. */
const MDGEN = process.env.EXPBENCH_MDGEN_CLONE;

const SPEC = (extra = '') => `{
  "version": 1, "name": "fixture six", "datasets": ["exp-bench"], "tasks": ["fixture2026/90001/*"],
  "agent": { "name": "scripted", "model": "scripted-agent", "maxSteps": 20 }, "concurrency": 2${extra}
}`;

async function state(dir: string): Promise<RunSetView | undefined> {
  const r = await readRunSet(new RunSetLayout(dir).state).catch(() => undefined);
  return r ? foldRunSet(r.records) : undefined;
}

/** The most units the state ever showed running at once, replaying its records in order (the cap the spec's concurrency sets). */
async function mostRunning(dir: string): Promise<number> {
  const { records } = (await readRunSet(new RunSetLayout(dir).state))!;
  let most = 0;
  for (let i = 1; i <= records.length; i++) most = Math.max(most, foldRunSet(records.slice(0, i))?.counts.running ?? 0);
  return most;
}

const until = <T>(what: string, f: () => Promise<T | undefined>, ms = 600_000): Promise<T> => pollUntil(what, f, ms, 100);

/** SHA-256 of every regular file under `dir` (paths relative), the workspace's git objects included. */
async function hashTree(dir: string): Promise<Record<string, string>> {
  const out: Record<string, string> = {};
  const walk = async (d: string) => {
    for (const e of await fsp.readdir(d, { withFileTypes: true })) {
      const p = path.join(d, e.name);
      if (e.isDirectory()) await walk(p);
      else if (e.isFile()) out[path.relative(dir, p)] = createHash('sha256').update(await fsp.readFile(p)).digest('hex');
    }
  };
  await walk(dir);
  return out;
}

describe('run sets on the engine (bundled CLI, real Docker, the scripted model)', function () {
  this.timeout(1_800_000);
  let tmp: string;
  let docker: Docker;
  let model: FakeOpenAIServer;
  let env: NodeJS.ProcessEnv;
  const started: ChildProcess[] = [];

  before(async function () {
    docker = await requireDocker(this);
    tmp = await fsp.mkdtemp(path.join(os.tmpdir(), 'expbench-runs-docker-'));
    await buildRunSetFixture(tmp);
  });
  beforeEach(async () => {
    // the first two tasks answer fast; the others slowly, so that they are mid-run when the first two are done
    model = await startUnitModel((task) => (task === FIXTURE_TASKS[0] || task === FIXTURE_TASKS[1] ? 100 : 700));
    env = { ...OFFLINE_ENV, EXPBENCH_AGENT_BASE_URL: model.baseURL, XDG_CACHE_HOME: path.join(tmp, 'cache') };
  });
  afterEach(async () => {
    for (const c of started.splice(0)) if (c.exitCode === null && c.signalCode === null) c.kill('SIGKILL');
    await model.close();
  });
  after(async () => { if (tmp) await fsp.rm(tmp, { recursive: true, force: true }).catch(() => undefined); });

  it('six tasks worked by the built-in agent; `runs start` killed with kill -9 when two are done; `runs resume` finishes the other four; the two untouched; E_clean on all six; no container left', async () => {
    await fsp.writeFile(path.join(tmp, 'spec.jsonc'), SPEC());
    const dir = path.join(tmp, 'six');
    const start = spawn(process.execPath, [CLI, 'runs', 'start', path.join(tmp, 'spec.jsonc'), '--out', dir], { env, stdio: ['ignore', 'pipe', 'pipe'] });
    started.push(start);
    let out = '';
    start.stdout!.on('data', (d: Buffer) => { out += d; });
    start.stderr!.on('data', (d: Buffer) => { out += d; });
    // While it runs: the units' containers carry the run set's labels.
    const labelled = await until('a labelled container of a running unit', async () => {
      const v = await state(dir);
      if (!v) return undefined;
      const cs = await listRunSetContainers(docker, v.id);
      return cs.find((c) => v.byKey.get(c.Labels[LABEL_UNIT])?.status === 'running') ? { v, cs } : undefined;
    });
    assert.ok(labelled.cs.every((c) => c.Labels['expbench.session'] && c.Labels['expbench.role']), 'the usual labels too');
    // Killed when two are done and another is under way (two of its model calls recorded), so that resume has a conversation to go on with.
    const two = await until('two units done and one mid-run', async () => {
      const v = await state(dir);
      if (!v || v.counts.done < 2) return undefined;
      for (const u of v.units.filter((x) => x.status === 'running')) {
        const { events } = await readEvents(new SessionLayout(new RunSetLayout(dir).session(u.dir)).events).catch(() => ({ events: [] as never[] }));
        if (events.filter((e: { type: string }) => e.type === 'agent.model_call').length >= 2) return v;
      }
      return undefined;
    });
    start.kill('SIGKILL');
    await new Promise((r) => start.once('exit', r));
    const done = two.units.filter((u) => u.status === 'done');
    assert.equal(done.length, 2, `killed when two were done: ${out}`);
    const layout = new RunSetLayout(dir);
    const before = Object.fromEntries(await Promise.all(done.map(async (u) => [u.name, await hashTree(layout.session(u.dir))] as const)));
    const killedAt = new Date().toISOString();
    const atKill = (await state(dir))!;
    const placedAtKill = atKill.units.filter((u) => u.status === 'running').map((u) => u.name);
    assert.ok(placedAtKill.length >= 1, `a unit was running when start was killed: ${JSON.stringify(atKill.counts)}`);

    const r = await cli(['runs', 'resume', dir], { env });
    assert.equal(r.code, 0, r.stdout + r.stderr);
    assert.match(r.stderr, /reaped what the previous run left: \d+ unit process\(es\) stopped/);
    const v = (await state(dir))!;
    assert.deepEqual(v.counts, { pending: 0, running: 0, done: 6, failed: 0, cancelled: 0 });
    // The finished units' records are untouched, byte for byte.
    for (const u of done) assert.deepEqual(await hashTree(layout.session(u.dir)), before[u.name], `${u.name} changed`);
    for (const u of done) assert.equal(v.byKey.get(u.unit)!.try, 1, 'never run again');
    // E_clean on all six, from the verification records.
    for (const u of v.units) {
      const rec = (await readLatestRecord(new SessionLayout(layout.session(u.dir)))).record;
      assert.equal(rec?.E_clean, true, `${u.name}: ${JSON.stringify(rec?.E_clean)}`);
      assert.ok(await readJudgeRecord(path.join(new SessionLayout(layout.session(u.dir)).judge, 'latest.json')), `${u.name} judged`);
    }
    // A unit caught mid-run went on from its recorded conversation: its earlier events stay, then the resume.
    const resumed = [];
    for (const name of placedAtKill) {
      const u = v.units.find((x) => x.name === name)!;
      const { events } = await readEvents(new SessionLayout(layout.session(u.dir)).events);
      const note = events.findIndex((e) => e.type === 'note.added' && e.text.startsWith('agent resumed from the event log'));
      if (note < 0) continue;
      const before = events.slice(0, note).filter((e) => e.type === 'agent.model_call' && e.at < killedAt).length;
      assert.ok(before >= 1, `${name}: the model calls before the kill are kept`);
      // Every scripted reply is asked for once; again only the one the stop interrupted (its tool errored, or was never recorded).
      const upTo = events.slice(0, note);
      const answered = upTo.filter((e) => e.type === 'agent.model_call' && !e.error).length;
      const recorded = upTo.filter((e) => e.type === 'agent.tool_call');
      const again = recorded.filter((e) => e.type === 'agent.tool_call' && e.error).length + (answered - recorded.length);
      assert.equal(events.filter((e) => e.type === 'agent.model_call' && !e.error).length, unitScript().length + again, `${name}: no reply asked for twice beyond the interrupted one`);
      resumed.push(name);
    }
    assert.ok(resumed.length >= 1, `a running unit resumed its conversation (${placedAtKill.join(', ')})`);
    assert.deepEqual(await listRunSetContainers(docker, v.id), [], 'no container of the run set is left');
    assert.equal(await mostRunning(dir), 2, 'never more units running than the concurrency (2), before the kill or after the resume');
    const task = findTask(await loadDatasets([path.join(tmp, 'exp-bench')]), FIXTURE_TASKS[0])!;
    assert.deepEqual(groundTruthSeen(model, forbiddenStrings({ ...task, maskedSource: [] })), [], 'no request carried the ground truth');
    assert.match(r.stdout, /scripted\theuristic\t6\t/, 'the report table has the six units');
  });

  it('the state is rebuilt on start from what the units left: a try whose result file the state lacks (its orchestrator died first) is recorded from it, and never run again', async () => {
    const file = path.join(tmp, 'spec-rebuild.jsonc');
    await fsp.writeFile(file, SPEC().replace('"fixture2026/90001/*"', '"fixture2026/90001/0"'));
    const { spec, text } = await readSpec(file);
    const dir = path.join(tmp, 'rebuild');
    await createRunSet(dir, spec, text, file, (await planRunSet(spec)).units);
    const layout = new RunSetLayout(dir);
    const [u] = foldRunSet((await readRunSet(layout.state))!.records)!.units;
    // The dead orchestrator placed the unit (a process now gone); the unit finished and wrote its result; the state never heard.
    const gone = spawn(process.execPath, ['-e', '0']);
    await new Promise((r) => gone.once('exit', r));
    await fsp.mkdir(layout.exec(u.name), { recursive: true });
    const ref = { kind: 'local', unit: u.unit, id: `${os.hostname()}/${gone.pid}/0`, logFile: layout.log(u.name, 1), submittedAt: new Date().toISOString() };
    await new RunSetLog(layout.state).append({ type: 'unit.placed', unit: u.unit, try: 1, ref });
    const outcome = { submitted: true, E: true, D: true, I: true, C: null, All: null, AllE: null };
    await writeUnitResult(layout.result(u.name, 1), { v: 1, unit: u.unit, try: 1, at: new Date().toISOString(), status: 'done', message: 'submitted; verify: E_clean pass', outcome });
    const r = await orchestrate({ dir, command: 'resume', env });
    assert.equal(r.exitCode, 0, r.report);
    const records = (await readRunSet(layout.state))!.records;
    const fin = records.filter((x) => x.type === 'unit.finished');
    assert.equal(fin.length, 1);
    assert.ok(fin[0].type === 'unit.finished' && fin[0].rebuilt === true && fin[0].try === 1 && fin[0].status === 'done', JSON.stringify(fin[0]));
    assert.deepEqual(fin[0].type === 'unit.finished' && fin[0].outcome, outcome, 'the outcome the unit wrote');
    assert.equal(records.filter((x) => x.type === 'unit.placed').length, 1, 'not placed again');
    assert.deepEqual([r.view.units[0].status, r.view.units[0].try], ['done', 1]);
  });

  it('harness errors are retried with backoff (a 5xx endpoint), a refused request is not, a unit that ran and failed is done ✖ and never retried', async () => {
    const script = unitScript();
    const calls = new Map<string, number>();
    model.handler = (req) => {
      const brief = JSON.stringify(req.body?.messages?.[1]?.content ?? '');
      const task = /fixture2026\/90001\/(\d)/.exec(brief)?.[1];
      const n = ((req.body?.messages ?? []) as Array<{ role: string }>).filter((m) => m.role === 'assistant').length;
      const k = (calls.get(task ?? '') ?? 0) + 1;
      calls.set(task ?? '', k);
      if (task === '0' && k <= 4) return { status: 503, message: 'overloaded' }; // more than the client's own retries (2)
      if (task === '1') return { status: 400, message: 'bad request: unknown model' };
      if (task === '2' && n === 3) return { toolCalls: [{ name: 'write_file', arguments: { path: 'reproduce_exp_bench.sh', content: '#!/usr/bin/env bash\nexit 3\n' } }] };
      return script[n] ?? { status: 500, message: 'over' };
    };
    await fsp.writeFile(path.join(tmp, 'spec-retry.jsonc'), SPEC(', "retries": {"max": 2, "backoffSeconds": 1}').replace('"fixture2026/90001/*"', '"fixture2026/90001/0", "fixture2026/90001/1", "fixture2026/90001/2"'));
    const dir = path.join(tmp, 'retry');
    const r = await cli(['runs', 'start', path.join(tmp, 'spec-retry.jsonc'), '--out', dir], { env });
    assert.equal(r.code, 1, 'a unit failed');
    const v = (await state(dir))!;
    const [u0, u1, u2] = v.units;
    assert.deepEqual([u0.status, u0.try, u0.retries], ['done', 2, 1], `${u0.detail}\n${r.stderr}`);
    assert.equal(u0.outcome?.E, true);
    const { events } = await readEvents(new SessionLayout(new RunSetLayout(dir).session(u0.dir)).events);
    assert.ok(events.some((e) => e.type === 'note.added' && /^agent stopped: model_error: .*503/.test(e.text)), 'the first try stopped on the 5xx');
    assert.equal(events.filter((e) => e.type === 'session.opened' && e.client === 'agent').length, 2, 'the retry went on in the same session');
    // The backoff: the retry waits backoffSeconds (1 s, doubling), and the second try is placed only after it.
    const recs = (await readRunSet(new RunSetLayout(dir).state))!.records;
    const retry = recs.find((x) => x.type === 'unit.retry' && x.unit === u0.unit);
    assert.ok(retry && retry.type === 'unit.retry', 'the 5xx was recorded as a retry');
    const waited = Date.parse(retry.after) - Date.parse(retry.at);
    assert.ok(waited >= 900 && waited <= 1500, `waits the first backoff (1 s): ${waited} ms`);
    const placed2 = recs.find((x) => x.type === 'unit.placed' && x.unit === u0.unit && x.try === 2);
    assert.ok(placed2 && Date.parse(placed2.at) >= Date.parse(retry.after), `try 2 placed at ${placed2?.at}, not before ${retry.after}`);
    assert.deepEqual([u1.status, u1.try, u1.retries], ['failed', 1, 0]);
    assert.match(u1.message ?? '', /the model endpoint refused the request: .*400/);
    assert.deepEqual([u2.status, u2.try, u2.retries], ['done', 1, 0]);
    assert.equal(u2.outcome?.E, false, 'the unit ran and failed: a result, not a harness error');
    assert.match(r.stdout, /fixture2026\/90001\/1 scripted a1: failed: the model endpoint refused/);
    assert.match(r.stdout, /\(log .*exec\/fixture2026-90001-1\.scripted\.a1\/try-1\.log\)/, 'the report says where the failure\'s log is');
    assert.deepEqual(await listRunSetContainers(docker, v.id), []);
  });

  it('an engine failure under a running unit (its work container killed) is a harness error: retried after the backoff, the unit goes on from its conversation in a new container and finishes E_clean', async () => {
    await fsp.writeFile(path.join(tmp, 'spec-engine.jsonc'), SPEC(', "retries": {"max": 2, "backoffSeconds": 1}').replace('"fixture2026/90001/*"', '"fixture2026/90001/3"'));
    const dir = path.join(tmp, 'engine');
    const start = spawn(process.execPath, [CLI, 'runs', 'start', path.join(tmp, 'spec-engine.jsonc'), '--out', dir], { env, stdio: ['ignore', 'pipe', 'pipe'] });
    started.push(start);
    let out = '';
    start.stdout!.on('data', (d: Buffer) => { out += d; });
    start.stderr!.on('data', (d: Buffer) => { out += d; });
    // Mid-run (two model calls recorded), the work container of the unit is killed, as an engine restart would.
    const [u, work] = await until('the unit mid-run in its work container', async () => {
      const v = await state(dir);
      const x = v?.units[0];
      if (!v || x?.status !== 'running') return undefined;
      const { events } = await readEvents(new SessionLayout(new RunSetLayout(dir).session(x.dir)).events).catch(() => ({ events: [] as never[] }));
      if (events.filter((e: { type: string }) => e.type === 'agent.model_call').length < 2) return undefined;
      const c = (await listRunSetContainers(docker, v.id, x.unit)).find((k) => k.Labels['expbench.role'] === 'work' && k.State === 'running');
      return c ? [x, c] as const : undefined;
    });
    await docker.getContainer(work.Id).kill();
    const code = await new Promise((r) => (start.exitCode !== null ? r(start.exitCode) : start.once('exit', r)));
    assert.equal(code, 0, out);
    const v = (await state(dir))!;
    const w = v.byKey.get(u.unit)!;
    assert.deepEqual([w.status, w.try, w.retries], ['done', 2, 1], `${w.detail}\n${out}`);
    const recs = (await readRunSet(new RunSetLayout(dir).state))!.records;
    const retry = recs.find((x) => x.type === 'unit.retry');
    assert.ok(retry && retry.type === 'unit.retry' && /the container or the engine failed under the agent|container/i.test(retry.reason), `retried as a harness error: ${JSON.stringify(retry)}`);
    const placed2 = recs.find((x) => x.type === 'unit.placed' && x.try === 2);
    assert.ok(placed2 && Date.parse(placed2.at) >= Date.parse(retry.after), `try 2 placed at ${placed2?.at}, after the backoff (${retry.after})`);
    assert.equal(w.outcome?.E, true, 'verified clean after the retry');
    const { events } = await readEvents(new SessionLayout(new RunSetLayout(dir).session(w.dir)).events);
    assert.ok(events.some((e) => e.type === 'note.added' && e.text.startsWith('agent resumed from the event log')), 'the second try went on from the recorded conversation');
    assert.equal(events.filter((e) => e.type === 'session.opened' && e.client === 'agent').length, 2, 'in the same session');
    assert.deepEqual(await listRunSetContainers(docker, v.id), [], 'the killed container and the new one are removed');
  });

  it('`runs cancel` stops a running run set\'s units (no container left), and `runs resume` finishes them', async () => {
    await fsp.writeFile(path.join(tmp, 'spec-cancel.jsonc'), SPEC().replace('"fixture2026/90001/*"', '"fixture2026/90001/0", "fixture2026/90001/1", "fixture2026/90001/2"'));
    const dir = path.join(tmp, 'cancel');
    const start = spawn(process.execPath, [CLI, 'runs', 'start', path.join(tmp, 'spec-cancel.jsonc'), '--out', dir], { env, stdio: 'ignore' });
    started.push(start);
    await until('two units running', async () => { const v = await state(dir); return v && v.counts.running >= 2 ? true : undefined; });
    const c = await cli(['runs', 'cancel', dir], { env });
    assert.equal(c.code, 0, c.stderr);
    assert.match(c.stdout, /^cancelled: the running orchestrator stopped its units \(3 units cancelled\)/);
    const code = await new Promise((r) => (start.exitCode !== null ? r(start.exitCode) : start.once('exit', r)));
    assert.equal(code, 1);
    const v = (await state(dir))!;
    assert.equal(v.cancelled, true);
    assert.deepEqual(v.counts, { pending: 0, running: 0, done: 0, failed: 0, cancelled: 3 });
    assert.deepEqual(await listRunSetContainers(docker, v.id), []);
    const r = await cli(['runs', 'resume', dir], { env });
    assert.equal(r.code, 0, r.stderr);
    assert.equal((await state(dir))!.counts.done, 3);
  });

  it('a harness output folder (the reference harness\'s files for the fixture paper) imported as a run set, re-verified and re-judged', async () => {
    // Task 2's record carries a broken script: the re-verification says E false.
    await writeHarnessRecords(path.join(tmp, 'harness'), [0, 1, 2], (i) => (i === 2 ? '#!/usr/bin/env bash\npython3 experiments/missing.py\n' : AGENT_RUNNER));
    await fsp.writeFile(path.join(tmp, 'spec-import.jsonc'), `{ "version": 1, "name": "harness outputs", "datasets": ["exp-bench"], "tasks": ["fixture2026/90001/*"],
      "import": { "from": ["harness/outputs"] }, "judge": true, "verify": true, "concurrency": 2 }`);
    const dir = path.join(tmp, 'imported');
    const r = await cli(['runs', 'start', path.join(tmp, 'spec-import.jsonc'), '--out', dir], { env });
    assert.equal(r.code, 0, r.stdout + r.stderr);
    const v = (await state(dir))!;
    assert.deepEqual(v.units.map((u) => [u.task, u.actor.name, u.status]), [0, 1, 2].map((i) => [`fixture2026/90001/${i}`, 'someagent-somemodel', 'done']));
    assert.deepEqual(v.units.map((u) => u.outcome?.E), [true, true, false], 're-verified in a clean container');
    for (const u of v.units) {
      const judge = await readJudgeRecord(path.join(new SessionLayout(new RunSetLayout(dir).session(u.dir)).judge, 'latest.json'));
      assert.equal(judge?.kind, 'heuristic', 're-judged by this project\'s judge (no endpoint: the heuristic pre-judge)');
      assert.equal(judge?.execution.exit, u.outcome?.E);
    }
    assert.match(r.stdout, /someagent-somemodel\theuristic\t3\t/);
    assert.deepEqual(await listRunSetContainers(docker, v.id), []);
  });

  it('the shared harness outputs (neurips2024/93022, Just-Curieous/Curie) imported as a run set, re-verified and re-judged', async function () {
    const harness = path.join(SHARED, 'data', 'trajectories', 'exp-bench', 'Just-Curieous__Curie');
    const dataset = path.join(SHARED, 'data', 'exp-bench');
    if (!MDGEN || !existsSync(path.join(MDGEN, '.git')) || !existsSync(harness)) {
      const why = `needs EXPBENCH_MDGEN_CLONE (a clone of github.com/bjing2016/mdgen) and the shared data at ${SHARED} (EXPBENCH_SHARED)`;
      if (this.test) this.test.title += ` (SKIPPED: ${why})`;
      this.skip();
    }
    const spec = path.join(tmp, 'spec-curie.jsonc');
    await fsp.writeFile(spec, JSON.stringify({ version: 1, name: 'curie', datasets: [dataset], tasks: ['neurips2024/93022/*'], source: MDGEN, import: { from: [harness] }, concurrency: 2 }));
    const dir = path.join(tmp, 'curie');
    const r = await cli(['runs', 'start', spec, '--out', dir], { env });
    assert.equal(r.code, 0, r.stdout + r.stderr);
    const v = (await state(dir))!;
    assert.deepEqual(v.units.map((u) => [u.task, u.actor.name, u.status]), [0, 1, 2, 3].map((i) => [`neurips2024/93022/${i}`, 'curie-azure-gpt-4o', 'done']));
    for (const u of v.units) {
      assert.equal(u.outcome?.E, false, 'the records hold no reproduce_exp_bench.sh: E false, from a clean run');
      assert.ok(u.actor.kind === 'import' && u.actor.files.some((f) => f.path.endsWith('main_93022_judge_config.json')), 'the run config is attached');
      const judge = await readJudgeRecord(path.join(new SessionLayout(new RunSetLayout(dir).session(u.dir)).judge, 'latest.json'));
      assert.equal(judge?.taskId, u.task);
    }
    assert.match(r.stdout, /curie-azure-gpt-4o\theuristic\t4\t/);
    assert.deepEqual(await listRunSetContainers(docker, v.id), []);
  });
});
