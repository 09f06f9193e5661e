/**
 * Issue 17 item 7: a session exported as an Inspect log (src/core/flows/exportInspect.ts,
 * src/core/trajectory/inspectWrite.ts) comes back through our own importer
 * (src/core/trajectory/import.ts) with its steps, phases, tools, tokens and score. The agent's
 * session is made by the real agent loop (the scripted OpenAI-compatible server through the real
 * `openai` client, the real work container); the person's by the session service as the window
 * records one. Both formats: the `.eval` zip and the `.json` log. The CLI command is run too.
 */
import * as assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { promises as fsp } from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import type Docker from 'dockerode';
import { exportSessionInspect, INSPECT_EXPORT_FORMATS } from '../../src/core/flows/exportInspect';
import { runAgentTask } from '../../src/core/flows/agentRun';
import { SessionService } from '../../src/core/flows/sessionService';
import { readJudgeRecord } from '../../src/core/judge/session';
import { SessionLayout } from '../../src/core/layout';
import { policyByName } from '../../src/core/metrics/policies';
import { outcomeFromRecord, scoreTask } from '../../src/core/metrics/scores';
import { readEvents, type SessionEvent } from '../../src/core/session/events';
import { writeSessionMarker } from '../../src/core/session/marker';
import type { Step } from '../../src/core/steps/step';
import { importFiles } from '../../src/core/trajectory/import';
import { importOwnEvents } from '../../src/core/trajectory/own';
import { openZip } from '../../src/core/trajectory/zip';
import type { Trajectory } from '../../src/core/trajectory/types';
import { latestRecordPath, readRecord } from '../../src/core/verify';
import { prepareSession } from '../../src/core/workspace/prepare';
import { assertNoContainers, requireDocker } from '../harness/docker';
import { FakeOpenAIServer } from '../harness/fakeOpenAIServer';
import { forbiddenStrings, ROOT, sampleTask, solvingScript } from './agent.fixtures';

async function importOne(file: string): Promise<{ t: Trajectory; format: string | null; problems: unknown[] }> {
  const got: Trajectory[] = [];
  const r = await importFiles([file], (t) => { got.push(t); });
  assert.equal(got.length, 1, `one trajectory in ${file}: ${JSON.stringify(r.problems)}`);
  return { t: got[0], format: r.files[0].format, problems: r.problems };
}

/** The agent's model calls and tool calls (our import: actor `agent`; Inspect's: tool steps are actor `tool`). */
const agentSteps = (steps: Step[]) => steps.filter((s) => s.kind === 'model' || (s.kind === 'tool' && (s.actor === 'agent' || s.actor === 'tool')));

