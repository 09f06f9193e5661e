import * as assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { promises as fsp } from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import type Docker from 'dockerode';
import { collectOutcomes } from '../../src/core/interop/collect';
import { policyByName } from '../../src/core/metrics/policies';
import { buildTable } from '../../src/core/metrics/table';
import { importOwnEvents } from '../../src/core/trajectory/own';
import { TriageRowsMessageSchema } from '../../src/protocol/triage';
import { compareRuns, phaseTimes } from '../../src/core/viewer/compare';
import { loadRun } from '../../src/core/viewer/run';
import { filterRows, groupOutcomesByActor, sortRows, triageRuns, type TriageRow } from '../../src/core/viewer/triage';
import { runLabel } from '../../src/core/viewer/triageTable';
import { assertNoContainers, requireDocker } from '../harness/docker';
import { FakeOpenAIServer } from '../harness/fakeOpenAIServer';
import { ROOT, TASK_ID } from './agent.fixtures';
import { HUMAN_GIT_LOG, HUMAN_PHASE_MIN, makeAgentSession, makeHumanSession, MIN } from './triage.fixtures';

const CLI = path.join(ROOT, 'out', 'src', 'cli', 'main.js');
const ENV = Object.fromEntries(Object.entries(process.env).filter(([k]) => !/^(OPENAI_|EXPBENCH_JUDGE_|EXPBENCH_AGENT_|EXPBENCH_DATASETS$)/.test(k)));
function report(...args: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  return new Promise((resolve) => execFile(process.execPath, [CLI, 'report', ...args], { cwd: ROOT, env: ENV, maxBuffer: 64 * 1024 * 1024 },
    (err, stdout, stderr) => resolve({ code: err ? (typeof err.code === 'number' ? err.code : 1) : 0, stdout, stderr })));
}
const SWE_TRAJ = path.join(ROOT, '..', 'shared', 'data', 'trajectories', 'swe-agent', 'SWE-agent__SWE-agent', 'swe-agent__test-repo-i1.traj');

/**
 * Triage rows, `expbench report --runs / --by actor` and compare on real session folders of the
 * sample: a person's (service + driven clock, verified in the container, heuristic judge), the
 * built-in agent's (`expbench agent run` against the scripted server), and a person's not yet judged.
 */
