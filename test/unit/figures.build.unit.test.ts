import * as assert from 'node:assert/strict';
import { promises as fsp } from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { buildFigures, FUNNEL, PHASES } from '../../src/core/figures/build';
import { runFacts } from '../../src/core/figures/facts';
import { FAILURE_APART } from '../../src/core/figures/failures';
import { wilson } from '../../src/core/figures/intervals';
import type { BarFigure, FigureSet, HeatFigure, StackFigure } from '../../src/core/figures/model';
import { collectOutcomes } from '../../src/core/interop/collect';
import { POLICIES } from '../../src/core/metrics/policies';
import { METRICS } from '../../src/core/metrics/scores';
import { buildTable, label } from '../../src/core/metrics/table';
import type { TaskOutcome } from '../../src/core/metrics/types';
import { groupOutcomesByActor } from '../../src/core/viewer/triage';
import { harnessDir, realJudgeFiles, writeVariants } from './figures.fixtures';

const bars = (s: FigureSet, id: string) => s.figures.find((f) => f.id === id) as BarFigure;

describe('figures: built from the metrics table only', function () {
  let tmp: string;
  let outcomes: TaskOutcome[];
  let real: string;

  before(async () => {
    tmp = await fsp.mkdtemp(path.join(os.tmpdir(), 'expbench-figures-'));
    real = await harnessDir();
    await writeVariants(path.join(tmp, 'harness'), await realJudgeFiles(real), { papers: 9, tasksPerPaper: 5 });
    outcomes = (await collectOutcomes([real, path.join(tmp, 'harness')])).outcomes;
    assert.ok(outcomes.length >= 60, `${outcomes.length} outcomes`);
  });
  after(async () => { await fsp.rm(tmp, { recursive: true, force: true }); });

  for (const policy of Object.values(POLICIES)) {
    it(`${policy.name}: every funnel bar is the report table's cell, with the Wilson interval of its k/n and the runs behind it`, async () => {
      const set = buildFigures(outcomes, await runFacts(outcomes), policy, { resamples: 200 });
      const table = buildTable(outcomes, policy, { resamples: 200 });
      assert.deepEqual(set.table.rows, table.rows, 'the figures\' table is the report\'s');
      const f = bars(set, 'funnel');
      assert.equal(f.data.length, table.rows.length * FUNNEL.length);
      for (const r of table.rows) {
        for (const stage of FUNNEL) {
          const d = f.data.find((x) => x.series === r.group && x.x === stage.label)!;
          if (stage.metric === null) { assert.deepEqual([d.k, d.n], [r.tasks, r.tasks]); continue; }
          const c = r.metrics[stage.metric];
          assert.deepEqual([d.k, d.n, d.value], [c.k, c.n, c.rate], `${r.group} ${stage.label}`);
          assert.deepEqual(d.low === null ? null : [d.low, d.high], wilson(c.k, c.n));
          assert.equal(d.runs.length, c.n);
          assert.equal(d.hits.length, c.k);
          assert.ok(d.hits.every((h) => d.runs.includes(h)));
        }
        // a funnel never rises: each conjunction's hits are among the previous stage's
        const stages = FUNNEL.slice(1).map((s) => f.data.find((x) => x.series === r.group && x.x === s.label)!);
        for (let i = 1; i < stages.length; i++) assert.ok(stages[i].hits.every((h) => stages[i - 1].hits.includes(h)), `${r.group}: ${stages[i].x} ⊆ ${stages[i - 1].x}`);
      }
    });
  }

  it('human vs agent: the per-phase bars are the table of the outcomes regrouped by actor (triage\'s own regrouping)', async () => {
    const policy = POLICIES['paper-likely'];
    const set = buildFigures(outcomes, await runFacts(outcomes), policy, { resamples: 200 });
    const byActor = buildTable(await groupOutcomesByActor(outcomes), policy, { resamples: 200 });
    const f = bars(set, 'phases-actor');
    assert.deepEqual(f.seriesOrder, byActor.rows.map((r) => r.group));
    for (const r of byActor.rows) for (const m of PHASES) {
      const d = f.data.find((x) => x.series === r.group && x.x === label(m))!;
      assert.deepEqual([d.k, d.n], [r.metrics[m].k, r.metrics[m].n]);
    }
    // models: the harness's model folders; conferences: the task ids' first part
    assert.deepEqual(bars(set, 'phases-model').seriesOrder, ['azure-gpt-4o', 'o3-mini']);
    assert.deepEqual(bars(set, 'phases-conference').seriesOrder, ['iclr2024', 'neurips2024']);
    // no dataset given: every task type is unknown, and says so
    assert.deepEqual(bars(set, 'phases-task-type').seriesOrder, ['type unknown (task not in the datasets)']);
  });

  it('the per-paper heat map adds up to the table: over papers, k and n sum to the group\'s cell', async () => {
    const policy = POLICIES['paper-likely'];
    const set = buildFigures(outcomes, await runFacts(outcomes), policy, { resamples: 100 });
    const heat = set.figures.find((f) => f.id === 'heatmap-paper') as HeatFigure;
    assert.equal(heat.rowOrder.length, 10, 'the real paper and nine generated ones');
    for (const r of set.table.rows) for (const m of METRICS) {
      const cells = heat.data.filter((d) => d.facet === r.group && d.col === label(m));
      assert.equal(cells.reduce((s, d) => s + d.k, 0), r.metrics[m].k, `${r.group} ${m} k`);
      assert.equal(cells.reduce((s, d) => s + d.n, 0), r.metrics[m].n, `${r.group} ${m} n`);
    }
    // the phases-by-paper figure
    const byPaper = bars(set, 'phases-paper');
    assert.equal(byPaper.xOrder.length, 10, 'more papers than colours: papers on the x axis, phases as series');
    assert.deepEqual(byPaper.seriesOrder, PHASES.map(label));
  });

  it('the failure breakdown: each task once, harness errors and not-computable tasks apart, never among the failures', async () => {
    for (const policy of Object.values(POLICIES)) {
      const set = buildFigures(outcomes, await runFacts(outcomes), policy, { resamples: 100 });
      const f = set.figures.find((x) => x.id === 'failures') as StackFigure;
      for (const r of set.table.rows) {
        const segs = f.data.filter((d) => d.y === r.group);
        assert.equal(segs.reduce((s, d) => s + d.count, 0), r.tasks, `${policy.name} ${r.group}: every task once`);
        assert.ok(Math.abs(segs.reduce((s, d) => s + d.share, 0) - 1) < 1e-9);
      }
      const cat = (src: string) => f.data.find((d) => d.runs.includes(src))!.category;
      for (const o of outcomes) {
        const c = cat(o.source);
        if (o.invalid) assert.equal(c, 'invalid task');
        else if (o.design.status === 'harness_error' && !(policy.monitorZeroes && o.monitorFlagged)) assert.equal(c, 'harness error', o.source);
        if (c === 'harness error') assert.ok(o.harnessErrors.length > 0);
        if (policy.monitorZeroes && o.monitorFlagged && !o.invalid && o.design.status === 'ok') assert.equal(c, 'zeroed by the monitor');
      }
      assert.ok(f.data.some((d) => d.category === 'harness error'), 'the variants hold harness errors');
      assert.ok(f.apart.every((a) => (FAILURE_APART as readonly string[]).includes(a)));
      // all correct = the table's All·E✓ hits
      for (const r of set.table.rows) {
        const ok = f.data.find((d) => d.y === r.group && d.category === 'all correct (All·E✓)');
        assert.equal(ok?.count ?? 0, r.metrics.AllE.k, `${policy.name} ${r.group}`);
      }
    }
  });

  it('captions name n, the policy and the interval method; specs stay inside the palette', async () => {
    const set = buildFigures(outcomes, await runFacts(outcomes), POLICIES.strict, { resamples: 100 });
    for (const f of set.figures) {
      assert.match(f.caption, /Policy strict: /, f.id);
      assert.match(f.caption, /n( tasks)?: /, f.id);
      assert.match(f.caption, f.interval === 'wilson' ? /Wilson score intervals/ : /no interval/, f.id);
    }
  });

  it('refuses facts that are not one per outcome', async () => {
    assert.throws(() => buildFigures(outcomes, [], POLICIES.strict), /0 facts for \d+ outcomes/);
  });
});
