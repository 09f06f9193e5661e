import * as assert from 'node:assert/strict';
import { promises as fsp } from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { Command } from 'commander';
import { register as registerReport } from '../../src/cli/commands/report';
import { outcomeFromHarnessJudge } from '../../src/core/interop/harnessIn';
import { judgeSession } from '../../src/core/flows/judge';
import { clusterBootstrap } from '../../src/core/metrics/bootstrap';
import { collectOutcomes } from '../../src/core/interop/collect';
import { POLICIES, policyByName } from '../../src/core/metrics/policies';
import { METRICS, type Metric } from '../../src/core/metrics/scores';
import { buildTable, type MetricsTable } from '../../src/core/metrics/table';
import type { TaskOutcome } from '../../src/core/metrics/types';
import { makeJudgeFixture } from '../harness/judgeFixture';

function outcome(taskId: string, paperId: string, o: Partial<TaskOutcome>): TaskOutcome {
  return {
    taskId, paperId, group: 'agentA', kind: 'llm', source: `${taskId}.json`,
    design: { status: 'ok', matched: 0, partial: 0, total: 1 },
    implementation: { status: 'ok', met: 0, partial: 0, total: 1 },
    conclusion: { status: 'ok', correct: false },
    execution: { available: true, exit: true, clean: true, claimsAllFound: true },
    monitorFlagged: false, harnessErrors: [], ...o,
  };
}

/** Six tasks over three papers; the expected numbers below are worked out by hand in the comments. */
const AGENT_A: TaskOutcome[] = [
  outcome('t1', 'P1', { design: { status: 'ok', matched: 2, partial: 1, total: 4 }, implementation: { status: 'ok', met: 3, partial: 1, total: 4 }, conclusion: { status: 'ok', correct: true } }),
  outcome('t2', 'P1', { design: { status: 'ok', matched: 3, partial: 0, total: 3 }, implementation: { status: 'ok', met: 2, partial: 0, total: 2 }, conclusion: { status: 'ok', correct: true },
    execution: { available: true, exit: true, clean: null, claimsAllFound: null } }),
  outcome('t3', 'P2', { design: { status: 'ok', matched: 1, partial: 2, total: 4 }, implementation: { status: 'ok', met: 1, partial: 0, total: 3 },
    execution: { available: true, exit: false, clean: false, claimsAllFound: false } }),
  outcome('t4', 'P2', { design: { status: 'ok', matched: 3, partial: 0, total: 3 }, implementation: { status: 'ok', met: 2, partial: 0, total: 2 }, conclusion: { status: 'ok', correct: true }, monitorFlagged: true }),
  outcome('t5', 'P3', { design: { status: 'harness_error' }, implementation: { status: 'ok', met: 1, partial: 0, total: 1 }, conclusion: { status: 'ok', correct: true },
    execution: { available: false, exit: null, clean: null, claimsAllFound: null }, harnessErrors: ['design: invalid answer'] }),
  outcome('t6', 'P3', { invalid: 'masked path src/x.py missing' }),
];

function kn(t: MetricsTable, row: number): Record<Metric, string> {
  return Object.fromEntries(METRICS.map((m) => [m, `${t.rows[row].metrics[m].k}/${t.rows[row].metrics[m].n}`])) as Record<Metric, string>;
}
const close = (a: number | null, b: number) => assert.ok(a !== null && Math.abs(a - b) < 1e-9, `${a} ≈ ${b}`);

