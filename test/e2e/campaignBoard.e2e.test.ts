// The organiser's board of a campaign end to end in the real workbench (code-server in headless
// Chromium): a campaign of two people × two tasks with real sessions (test/harness/campaignFixture.ts),
// named by the folder's `expbench.runs.folders`. The organiser opens the Run Sets view, sees the
// campaign with its people, clicks it, and reads the board: people as rows with status, opened,
// phase, working time, pauses, attestation, AI off and E/D/I/C once submitted.
// Screenshot (must-show of issue 32): docs/images/32-board.png.
import * as assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { getWorkbench } from '../harness/e2e-context';
import { buildCampaignWithSessions, type CampaignFixture } from '../harness/campaignFixture';
import { repoRoot, testResultsDir } from '../harness/paths';
import { until } from '../harness/until';

const IMAGES = path.join(repoRoot, 'docs', 'images');

describe('issue 32: the organiser\'s board of a campaign (end to end)', function () {
  this.timeout(600_000);
  let tmp: string;
  let fx: CampaignFixture;

  before(async () => {
    tmp = path.join(testResultsDir, 'e2e-sessions', `campaign-${process.pid}-${Date.now()}`);
    fs.mkdirSync(tmp, { recursive: true });
    fx = await buildCampaignWithSessions(tmp, { specExtra: ', "perPerson": {"hours": 2}' });
    const folder = path.join(tmp, 'folder');
    fs.mkdirSync(path.join(folder, '.vscode'), { recursive: true });
    fs.writeFileSync(path.join(folder, '.vscode', 'settings.json'), JSON.stringify({ 'expbench.runs.folders': [fx.dir] }, null, 2));
    await getWorkbench().openFolder(folder);
  });

  after(async () => {
    const wb = getWorkbench();
    await wb.openFolder(wb.initialFolder);
    fs.rmSync(tmp, { recursive: true, force: true });
  });

  it('the Run Sets view lists the campaign and its people; its board has people as rows', async () => {
    const wb = getWorkbench();
    await wb.openViewContainer('EXP-Bench');
    const campaign = await wb.treeItem(/^pilot baseline, two people$/);
    await campaign.click(); // a run set's row opens its board
    const frame = await wb.webviewFrame(/^Run Set: pilot baseline, two people$/);
    // its people under it (the twistie expands: a click on the row opens the board)
    await until('the campaign\'s people listed', async () => {
      if (await wb.treeItems(/^ana \(Ana Ruiz\)$/).first().isVisible()) return true;
      const row = await wb.treeItem(/^pilot baseline, two people$/);
      if ((await row.getAttribute('aria-expanded').catch(() => null)) !== 'true') await row.locator('.monaco-tl-twistie').click().catch(() => undefined);
      return (await wb.treeItems(/^ana \(Ana Ruiz\)$/).first().isVisible().catch(() => false)) || undefined;
    }, 60_000);
    const table = frame.locator('#runs-table');
    await table.locator('tbody tr[data-session]').nth(3).waitFor({ state: 'visible', timeout: 60_000 });
    const row = async (s: string) => (await table.locator(`tbody tr[data-session="${s}"]`).innerText()).replace(/\s+/g, ' ').trim();
    assert.match(await row('fixture2026-90001-0.ana.a1'), /^ana fixture2026\/90001\/0 submitted yes – 30:00 1 Ana Ruiz yes – [✓✖] [✓✖] – –$/);
    assert.equal(await row('fixture2026-90001-1.ana.a1'), 'ana fixture2026/90001/1 paused yes design 5:00 1 – yes – – – – –');
    assert.equal(await row('fixture2026-90001-0.bo.a1'), 'bo fixture2026/90001/0 paused yes design 12:00 0 bo yes – – – – –');
    assert.equal(await row('fixture2026-90001-1.bo.a1'), 'bo fixture2026/90001/1 not started no – 0:00 0 – – – – – – –');
    const ana = (await table.locator('tbody tr.person[data-person="ana"]').innerText()).replace(/\s+/g, ' ');
    assert.match(ana, /^ana · Ana Ruiz 1\/2 submitted · working 35:00 of 2 h · link issued Copy link Re-issue Revoke/);
    assert.match((await frame.locator('#runs-counts').innerText()).replace(/\s+/g, ' '), /1 submitted 0 working 2 paused 1 not started 0 gave up of 4 sessions, 2 people · 2 h per person/);
    assert.equal(await frame.locator('#runs-cancel').isVisible(), false, 'no Cancel or Resume: people are served, not run');
    await wb.dismissHovers();
    const file = path.join(IMAGES, '32-board.png');
    await wb.page.screenshot({ path: file });
    const size = fs.statSync(file).size;
    assert.ok(size > 5_000 && size < 900_000, `screenshot ${file} is ${size} bytes`);
  });
});
