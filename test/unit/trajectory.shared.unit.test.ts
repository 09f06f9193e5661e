import * as assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { promises as fsp } from 'node:fs';
import * as path from 'node:path';
import { StepSchema } from '../../src/core/steps/step';
import { importFiles } from '../../src/core/trajectory/import';
import type { Trajectory } from '../../src/core/trajectory/types';
import { repoRoot } from '../harness/paths';

/** The 31 real files of ../shared/data/trajectories (sources and licences in its README). */
const DATA = path.resolve(repoRoot, '..', 'shared', 'data', 'trajectories');
const CLI = path.join(repoRoot, 'out', 'src', 'cli', 'main.js');

/**
 * Expected trajectories and steps per file, counted independently of the importer:
 *
 * - Inspect (`.eval`, `.json`): counted by a separate Python script (zipfile + json; the zstd entry
 *   of ais-decoder decompressed by the zstd tool) that applies docs/steps.md's rule: one step per
 *   event except the structural kinds (span_begin, span_end, step, state, store, checkpoint) and
 *   the sandbox events that ran inside a tool call's span (folded into that call: a span of type
 *   `tool` whose tool event runs in it, or whose tool event of the same function runs in the tool
 *   span's parent), plus one message step per system/user message of a model event's input (inline
 *   or through `input_refs` into `message_pool` / `events_data.messages`) whose id was not in
 *   sample_init's state or an earlier input/output. Its output: ClassEval_0..4 → 5 each (18 events:
 *   12 span, 2 state, sample_init, model, sandbox (the scorer's, in no tool span), score, + the
 *   system prompt of the model input); log_message_deduplication 0 → 13 (6 model + 5 tool +
 *   score + sample_init; the 5 sandbox calls are the 5 tool calls'); ais-decoder 1 → 88 (its 62
 *   sandbox calls run in the agent's own spans, none in a tool span); browser → 11 (its 10 sandbox
 *   calls belong to its 4 tool calls); no-samples → 0 trajectories.
 * - OpenHands V0 (the same script): actions + observations that have no `cause` among earlier
 *   actions, `null` observations without a cause left out: basic_gui_mode 11 (7 actions + 4
 *   agent_state_changed); output.jsonl instances 26, 37, 53, each + 1 for its final patch
 *   (`test_result.git_patch`, a step of its own) → 27, 38, 54.
 * - OpenHands V1 by hand from the README's census: events.jsonl 10 lines = 1 execution_status
 *   update (a step) + 4 stats updates + 2 ActionEvents (steps) + 3 ObservationEvents, of which 2
 *   pair with an action and 1 (tool_call_id …9051d3d1) has none and is its own step → 4; of the
 *   4 stats updates, 2 are followed by an action of a new response before the next update (their
 *   tokens are that action's) and 2 are not (a model row each) → 6. output.jsonl: 2 instances ×
 *   (9 ActionEvents, each with its ObservationEvent) + the `instruction` (no user message in the
 *   history holds it) → 10 and 10.
 * - SWE-agent: one step per `trajectory` entry (README: 5 each), + the `history` messages before
 *   the first action (6e44b9: system + the issue = 2; test-repo-i1: system + a demonstration + the
 *   issue = 3), + the final patch (`info.submission`) → 8 and 9.
 * - mini-swe-agent: system + task message, then one step per assistant message absorbing the
 *   user message after it, + the final patch: 2 + 17 + 1 = 20 (36 messages) and 2 + 49 + 1 = 52.
 * - ATIF: one step per ATIF step (one tool call each): 6.
 * - EXP-Bench harness: one record per task index (4); steps = design + one per file in the patch
 *   (`diff -urN` headers: 1, 1, 1, 2) + conclusion + judge → 4, 4, 4, 5.
 */
