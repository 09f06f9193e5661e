import * as assert from 'node:assert/strict';
import { promises as fsp } from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import type Docker from 'dockerode';
import { runAgentTask } from '../../src/core/flows/agentRun';
import { importSession } from '../../src/core/flows/importSession';
import { judgeStep } from '../../src/core/flows/judge';
import { importFiles } from '../../src/core/trajectory/import';
import { readJudgeRecord } from '../../src/core/judge/session';
import type { JudgeRecord } from '../../src/core/judge/types';
import { SessionLayout } from '../../src/core/layout';
import type { Task } from '../../src/core/tasks/types';
import { importOwnEvents } from '../../src/core/trajectory/own';
import type { Trajectory } from '../../src/core/trajectory/types';
import { pinsFor } from '../../src/core/viewer/pins';
import { gapsView } from '../../src/extension/gaps/model';
import { withTimeline } from '../../src/extension/gaps/timelineLinks';
import { RepoAtStep } from '../../src/core/viewer/repoAtStep';
import { assertNoContainers, requireDocker } from '../harness/docker';
import { FakeOpenAIServer } from '../harness/fakeOpenAIServer';
import { AGENT_SCRIPT, API_KEY, sampleTask } from './agent.fixtures';
import { pinningScript } from './pins.fixtures';

