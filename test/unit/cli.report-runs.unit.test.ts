import * as assert from 'node:assert/strict';
import { promises as fsp } from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { collectOutcomes } from '../../src/core/interop/collect';
import { policyByName } from '../../src/core/metrics/policies';
import { scoreTask } from '../../src/core/metrics/scores';
import { harnessJudgeRows } from '../../src/core/viewer/triage';
import { cli, ROOT } from './cli.helpers';

const DATA = path.join(ROOT, '..', 'shared', 'data', 'trajectories');
const EXPB = path.join(DATA, 'exp-bench');
const EVAL = path.join(DATA, 'inspect-eval', 'METR__inspect-action', '2025-12-13T23-15-44+00-00_class-eval_XDtHXBaqEHGUBoFoinn2wS.eval');

interface Run { run: string; task: string; agent: string; model: string | null; actor: string; D: number | null; I: number | null; E: boolean | null; C: boolean | null; AllE: boolean | null; steps: number; problems: string[] }

/**
 * `expbench report --runs` lists every run its table counts (EXP-Bench harness judge files too) and
 * marks runs of a damaged file; `curate lint` counts a JSON file that is no task file; counts in
 * CLI output take the right number (src/core/util/plural.ts). All through `node dist/cli.js`.
 */
describe('cli: report --runs agrees with the table; damaged runs; lint of a non-task file; plurals', function () {
  this.timeout(180_000);
  let tmp: string;
  before(async () => { tmp = await fsp.mkdtemp(path.join(os.tmpdir(), 'expbench-report-runs-')); });
  after(async () => { await fsp.rm(tmp, { recursive: true, force: true }); });

  it('harness judge files: one agent run per task the table counts, with the table\'s task-level scores', async () => {
    const r = await cli(['report', EXPB, '--runs', '--json']);
    assert.equal(r.code, 0, r.stderr);
    assert.doesNotMatch(r.stderr, /no run in/);
    const out = JSON.parse(r.stdout) as { runs: Run[]; rows: Array<{ group: string; tasks: number }>; tasks: Array<{ taskId: string; group: string; D: number | null; I: number | null; correct: Record<string, boolean | null> }> };
    const counted = out.rows.reduce((n, x) => n + x.tasks, 0);
    assert.ok(counted >= 4, `the table counts the harness files: ${JSON.stringify(out.rows)}`);
    assert.equal(out.runs.length, counted, 'one run row per task the table counts');
    for (const t of out.tasks) {
      const [agent, model] = t.group.split('/');
      const row = out.runs.filter((x) => x.task === t.taskId && x.agent === agent && x.model === model);
      assert.equal(row.length, 1, `one row for ${t.group} ${t.taskId}`);
      assert.deepEqual([row[0].actor, row[0].D, row[0].I, row[0].E, row[0].C, row[0].AllE], ['agent', t.D, t.I, t.correct.E, t.correct.C, t.correct.AllE]);
      assert.ok(row[0].steps > 0, 'the harness trajectory beside the judge file gives the steps');
      assert.match(row[0].run, /_eval_gen\.json$/, 'the run opens as the harness trajectory');
    }
    // The core function: the same scores as scoreTask on collectOutcomes' outcomes, under strict too.
    const strict = policyByName('strict');
    const { outcomes } = await collectOutcomes([EXPB]);
    const rows = await harnessJudgeRows(outcomes, strict);
    assert.equal(rows.length, outcomes.length);
    for (const [i, o] of outcomes.entries()) assert.deepEqual([rows[i].D, rows[i].I, rows[i].C], [scoreTask(o, strict).D, scoreTask(o, strict).I, scoreTask(o, strict).correct.C]);
    const text = await cli(['report', EXPB, '--runs']);
    assert.match(text.stdout, new RegExp(`^runs \\(${counted}\\):$`, 'm'));
    const actor = await cli(['report', EXPB, '--runs', '--by', 'actor']);
    assert.equal(actor.code, 0, actor.stderr);
    assert.match(actor.stdout, new RegExp(`^agent \\(${counted} runs\\):$`, 'm'));
    assert.match(actor.stdout, new RegExp(`^agent\\tllm\\t${counted}\\t`, 'm'), 'the table\'s agent row counts as many');
  });

  it('a truncated Inspect .eval: its runs are marked damaged (text and --json), and no "not JSON" for the zip', async () => {
    const file = path.join(tmp, 't.eval');
    await fsp.writeFile(file, (await fsp.readFile(EVAL)).subarray(0, 100_000));
    const j = await cli(['report', file, '--runs', '--json']);
    assert.equal(j.code, 0, j.stderr);
    assert.doesNotMatch(j.stderr, /not JSON/);
    const out = JSON.parse(j.stdout) as { runs: Run[]; skipped: unknown[] };
    assert.ok(out.runs.length >= 1);
    for (const run of out.runs) assert.ok(run.problems.some((p) => /damaged zip archive/.test(p)), JSON.stringify(run.problems));
    assert.deepEqual(out.skipped, [], 'the file was read as a trajectory: not listed as skipped');
    const t = await cli(['report', file, '--runs']);
    assert.doesNotMatch(t.stderr, /not JSON/);
    for (const run of out.runs) assert.match(t.stdout, new RegExp(`^damaged ${run.run.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}: damaged zip archive`, 'm'));
    // A whole .eval is not damaged; without --runs the report says it is not a judge file, not "not JSON".
    const whole = await cli(['report', EVAL, '--runs', '--json']);
    assert.equal(whole.code, 0, whole.stderr);
    for (const run of (JSON.parse(whole.stdout) as { runs: Run[] }).runs) assert.deepEqual(run.problems, []);
    const plain = await cli(['report', file]);
    assert.equal(plain.code, 1);
    assert.match(plain.stderr, /skipped .*t\.eval: not a judge file/);
    assert.doesNotMatch(plain.stderr, /not JSON/);
  });

  it('curate lint of JSON that is no task file: an unreadable input naming it, exit 2; counts in the singular', async () => {
    const file = path.join(tmp, 'notraj.json');
    await fsp.writeFile(file, '{"hello":1}');
    const r = await cli(['curate', 'lint', file, '--no-sample']);
    assert.equal(r.code, 2, r.stdout + r.stderr);
    assert.ok((r.stdout + r.stderr).includes(`${file}: not a task file`), r.stdout + r.stderr);
    assert.match(r.stdout, /^0 tasks in 1 file, file rules only: 0 findings \(error: 0, warning: 0, info: 0\), 1 unreadable input$/m);
    const j = JSON.parse((await cli(['curate', 'lint', file, '--no-sample', '--json'])).stdout) as { unreadable: Array<{ input: string; message: string }> };
    assert.deepEqual(j.unreadable.map((u) => u.input), [file]);
    assert.match(j.unreadable[0].message, /"questions"/);
  });

  it('traj import says the counts --json gives: mapped of all source events, and how many carry no row by design', async () => {
    const ev = path.join(DATA, 'inspect-eval', 'METR__inspect-action', '2025-12-13T23-15-44+00-00_class-eval_XDtHXBaqEHGUBoFoinn2wS.eval');
    const human = await cli(['traj', 'import', ev]);
    const json = await cli(['traj', 'import', ev, '--json']);
    assert.equal(human.code, 0, human.stderr);
    const ts = (JSON.parse(json.stdout) as { trajectories: Array<{ id: string; sourceEvents: number; mappedEvents: number; skippedEvents: number }> }).trajectories;
    assert.ok(ts.length > 0);
    for (const t of ts) {
      const line = human.stdout.split('\n').find((l) => l.split('\t')[1] === t.id);
      assert.ok(line, `a line for ${t.id}`);
      assert.ok(line.includes(`\t${t.mappedEvents} of ${t.sourceEvents} event${t.sourceEvents === 1 ? '' : 's'} mapped${t.skippedEvents ? ` (${t.skippedEvents} carry no row by design)` : ''}\t`), line);
    }
    assert.ok(ts.some((t) => t.skippedEvents > 0 && t.mappedEvents < t.sourceEvents), 'the file has a trajectory with events left out by design');
    assert.doesNotMatch(human.stdout, /% of events mapped/);
  });

  it('traj import and tasks validate: "1 trajectory from 1 file", "1 task", "1 problem"', async () => {
    const gen = path.join(EXPB, 'Just-Curieous__Curie', 'azure-gpt-4o', '93022_task_index_0_iter_1_duration_0.67_eval_gen.json');
    const r = await cli(['traj', 'import', gen]);
    assert.equal(r.code, 0, r.stderr);
    assert.match(r.stderr, /^1 trajectory from 1 file, 0 unreadable/m);
    const dir = path.join(tmp, 'ds', 'conf2024', '1');
    await fsp.mkdir(dir, { recursive: true });
    await fsp.writeFile(path.join(dir, '1.json'), JSON.stringify({ questions: [{ question: 'q?' }] }));
    const v = await cli(['tasks', 'validate', path.join(tmp, 'ds'), '--no-sample']);
    assert.match(v.stdout, /^1 task \(type [^)]+\), \d+ problems? \(/m);
    assert.doesNotMatch(v.stdout, /\b1 (tasks|problems|unreadable files)\b/);
  });
});