const EXPECTED: Array<{ file: string; steps: number[] }> = [
  { file: 'inspect-eval/METR__inspect-action/2025-12-13T23-15-44+00-00_class-eval_XDtHXBaqEHGUBoFoinn2wS.eval', steps: [5, 5, 5, 5, 5] },
  { file: 'inspect-eval/UKGovernmentBEIS__inspect_ai/log_message_deduplication.eval', steps: [13] },
  { file: 'inspect-eval/meridianlabs-ai__ts-mono/original/ais-decoder.eval', steps: [88] },
  { file: 'inspect-json/UKGovernmentBEIS__inspect_ai/2025-05-12T20-27-36-04-00_browser.json', steps: [11] },
  { file: 'inspect-json/UKGovernmentBEIS__inspect_ai/2025-05-12T20-28-13-04-00_no-samples.json', steps: [] },
  { file: 'openhands-v0/OpenHands__OpenHands/basic_gui_mode.json', steps: [11] },
  { file: 'openhands-v0/OpenHands__OpenHands/output.jsonl', steps: [27, 38, 54] },
  { file: 'openhands-v1/OpenHands__software-agent-sdk/events.jsonl', steps: [6] },
  { file: 'openhands-v1/OpenHands__benchmarks/output.jsonl', steps: [10, 10] },
  { file: 'swe-agent/SWE-agent__SWE-agent/6e44b9__sweagenttestrepo-1c2844.traj', steps: [8] },
  { file: 'swe-agent/SWE-agent__SWE-agent/swe-agent__test-repo-i1.traj', steps: [9] },
  { file: 'mini-swe-agent/gruckion__mini-swe-agent/django__django-16255.traj.json', steps: [20] },
  { file: 'mini-swe-agent/gruckion__mini-swe-agent/sympy__sympy-20154.traj.json', steps: [52] },
  { file: 'atif/meridianlabs-ai__inspect_scout/openhands_hello-world.trajectory.json', steps: [6] },
];

async function collect(files: string[]): Promise<{ ts: Trajectory[]; r: Awaited<ReturnType<typeof importFiles>> }> {
  const ts: Trajectory[] = [];
  const r = await importFiles(files, (t) => { ts.push(t); });
  return { ts, r };
}

function cli(...args: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    execFile(process.execPath, [CLI, ...args], { cwd: repoRoot, maxBuffer: 64 * 1024 * 1024 }, (err, stdout, stderr) => {
      resolve({ code: err ? (typeof err.code === 'number' ? err.code : 1) : 0, stdout, stderr });
    });
  });
}

