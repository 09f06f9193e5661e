// The gaps of an imported agent run in the editor, end to end (code-server in headless Chromium):
// the EXP-Bench harness record of neurips2024/93022 task 2 (an agent's run, from
// ../shared/data/trajectories) is imported as a session with the real core (Import as Session:
// src/core/flows/importSession.ts, the paper's repository fetched and cloned to /tmp/mdgen, never
// committed; the verifier in Docker; the heuristic judge), then opened as the window's folder as a
// human's session is. Skipped with a message when the clone is absent.
// Screenshot: import-gaps (docs/images/16-import-gaps.png).
import * as assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { importSession, type ImportSessionResult } from '../../src/core/flows/importSession';
import { judgeStep } from '../../src/core/flows/judge';
import { verifyStep } from '../../src/core/flows/verify';
import { findTask, loadDatasets } from '../../src/core/tasks/loader';
import { getWorkbench } from '../harness/e2e-context';
import { repoRoot, sharedDatasetDir, testResultsDir } from '../harness/paths';

const MDGEN = process.env.EXPBENCH_MDGEN_CLONE ?? '/tmp/mdgen';
const RECORDS = path.resolve(repoRoot, '..', 'shared', 'data', 'trajectories', 'exp-bench', 'Just-Curieous__Curie');
const TASK_ID = 'neurips2024/93022/2';

describe('gaps of an imported agent run in the editor (end to end)', function () {
  this.timeout(300_000);
  let tmp: string;
  let r: ImportSessionResult;

  before(async function () {
    if (!fs.existsSync(path.join(MDGEN, '.git')) || !fs.existsSync(RECORDS)) {
      const why = `needs a clone of github.com/bjing2016/mdgen at ${MDGEN} (EXPBENCH_MDGEN_CLONE) and ../shared/data/trajectories`;
      if (this.test) this.test.title += ` (SKIPPED: ${why})`;
      console.warn(`      skipping: ${why}`);
      this.skip();
    }
    tmp = path.join(testResultsDir, 'e2e-sessions', `import-${process.pid}-${Date.now()}`);
    fs.mkdirSync(tmp, { recursive: true });
    const task = findTask(await loadDatasets([sharedDatasetDir]), TASK_ID)!;
    const dir = path.join(RECORDS, 'azure-gpt-4o');
    const files = fs.readdirSync(dir).filter((n) => n.startsWith('93022_task_index_2_')).map((n) => path.join(dir, n));
    r = await importSession({ files, task, source: MDGEN, outDir: path.join(tmp, 'session'), cacheDir: path.join(tmp, 'cache'), verify: verifyStep(), judge: judgeStep({ task }) });
    assert.equal(r.execution?.E, false);
    await getWorkbench().openFolder(path.join(r.sessionDir, 'workspace'));
  });

  after(async () => {
    if (!tmp) return;
    const wb = getWorkbench();
    await wb.openFolder(wb.initialFolder);
    fs.rmSync(tmp, { recursive: true, force: true });
  });

  it('shows the imported session\'s gaps in the Problems panel beside its brief, as for a human', async () => {
    const wb = getWorkbench();
    await wb.webviewFrame(`Brief ${TASK_ID}`);
    const panel = await wb.problemsPanel();
    await wb.waitForText(/Requirement \d+ unmet/, panel);
    const all = (await panel.innerText()).replace(/\s+/g, ' ');
    assert.match(all, /EXP-Bench \(heuristic\)/);
    await wb.quickOpen(r.patch.files[0].path);
    assert.ok(fs.statSync(await wb.screenshot('import-gaps')).size > 10_000);
  });
});
