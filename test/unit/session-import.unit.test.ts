import * as assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { existsSync, promises as fsp } from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { importSession, type ImportSessionResult } from '../../src/core/flows/importSession';
import { normalisePatch, repoPath } from '../../src/core/flows/importPatch';
import { judgeStep } from '../../src/core/flows/judge';
import { verifyStep } from '../../src/core/flows/verify';
import { SessionLayout } from '../../src/core/layout';
import { readEvents } from '../../src/core/session/events';
import { findTask, loadDatasets } from '../../src/core/tasks/loader';
import type { Task } from '../../src/core/tasks/types';
import { importOwnEvents } from '../../src/core/trajectory/own';
import { requireDocker } from '../harness/docker';
import { ROOT, sampleTask } from './agent.fixtures';

const git = (cwd: string, ...args: string[]) => execFileSync('git', ['-c', 'user.name=t', '-c', 'user.email=t@example.org', ...args], { cwd, encoding: 'utf8' }).trim();
const HOST = '/Users/someone/Curie/workspace';

/** A harness record as the EXP-Bench harness writes it, in `dir`, for task index `index` of paper 424242. */
async function writeRecord(dir: string, index: number, parts: { gen?: object; patch?: string; judge?: object; config?: object }): Promise<string[]> {
  const base = path.join(dir, `424242_task_index_${index}_iter_1_duration_0.5_eval_`);
  const files: string[] = [];
  const put = async (suffix: string, body: string) => { await fsp.writeFile(base + suffix, body); files.push(base + suffix); };
  if (parts.gen) await put('gen.json', JSON.stringify(parts.gen));
  if (parts.patch !== undefined) await put('gen.patch', parts.patch);
  if (parts.judge) await put('judge.json', JSON.stringify(parts.judge));
  await put('gen_config_config.json', JSON.stringify({ input_conference_tasks_folder: 'outputs/logs/neurips2024', agent_name: 'curie', mode: 'generate', llm_name: 'm', paper_id: '424242', task_index: index, iteration: 1, output_folder: 'outputs/evaluation/neurips2024/424242/curie/m', ...parts.config }));
  return files;
}

/** `diff -urN` of one file as the harness writes it: the old side relative, the new side under a host path. */
function urN(ws: string, rel: string, hunks: string, created = false): string {
  const date = created ? '1969-12-31 19:00:00' : '2025-07-31 15:29:14';
  return `diff -urN workspace/${ws}/${rel} ${HOST}/${ws}/${rel}\n--- workspace/${ws}/${rel}\t${date}\n+++ ${HOST}/${ws}/${rel}\t2025-07-31 15:41:24\n${hunks}`;
}

const SCRIPT = '#!/usr/bin/env bash\nset -e\npython3 train.py\n';
const scriptHunk = `@@ -0,0 +1,${SCRIPT.split('\n').length - 1} @@\n${SCRIPT.split('\n').slice(0, -1).map((l) => `+${l}`).join('\n')}\n`;
const trainHunk = '@@ -1,3 +1,3 @@\n import sys\n-print("accuracy 0.50")\n+print("accuracy 0.91")\n # end\n';

