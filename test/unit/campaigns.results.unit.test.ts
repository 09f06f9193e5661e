import * as assert from 'node:assert/strict';
import { promises as fsp } from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { campaignBoard } from '../../src/core/campaigns';
import { readRunSet as readFiguresRunSet } from '../../src/core/figures/runSet';
import { buildCampaignWithSessions, type CampaignFixture } from '../harness/campaignFixture';
import { writeHarnessRecords } from '../harness/runSetFixture';
import { cli } from './cli.helpers';

interface ReportJson {
  rows: Array<{ group: string; kind: string; tasks: number; metrics: Record<string, { k: number; n: number }> }>;
  tasks: Array<{ taskId: string; group: string; D: number | null; I: number | null }>;
}

/**
 * Issue 32 item 5: a campaign's sessions flow into `expbench report` and the figures as the
 * `human` actor, beside agent runs of the same tasks (the reference harness's judge files of
 * fixture2026/90001/0 and /1). Real session folders (test/harness/campaignFixture.ts): ana's
 * submitted session judged by the heuristic pre-judge, the others not submitted.
 */
describe('campaigns: human units in the report and the figures (the `human` actor beside agents)', function () {
  this.timeout(240_000);
  let tmp: string;
  let fx: CampaignFixture;
  let harness: string;

  before(async () => {
    tmp = await fsp.mkdtemp(path.join(os.tmpdir(), 'expbench-campaign-results-'));
    fx = await buildCampaignWithSessions(tmp);
    harness = await writeHarnessRecords(path.join(tmp, 'harness'), [0, 1]);
  });
  after(async () => { await fsp.rm(tmp, { recursive: true, force: true }); });

  it('the Results view\'s run-set reader counts a campaign unit finished once its session is submitted (no unit.finished is written for people)', async () => {
    const rs = await readFiguresRunSet(fx.dir);
    assert.deepEqual(rs.units.map((u) => [u.name, u.status, u.human ?? false]), [
      ['fixture2026-90001-0.ana.a1', 'done', true], ['fixture2026-90001-1.ana.a1', 'planned', true],
      ['fixture2026-90001-0.bo.a1', 'planned', true], ['fixture2026-90001-1.bo.a1', 'planned', true],
    ]);
  });

  it('`report --by actor` has a human row (the campaign) and an agent row (the harness) on the same tasks, the human scores the board\'s', async () => {
    const r = await cli(['report', fx.dir, harness, '--by', 'actor', '--json', '--dataset', fx.dataset]);
    assert.equal(r.code, 0, r.stderr);
    const out = JSON.parse(r.stdout) as ReportJson;
    const groups = out.rows.map((x) => `${x.group}/${x.kind}:${x.tasks}`).sort();
    assert.deepEqual(groups, ['agent/llm:2', 'human/heuristic:1'], JSON.stringify(out.rows));
    const human = out.tasks.filter((t) => t.group === 'human');
    assert.deepEqual(human.map((t) => t.taskId), ['fixture2026/90001/0'], 'only the submitted and judged session');
    assert.deepEqual(out.tasks.filter((t) => t.group === 'agent').map((t) => t.taskId).sort(), ['fixture2026/90001/0', 'fixture2026/90001/1']);
    const board = await campaignBoard(fx.dir, fx.view, fx.now);
    const row = board.find((b) => b.session === 'fixture2026-90001-0.ana.a1')!;
    const humanRow = out.rows.find((x) => x.group === 'human')!;
    assert.equal(humanRow.metrics.D.k, row.outcome!.D ? 1 : 0, 'the report\'s D of the human unit is the board\'s');
    assert.equal(humanRow.metrics.D.n, 1);
    // by folder: the campaign's folder is its own group
    const byFolder = JSON.parse((await cli(['report', fx.dir, '--json', '--dataset', fx.dataset])).stdout) as ReportJson;
    assert.equal(byFolder.tasks.length, 1);
  });

  it('`report --figures`: the per-actor figure compares human and agent on the tasks, each n as the table\'s', async () => {
    const out = path.join(tmp, 'figures');
    const r = await cli(['report', fx.dir, harness, '--by', 'actor', '--figures', out, '--dataset', fx.dataset]);
    assert.equal(r.code, 0, r.stderr);
    const spec = JSON.parse(await fsp.readFile(path.join(out, 'phases-actor.vl.json'), 'utf8')) as { data: { values: Array<Record<string, unknown>> } };
    const series = [...new Set(spec.data.values.map((d) => String(d.series)))].sort();
    assert.deepEqual(series, ['agent', 'human (heuristic judge)'], 'human beside agent; heuristic verdicts labelled, never pooled');
    const humanD = spec.data.values.find((d) => d.series === 'human (heuristic judge)' && d.x === 'D')!;
    assert.equal(humanD.n, 1);
    assert.deepEqual(humanD.runs, [path.join(fx.dir, 'units', 'fixture2026-90001-0.ana.a1')], 'the bar opens the person\'s session');
    assert.equal(spec.data.values.find((d) => d.series === 'agent' && d.x === 'D')!.n, 2);
    const csv = await fsp.readFile(path.join(out, 'table.csv'), 'utf8');
    assert.match(csv, /fixture2026-90001-0\.ana\.a1/, 'table.csv names the human run behind its cells');
  });
});