describe('viewer: verdicts and flags pinned to steps (a scripted agent session, the heuristic judge)', function () {
  this.timeout(300_000);
  let docker: Docker;
  let server: FakeOpenAIServer;
  let task: Task;
  let tmp: string;
  let session: string;
  let traj: Trajectory;
  let record: JudgeRecord;

  before(async function () {
    docker = await requireDocker(this);
    task = await sampleTask();
    tmp = await fsp.mkdtemp(path.join(os.tmpdir(), 'expbench-pins-'));
    server = await new FakeOpenAIServer().start();
    server.enqueue(...pinningScript());
    session = path.join(tmp, `pins-${process.pid}`);
    const r = await runAgentTask({
      task, source: task.paper!.localRepo!, outDir: session, cacheDir: path.join(tmp, 'cache'), docker,
      endpoint: { name: 'agent', baseURL: server.baseURL, apiKey: API_KEY, model: 'scripted-agent' },
      verify: false, sleep: () => Promise.resolve(),
    });
    assert.equal(r.agent.stop, 'submitted');
    traj = await importOwnEvents(new SessionLayout(session).events);
    record = (await readJudgeRecord(path.join(new SessionLayout(session).judge, 'latest.json')))!;
    assert.ok(record, 'the heuristic judge ran');
  });
  after(async () => {
    await server?.close();
    if (docker) await assertNoContainers(docker, [path.basename(session ?? '')]);
    if (tmp) await fsp.rm(tmp, { recursive: true, force: true }).catch(() => undefined);
  });

  it('each requirement verdict sits on the step that last wrote its evidence lines; the design and conclusion on the steps that set them; the git log flag on the step that ran it', async () => {
    const pins = await pinsFor(traj);
    const stepOf = (tool: string, nth = 0) => traj.steps.filter((s) => s.action?.tool === tool)[nth].index;
    const write = stepOf('write_file');
    const fix = stepOf('replace_in_file');
    const gitLog = stepOf('shell');
    assert.ok(write < fix);
    // The flag: the monitor's log line is the shell step that ran git log.
    const flag = pins.find((p) => p.kind === 'flag');
    const det = record.monitor.deterministic.find((f) => f.kind === 'git_history');
    assert.ok(det, 'the monitor flagged the git log');
    assert.deepEqual(flag && { step: flag.step, item: flag.item, why: flag.why }, { step: gitLog, item: `monitor:${det.line}`, why: `ran git log (log line ${det.line})` });
    assert.equal(traj.steps[gitLog].source.line, det.line);
    // Verdicts: every cited requirement is pinned; the one whose evidence includes line 7 (the grid the replace changed) on the replace.
    const script = AGENT_SCRIPT.split('\n');
    const fixedLine = script.findIndex((l) => l.includes('for k in range(91)]')) + 1;
    const cited = record.implementation.verdicts.filter((v) => v.hunks.length);
    assert.ok(cited.length >= 3, `${cited.length} cited verdicts`);
    for (const v of cited) {
      const mine = pins.filter((p) => p.item === `requirement:${v.index}`);
      assert.equal(mine.length, 1, `R${v.index}: ${JSON.stringify(mine)}`);
      const anchors = (v.anchors ?? []).filter((a) => a.path === 'experiments/calibrate_agent.py');
      const touchesFix = anchors.some((a) => a.startLine <= fixedLine && a.endLine >= fixedLine);
      assert.equal(mine[0].step, touchesFix ? fix : write, `R${v.index} anchors ${JSON.stringify(anchors)}`);
      assert.match(mine[0].why, /^wrote the cited lines experiments\/calibrate_agent\.py:/);
      assert.equal(mine[0].verdict, v.verdict);
    }
    assert.ok(pins.some((p) => p.item.startsWith('requirement:') && p.step === fix), 'one verdict rests on the later edit');
    assert.ok(pins.some((p) => p.item.startsWith('requirement:') && p.step === write), 'and others on the first write');
    const saved = traj.steps.filter((s) => s.source.kind === 'answers.saved' && /^design: /m.test(s.text ?? '')).at(-1)!.index;
    assert.ok(saved > stepOf('set_design'));
    assert.equal(pins.find((p) => p.item === 'design')?.step, saved, 'the design as last saved (answers.saved after set_design)');
    // The heuristic judge decides the conclusion only when it can compare numbers: pinned exactly when it did.
    const concluded = pins.find((p) => p.item === 'conclusion');
    const setConclusion = traj.steps.filter((s) => s.action?.tool === 'set_conclusion' || (s.source.kind === 'answers.saved' && /^conclusion: /m.test(s.text ?? ''))).at(-1)!.index;
    if (record.conclusion.verdict) assert.deepEqual([concluded?.step, concluded?.why], [setConclusion, 'set the conclusion the judge read']);
    else assert.equal(concluded, undefined, `conclusion ${record.conclusion.status}`);
    // The pins are sorted by step, and every step exists.
    assert.deepEqual(pins.map((p) => p.step), [...pins.map((p) => p.step)].sort((a, b) => a - b));
    assert.ok(pins.every((p) => p.step >= 0 && p.step < traj.steps.length));
  });

  it('the gap report side: each pinned row gets a "Show in Timeline (step N)" link; revealItem\'s focus is named', async () => {
    const pins = await pinsFor(traj);
    const view = withTimeline(gapsView(record, false), record, pins, 'requirement:2');
    assert.equal(view.focus, 'requirement:2');
    const impl = view.phases.find((p) => p.id === 'implementation')!;
    for (const [i, v] of record.implementation.verdicts.entries()) {
      const steps = pins.filter((p) => p.item === `requirement:${v.index}`).map((p) => p.step);
      assert.equal(impl.items[i].item, `requirement:${v.index}`);
      assert.deepEqual(impl.items[i].links.filter((l) => l.call.action === 'showInTimeline').map((l) => l.call.payload), steps.map((step) => ({ step })));
    }
    const monitor = view.phases.find((p) => p.id === 'monitor')!;
    const flag = pins.find((p) => p.kind === 'flag')!;
    assert.ok(monitor.items.some((it) => it.item === flag.item && it.links.some((l) => l.label === `Show in Timeline (step ${flag.step})`)));
  });

  it('the repository at the last step is the workspace the agent left (its write_file and replace_in_file replayed)', async () => {
    const ws = new SessionLayout(session).workspace;
    const repo = new RepoAtStep({ trajectory: traj, workspace: ws, cacheDir: path.join(tmp, 'repo-cache') });
    const last = await repo.at(traj.steps.length - 1);
    for (const f of ['experiments/calibrate_agent.py', 'reproduce_exp_bench.sh']) {
      assert.equal(await fsp.readFile(path.join(last.dir, f), 'utf8'), await fsp.readFile(path.join(ws, f), 'utf8'), f);
    }
    assert.ok(last.changed.some((c) => c.path === 'experiments/calibrate_agent.py' && c.status === 'added'));
    // The agent's python run wrote results/ (a program's output: not a recorded edit, not claimed either).
    assert.equal(last.approximate, last.uncertain.length > 0);
    const before = await repo.at(stepOfTool(traj, 'replace_in_file') - 1);
    assert.ok(!(await fsp.readFile(path.join(before.dir, 'experiments/calibrate_agent.py'), 'utf8')).includes('# 0.5..5.0'));
  });
});

