import * as assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { promises as fsp } from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { buildFigures } from '../../src/core/figures/build';
import { runFacts } from '../../src/core/figures/facts';
import { isRunSetFolder, readRunSet } from '../../src/core/figures/runSet';
import { collectOutcomes } from '../../src/core/interop/collect';
import { POLICIES } from '../../src/core/metrics/policies';
import { ResultsMessageSchema } from '../../src/protocol/results';
import { resultsMessage } from '../../src/extension/results/payload';
import { harnessDir } from './figures.fixtures';

// The run-set state as runs.md of issue 27 gives it: JSON Lines, `v` 1, the records the
// Results view reads and others it skips; a torn last line as a killed writer leaves it.
const at = '2026-12-01T10:00:00Z';
const lines = [
  { v: 1, at, type: 'runset.created', id: 'rs1', name: 'toycal six', spec: {}, specFile: 'spec.jsonc', tool: 'expbench 0.1.0' },
  { v: 1, at, type: 'unit.planned', unit: 'k1', name: 'sample-toycal-0.scripted.a1', task: 'sample/toycal/0', actor: { kind: 'agent', name: 'scripted' }, attempt: 1, resources: {}, keyParts: {}, dir: 'units/sample-toycal-0.scripted.a1' },
  { v: 1, at, type: 'unit.planned', unit: 'k2', name: 'sample-toycal-0.scripted.a2', task: 'sample/toycal/0', actor: { kind: 'agent', name: 'scripted' }, attempt: 2, resources: {}, keyParts: {}, dir: 'units/sample-toycal-0.scripted.a2' },
  { v: 1, at, type: 'unit.planned', unit: 'k3', name: 'sample-toycal-0.scripted.a3', task: 'sample/toycal/0', actor: { kind: 'agent', name: 'scripted' }, attempt: 3, resources: {}, keyParts: {}, dir: 'units/sample-toycal-0.scripted.a3' },
  { v: 1, at, type: 'orchestrator.started', owner: 'h/1/2', command: 'start', placement: 'local', capacity: 2 },
  { v: 1, at, type: 'unit.started', unit: 'k1', try: 1, ref: {} },
  { v: 1, at, type: 'unit.progress', unit: 'k1', phase: 'execution', steps: 12 },
  { v: 1, at, type: 'unit.finished', unit: 'k1', try: 1, status: 'done', message: 'ok', log: 'exec/x/try-1.log' },
  { v: 1, at, type: 'unit.finished', unit: 'k2', try: 3, status: 'failed', message: 'out of retries', log: 'exec/y/try-3.log' },
  { v: 2, at, type: 'unit.finished', unit: 'k3', status: 'done' },
];

describe('figures: the run-set state (runs.md of issue 27) as the Results view reads it', () => {
  let tmp: string;
  beforeEach(async () => { tmp = await fsp.mkdtemp(path.join(os.tmpdir(), 'expbench-runset-')); });
  afterEach(async () => { await fsp.rm(tmp, { recursive: true, force: true }); });

  it('units, their folders and which have finished; a torn last line and a later version are skipped, counted', async () => {
    await fsp.writeFile(path.join(tmp, 'runset.jsonl'), `${lines.map((l) => JSON.stringify(l)).join('\n')}\n{"v":1,"at":"${at}","type":"unit.fin`);
    assert.equal(await isRunSetFolder(tmp), true);
    const rs = await readRunSet(tmp);
    assert.equal(rs.name, 'toycal six');
    assert.deepEqual(rs.units.map((u) => [u.key, u.status, path.relative(tmp, u.dir)]), [
      ['k1', 'done', 'units/sample-toycal-0.scripted.a1'], ['k2', 'failed', 'units/sample-toycal-0.scripted.a2'], ['k3', 'planned', 'units/sample-toycal-0.scripted.a3'],
    ]);
    assert.equal(rs.skippedLines, 2);
  });

  it('refuses a unit folder outside units/, a state without its first record, a FIFO, and a folder that is no run set', async () => {
    const bad = { ...lines[1], dir: '../../elsewhere' };
    await fsp.writeFile(path.join(tmp, 'runset.jsonl'), [lines[0], bad].map((l) => JSON.stringify(l)).join('\n'));
    await assert.rejects(readRunSet(tmp), /runset\.jsonl.*unit sample-toycal-0\.scripted\.a1: its folder \.\.\/\.\.\/elsewhere is not under units\//);
    await fsp.writeFile(path.join(tmp, 'runset.jsonl'), JSON.stringify(lines[1]));
    await assert.rejects(readRunSet(tmp), /has no runset\.created record/);
    await fsp.rm(path.join(tmp, 'runset.jsonl'));
    execFileSync('mkfifo', [path.join(tmp, 'runset.jsonl')]);
    await assert.rejects(readRunSet(tmp), /runset\.jsonl/);
    const empty = await fsp.mkdtemp(path.join(os.tmpdir(), 'expbench-norunset-'));
    assert.equal(await isRunSetFolder(empty), false);
    await assert.rejects(readRunSet(empty), /not a run set folder/);
    await fsp.rm(empty, { recursive: true });
  });
});

describe('figures: what crosses to the Results view\'s webview', () => {
  it('a figure set of the real harness output passes the protocol\'s schema as it is', async () => {
    const outcomes = (await collectOutcomes([await harnessDir()])).outcomes;
    const set = buildFigures(outcomes, await runFacts(outcomes), POLICIES['paper-likely'], { resamples: 100 });
    const m = resultsMessage(set, { source: 'x', policies: Object.keys(POLICIES), by: 'folder', skipped: [] });
    const parsed = ResultsMessageSchema.safeParse(JSON.parse(JSON.stringify(m)));
    assert.ok(parsed.success, parsed.success ? '' : parsed.error.message.slice(0, 400));
    assert.deepEqual(parsed.data.figures.map((f) => f.id), set.figures.map((f) => f.id));
    assert.deepEqual(parsed.data.rows[0].runs.D.length, set.table.rows[0].metrics.D.n);
    // a datum that is not one fails the schema
    const broken = JSON.parse(JSON.stringify(m));
    broken.figures[0].data[0].k = 'three';
    assert.equal(ResultsMessageSchema.safeParse(broken).success, false);
  });
});