describe('viewer triage, report rows and compare (real sessions of sample/toycal/0)', function () {
  this.timeout(600_000);
  let docker: Docker;
  let server: FakeOpenAIServer;
  let tmp: string;
  let human: string;
  let agent: string;
  let unjudged: string;
  let rows: TriageRow[];
  const policy = policyByName('paper-likely');
  const byRun = (run: string) => rows.find((r) => r.run === run)!;

  before(async function () {
    docker = await requireDocker(this);
    server = await new FakeOpenAIServer().start();
    tmp = await fsp.mkdtemp(path.join(os.tmpdir(), 'expbench-triage-'));
    const runs = path.join(tmp, 'runs');
    human = path.join(runs, 'human-1');
    agent = path.join(runs, 'agent-1');
    unjudged = path.join(runs, 'human-2');
    const cache = path.join(tmp, 'cache');
    await makeHumanSession(human, cache);
    await makeAgentSession(agent, cache, server);
    await makeHumanSession(unjudged, cache, { judged: false });
    rows = (await triageRuns([runs], policy)).rows;
  });
  after(async () => {
    await server?.close();
    if (docker) await assertNoContainers(docker, [path.basename(human ?? ''), path.basename(agent ?? '')]);
    if (tmp) await fsp.rm(tmp, { recursive: true, force: true }).catch(() => undefined);
  });

  it('one row per session: task, actor, agent, model, steps, tokens, cost, working time as recorded', async () => {
    assert.deepEqual(rows.map((r) => path.basename(r.run)).sort(), ['agent-1', 'human-1', 'human-2']);
    const h = byRun(human);
    const a = byRun(agent);
    assert.deepEqual([h.task, h.actor, h.agent, h.model, h.tokens, h.costUsd, h.source], [TASK_ID, 'human', 'human', null, 0, null, 'session']);
    assert.equal(h.steps, (await importOwnEvents(path.join(human, 'private', 'events.jsonl'))).steps.length);
    const minutes = Object.values(HUMAN_PHASE_MIN).reduce((s, m) => s + m, 0);
    assert.equal(h.durationMs, minutes * MIN, 'the working time at submission');
    assert.deepEqual([a.task, a.actor, a.agent, a.model], [TASK_ID, 'agent', 'expbench-agent', 'scripted-agent']);
    const calls = server.requests.length;
    assert.equal(calls, 7);
    assert.equal(a.tokens, calls * (100 + 20), 'the scripted server answers 100 prompt + 20 completion tokens per call');
    assert.equal(a.verified, true);
    assert.equal(a.E, true, 'the agent\'s script ran from a clean tree');
    const u = byRun(unjudged);
    assert.deepEqual([u.judge, u.D, u.E, u.excluded.D], [null, null, null, 'not judged']);
  });

  it('two runs of one task by one actor differ in the Run column (the session folder name); a file\'s row shows its name and, when not its name, the trajectory id', async () => {
    const h1 = byRun(human); const h2 = byRun(unjudged);
    assert.deepEqual([h1.task, h1.agent, h1.model, h1.actor], [h2.task, h2.agent, h2.model, h2.actor], 'the columns that were there before are the same');
    assert.deepEqual([runLabel(h1), runLabel(h2)], ['human-1', 'human-2']);
    assert.equal(new Set(rows.map(runLabel)).size, rows.length, 'every row a label of its own');
    assert.equal(runLabel({ run: '/x/logs/2025-05-12_browser.eval#sample-3', source: 'file', id: 'sample-3' }), '2025-05-12_browser.eval#sample-3');
    assert.equal(runLabel({ run: '/x/logs/swe-agent__test-repo-i1.traj', source: 'file', id: 'swe-agent__test-repo-i1' }), 'swe-agent__test-repo-i1.traj');
  });

  it('the monitor\'s git log flag: counted, zeroes D and I, and points at the step that ran it', async () => {
    const h = byRun(human);
    assert.ok(h.monitorFlags >= 1 && h.monitorFlagged, JSON.stringify(h));
    const t = await importOwnEvents(path.join(human, 'private', 'events.jsonl'));
    const gitStep = t.steps.find((s) => s.action?.command === HUMAN_GIT_LOG)!;
    assert.ok(gitStep, 'the git log step is in the log');
    assert.equal(h.firstFlaggedStep, gitStep.index);
    assert.deepEqual([h.D, h.I], [0, 0], 'paper-likely: a violation zeroes D and I');
    // the heuristic judge leaves the conclusion unjudged: C is then null with the metrics room's reason
    if (h.C === null) assert.match(h.excluded.C ?? '', /conclusion/);
    else assert.equal(h.C, false);
    assert.notEqual(h.AllE, true);
    assert.equal(byRun(agent).monitorFlags, 0);
    assert.equal(byRun(agent).firstFlaggedStep, null);
  });

  it('scores are expbench report\'s: the same D, I and correct flags per task, under both policies', async () => {
    for (const name of ['paper-likely', 'strict']) {
      const p = policyByName(name);
      const r = await report(path.join(tmp, 'runs'), '--policy', name, '--json', '--runs');
      assert.equal(r.code, 0, r.stderr);
      const out = JSON.parse(r.stdout);
      assert.equal(out.runs.length, 3);
      const triaged = (await triageRuns([path.join(tmp, 'runs')], p)).rows;
      assert.deepEqual(out.runs, JSON.parse(JSON.stringify(sortRows(triaged, 'task'))), 'the rows printed are triageRuns\' rows');
      const tasks = out.tasks as Array<{ D: number | null; I: number | null; correct: Record<string, boolean | null> }>;
      assert.equal(tasks.length, 2, 'the table counts the two judged sessions');
      for (const row of triaged.filter((x) => x.judge)) {
        const match = tasks.filter((t) => t.D === row.D && t.I === row.I && t.correct.E === row.E && t.correct.C === row.C && t.correct.AllE === row.AllE);
        assert.ok(match.length >= 1, `${name}: row ${row.run} matches a task of the report: ${JSON.stringify(row)} vs ${JSON.stringify(tasks)}`);
      }
    }
  });

  it('--by actor: one table row per actor (human, agent) with the report\'s intervals; text lists the runs under each actor', async () => {
    const r = await report(path.join(tmp, 'runs'), '--by', 'actor', '--json');
    assert.equal(r.code, 0, r.stderr);
    const out = JSON.parse(r.stdout);
    assert.deepEqual(out.rows.map((x: { group: string; tasks: number }) => [x.group, x.tasks]), [['agent', 1], ['human', 1]]);
    const { outcomes } = await collectOutcomes([path.join(tmp, 'runs')]);
    const expected = buildTable(await groupOutcomesByActor(outcomes), policy, {});
    assert.deepEqual(out.rows, JSON.parse(JSON.stringify(expected.rows)));
    assert.equal(out.rows.find((x: any) => x.group === 'agent').metrics.E.k, 1);
    const text = await report(path.join(tmp, 'runs'), '--by', 'actor', '--runs');
    assert.equal(text.code, 0, text.stderr);
    assert.match(text.stdout, /^human \(2 runs\):$/m);
    assert.match(text.stdout, /^agent \(1 run\):$/m);
    assert.match(text.stdout, /^agent\tllm|^agent\theuristic/m, 'the table has an agent row');
    // Sessions and EXP-Bench harness judge files together: the run list has a row for every run the table counts.
    const expb = path.join(ROOT, '..', 'shared', 'data', 'trajectories', 'exp-bench');
    const mixed = await report(path.join(tmp, 'runs'), expb, '--by', 'actor', '--runs', '--json');
    assert.equal(mixed.code, 0, mixed.stderr);
    const m = JSON.parse(mixed.stdout);
    const agentRows = m.rows.filter((x: { group: string }) => x.group === 'agent') as Array<{ kind: string; tasks: number }>;
    const agentTasks = agentRows.reduce((n, x) => n + x.tasks, 0);
    assert.ok(agentTasks >= 5, `the agent session and the harness files: ${agentTasks}`);
    for (const x of agentRows) {
      assert.equal(m.runs.filter((r: TriageRow) => r.actor === 'agent' && r.judge === x.kind).length, x.tasks, `one ${x.kind}-judged agent run per task of the table's agent ${x.kind} row`);
    }
    const mixedText = await report(path.join(tmp, 'runs'), expb, '--by', 'actor', '--runs');
    assert.match(mixedText.stdout, new RegExp(`^agent \\(${m.runs.filter((x: TriageRow) => x.actor === 'agent').length} runs\\):$`, 'm'));
    for (const x of agentRows) assert.match(mixedText.stdout, new RegExp(`^agent\\t${x.kind}\\t${x.tasks}\\t`, 'm'));
    assert.doesNotMatch(mixedText.stderr, /no run in/);
    const bad = await report(path.join(tmp, 'runs'), '--by', 'paper');
    assert.equal(bad.code, 2);
    assert.match(bad.stderr, /--by paper: expected folder or actor/);
  });

  it('the rows cross the triage webview\'s protocol as they are (zod schema of src/protocol/triage.ts)', () => {
    const m = TriageRowsMessageSchema.safeParse({ type: 'rows', policy: policy.name, rows, problems: [] });
    assert.ok(m.success, m.success ? '' : m.error.message);
    assert.deepEqual(m.data.rows, JSON.parse(JSON.stringify(rows)));
    assert.equal(TriageRowsMessageSchema.safeParse({ type: 'rows', policy: policy.name, rows: [{ ...rows[0], actor: 'robot' }], problems: [] }).success, false);
  });

  it('sort (nulls last both ways) and filter (text, actor, flagged only)', () => {
    assert.deepEqual(sortRows(rows, 'tokens', 'desc').map((r) => r.actor), ['agent', 'human', 'human']);
    const byD = sortRows(rows, 'D', 'desc');
    assert.equal(byD.at(-1)!.run, unjudged, 'null D last when descending');
    assert.equal(sortRows(rows, 'D', 'asc').at(-1)!.run, unjudged, 'null D last when ascending');
    assert.deepEqual(filterRows(rows, { flaggedOnly: true }).map((r) => r.run), [human]);
    assert.deepEqual(filterRows(rows, { text: 'SCRIPTED' }).map((r) => r.run), [agent]);
    assert.deepEqual(filterRows(rows, { actor: 'human' }).map((r) => r.run).sort(), [human, unjudged].sort());
    assert.deepEqual(filterRows(rows, { task: 'other/task' }), []);
  });

  it('compare a person and the agent: time per phase from the clock, steps by phase, verdicts per item side by side', async () => {
    const c = await compareRuns(human, agent, policy);
    assert.equal(c.task, TASK_ID);
    assert.deepEqual(c.phases.map((p) => p.phase), ['design', 'implementation', 'execution', 'conclusion']);
    assert.deepEqual(c.phases.map((p) => p.leftMs), Object.values(HUMAN_PHASE_MIN).map((m) => m * MIN), 'the person\'s working minutes per phase');
    const agentRun = await loadRun(agent);
    assert.deepEqual(c.phases.map((p) => p.rightMs), Object.values(phaseTimes(agentRun.trajectory.steps, agentRun.clock)!));
    assert.ok(c.phases.every((p) => p.left.every((s) => agentRun.trajectory.steps.length > 0 && typeof s.index === 'number')));
    assert.ok(c.phases.find((p) => p.phase === 'implementation')!.left.some((s) => s.label === `terminal: ${HUMAN_GIT_LOG}`));
    assert.ok(c.phases.find((p) => p.phase === 'execution')!.right.some((s) => s.label.startsWith('run_script')), JSON.stringify(c.phases[2].right));
    assert.equal(c.phases.reduce((n, p) => n + p.right.length, 0), agentRun.trajectory.steps.length, 'every step is in one block');
    const reqs = c.verdicts.filter((v) => v.item.startsWith('requirement:'));
    assert.ok(reqs.length > 0 && reqs.every((v) => v.left && v.right), JSON.stringify(c.verdicts));
    assert.ok(c.verdicts.some((v) => v.item === 'conclusion' && v.left && v.right));
    assert.equal(c.left.run, human);
    assert.equal(c.right.run, agent);
  });

  it('compare refuses runs of different tasks, naming both', async () => {
    await assert.rejects(compareRuns(human, SWE_TRAJ, policy), (e: Error) => /different tasks \(sample\/toycal\/0 and /.test(e.message));
  });

  it('a trajectory file is a row too (agent and model from the file), unscored and unflagged', async () => {
    const { rows: fileRows } = await triageRuns([SWE_TRAJ], policy);
    assert.equal(fileRows.length, 1);
    const f = fileRows[0];
    assert.equal(f.source, 'file');
    assert.equal(f.actor, 'agent');
    assert.equal(f.agent, 'swe-agent');
    assert.ok(f.steps > 0);
    assert.equal(f.judge, null);
    // an OpenHands eval output: one row per instance, the model from the run's metadata (its steps name none)
    const oh = (await triageRuns([path.join(ROOT, '..', 'shared', 'data', 'trajectories', 'openhands-v1', 'OpenHands__benchmarks', 'output.jsonl')], policy)).rows;
    assert.deepEqual(oh.map((r) => [r.agent, r.model, r.task]), [
      ['openhands', 'litellm_proxy/neulab/gpt-4o-2024-08-06', 'safety-misconfig'],
      ['openhands', 'litellm_proxy/neulab/gpt-4o-2024-08-06', 'safety-business-intelligence'],
    ]);
    assert.ok(oh.every((r) => r.run.includes('#')), 'two trajectories of one file: each row names its trajectory');
  });
});