describe('trajectory import: the real files of ../shared/data/trajectories', function () {
  this.timeout(120_000);

  for (const e of EXPECTED) {
    it(`${e.file}: ${e.steps.length} trajectories with ${e.steps.join(', ') || 'no'} steps`, async () => {
      const { ts, r } = await collect([path.join(DATA, e.file)]);
      assert.deepEqual(r.files.map((f) => f.unreadable), [false]);
      assert.deepEqual(ts.map((t) => t.steps.length), e.steps);
      for (const t of ts) {
        for (const s of t.steps) StepSchema.parse(s);
        assert.equal(t.mappedEvents <= t.sourceEvents, true);
        assert.equal(t.steps.every((s, i) => s.index === i), true);
      }
    });
  }

  it('every Inspect sample keeps its id, scores and task; ais-decoder (zstd, events_data pool, attachments) resolves its system prompt', async () => {
    const { ts } = await collect([path.join(DATA, 'inspect-eval/METR__inspect-action/2025-12-13T23-15-44+00-00_class-eval_XDtHXBaqEHGUBoFoinn2wS.eval'), path.join(DATA, 'inspect-eval/meridianlabs-ai__ts-mono/original/ais-decoder.eval')]);
    assert.deepEqual(ts.map((t) => t.id), ['ClassEval_1', 'ClassEval_4', 'ClassEval_0', 'ClassEval_3', 'ClassEval_2', '1']);
    assert.equal(ts.every((t) => t.scores && Object.keys(t.scores).length > 0), true);
    const ais = ts[5];
    assert.equal(ais.task, 'cp_ctf');
    const system = ais.steps.find((s) => s.actor === 'system');
    assert.ok(system?.text?.startsWith('You are Codex'), 'the attachment:// system prompt is resolved through the message pool');
    assert.equal(JSON.stringify(ais).includes('attachment://'), false);
    assert.equal(ais.steps.filter((s) => s.kind === 'model').length, 10);
    // 62 sandbox events (Python count): 53 exec, 6 read_file, 3 write_file (the last give file edits)
    assert.equal(ais.steps.filter((s) => s.action?.tool === 'sandbox.exec').length, 53);
    assert.equal(ais.steps.filter((s) => s.action?.tool === 'sandbox.read_file').length, 6);
    assert.equal(ais.steps.filter((s) => s.action?.tool === 'sandbox.write_file' && s.edits?.length === 1).length, 3);
    assert.equal(ais.redactions, 1, 'the OPENAI_API_KEY in the environment dump of a sandbox call');
  });

  it('the EXP-Bench harness files give one record per task index with answers, patch, judge and config, and flag the task-0 patch made in task 1\'s workspace', async () => {
    const dir = path.join(DATA, 'exp-bench/Just-Curieous__Curie');
    const files = [...(await fsp.readdir(path.join(dir, 'azure-gpt-4o'))).map((f) => path.join(dir, 'azure-gpt-4o', f)), path.join(dir, 'configs/main_93022_judge_config.json')];
    assert.equal(files.length, 17);
    const { ts, r } = await collect(files);
    assert.equal(r.files.every((f) => !f.unreadable && f.format === 'exp-bench-harness'), true);
    assert.deepEqual(ts.map((t) => [t.id, t.task, t.steps.length]), [
      ['93022/0', 'neurips2024/93022/0', 4], ['93022/1', 'neurips2024/93022/1', 4], ['93022/2', 'neurips2024/93022/2', 4], ['93022/3', 'neurips2024/93022/3', 5]]);
    for (const t of ts) {
      assert.equal(t.files?.length, 5, 'gen, patch, judge, config and the run config');
      assert.ok(t.answers?.design && t.answers.conclusion);
      assert.ok(t.patch?.startsWith('diff -urN'));
      assert.equal(typeof t.scores?.design_score, 'number');
      assert.deepEqual(t.steps.map((s) => s.phase).filter((p, i, a) => a.indexOf(p) === i), ['design', 'implementation', 'conclusion']);
      assert.equal(t.steps.every((s) => s.phaseInferred === false), true);
    }
    assert.ok(ts[0].problems.some((p) => /task_index_1's workspace but the record is task index 0/.test(p.message)), JSON.stringify(ts[0].problems));
    assert.equal(ts[1].problems.some((p) => /workspace but the record/.test(p.message)), false);
    assert.equal(ts[3].steps.filter((s) => s.kind === 'edit').map((s) => s.edits![0].path).join(','), 'control_experiment_1195150d-af6c-4dd0-9d8f-233d2a1d5d92_control_group_partition_1.sh,train.py');
  });

  it('each EXP-Bench harness file read alone: the whole record, its other files read from beside it (design + one edit per file + conclusion + verdict), the run config none', async () => {
    const dir = path.join(DATA, 'exp-bench/Just-Curieous__Curie');
    // steps per record, by hand: gen.json has `design` and `conclusion` (2); the patches have 1, 1, 1, 2 `diff -urN` headers; the judge file is one verdict
    const patches = [1, 1, 1, 2];
    for (let i = 0; i < 4; i++) {
      for (const suffix of ['gen.json', 'gen.patch', 'judge.json', 'gen_config_config.json']) {
        const f = path.join(dir, 'azure-gpt-4o', `93022_task_index_${i}_iter_1_duration_0.67_eval_${suffix}`);
        const { ts, r } = await collect([f]);
        assert.deepEqual(r.files.map((x) => [x.file, x.format, x.unreadable]), [[f, 'exp-bench-harness', false]], f);
        assert.deepEqual(ts.map((t) => [t.id, t.task, t.steps.length, t.files?.length]), [[`93022/${i}`, `neurips2024/93022/${i}`, 2 + patches[i] + 1, 4]], f);
        assert.ok(ts[0].problems.some((p) => /read with the record's files beside it/.test(p.message)), f);
      }
    }
    const { ts, r } = await collect([path.join(dir, 'configs/main_93022_judge_config.json')]);
    assert.equal(ts.length, 0);
    assert.deepEqual(r.files.map((x) => [x.format, x.unreadable]), [['exp-bench-harness', false]]);
    assert.match(r.problems[0].message, /run configuration \(no task index\): no trajectory of its own/);
  });

  it('`expbench traj import` of all 31 files: exit 0, one JSON object, 24 trajectories, shares reported', async () => {
    const all: string[] = [];
    const walk = async (d: string) => { for (const e of await fsp.readdir(d, { withFileTypes: true })) { const p = path.join(d, e.name); if (e.isDirectory()) await walk(p); else if (e.name !== 'README.md') all.push(p); } };
    await walk(DATA);
    assert.equal(all.length, 31);
    const res = await cli('traj', 'import', ...all.sort(), '--json');
    assert.equal(res.code, 0, res.stderr);
    const out = JSON.parse(res.stdout);
    assert.equal(out.trajectories.length, 5 + 1 + 1 + 1 + 1 + 3 + 1 + 2 + 2 + 2 + 1 + 4);
    for (const t of out.trajectories) {
      assert.equal(typeof t.mappedShare, 'number');
      assert.ok(t.mappedShare > 0 && t.mappedShare <= 1);
      assert.ok(t.steps > 0);
      assert.ok(['id', 'format', 'task', 'steps', 'mappedShare', 'redactions', 'problems'].every((k) => k in t));
    }
    assert.ok(out.problems.some((p: { message: string }) => /no samples \(status cancelled\)/.test(p.message)));
  });
});