describe('Import as Session (src/core/flows/importSession.ts) on a repository the test builds', function () {
  this.timeout(120_000);
  let tmp: string;
  let repo: string;
  let first: string;
  let task: Task;
  const runDir = () => path.join(tmp, 'runs');

  before(async () => {
    tmp = await fsp.mkdtemp(path.join(os.tmpdir(), 'expbench-import-'));
    repo = path.join(tmp, 'paper');
    await fsp.mkdir(repo, { recursive: true });
    await fsp.writeFile(path.join(repo, 'train.py'), 'import sys\nprint("accuracy 0.50")\n# end\n');
    await fsp.writeFile(path.join(repo, 'sim.py'), 'print("the masked ground truth")\n');
    git(repo, 'init', '-q', '-b', 'main');
    git(repo, 'add', '-A');
    git(repo, 'commit', '-q', '-m', 'first');
    first = git(repo, 'rev-parse', 'HEAD');
    await fsp.writeFile(path.join(repo, 'train.py'), 'import sys\nprint("a later version")\n# end\n');
    git(repo, 'commit', '-q', '-am', 'second');
    await fsp.mkdir(runDir());
    const sample = await sampleTask();
    task = { ...sample, id: 'neurips2024/424242/0', conference: 'neurips2024', paperId: '424242', index: 0, source: ['sim.py'], maskedSource: ['sim.py'], file: path.join(tmp, 'tasks', 'neurips2024', '424242', '424242_complete_final.json'), paper: undefined };
  });
  after(async () => { if (tmp) await fsp.rm(tmp, { recursive: true, force: true }).catch(() => undefined); });

  it('a harness record becomes a session: answers, the git-form patch applied, steps as events, the commit the record names, then the judge', async () => {
    const ws = 'paper_task_index_0_iter_1_duration_0.5';
    const patch = urN(ws, 'reproduce_exp_bench.sh', scriptHunk, true) + urN(ws, 'train.py', trainHunk);
    const files = await writeRecord(runDir(), 0, {
      gen: { design: 'Independent: temperature. Dependent: accuracy.', conclusion: 'The accuracy is 0.91.' },
      patch, judge: { design_score: 50, setup_score: 0, conclusion_score: 'correct' }, config: { commit: first },
    });
    const out = path.join(tmp, 's-ok');
    const r = await importSession({ files, task, source: repo, outDir: out, cacheDir: path.join(tmp, 'cache'), judge: judgeStep({ task }) });
    assert.equal(r.trajectory.format, 'exp-bench-harness');
    assert.equal(r.trajectory.task, 'neurips2024/424242/0');
    assert.deepEqual(r.commit, { sha: first, from: 'record', recorded: first });
    assert.deepEqual(r.patch.files.map((f) => [f.path, f.op, f.status]), [['reproduce_exp_bench.sh', 'create', 'applied'], ['train.py', 'modify', 'applied']]);
    assert.deepEqual(r.patch.strippedPrefixes.sort(), [`${HOST}/${ws}/`, `workspace/${ws}/`].sort());
    assert.equal(r.patch.applied, 2);
    const layout = new SessionLayout(out);
    assert.equal(await fsp.readFile(path.join(layout.workspace, 'train.py'), 'utf8'), 'import sys\nprint("accuracy 0.91")\n# end\n');
    assert.equal(await fsp.readFile(layout.script, 'utf8'), SCRIPT);
    assert.equal(existsSync(path.join(layout.workspace, 'sim.py')), false, 'the task mask holds');
    const gitPatch = await fsp.readFile(path.join(layout.imported, 'patch.git.diff'), 'utf8');
    assert.match(gitPatch, /^diff --git a\/reproduce_exp_bench\.sh b\/reproduce_exp_bench\.sh\nnew file mode 100644\n--- \/dev\/null\n\+\+\+ b\/reproduce_exp_bench\.sh\n@@ -0,0 \+1,3 @@\n/);
    assert.match(gitPatch, /\ndiff --git a\/train\.py b\/train\.py\n--- a\/train\.py\n\+\+\+ b\/train\.py\n@@ -1,3 \+1,3 @@\n/);
    assert.ok(!gitPatch.includes('/Users/'), 'no host path left');
    // The submitted harness files hold the answers and the workspace's own patch of what applied.
    assert.deepEqual(JSON.parse(await fsp.readFile(layout.answers, 'utf8')), { design: 'Independent: temperature. Dependent: accuracy.', conclusion: 'The accuracy is 0.91.' });
    const submitted = await fsp.readFile(path.join(layout.harness, 'patch.diff'), 'utf8');
    assert.match(submitted, /\+print\("accuracy 0\.91"\)/);
    assert.match(submitted, /reproduce_exp_bench\.sh/);
    // Steps as events, read back as the steps they were.
    const { events, invalid } = await readEvents(layout.events);
    assert.deepEqual(invalid, []);
    const imported = events.filter((e) => e.type === 'trajectory.step');
    assert.equal(imported.length, r.trajectory.steps);
    assert.equal(r.trajectory.steps, 5, 'design, two edits, conclusion, the harness judge');
    assert.equal(events.filter((e) => e.type === 'trajectory.imported').length, 1);
    assert.ok(events.some((e) => e.type === 'submitted'));
    const judged = events.find((e) => e.type === 'judge.finished');
    assert.ok(judged && judged.type === 'judge.finished' && judged.ok, JSON.stringify(judged));
    assert.match(judged.summary ?? '', /^heuristic: design \d+\/\d+ matched/);
    assert.ok(existsSync(path.join(layout.judge, 'latest.json')));
    const back = await importOwnEvents(layout.events);
    const edits = back.steps.filter((s) => s.kind === 'edit' && s.actor === 'agent');
    assert.deepEqual(edits.map((s) => s.edits?.[0].path), ['reproduce_exp_bench.sh', 'train.py']);
    assert.deepEqual(back.problems.filter((p) => p.severity !== 'info'), []);
    const record = JSON.parse(await fsp.readFile(path.join(layout.imported, 'record.json'), 'utf8')) as ImportSessionResult;
    assert.equal(record.execution?.E, null, 'no verifier was asked for');
    assert.ok(r.problems.every((p) => p.severity === 'info'), JSON.stringify(r.problems));
  });

  it('bad input: a task id that is not the record\'s, a cut file, a file git refuses (with its hunk): each a problem, the rest imported', async () => {
    const ws = 'paper_task_index_1_iter_1_duration_0.5';
    const refused = '@@ -1,3 +1,3 @@\n import sys\n-print("not what the file says")\n+print("x")\n # end\n';
    const cut = '@@ -1,3 +1,8 @@\n import sys\n+a\n+b\n';
    const patch = urN(ws, 'reproduce_exp_bench.sh', scriptHunk, true) + urN(ws, 'train.py', refused) + urN(ws, 'notes.py', cut);
    const files = await writeRecord(runDir(), 1, { gen: { design: 'd', conclusion: 'c' }, patch });
    const r = await importSession({ files, task, source: repo, outDir: path.join(tmp, 's-bad'), cacheDir: path.join(tmp, 'cache') });
    assert.deepEqual(r.patch.files.map((f) => [f.path, f.status]), [['reproduce_exp_bench.sh', 'applied'], ['train.py', 'failed'], ['notes.py', 'cut']]);
    const patchFile = files.find((f) => f.endsWith('.patch'))!;
    const msg = (re: RegExp) => r.problems.find((p) => re.test(p.message));
    const mismatch = msg(/the record is task neurips2024\/424242\/1 but the import is for neurips2024\/424242\/0/);
    assert.ok(mismatch, JSON.stringify(r.problems));
    const failed = msg(/git apply refused train\.py/);
    assert.ok(failed, JSON.stringify(r.problems));
    assert.equal(failed.file, patchFile);
    assert.equal(failed.line, 8, 'the section of train.py starts at line 8 of the patch');
    assert.match(failed.message, /patch failed: train\.py:1/);
    assert.match(failed.message, /failing hunk @@ -1,3 \+1,3 @@ at line 11/);
    assert.deepEqual(r.patch.files[1].failingHunk, { header: '@@ -1,3 +1,3 @@', line: 11, text: refused.trimEnd() });
    const cutP = r.problems.filter((p) => /notes\.py/.test(p.message));
    assert.equal(cutP.length, 1, JSON.stringify(r.problems));
    assert.match(cutP[0].message, /^notes\.py: hunk at line 19 is short of 2 old and 5 new line\(s\): the patch was cut or damaged and is not applied$/);
    assert.equal(cutP[0].line, 16);
    const layout = new SessionLayout(path.join(tmp, 's-bad'));
    assert.equal(await fsp.readFile(path.join(layout.workspace, 'train.py'), 'utf8'), 'import sys\nprint("a later version")\n# end\n', 'the refused file is as handed out (HEAD: the record names no commit)');
    assert.equal(existsSync(layout.script), true, 'the file that applies is applied');
    assert.equal(r.commit.from, 'source-head');
  });

  it('a record with no patch is imported with its answers and a problem; files with no trajectory are a BAD_INPUT naming them', async () => {
    const files = await writeRecord(runDir(), 2, { gen: { design: 'only a design', conclusion: 'no code' } });
    const t2 = { ...task, id: 'neurips2024/424242/2', index: 2 };
    const r = await importSession({ files, task: t2, source: repo, outDir: path.join(tmp, 's-nopatch'), cacheDir: path.join(tmp, 'cache') });
    assert.ok(r.problems.some((p) => /the run has no patch/.test(p.message)), JSON.stringify(r.problems));
    assert.ok(r.problems.some((p) => /no reproduce_exp_bench\.sh/.test(p.message)));
    assert.equal(r.patch.source, null);
    assert.equal(r.submission?.warnings.some((w) => /patch is empty/.test(w)), true);
    const junk = path.join(tmp, 'junk.txt');
    await fsp.writeFile(junk, 'hello');
    await assert.rejects(importSession({ files: [junk], task, source: repo, outDir: path.join(tmp, 's-junk') }),
      (e: Error & { code?: string }) => e.code === 'BAD_INPUT' && e.message.includes('no trajectory to import') && e.message.includes('junk.txt'));
    assert.equal(existsSync(path.join(tmp, 's-junk')), false, 'nothing was prepared');
  });

  it('the patch normaliser: the path rules of git, diff -ruN of two roots and the harness', () => {
    assert.deepEqual(repoPath('a/x/y.py', 'b/x/y.py'), { path: 'x/y.py', prefix: ['a/', 'b/'] });
    assert.deepEqual(repoPath('old/x/y.py', 'new/x/y.py'), { path: 'x/y.py', prefix: ['old/', 'new/'] });
    assert.deepEqual(repoPath('workspace/r_task_index_3/x.py', '/h/workspace/r_task_index_3/x.py'), { path: 'x.py', prefix: ['workspace/r_task_index_3/', '/h/workspace/r_task_index_3/'] });
    const n = normalisePatch('--- a/gone.py\n+++ b/gone.py\t1970-01-01 00:00:00\n@@ -1,2 +0,0 @@\n-x\n-y\n', () => true);
    assert.equal(n.files[0].op, 'delete');
    assert.equal(n.text, 'diff --git a/gone.py b/gone.py\ndeleted file mode 100644\n--- a/gone.py\n+++ /dev/null\n@@ -1,2 +0,0 @@\n-x\n-y\n');
    const garbled = normalisePatch('--- a/x.py\n+++ b/x.py\n@@ -1,2 +1,2 @@\n a\n... [3000 characters cut] ...\n b\n', () => true);
    assert.equal(garbled.files[0].status, 'cut');
    assert.equal(garbled.files[0].problem, 'the patch is cut or damaged at line 5: "... [3000 characters cut] ..." is no diff line inside the hunk at line 3; this file is not applied');
  });

  it('the verifier runs on an imported session (real Docker): E_clean from the agent\'s script', async function () {
    const docker = await requireDocker(this);
    const ws = 'paper_task_index_0_iter_1_duration_0.5';
    const files = await writeRecord(path.join(tmp, 'runs'), 0, { gen: { design: 'd', conclusion: 'The accuracy is 0.91.' }, patch: urN(ws, 'reproduce_exp_bench.sh', scriptHunk, true) + urN(ws, 'train.py', trainHunk), config: { commit: first } });
    const out = path.join(tmp, 's-verify');
    const r = await importSession({ files, task, source: repo, outDir: out, cacheDir: path.join(tmp, 'cache'), verify: verifyStep({ docker }) });
    assert.equal(r.submission?.verify?.ok, true, JSON.stringify(r.submission));
    assert.equal(r.execution?.E, true);
    assert.deepEqual(r.execution?.reasons, []);
  });
});

