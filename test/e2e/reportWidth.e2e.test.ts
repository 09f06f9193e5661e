// report.html (`expbench report --figures OUT`) in headless Chromium at a 1280 × 800 window: the
// page fits without horizontal scroll (the document is no wider than the viewport, and no element
// sticks out past its right edge), over the real reference-harness output and the bundled example
// judge file (two groups, every metric column filled).
import * as assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { launchChromium } from '../harness/browser';
import { repoRoot, screenshotsDir, testResultsDir } from '../harness/paths';
import { cli } from '../unit/cli.helpers';
import { harnessDir } from '../unit/figures.fixtures';

describe('report.html fits a 1280 px window (headless Chromium)', function () {
  this.timeout(300_000);
  let tmp: string;
  before(() => {
    tmp = path.join(testResultsDir, 'e2e-sessions', `report-width-${process.pid}-${Date.now()}`);
    fs.mkdirSync(tmp, { recursive: true });
  });
  after(() => fs.rmSync(tmp, { recursive: true, force: true }));

  it('no horizontal scroll at 1280 px: document width ≤ viewport, the metrics table and every figure inside it', async () => {
    const out = path.join(tmp, 'figures');
    const r = await cli(['report', await harnessDir(), path.join(repoRoot, 'samples', 'harness-judge-files'), '--figures', out]);
    assert.equal(r.code, 0, r.stderr);
    const browser = await launchChromium();
    try {
      const page = await browser.newPage({ viewport: { width: 1280, height: 800 } });
      await page.goto(`file://${path.join(out, 'report.html')}`, { waitUntil: 'load' });
      const m = await page.evaluate(() => {
        const de = document.documentElement;
        const right = (sel: string) => Array.from(document.querySelectorAll(sel)).map((e) => Math.ceil(e.getBoundingClientRect().right));
        return { scrollWidth: de.scrollWidth, clientWidth: de.clientWidth, innerWidth: window.innerWidth, table: right('#metrics-table'), figures: right('section figure svg'), rows: document.querySelectorAll('#metrics-table tbody tr').length, widest: Math.max(...right('body *')) };
      });
      assert.ok(m.rows >= 2, `two groups in the table: ${JSON.stringify(m)}`);
      assert.ok(m.figures.length >= 5, `the figures drawn: ${JSON.stringify(m)}`);
      assert.ok(m.scrollWidth <= m.clientWidth, `no horizontal scroll: ${JSON.stringify(m)}`);
      assert.ok(m.widest <= m.clientWidth, `no element past the right edge: ${JSON.stringify(m)}`);
      fs.mkdirSync(screenshotsDir, { recursive: true });
      await page.screenshot({ path: path.join(screenshotsDir, 'report-width-1280.png') });
    } finally {
      await browser.close();
    }
  });
});