describe('trajectory export: a session as an Inspect log, round trip through our importer', function () {
  this.timeout(300_000);
  let docker: Docker;
  let server: FakeOpenAIServer;
  let tmp: string;
  let agentDir: string;
  let humanDir: string;

  before(async function () {
    docker = await requireDocker(this);
    server = await new FakeOpenAIServer().start();
    tmp = await fsp.mkdtemp(path.join(os.tmpdir(), 'expbench-export-'));
    const task = await sampleTask();
    agentDir = path.join(tmp, `export-agent-${process.pid}`);
    server.enqueue(...solvingScript());
    const r = await runAgentTask({
      task, source: task.paper!.localRepo!, outDir: agentDir, cacheDir: path.join(tmp, 'cache'),
      endpoint: { name: 'agent', baseURL: server.baseURL, apiKey: 'no-key', model: 'scripted-agent' }, limits: { maxSteps: 20 },
    });
    assert.equal(r.agent.stop, 'submitted', r.agent.message);

    // a person's session, recorded through the session service as the window records one
    humanDir = path.join(tmp, `export-human-${process.pid}`);
    await prepareSession({ task, source: task.paper!.localRepo!, outDir: humanDir, cacheDir: path.join(tmp, 'cache') });
    await writeSessionMarker(humanDir, task);
    const service = new SessionService();
    try {
      const h = await service.open(humanDir, { client: 'vscode', taskId: task.id });
      await h.startClock();
      await h.addNote('reading the repository first');
      await h.setPhase('implementation');
      await h.record({ type: 'file.edited', path: 'experiments/run.py', diff: '--- a/experiments/run.py\n+++ b/experiments/run.py\n@@ -0,0 +1 @@\n+print(1)\n' });
      await h.setPhase('execution');
      await h.record({ type: 'command.run', command: 'python3 experiments/run.py', exitCode: 0, durationMs: 120, outputExcerpt: '1\n', cwd: '/workspace' });
      await h.setPhase('conclusion');
      h.setConclusion('It printed 1.');
      await h.submit({ design: h.state.design, conclusion: h.state.conclusion });
      await h.release();
    } finally {
      await service.dispose();
    }
  });

  after(async () => {
    await server?.close();
    if (docker) await assertNoContainers(docker, [path.basename(agentDir ?? '')]);
    if (tmp) await fsp.rm(tmp, { recursive: true, force: true }).catch(() => undefined);
  });

  for (const format of INSPECT_EXPORT_FORMATS) {
    it(`agent session → ${format} → import: model and tool steps, phases, tools, tokens and the judge's score survive; no ground truth in the file`, async () => {
      const layout = new SessionLayout(agentDir);
      const file = path.join(tmp, `agent.${format === 'inspect-eval' ? 'eval' : 'json'}`);
      const res = await exportSessionInspect(agentDir, file, format);
      assert.equal(res.solver, 'agent');
      assert.deepEqual([res.counts.model, res.counts.tool, res.counts.spans], [7, 9, 4]);
      assert.deepEqual(res.scores, ['expbench_judge', 'expbench_verify']);

      const { t, format: detected, problems } = await importOne(file);
      assert.equal(detected, format);
      assert.deepEqual(problems, []);
      assert.deepEqual(t.problems.filter((p) => p.severity !== 'info'), []);
      assert.equal(t.task, 'sample/toycal/0');
      const own = await importOwnEvents(layout.events);
      const { events } = await readEvents(layout.events);

      // steps: every model call and tool call, in order, with the same phase (exact, from the spans)
      const mine = agentSteps(own.steps);
      const back = agentSteps(t.steps);
      assert.equal(mine.length, 16);
      assert.deepEqual(back.map((s) => `${s.kind}:${s.phase}`), mine.map((s) => `${s.kind}:${s.phase}`));
      assert.deepEqual(back.filter((s) => s.kind === 'tool').map((s) => s.action!.tool), mine.filter((s) => s.kind === 'tool').map((s) => s.action!.tool));
      assert.ok(t.steps.every((s) => s.phaseInferred === false), 'phases are exact');
      assert.deepEqual([...new Set(t.steps.map((s) => s.phase))], ['design', 'implementation', 'execution', 'conclusion']);
      // the model calls: the tool they asked for first (named on the model step, the call itself a row of its own: one row per tool call), their tokens and model
      const calls = events.filter((e): e is Extract<SessionEvent, { type: 'agent.model_call' }> => e.type === 'agent.model_call');
      const models = back.filter((s) => s.kind === 'model');
      assert.deepEqual(models.map((s) => s.action?.tool ?? (s.extra?.calls as Array<{ tool: string }> | undefined)?.[0]?.tool), calls.map((c) => c.toolCalls?.[0]));
      assert.equal(models.filter((s) => s.action).length, 0, 'every call the model made has a tool event: none is repeated on the model step');
      assert.deepEqual(models.map((s) => [s.model?.model, s.model?.inputTokens, s.model?.outputTokens]), calls.map((c) => [c.model, c.inputTokens, c.outputTokens]));
      assert.equal(models.reduce((n, s) => n + (s.model?.inputTokens ?? 0) + (s.model?.outputTokens ?? 0), 0), calls.reduce((n, c) => n + c.inputTokens + c.outputTokens, 0));
      assert.equal(models[0].text, calls[0].text);
      // the tool calls: arguments, results, call ids
      const tools = events.filter((e): e is Extract<SessionEvent, { type: 'agent.tool_call' }> => e.type === 'agent.tool_call');
      const backTools = back.filter((s) => s.kind === 'tool');
      assert.deepEqual(backTools.map((s) => s.action!.arguments), tools.map((e) => JSON.parse(e.arguments)));
      assert.deepEqual(backTools.map((s) => s.observation!.text), tools.map((e) => e.result));
      assert.deepEqual(backTools.map((s) => s.action!.callId), tools.map((e) => e.callId));
      assert.ok(backTools.find((s) => s.action!.tool === 'write_file')!.edits?.some((x) => x.path === 'experiments/calibrate_agent.py'), 'a write is an edit');
      // the run of reproduce_exp_bench.sh in the container, with its log
      const run = t.steps.find((s) => s.action?.command === 'bash reproduce_exp_bench.sh')!;
      assert.equal(run.phase, 'execution');
      assert.equal(run.observation!.exitCode, 0);
      assert.match(run.observation!.text, /ece_after = 0\.0123/);
      // the score: the judge's verdicts under the export's policy, and the verifier's E_clean
      const judge = (await readJudgeRecord(path.join(layout.judge, 'latest.json')))!;
      const expected = scoreTask(outcomeFromRecord(judge, 'x', 'y'), policyByName('paper-likely'));
      const score = t.scores!.expbench_judge as { value: Record<string, unknown> };
      assert.deepEqual(score.value, { D: expected.D, I: expected.I, E: expected.correct.E, C: expected.correct.C, All: expected.correct.All, AllE: expected.correct.AllE });
      assert.equal((await readRecord(latestRecordPath(layout)))!.E_clean, true);
      assert.equal((t.scores!.expbench_verify as { value: unknown }).value, 1);
      assert.equal(t.steps.filter((s) => s.kind === 'score').length, 2);

      // nothing of the ground truth in what was written
      const text = format === 'inspect-json' ? await fsp.readFile(file, 'utf8') : await zipText(file);
      const seen = forbiddenStrings(await sampleTask()).filter((f) => text.includes(f) || text.includes(JSON.stringify(f).slice(1, -1)));
      assert.deepEqual(seen, []);
    });
  }

  it('the .eval holds what Inspect\'s recorder writes: _journal/start.json, header.json without samples, a flat sample entry, summaries.json', async () => {
    const file = path.join(tmp, 'entries.eval');
    await exportSessionInspect(agentDir, file, 'inspect-eval');
    const zip = await openZip(file);
    try {
      assert.equal(zip.recovered, false);
      assert.deepEqual(zip.entries.map((e) => e.name).sort(), ['_journal/start.json', 'header.json', 'samples/sample_toycal_0_epoch_1.json', 'summaries.json']);
      assert.ok(zip.entries.every((e) => e.method === 8));
      const header = JSON.parse((await zip.read('header.json')).toString('utf8'));
      assert.equal(header.version, 2);
      assert.equal(header.status, 'success');
      assert.equal(header.samples, undefined);
      assert.equal(header.eval.task, 'sample/toycal/0');
      assert.equal(header.eval.model, 'scripted-agent');
      assert.equal(header.stats.model_usage['scripted-agent'].input_tokens, 700);
      const sample = JSON.parse((await zip.read('samples/sample_toycal_0_epoch_1.json')).toString('utf8'));
      assert.equal(sample.id, 'sample/toycal/0');
      assert.equal(sample.target, '', 'no ground truth as the target');
      const spans = sample.events.filter((e: { event: string; type?: string }) => e.event === 'span_begin' && e.type === 'phase').map((e: { name: string }) => e.name);
      assert.deepEqual(spans, ['design', 'implementation', 'execution', 'conclusion']);
      const ends = sample.events.filter((e: { event: string }) => e.event === 'span_end').length;
      assert.equal(ends, sample.events.filter((e: { event: string }) => e.event === 'span_begin').length, 'every span is closed');
      const m = sample.events.find((e: { event: string }) => e.event === 'model');
      assert.deepEqual(m.input_refs, [[0, 2]], 'the first call sees the system message and the brief');
      assert.equal(sample.events_data.messages[0].role, 'system');
      assert.ok(m.tools.some((x: { name: string }) => x.name === 'submit'));
    } finally {
      zip.close();
    }
  });

  it('a person\'s session: the phases, the edit, the terminal command and the note come back; no model events', async () => {
    for (const format of INSPECT_EXPORT_FORMATS) {
      const file = path.join(tmp, `human.${format === 'inspect-eval' ? 'eval' : 'json'}`);
      const res = await exportSessionInspect(humanDir, file, format);
      assert.equal(res.solver, 'human');
      assert.equal(res.counts.model, 0);
      const { t } = await importOne(file);
      assert.ok(t.steps.every((s) => s.phaseInferred === false));
      const cmd = t.steps.find((s) => s.action?.command === 'python3 experiments/run.py')!;
      assert.ok(cmd, JSON.stringify(t.steps.map((s) => s.text ?? s.action)));
      assert.equal(cmd.phase, 'execution');
      assert.equal(cmd.observation!.exitCode, 0);
      assert.equal(t.steps.find((s) => s.text?.includes('reading the repository first'))!.phase, 'design');
      assert.equal(t.steps.find((s) => s.text?.includes('experiments/run.py') && s.text.includes('file.edited'))?.phase, 'implementation');
      assert.equal(t.metadata?.model, 'none/human');
    }
  });

  it('the CLI: expbench session export DIR --format … --out FILE (node dist/cli.js), and an unknown format named', async () => {
    const out = path.join(tmp, 'cli.eval');
    const r = await run('session', 'export', agentDir, '--format', 'inspect-eval', '--out', out);
    assert.equal(r.code, 0, r.stderr);
    assert.match(r.stdout, /^sample\/toycal\/0: agent session exported as inspect-eval to .*cli\.eval \(\d+ bytes\): \d+ events \(4 phase spans, 7 model calls, 9 tool calls, 1 run, 2 scores\)\n$/);
    assert.equal((await importOne(out)).format, 'inspect-eval');
    const bad = await run('session', 'export', agentDir, '--format', 'inspect-yaml', '--out', out);
    assert.equal(bad.code, 1);
    assert.match(bad.stderr, /--format: unknown export format "inspect-yaml": use inspect-eval or inspect-json/);
    // --out naming a folder: one line naming it, no stack, nothing written beside it.
    const folder = await run('session', 'export', agentDir, '--format', 'inspect-eval', '--out', tmp);
    assert.notEqual(folder.code, 0);
    assert.match(folder.stderr, /is a folder: give the log file to write/);
    assert.doesNotMatch(folder.stderr, /\n\s+at /, 'no stack trace');
    assert.deepEqual((await fsp.readdir(path.dirname(tmp))).filter((f) => f.startsWith(`${path.basename(tmp)}.`) && f.endsWith('.tmp')), []);
  });
});

async function zipText(file: string): Promise<string> {
  const zip = await openZip(file);
  try {
    const parts: string[] = [];
    for (const e of zip.entries) parts.push((await zip.read(e.name)).toString('utf8'));
    return parts.join('\n');
  } finally {
    zip.close();
  }
}

function run(...args: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    execFile(process.execPath, [path.join(ROOT, 'dist', 'cli.js'), ...args], { cwd: ROOT }, (err, stdout, stderr) => {
      resolve({ code: err ? (typeof err.code === 'number' ? err.code : 1) : 0, stdout, stderr });
    });
  });
}
