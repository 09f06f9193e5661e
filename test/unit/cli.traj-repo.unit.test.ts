/**
 * `expbench traj repo-at-step` and `expbench traj compare` (issue 33, item 9: the repository at a
 * step and the comparison of runs had no command line, VS Code only). Both go through the core the
 * VS Code commands use (src/core/flows/runAtStep.ts, src/core/viewer/repoAtStep.ts, compare.ts),
 * checked here against the core's own answer: the tree written equals the viewer's tree byte for
 * byte, the JSON comparison equals `compareRuns`. Through `node dist/cli.js`, real git.
 */
import * as assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { repoOf, resolveRun } from '../../src/core/flows/runAtStep';
import { policyByName } from '../../src/core/metrics/policies';
import { findTask, loadDatasets } from '../../src/core/tasks/loader';
import { compareRuns } from '../../src/core/viewer/compare';
import { listTree } from '../harness/faults';
import { cli, ROOT } from './cli.helpers';

describe('cli: traj repo-at-step and traj compare (the viewer\'s core)', function () {
  this.timeout(180_000);
  let base: string;
  let imported: string;
  const judged: string[] = [];
  const deps = { findTask: async (id: string) => findTask(await loadDatasets([path.join(ROOT, 'samples', 'exp-bench')]), id) };

  before(async function () {
    this.timeout(120_000);
    base = fs.mkdtempSync(path.join(os.tmpdir(), 'expbench-traj-repo-'));
    const cache = path.join(base, 'cache');
    // A harness record imported as a session: its steps create notes.txt, then rewrite it and add a script.
    const runs = path.join(base, 'runs');
    fs.mkdirSync(runs);
    const stem = path.join(runs, '424242_task_index_0_iter_1_duration_0.5_eval_');
    fs.writeFileSync(`${stem}gen.json`, JSON.stringify({ design: 'Independent: temperature.', conclusion: 'ECE drops to 0.03.' }));
    fs.writeFileSync(`${stem}gen.patch`, [
      'diff --git a/notes.txt b/notes.txt', 'new file mode 100644', '--- /dev/null', '+++ b/notes.txt', '@@ -0,0 +1,2 @@', '+first line', '+second line',
      'diff --git a/reproduce_exp_bench.sh b/reproduce_exp_bench.sh', 'new file mode 100644', '--- /dev/null', '+++ b/reproduce_exp_bench.sh', '@@ -0,0 +1,2 @@', '+#!/bin/bash', '+echo "ECE 0.03"', '',
    ].join('\n'));
    imported = path.join(base, 'imported');
    const r = await cli(['session', 'import', `${stem}gen.json`, `${stem}gen.patch`, '--task', 'sample/toycal/0', '--out', imported, '--cache', cache, '--no-verify', '--no-judge']);
    assert.equal(r.code, 0, r.stderr);
    // Two judged sessions of the task (heuristic judge), different conclusions.
    for (const [name, conclusion] of [['a', 'ECE drops from 0.032 to 0.012 with temperature 1.3.'], ['b', 'Temperature scaling changes nothing.']]) {
      const dir = path.join(base, name);
      assert.equal((await cli(['prepare', 'sample/toycal/0', '--out', dir, '--cache', cache])).code, 0);
      fs.writeFileSync(path.join(base, `${name}.json`), JSON.stringify({ design: ['Independent: calibration (values: T = 1, T fitted)', 'Dependent: ECE'], conclusion }));
      const s = await cli(['session', 'submit', dir, '--answers', path.join(base, `${name}.json`), '--no-verify']);
      assert.equal(s.code, 0, s.stderr);
      judged.push(dir);
    }
  });
  after(() => { if (base) fs.rmSync(base, { recursive: true, force: true }); });

  it('repo-at-step writes the tree of step N, byte for byte the viewer\'s, and says what changed', async () => {
    const run = await resolveRun(imported, deps);
    const edit = run.trajectory.steps.findIndex((s) => s.edits?.some((e) => e.path === 'notes.txt'));
    assert.ok(edit >= 0, 'the imported steps hold the edit');
    const out = path.join(base, 'tree');
    const r = await cli(['traj', 'repo-at-step', imported, '--step', String(edit), '--out', out, '--json']);
    assert.equal(r.code, 0, r.stderr);
    const j = JSON.parse(r.stdout) as { step: number; steps: number; changed: Array<{ path: string; status: string }>; approximate: boolean };
    assert.equal(j.step, edit);
    assert.equal(j.steps, run.trajectory.steps.length);
    assert.deepEqual(j.changed, [{ path: 'notes.txt', status: 'added' }]);
    const tree = await repoOf(run).at(edit);
    const files = listTree(tree.dir);
    assert.deepEqual(listTree(out), files);
    for (const f of files) if (fs.lstatSync(path.join(out, f)).isFile()) assert.ok(fs.readFileSync(path.join(out, f)).equals(fs.readFileSync(path.join(tree.dir, f))), f);
    assert.equal(fs.readFileSync(path.join(out, 'notes.txt'), 'utf8'), 'first line\nsecond line\n');
    // the prepared workspace before any step: no notes.txt
    const before = path.join(base, 'before');
    assert.equal((await cli(['traj', 'repo-at-step', imported, '--step', '-1', '--out', before])).code, 0);
    assert.ok(!fs.existsSync(path.join(before, 'notes.txt')));
  });

  it('repo-at-step --against M prints the diff between the two trees, paths relative to the repository', async () => {
    const last = (await resolveRun(imported, deps)).trajectory.steps.length - 1;
    const r = await cli(['traj', 'repo-at-step', imported, '--step', String(last), '--against', '-1', '--out', path.join(base, 'tree-last')]);
    assert.equal(r.code, 0, r.stderr);
    assert.match(r.stdout, /^diff --git a\/notes\.txt b\/notes\.txt$/m);
    assert.match(r.stdout, /^diff --git a\/reproduce_exp_bench\.sh b\/reproduce_exp_bench\.sh$/m);
    assert.doesNotMatch(r.stdout, /^diff --git a\/\S*(\.cache|repo-at-step)/m, 'no cache path in the diff');
  });

  it('repo-at-step refuses a step outside the run and an --out that is not empty, naming each; nothing written', async () => {
    const far = await cli(['traj', 'repo-at-step', imported, '--step', '999', '--out', path.join(base, 'never')]);
    assert.equal(far.code, 1);
    assert.match(far.stderr, /^expbench: step 999: the trajectory .* has steps 0\.\./m);
    assert.ok(!fs.existsSync(path.join(base, 'never')));
    const full = path.join(base, 'full');
    fs.mkdirSync(full);
    fs.writeFileSync(path.join(full, 'keep.txt'), 'kept');
    const busy = await cli(['traj', 'repo-at-step', imported, '--step', '0', '--out', full]);
    assert.equal(busy.code, 1);
    assert.match(busy.stderr, new RegExp(`^expbench: ${full.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}: is not empty`, 'm'));
    assert.deepEqual(fs.readdirSync(full), ['keep.txt']);
  });

  it('compare: the JSON is the core\'s comparison; the text names both runs, the phases and the verdicts that differ', async () => {
    const [a, b] = judged;
    const r = await cli(['traj', 'compare', a, b, '--json']);
    assert.equal(r.code, 0, r.stderr);
    const core = await compareRuns(a, b, policyByName('paper-likely'));
    assert.deepEqual(JSON.parse(r.stdout), JSON.parse(JSON.stringify(core)));
    assert.ok(core.verdicts.length > 0, 'judged runs have verdicts');
    const text = await cli(['traj', 'compare', a, b]);
    assert.equal(text.code, 0, text.stderr);
    assert.match(text.stdout, /^task sample\/toycal\/0, policy paper-likely$/m);
    assert.ok(text.stdout.includes(a) && text.stdout.includes(b));
    assert.match(text.stdout, /^design\t/m);
    const differ = core.verdicts.filter((v) => (v.left?.verdict ?? null) !== (v.right?.verdict ?? null)).length;
    assert.match(text.stdout, new RegExp(`^verdicts: ${core.verdicts.length} items?, ${differ} differ`, 'm'));
  });

  it('compare of runs of different tasks: exit 1 naming the second run; a run of the same task from an imported record compares', async () => {
    const same = await cli(['traj', 'compare', judged[0], imported]);
    assert.equal(same.code, 0, same.stderr);
    // a SWE-agent trajectory that names no task
    const swe = path.join(base, 'other.traj');
    fs.writeFileSync(swe, JSON.stringify({ environment: 'x', trajectory: [{ action: 'ls', observation: 'a', response: 'r', thought: 't' }], info: { submission: '' }, history: [] }));
    const bad = await cli(['traj', 'compare', judged[0], swe]);
    assert.equal(bad.code, 1);
    assert.match(bad.stderr, /^expbench: .*other\.traj.*: the two runs are of different tasks/m);
  });
});