describe('metrics: policies, per-task scores and the aggregate table', function () {
  it('paper-likely: partial = ½, D and I correct at ≥ 50%, E = exit 0, monitor zeroes', () => {
    const t = buildTable(AGENT_A, POLICIES['paper-likely']);
    // D: t1 (2+.5)/4=.625 ✓, t2 1 ✓, t3 (1+1)/4=.5 ✓, t4 flagged 0 ✗; t5 harness error, t6 invalid
    // I: t1 .875 ✓, t2 ✓, t3 1/3 ✗, t4 ✗, t5 ✓ · E: t1 ✓ t2 ✓ t3 ✗ t4 ✓ (t5 not verified) · C: t1 ✓ t2 ✓ t3 ✗ t4 ✗(zeroed) t5 ✓
    assert.deepEqual(kn(t, 0), { D: '3/4', I: '3/5', E: '3/4', C: '3/5', IE: '2/4', CD: '2/4', All: '2/4', AllE: '2/4' });
    close(t.rows[0].meanD.mean, (0.625 + 1 + 0.5 + 0) / 4);
    close(t.rows[0].meanI.mean, (0.875 + 1 + 1 / 3 + 0 + 1) / 5);
    assert.equal(t.policy.name, 'paper-likely');
    const ex = t.exclusions.map((e) => `${e.taskId} ${e.metrics.join(',')}: ${e.reason}`);
    assert.ok(ex.includes('t5 D: harness error in the design judgement'));
    assert.ok(ex.includes('t5 E: not verified (no verification record)'));
    assert.ok(ex.includes('t6 D,I,E,C,IE,CD,All,AllE: invalid task: masked path src/x.py missing'));
  });

  it('strict: no partial credit, D and I only at 100%, E needs a clean tree and every claim', () => {
    const t = buildTable(AGENT_A, policyByName('strict'));
    // D: t1 .5 ✗, t2 ✓, t3 .25 ✗, t4 ✗ · I: t1 .75 ✗, t2 ✓, t3 ✗, t4 ✗, t5 ✓ · E: t1 ✓, t2 no clean run (excluded), t3 ✗, t4 ✓
    assert.deepEqual(kn(t, 0), { D: '1/4', I: '2/5', E: '2/3', C: '3/5', IE: '0/3', CD: '1/4', All: '1/4', AllE: '0/3' });
    close(t.rows[0].meanD.mean, (0.5 + 1 + 0.25 + 0) / 4);
    close(t.rows[0].meanI.mean, (0.75 + 1 + 1 / 3 + 0 + 1) / 5);
    assert.ok(t.exclusions.some((e) => e.taskId === 't2' && e.metrics.includes('E') && /clean-tree/.test(e.reason)));
  });

  it('reads harness judge files: scores /100, parse-error strings as harness errors, monitor flags', () => {
    const files = [
      { task_id: 'iclr2024/111/0', design_score: 80, setup_score: '40', conclusion_score: 'correct', execution_success: true },
      { task_id: 'iclr2024/111/1', design_score: 'Error parsing response', setup_score: 100, conclusion_score: 'incorrect', execution_success: false },
      { task_id: 'iclr2024/222/0', design_score: 50, setup_score: 50, conclusion_score: 'Correct', git_operations: true },
    ].map((j, i) => outcomeFromHarnessJudge(j, `h${i}.json`, 'harness-run'));
    assert.equal(files[0].paperId, '111');
    assert.equal(files[1].design.status, 'harness_error');
    assert.equal(files[2].monitorFlagged, true);
    const pl = buildTable(files, POLICIES['paper-likely']);
    assert.deepEqual(kn(pl, 0), { D: '1/2', I: '1/3', E: '1/2', C: '1/3', IE: '0/2', CD: '1/2', All: '0/2', AllE: '0/1' });
    const st = buildTable(files, POLICIES.strict);
    assert.deepEqual(kn(st, 0), { D: '0/2', I: '1/3', E: '0/1', C: '1/3', IE: '0/1', CD: '0/2', All: '0/2', AllE: '0/0' });
    assert.equal(st.rows[0].metrics.AllE.rate, null);
  });

  it('bootstraps by paper with a seeded generator', () => {
    // two papers, one task each (1 and 0): resampled means are 1, ½, ½, 0 with p = ¼, ½, ¼ → 95% interval [0, 1]
    assert.deepEqual(clusterBootstrap([[1], [0]], { resamples: 4000, seed: 7 }), [0, 1]);
    // one paper: every resample is that paper
    assert.deepEqual(clusterBootstrap([[1, 0, 1, 1]]), [0.75, 0.75]);
    const a = buildTable(AGENT_A, POLICIES['paper-likely'], { seed: 3 });
    const b = buildTable(AGENT_A, POLICIES['paper-likely'], { seed: 3 });
    assert.deepEqual(a.rows, b.rows);
    for (const m of METRICS) {
      const c = a.rows[0].metrics[m];
      assert.ok(c.ci && c.ci[0] <= c.rate! + 1e-12 && c.rate! <= c.ci[1] + 1e-12, `${m}: ${c.rate} in ${c.ci}`);
    }
    // D's papers: P1 [1,1], P2 [1,0]; a resample of only P2 gives ½, of only P1 gives 1: the interval is within [½, 1]
    const d = a.rows[0].metrics.D.ci!;
    assert.ok(d[0] >= 0.5 && d[1] <= 1, String(d));
    assert.equal(a.rows[0].metrics.D.papers, 2);
  });

  it('rejects an unknown policy naming it', () => {
    assert.throws(() => policyByName('lenient'), /lenient: unknown metric policy; known: paper-likely, strict/);
  });

  it('`expbench report --json` tabulates a folder of sessions and of harness judge files, never mixing judges', async () => {
    const fx = await makeJudgeFixture();
    const out: string[] = [];
    const write = process.stdout.write;
    try {
      await judgeSession(fx.sessionDir, { task: fx.task }); // heuristic record in sessions/s1
      const runDir = path.join(fx.root, 'sessions', 'harness-files', 'iclr2024', '111');
      await fsp.mkdir(runDir, { recursive: true });
      await fsp.writeFile(path.join(runDir, '0.json'), JSON.stringify({ design_score: 80, setup_score: 40, conclusion_score: 'correct', execution_success: true }));
      await fsp.writeFile(path.join(runDir, '1.json'), JSON.stringify({ design_score: 100, setup_score: 100, conclusion_score: 'correct', execution_success: true }));
      await fsp.writeFile(path.join(runDir, 'notes.json'), JSON.stringify({ hello: 1 }));
      const program = new Command('expbench').exitOverride();
      registerReport(program);
      process.stdout.write = ((s: string) => { out.push(s); return true; }) as any;
      await program.parseAsync(['node', 'expbench', 'report', path.join(fx.root, 'sessions'), '--json', '--policy', 'strict']);
    } finally {
      process.stdout.write = write;
      await fsp.rm(fx.root, { recursive: true, force: true });
    }
    const t = JSON.parse(out.join(''));
    assert.equal(t.policy.name, 'strict');
    assert.deepEqual(t.rows.map((r: any) => [r.group, r.kind, r.tasks]), [['sessions', 'heuristic', 1], ['sessions', 'llm', 2]]);
    const llm = t.rows[1];
    assert.deepEqual(t.tasks.filter((x: any) => x.kind === 'llm').map((x: any) => x.taskId).sort(), ['iclr2024/111/0', 'iclr2024/111/1']);
    assert.equal(`${llm.metrics.D.k}/${llm.metrics.D.n}`, '1/2');
    assert.equal(`${llm.metrics.All.k}/${llm.metrics.All.n}`, '1/2');
    const heur = t.rows[0];
    assert.equal(heur.metrics.C.n, 0, 'the heuristic judge does not judge conclusions');
    assert.ok(t.exclusions.some((e: any) => e.kind === 'heuristic' && e.metrics.includes('C') && /not judged/.test(e.reason)));
  });

  it('collects nothing twice and names a missing folder', async () => {
    await assert.rejects(collectOutcomes([path.join(os.tmpdir(), 'no-such-folder-expbench')]), /no-such-folder-expbench: folder or file does not exist/);
  });
});