/** The paper's repository of neurips2024/93022 (github.com/bjing2016/mdgen), fetched and cloned to /tmp by hand; never committed. */
const MDGEN = process.env.EXPBENCH_MDGEN_CLONE ?? '/tmp/mdgen';
const HARNESS = path.resolve(ROOT, '..', 'shared', 'data', 'trajectories', 'exp-bench', 'Just-Curieous__Curie');
const DATASET = path.resolve(ROOT, '..', 'shared', 'data', 'exp-bench');

describe('Import as Session of the real harness records of neurips2024/93022 tasks 0-3 (the fetched paper repository)', function () {
  this.timeout(300_000);
  let tmp: string;
  before(async function () {
    if (!existsSync(path.join(MDGEN, '.git')) || !existsSync(HARNESS) || !existsSync(DATASET)) {
      const why = `needs a clone of github.com/bjing2016/mdgen at ${MDGEN} (EXPBENCH_MDGEN_CLONE) and ../shared/data`;
      if (this.test) this.test.title += ` (SKIPPED: ${why})`;
      console.warn(`  skipping: ${why}`);
      this.skip();
    }
    tmp = await fsp.mkdtemp(path.join(os.tmpdir(), 'expbench-import-93022-'));
  });
  after(async () => { if (tmp) await fsp.rm(tmp, { recursive: true, force: true }).catch(() => undefined); });

  it('each task: the patch applied in git form, the steps recorded, the verifier runs (E false, and why), the heuristic judge scores', async function () {
    const docker = await requireDocker(this);
    const loaded = await loadDatasets([DATASET]);
    const dir = path.join(HARNESS, 'azure-gpt-4o');
    const names = await fsp.readdir(dir);
    const expected = [
      { files: 1, steps: 4, mismatch: true }, { files: 1, steps: 4, mismatch: false },
      { files: 1, steps: 4, mismatch: false }, { files: 2, steps: 5, mismatch: false },
    ];
    for (let i = 0; i < 4; i++) {
      const task = findTask(loaded, `neurips2024/93022/${i}`)!;
      const files = names.filter((n) => n.startsWith(`93022_task_index_${i}_`)).map((n) => path.join(dir, n));
      assert.equal(files.length, 4);
      const r = await importSession({
        files: [...files, path.join(HARNESS, 'configs', 'main_93022_judge_config.json')], task, source: MDGEN, outDir: path.join(tmp, String(i)),
        cacheDir: path.join(tmp, 'cache'), verify: verifyStep({ docker }), judge: judgeStep({ task }),
      });
      assert.equal(r.trajectory.task, task.id);
      assert.equal(r.trajectory.steps, expected[i].steps);
      assert.equal(r.patch.applied, expected[i].files, JSON.stringify(r.patch.files));
      assert.ok(r.patch.strippedPrefixes.some((p) => p.startsWith('/Users/')), 'the host path is stripped');
      assert.equal(r.problems.some((p) => /is in task_index_1's workspace but the record is task index 0/.test(p.message)), expected[i].mismatch);
      assert.equal(r.submission?.verify?.ok, false);
      assert.equal(r.execution?.E, false);
      assert.ok(r.execution?.reasons.some((x) => /reproduce_exp_bench\.sh is missing at the repository root \(lint script-missing\)/.test(x)), JSON.stringify(r.execution));
      assert.ok(r.execution?.reasons.some((x) => /data or weight files that are not in the workspace: (forward_sim|interpolation)\.ckpt/.test(x)), JSON.stringify(r.execution));
      assert.equal(r.submission?.judge?.ok, true, JSON.stringify(r.submission?.judge));
      assert.match(r.submission?.judge?.summary ?? '', /^heuristic: design \d+\/\d+ matched, implementation \d+\/\d+ met/);
      const layout = new SessionLayout(r.sessionDir);
      const ws = await fsp.readdir(layout.workspace);
      assert.ok(ws.some((n) => n.startsWith('control_experiment_')), 'the agent\'s script is in the workspace');
      assert.ok(!ws.includes('sim_inference.py') || !task.maskedSource.includes('sim_inference.py'), 'the task mask holds');
      if (i === 3) assert.match(await fsp.readFile(path.join(layout.workspace, 'train.py'), 'utf8'), /\ntorch\.manual_seed\(137\)\nnp\.random\.seed\(137\)\n/);
    }
  });
});
