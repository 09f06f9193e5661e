// `expbench report DIR… --figures OUT` over the real reference-harness output (with mutated
// variants of its files) and a folder of real sessions of the bundled sample (a person's, judged
// offline by the heuristic judge; another an outside agent attached to, unconfined): table.csv holds
// the numbers of `report --json`, the SVGs parse as XML, the Vega-Lite specs validate against the
// vega-lite package's own schema. (report.html in Chromium: test/e2e/results.e2e.test.ts.)
import * as assert from 'node:assert/strict';
import { promises as fsp } from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { DOMParser } from '@xmldom/xmldom';
import Ajv from 'ajv';
import { parse } from 'csv-parse/sync';
import { SessionService } from '../../src/core/flows/sessionService';
import { TABLE_CSV_COLUMNS } from '../../src/core/figures/csv';
import { METRICS } from '../../src/core/metrics/scores';
import type { MetricsTable } from '../../src/core/metrics/table';
import { cli, OFFLINE_ENV, ROOT } from './cli.helpers';
import { harnessDir, realJudgeFiles, writeVariants } from './figures.fixtures';
import { makeHumanSession } from './triage.fixtures';

const FIGURE_IDS = ['funnel', 'phases-actor', 'phases-model', 'phases-paper', 'phases-conference', 'phases-task-type', 'failures', 'heatmap-paper'];

/** Parses XML strictly: any warning or error of the parser fails. */
function parseXml(text: string, file: string): Document {
  return new DOMParser({ onError: (level, msg) => { throw new Error(`${file}: XML ${level}: ${msg}`); } }).parseFromString(text, 'image/svg+xml') as unknown as Document;
}

