// The curator's ground-truth view, end to end in the real workbench (code-server in headless
// Chromium): a folder whose settings name a dataset with the sample task and a curation file
// pinning a git repository built here (the sample's toy-calibration, pinned at its first commit;
// a later commit changes the masked script) is opened; the user runs "EXP-Bench: Show Ground
// Truth (Curator)", picks the task, and opens a reference ("Open Link", as Ctrl+click), which opens the pinned file beside
// with its range highlighted. Screenshot: 20-ground-truth-view (copied to docs/images/ by hand).
import * as assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { paperRepo, writePaper } from '../harness/curationFixture';
import { getWorkbench } from '../harness/e2e-context';
import { repoRoot, testResultsDir } from '../harness/paths';

const TASK = 'curated/toycal/0';

describe('ground-truth view (end to end)', function () {
  this.timeout(240_000);
  let tmp: string;
  let pinned: string;

  before(async () => {
    tmp = path.join(testResultsDir, 'e2e-sessions', `gt-${process.pid}-${Date.now()}`);
    const repo = await paperRepo(path.join(tmp, 'toy-calibration'), path.join(repoRoot, 'samples', 'repos', 'toy-calibration'));
    pinned = await repo.commit({}, 'the pin');
    await repo.commit({ 'experiments/temperature_scaling.py': 'print("changed after the pin")\n' }, 'later');
    await writePaper(path.join(tmp, 'ds'), 'curated/toycal', {
      taskFile: path.join(repoRoot, 'samples', 'exp-bench', 'tasks', 'sample', 'toycal', 'toycal_complete_final.json'),
      curation: { version: 1, paper: 'curated/toycal', repository: { url: repo.dir, commit: pinned }, environment: { baseImage: 'expbench/sandbox:1', limits: { timeSeconds: 120 } } },
    });
    const folder = path.join(tmp, 'curator');
    fs.mkdirSync(path.join(folder, '.vscode'), { recursive: true });
    fs.writeFileSync(path.join(folder, '.vscode', 'settings.json'), JSON.stringify({
      'expbench.datasets': [path.join(tmp, 'ds')], 'expbench.showSample': false, 'workbench.startupEditor': 'none',
      // room for the whole document in one screenshot
      'editor.fontSize': 11, 'editor.minimap.enabled': false,
    }));
    await getWorkbench().openFolder(folder);
    await getWorkbench().trustWorkspace(); // the curator's own folder: its expbench.datasets applies once trusted (docs/trust.md)
  });

  after(async () => {
    const wb = getWorkbench();
    await wb.openFolder(wb.initialFolder);
    fs.rmSync(tmp, { recursive: true, force: true });
  });

  it('shows the task at its pin and opens a reference beside with its range highlighted', async () => {
    const wb = getWorkbench();
    const before = wb.page.viewportSize();
    await wb.runCommand('EXP-Bench: Show Ground Truth (Curator)');
    const pick = wb.page.locator('.quick-input-widget');
    await pick.waitFor({ state: 'visible', timeout: wb.timeoutMs });
    await pick.locator('input').fill(TASK);
    await pick.locator('.monaco-list-row', { hasText: TASK }).first().waitFor({ state: 'visible', timeout: 60_000 });
    await pick.locator('input').press('Enter');
    await wb.page.locator('.part.editor .tab.active .label-name', { hasText: 'Ground truth.md' }).waitFor({ state: 'visible', timeout: 120_000 });
    const doc = wb.page.locator('.part.editor .editor-group-container.active .monaco-editor').first();
    await wb.waitForText(new RegExp(pinned.slice(0, 12)), doc);
    // the masked script's reference of requirement 5 (lines 27-32)
    const ref = doc.locator('.view-line', { hasText: /-\s`experiments\/temperature_scaling\.py:27-32`/ }).locator('span', { hasText: 'temperature_scaling.py:27-32' }).last();
    await ref.waitFor({ state: 'visible', timeout: wb.timeoutMs });
    // the cursor on the link, then "Open Link" (what Ctrl+click does; the palette is steadier under Playwright)
    await ref.click();
    await wb.runCommand('Open Link');
    await wb.page.locator('.part.editor .tab.active .label-name', { hasText: 'temperature_scaling.py' }).waitFor({ state: 'visible', timeout: wb.timeoutMs });
    const file = wb.page.locator('.part.editor .editor-group-container.active .monaco-editor').first();
    // the pinned content (HEAD's file is one print line)
    await file.locator('.view-line', { hasText: /"ece_after":\sround\(ece\(test_logits,\sy_te,\stemperature=t\),\s4\),/ }).waitFor({ state: 'visible', timeout: wb.timeoutMs });
    assert.match(await wb.page.locator('.part.statusbar').innerText(), /Ln 32, Col \d+ \(\d+ selected\)/); // lines 27-32 selected, the cursor at the end
    // the highlighted lines: the decoration's whole-line background, one per line of 27-32
    const marks = file.locator('.view-overlays .cdr[class*="ced-"]');
    await marks.first().waitFor({ state: 'attached', timeout: wb.timeoutMs });
    assert.ok(await marks.count() >= 6, `only ${await marks.count()} highlighted lines`);
    if (await wb.page.locator('.part.sidebar').isVisible()) await wb.runCommand('View: Toggle Primary Side Bar Visibility');
    await wb.page.setViewportSize({ width: 1600, height: 1300 });
    // the workbench laid out for the new size (its status bar at the page's new bottom), then two frames drawn
    const laidOut = () => wb.page.evaluate(() => [document.querySelector('.part.statusbar')?.getBoundingClientRect().bottom ?? 0, window.innerHeight]);
    await wb.page.waitForFunction(() => Math.abs((document.querySelector('.part.statusbar')?.getBoundingClientRect().bottom ?? 0) - window.innerHeight) < 2, undefined, { polling: 100, timeout: wb.timeoutMs })
      .catch(async (e: unknown) => { throw new Error(`the workbench was not laid out for 1600×1300 (status bar bottom, page height: ${(await laidOut()).join(', ')}): ${String(e)}`); });
    const shot = await wb.screenshot('20-ground-truth-view');
    assert.ok(fs.statSync(shot).size > 20_000);
    if (before) await wb.page.setViewportSize(before);
    await wb.runCommand('View: Toggle Primary Side Bar Visibility');
  });
});
