// Gaps after a submission, end to end (code-server in headless Chromium): a session of the sample
// task submitted with a partial solution and judged (heuristic, by the real core functions, as the
// stepper's Submit does) is opened as the window's folder. Without running anything, its gaps
// are in the Problems panel as well as in the CodeLenses: the diagnostics are published when the
// window's session shows its judgement, not only by "Run Judge and Verifier". And a partial
// solution submitted from the stepper (Submit, confirmed) shows its gaps there once judged.
import * as assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { getWorkbench } from '../harness/e2e-context';
import { makeJudgedSampleSession, makePartialSampleSession, SAMPLE_TASK_ID, type JudgedSession } from '../harness/gapsSession';
import { testResultsDir } from '../harness/paths';

describe('gaps of a submitted partial session in the Problems panel (end to end)', function () {
  this.timeout(240_000);
  let s: JudgedSession;
  let tmp: string;

  before(async () => {
    tmp = path.join(testResultsDir, 'e2e-sessions', `gaps-reopen-${process.pid}-${Date.now()}`);
    fs.mkdirSync(tmp, { recursive: true });
    s = await makeJudgedSampleSession(path.join(tmp, 'session'), path.join(tmp, 'cache'));
    await getWorkbench().openFolder(s.layout.workspace);
  });

  after(async () => {
    const wb = getWorkbench();
    await wb.openFolder(wb.initialFolder);
    fs.rmSync(tmp, { recursive: true, force: true });
  });

  // First: the window is the one before() opened on the judged session (the next case opens another).
  it('the window opened on the judged session lists its unmet requirements in the Problems panel, with no judge run', async () => {
    const wb = getWorkbench();
    await wb.webviewFrame(`Brief ${SAMPLE_TASK_ID}`); // the window's session opened
    const panel = await wb.problemsPanel({ maximized: true });
    for (const t of ['Requirement 1 unmet', 'Requirement 5 unmet', 'Requirement 6 unmet']) await wb.waitForText(new RegExp(t), panel);
    const all = (await panel.innerText()).replace(/\s+/g, ' ');
    assert.match(all, /EXP-Bench \(heuristic\)/);
    await wb.screenshot('gaps-reopen-problems');
    await wb.maximizePanel(false);
  });

  it('a partial solution submitted from the stepper: once judged, its unmet requirements are in the Problems panel', async () => {
    const wb = getWorkbench();
    const p = await makePartialSampleSession(path.join(tmp, 'submit'), path.join(tmp, 'cache'));
    await wb.openFolder(p.layout.workspace);
    const frame = await wb.webviewFrame(`Brief ${SAMPLE_TASK_ID}`);
    await frame.locator('section[data-section="phases"] nav.stepper').waitFor({ state: 'visible', timeout: wb.timeoutMs });
    await frame.locator('.step[data-phase="conclusion"]').click();
    await frame.locator('#conclusion').fill('Temperature scaling lowers the ECE; accuracy is unchanged.');
    await frame.locator('button.submit').click();
    await wb.confirmDialog(/^Submit( anyway)?$/);
    await wb.page.locator('.notifications-toasts .notification-toast').filter({ hasText: /EXP-Bench: submitted/ }).first().waitFor({ state: 'visible', timeout: 200_000 });
    const panel = await wb.problemsPanel({ maximized: true });
    for (const t of ['Requirement 1 unmet', 'Requirement 6 unmet']) await wb.waitForText(new RegExp(t), panel);
    assert.match((await panel.innerText()).replace(/\s+/g, ' '), /EXP-Bench \(heuristic\)/);
    await wb.screenshot('gaps-submit-problems');
    await wb.maximizePanel(false);
  });
});