async function validator() {
  const schema = JSON.parse(await fsp.readFile(path.join(ROOT, 'node_modules', 'vega-lite', 'build', 'vega-lite-schema.json'), 'utf8'));
  // The schema uses draft-07 and union types, which ajv's strict mode refuses as a schema (not the
  // specs); its string formats (`uri` of `$schema`, `uri-reference` of URLs) are not what these tests check.
  return new Ajv({ strict: false, formats: { uri: true, 'uri-reference': true, 'color-hex': /^#(?:[0-9a-f]{3}|[0-9a-f]{6})$/i } }).compile(schema);
}

describe('cli: report --figures', function () {
  this.timeout(300_000);
  let tmp: string;
  let harness: string;
  let sessions: string;

  before(async () => {
    tmp = await fsp.mkdtemp(path.join(os.tmpdir(), 'expbench-cli-figures-'));
    harness = path.join(tmp, 'harness');
    await fsp.cp(await harnessDir(), path.join(harness, 'real'), { recursive: true });
    await writeVariants(path.join(harness, 'variants'), await realJudgeFiles(await harnessDir()), { papers: 4, tasksPerPaper: 4 });
    sessions = path.join(tmp, 'sessions');
    const human = path.join(sessions, 'human-toycal');
    await makeHumanSession(human, path.join(tmp, 'cache'), { verify: false });
    // a session an outside agent attached to with its own shell (docs/outside-agents.md): an agent's run, unconfined;
    // a run of its own (a copy of the human's folder would be the same run, which report counts once: folded)
    const outside = path.join(sessions, 'outside-toycal');
    await makeHumanSession(outside, path.join(tmp, 'cache'), { verify: false });
    const service = new SessionService();
    const h = await service.open(outside, { client: 'test' });
    await h.record({ type: 'agent.attached', client: 'claude-code', via: 'mcp', transport: 'stdio', unconfined: true });
    await h.release();
  });
  after(async () => { await fsp.rm(tmp, { recursive: true, force: true }); });

  for (const by of ['folder', 'actor'] as const) {
    it(`--by ${by}: table.csv holds report --json's numbers (every cell, both intervals) and the runs of each cell`, async () => {
      const out = path.join(tmp, `out-${by}`);
      const json = await cli(['report', harness, sessions, '--json', '--by', by, '--resamples', '300']);
      assert.equal(json.code, 0, json.stderr);
      const withFigures = await cli(['report', harness, sessions, '--json', '--by', by, '--resamples', '300', '--figures', out]);
      assert.equal(withFigures.code, 0, withFigures.stderr);
      const table = JSON.parse(json.stdout) as MetricsTable & { unconfined: { session: string }[] };
      const tf = JSON.parse(withFigures.stdout) as MetricsTable & { figures: { out: string; files: string[] } };
      assert.deepEqual(tf.rows, table.rows, '--figures prints the same table');
      assert.equal(tf.figures.files.length, 2 + 2 * FIGURE_IDS.length);
      assert.ok(table.rows.length >= (by === 'actor' ? 2 : 3), `rows: ${table.rows.map((r) => r.group).join(', ')}`);
      const records = parse(await fsp.readFile(path.join(out, 'table.csv'), 'utf8'), { columns: true }) as Record<string, string>[];
      assert.deepEqual(Object.keys(records[0]), [...TABLE_CSV_COLUMNS]);
      assert.equal(records.length, table.rows.length * (METRICS.length + 2));
      const num = (s: string) => (s === '' ? null : Number(s));
      for (const r of table.rows) {
        for (const m of METRICS) {
          const c = r.metrics[m];
          const rec = records.find((x) => x.group === r.group && x.judge === r.kind && x.metric === m)!;
          assert.ok(rec, `${r.group} ${m} in table.csv`);
          assert.deepEqual([num(rec.k), num(rec.n), num(rec.rate), num(rec.bootstrap_low), num(rec.bootstrap_high), num(rec.papers), num(rec.tasks)],
            [c.k, c.n, c.rate, c.ci?.[0] ?? null, c.ci?.[1] ?? null, c.papers, r.tasks], `${r.group} ${m}`);
          const runs = rec.runs ? rec.runs.split(';') : [];
          const hits = rec.correct_runs ? rec.correct_runs.split(';') : [];
          assert.equal(runs.length, c.n);
          assert.equal(hits.length, c.k);
          assert.equal(rec.wilson_low === '', c.n === 0);
          if (c.n) assert.ok(Number(rec.wilson_low) <= c.rate! && Number(rec.wilson_high) >= c.rate!);
          assert.equal(rec.policy, table.policy.name);
        }
        for (const [m, mc] of [['meanD', r.meanD], ['meanI', r.meanI]] as const) {
          const rec = records.find((x) => x.group === r.group && x.judge === r.kind && x.metric === m)!;
          assert.deepEqual([num(rec.n), num(rec.rate), num(rec.bootstrap_low), num(rec.bootstrap_high)], [mc.n, mc.mean, mc.ci?.[0] ?? null, mc.ci?.[1] ?? null]);
        }
      }
      // run keys name files and folders that exist (relative to the folder the command ran in, or absolute)
      for (const rec of records) for (const k of rec.runs.split(';').filter(Boolean)) await fsp.access(path.resolve(ROOT, k));
    });
  }

  it('the SVGs parse as XML (one per figure, a title and a caption each); the Vega-Lite specs validate against vega-lite\'s schema', async () => {
    const out = path.join(tmp, 'out-folder');
    const validate = await validator();
    for (const id of FIGURE_IDS) {
      const file = path.join(out, `${id}.svg`);
      const doc = parseXml(await fsp.readFile(file, 'utf8'), file);
      const svg = doc.documentElement!;
      assert.equal(svg.nodeName, 'svg');
      assert.equal(svg.getAttribute('xmlns'), 'http://www.w3.org/2000/svg');
      assert.ok(Number(svg.getAttribute('width')) > 0 && Number(svg.getAttribute('height')) > 0);
      assert.match(svg.getElementsByTagName('desc')[0]!.textContent ?? '', /Policy paper-likely/);
      assert.ok(svg.getElementsByTagName('rect').length > 3, `${id}: bars or cells drawn`);
      assert.equal(svg.getElementsByTagName('script').length, 0);
      assert.doesNotMatch(await fsp.readFile(file, 'utf8'), /\sstyle="/, `${id}: no style attributes (report.html's CSP)`);
      const specFile = path.join(out, `${id}.vl.json`);
      const spec = JSON.parse(await fsp.readFile(specFile, 'utf8')) as { data: { values: { runs: string[] }[] }; $schema: string };
      assert.ok(validate(spec), `${specFile}: ${JSON.stringify(validate.errors?.slice(0, 3))}`);
      assert.match(spec.$schema, /vega-lite\/v6/);
      assert.ok(spec.data.values.length > 0 && spec.data.values.every((v) => Array.isArray(v.runs)), `${id}: data inline, with the run keys`);
    }
    // the schema is no rubber stamp: a spec with a mark that does not exist fails it
    const bad = JSON.parse(await fsp.readFile(path.join(out, 'funnel.vl.json'), 'utf8'));
    bad.layer[0].mark.type = 'barr';
    assert.equal(validate(bad), false);
  });

  it('the unconfined session is marked in the failure breakdown and on report.html', async () => {
    const out = path.join(tmp, 'out-folder');
    const spec = JSON.parse(await fsp.readFile(path.join(out, 'failures.vl.json'), 'utf8')) as { data: { values: { unconfined: string[] }[] }; title: { subtitle: string[] } };
    const marked = spec.data.values.flatMap((v) => v.unconfined);
    assert.equal(marked.length, 1);
    assert.match(marked[0], /outside-toycal$/);
    assert.match(spec.title.subtitle.join(' '), /† marks 1 task from sessions where an outside agent kept its own shell/);
    assert.match(await fsp.readFile(path.join(out, 'report.html'), 'utf8'), /Unconfined \(an outside agent kept its own shell on the host\): [^<]*outside-toycal/);
  });

  it('an OUT that is a file is refused, naming it, and nothing is written', async () => {
    const file = path.join(tmp, 'a-file');
    await fsp.writeFile(file, 'keep me');
    const r = await cli(['report', harness, '--figures', file], { env: OFFLINE_ENV });
    assert.equal(r.code, 2, r.stderr);
    assert.match(r.stderr, /--figures .*a-file: is a file, not a folder for the figures/);
    assert.equal(await fsp.readFile(file, 'utf8'), 'keep me');
  });
});
