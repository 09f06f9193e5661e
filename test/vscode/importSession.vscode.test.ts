// "Import Trajectory…" and "Import as Session…" inside the real extension host, run with arguments
// (no dialogs) on an EXP-Bench harness record the test writes for the bundled sample task: the
// session folder is checked (layout, answers, the git-form patch applied, steps as events, the
// heuristic judge's record), as is the summary of the trajectory import.
import * as assert from 'node:assert/strict';
import { existsSync, promises as fsp } from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import * as vscode from 'vscode';
import type { ImportSessionResult } from '../../src/core/flows/importSession';
import { SessionLayout } from '../../src/core/layout';
import { readEvents } from '../../src/core/session/events';
import type { TrajectorySummary } from '../../src/core/trajectory/import';
import { api } from './extensionApi';

const SCRIPT = ['#!/usr/bin/env bash', 'python3 -c "print(0.5)"'];

describe('Import as Session (real extension host)', function () {
  this.timeout(60_000);
  let tmp: string;
  let files: string[];

  before(async () => {
    await api();
    tmp = await fsp.mkdtemp(path.join(os.tmpdir(), 'expbench-import-vscode-'));
    const base = path.join(tmp, '777_task_index_0_iter_1_duration_0.5_eval_');
    const ws = 'toycal_task_index_0_iter_1_duration_0.5';
    const patch = [
      `diff -urN workspace/${ws}/reproduce_exp_bench.sh /home/agent/workspace/${ws}/reproduce_exp_bench.sh`,
      `--- workspace/${ws}/reproduce_exp_bench.sh\t1969-12-31 19:00:00`,
      `+++ /home/agent/workspace/${ws}/reproduce_exp_bench.sh\t2025-07-31 15:41:24`,
      `@@ -0,0 +1,${SCRIPT.length} @@`, ...SCRIPT.map((l) => `+${l}`), '',
    ].join('\n');
    files = [`${base}gen.json`, `${base}gen.patch`];
    await fsp.writeFile(files[0], JSON.stringify({ design: 'Independent: temperature. Dependent: ECE.', conclusion: 'Temperature 0.5 lowers the ECE.' }));
    await fsp.writeFile(files[1], patch);
  });
  after(async () => { if (tmp) await fsp.rm(tmp, { recursive: true, force: true }).catch(() => undefined); });

  it('"Import Trajectory…" reads the record and reports its steps', async () => {
    const r = await vscode.commands.executeCommand<{ trajectories: TrajectorySummary[] }>('expbench.importTrajectory', { files, show: false });
    assert.ok(r);
    assert.deepEqual(r.trajectories.map((t) => [t.format, t.id, t.steps]), [['exp-bench-harness', '777/0', 3]]);
  });

  it('"Import as Session…" makes a session folder: answers, the patch in git form, steps as events, the judge\'s record', async () => {
    const outDir = path.join(tmp, 'session');
    const r = await vscode.commands.executeCommand<ImportSessionResult>('expbench.importAsSession', {
      files, taskId: 'sample/toycal/0', outDir, verify: false, open: false, show: false,
    });
    assert.ok(r, 'the command returned no result (see the log)');
    assert.equal(r.sessionDir, outDir);
    const layout = new SessionLayout(outDir);
    for (const p of [layout.manifest, layout.answers, layout.events, path.join(layout.imported, 'record.json'), path.join(layout.judge, 'latest.json'), path.join(layout.harness, 'patch.diff')]) {
      assert.ok(existsSync(p), `missing ${path.relative(outDir, p)}`);
    }
    assert.equal(await fsp.readFile(layout.script, 'utf8'), `${SCRIPT.join('\n')}\n`);
    assert.deepEqual(r.patch.files.map((f) => [f.path, f.op, f.status]), [['reproduce_exp_bench.sh', 'create', 'applied']]);
    assert.match(await fsp.readFile(path.join(layout.imported, 'patch.git.diff'), 'utf8'), /^diff --git a\/reproduce_exp_bench\.sh b\/reproduce_exp_bench\.sh\nnew file mode 100644\n/);
    assert.deepEqual(JSON.parse(await fsp.readFile(layout.answers, 'utf8')).conclusion, 'Temperature 0.5 lowers the ECE.');
    assert.ok(r.problems.some((p) => /the record is task unknown\/777\/0 but the import is for sample\/toycal\/0/.test(p.message)), JSON.stringify(r.problems));
    const { events } = await readEvents(layout.events);
    assert.equal(events.filter((e) => e.type === 'trajectory.step').length, 3);
    assert.equal(r.submission?.judge?.ok, true, JSON.stringify(r.submission));
    assert.equal(r.submission?.verify, undefined);
  });
});
