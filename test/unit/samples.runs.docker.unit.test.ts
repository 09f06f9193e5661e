import * as assert from 'node:assert/strict';
import { promises as fsp } from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import type Docker from 'dockerode';
import { SessionLayout } from '../../src/core/layout';
import { foldRunSet, readRunSet, RunSetLayout } from '../../src/core/runs';
import { collectImports } from '../../src/core/runs/imports';
import { listRunSetContainers } from '../../src/core/sandbox';
import { readJudgeRecord } from '../../src/core/judge/session';
import { loadDatasets } from '../../src/core/tasks/loader';
import { bundledDatasetDir } from '../../src/core/paths';
import { requireDocker } from '../harness/docker';
import { cli, OFFLINE_ENV, ROOT } from './cli.helpers';

/** The bundled run-set spec of README and docs/runs.md, which needs no API key and no network. */
const SAMPLE_SPEC = path.join(ROOT, 'samples', 'runs', 'sample.jsonc');

describe('the bundled offline run set (samples/runs/sample.jsonc)', function () {
  this.timeout(600_000);

  it('its harness output names the sample paper by its dataset id (toycal): matched to sample/toycal/0 by paper and index', async () => {
    const loaded = await loadDatasets([bundledDatasetDir()]);
    const { records, skipped } = await collectImports([path.join(ROOT, 'samples', 'runs', 'harness')], loaded);
    assert.deepEqual(skipped, []);
    assert.deepEqual(records.map((r) => [r.task, r.attempt, r.actorName, r.files.map((f) => path.basename(f.path)).sort()]), [['sample/toycal/0', 1, 'example-agent-example-model', [
      'toycal_task_index_0_iter_1_duration_0.5_eval_gen.json', 'toycal_task_index_0_iter_1_duration_0.5_eval_gen.patch', 'toycal_task_index_0_iter_1_duration_0.5_eval_gen_config_config.json',
    ]]]);
  });

  it('`runs start samples/runs/sample.jsonc` with no key and no endpoint runs its unit to the end: done, re-verified E ✓ in a clean container, judged by the heuristic pre-judge, no container left', async function () {
    const docker: Docker = await requireDocker(this);
    const tmp = await fsp.mkdtemp(path.join(os.tmpdir(), 'expbench-sample-runset-'));
    try {
      const dir = path.join(tmp, 'r0');
      // OFFLINE_ENV: no OPENAI_* / EXPBENCH_* endpoint or key; the command exactly as README gives it, from the checkout.
      const r = await cli(['runs', 'start', 'samples/runs/sample.jsonc', '--out', dir], { env: { ...OFFLINE_ENV, XDG_CACHE_HOME: path.join(tmp, 'cache') } });
      assert.equal(r.code, 0, r.stdout + r.stderr);
      const { records } = (await readRunSet(new RunSetLayout(dir).state))!;
      const v = foldRunSet(records)!;
      assert.deepEqual(v.units.map((u) => [u.task, u.actor.name, u.status]), [['sample/toycal/0', 'example-agent-example-model', 'done']]);
      assert.equal(v.units[0].outcome?.submitted, true);
      assert.equal(v.units[0].outcome?.E, true, 'the imported patch re-run from a clean tree');
      const judge = await readJudgeRecord(path.join(new SessionLayout(new RunSetLayout(dir).session(v.units[0].dir)).judge, 'latest.json'));
      assert.equal(judge?.kind, 'heuristic');
      assert.match(r.stdout, /example-agent-example-model\theuristic\t1\t/, 'the report table');
      assert.match(await fsp.readFile(path.join(dir, 'report.txt'), 'utf8'), /example-agent-example-model/);
      assert.deepEqual(await listRunSetContainers(docker, v.id), []);
      assert.equal(path.resolve(records[0].type === 'runset.created' ? records[0].specFile : ''), SAMPLE_SPEC);
    } finally {
      await fsp.rm(tmp, { recursive: true, force: true }).catch(() => undefined);
    }
  });
});