function stepOfTool(t: Trajectory, tool: string): number {
  return t.steps.find((s) => s.action?.tool === tool)!.index;
}

describe('viewer: pins on an imported run (a harness record imported as a session, the heuristic judge)', function () {
  this.timeout(120_000);
  let tmp: string;
  let task: Task;
  let files: string[];
  let session: string;

  before(async () => {
    tmp = await fsp.mkdtemp(path.join(os.tmpdir(), 'expbench-pins-import-'));
    task = await sampleTask();
    const added = (p: string, text: string) => {
      const lines = text.split('\n').slice(0, -1);
      return `diff --git a/${p} b/${p}\nnew file mode 100644\n--- /dev/null\n+++ b/${p}\n@@ -0,0 +1,${lines.length} @@\n${lines.map((l) => `+${l}`).join('\n')}\n`;
    };
    const base = path.join(tmp, '424242_task_index_0_iter_1_duration_0.5_eval_');
    files = [`${base}gen.json`, `${base}gen.patch`, `${base}gen_config_config.json`];
    await fsp.writeFile(files[0], JSON.stringify({ design: 'Independent: whether logits are divided by a fitted temperature T. Dependent: ECE, test accuracy, T. Constants: toycal.data seed 0, the logistic regression, 15 ECE bins.', conclusion: 'Yes: temperature = 1.3000, ECE 0.0322 → 0.0123, accuracy 0.9050.' }));
    await fsp.writeFile(files[1], added('experiments/calibrate_agent.py', AGENT_SCRIPT) + added('reproduce_exp_bench.sh', '#!/usr/bin/env bash\npython3 experiments/calibrate_agent.py\n'));
    await fsp.writeFile(files[2], JSON.stringify({ paper_id: '424242', task_index: 0, iteration: 1, mode: 'generate', agent_name: 'curie', llm_name: 'm' }));
    session = path.join(tmp, 'session');
    await importSession({ files, task, source: task.paper!.localRepo!, outDir: session, cacheDir: path.join(tmp, 'cache'), judge: judgeStep({ task }) });
  });
  after(async () => { if (tmp) await fsp.rm(tmp, { recursive: true, force: true }).catch(() => undefined); });

  it('the same pins on the session\'s log and on the run as imported (step k = the k-th imported step)', async () => {
    const own = await importOwnEvents(new SessionLayout(session).events);
    const record = (await readJudgeRecord(path.join(new SessionLayout(session).judge, 'latest.json')))!;
    const cited = record.implementation.verdicts.filter((v) => v.hunks.length);
    assert.ok(cited.length >= 1, 'the heuristic judge cites the script');
    const onSession = await pinsFor(own);
    const edit = own.steps.find((s) => s.kind === 'edit' && s.edits?.[0].path === 'experiments/calibrate_agent.py')!;
    for (const v of cited) assert.deepEqual(onSession.filter((p) => p.item === `requirement:${v.index}`).map((p) => p.step), [edit.index], `R${v.index}`);
    assert.equal(onSession.find((p) => p.item === 'design')?.step, own.steps.find((s) => (s.extra?.importedFrom as { pointer?: string } | undefined)?.pointer === '/design')!.index);

    const runs: Trajectory[] = [];
    await importFiles(files, (t) => { runs.push(t); });
    assert.equal(runs.length, 1);
    const onRun = await pinsFor(runs[0], { sessionDir: session });
    const runEdit = runs[0].steps.find((s) => s.kind === 'edit' && s.edits?.[0].path === 'experiments/calibrate_agent.py')!;
    for (const v of cited) assert.deepEqual(onRun.filter((p) => p.item === `requirement:${v.index}`).map((p) => p.step), [runEdit.index], `R${v.index} on the run`);
    assert.deepEqual(onRun.map((p) => p.item).sort(), onSession.map((p) => p.item).sort());
    assert.deepEqual(await pinsFor(runs[0]), [], 'no session, no judgement: no pins');
  });
});
