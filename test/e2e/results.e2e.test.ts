// Issue 29, end to end. (1) `expbench report … --figures OUT` over the real reference-harness
// output and a folder of real sessions: OUT/report.html in headless Chromium requests nothing
// beyond file:// and draws every figure. (2) The Results view in the real workbench (code-server)
// over a sessions folder holding a person's session (verified in the container, judged), the
// built-in agent's (`expbench agent run` against the scripted model server) and a copy of the
// real harness output: funnel and per-phase human vs agent, a bar opened with the keyboard into
// Triage, the view following a session judged later, and Export Figures… writing the CLI's files.
// Screenshots (must-show): docs/images/29-results-funnel.png, 29-results-human-agent.png,
// 29-results-triage.png, 29-report-html.png.
import * as assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { parse } from 'csv-parse/sync';
import { launchChromium } from '../harness/browser';
import { getWorkbench } from '../harness/e2e-context';
import { FakeOpenAIServer } from '../harness/fakeOpenAIServer';
import { repoRoot, testResultsDir } from '../harness/paths';
import type { Workbench } from '../harness/workbench';
import { cli } from '../unit/cli.helpers';
import { harnessDir } from '../unit/figures.fixtures';
import { makeAgentSession, makeHumanSession } from '../unit/triage.fixtures';

const IMAGES = path.join(repoRoot, 'docs', 'images');
const FIGURES = ['funnel', 'phases-actor', 'phases-model', 'phases-paper', 'phases-conference', 'phases-task-type', 'failures', 'heatmap-paper'];

async function mustShow(wb: Workbench, name: string): Promise<string> {
  await wb.dismissHovers();
  const file = path.join(IMAGES, `${name}.png`);
  await wb.page.screenshot({ path: file });
  const size = fs.statSync(file).size;
  assert.ok(size > 5_000 && size < 900_000, `screenshot ${file} is ${size} bytes`);
  return file;
}

describe('issue 29: results figures (end to end)', function () {
  this.timeout(900_000);
  let tmp: string;
  let sessions: string;
  let server: FakeOpenAIServer;

  before(async () => {
    tmp = path.join(testResultsDir, 'e2e-sessions', `results-${process.pid}-${Date.now()}`);
    sessions = path.join(tmp, 'sessions');
    fs.mkdirSync(sessions, { recursive: true });
    server = await new FakeOpenAIServer().start();
    await makeHumanSession(path.join(sessions, 'human-toycal'), path.join(tmp, 'cache'));
    await makeAgentSession(path.join(sessions, 'agent-toycal'), path.join(tmp, 'cache'), server);
    // the real harness output beside the sessions: its groups stand beside the sessions' in every figure
    fs.cpSync(await harnessDir(), path.join(sessions, 'harness'), { recursive: true });
  });

  after(async () => {
    await server?.close();
    fs.rmSync(tmp, { recursive: true, force: true });
  });

  it('report --figures: report.html in headless Chromium requests nothing beyond file:// and draws every figure', async () => {
    const out = path.join(tmp, 'figures');
    // the harness output folder and the two session folders (the sessions folder holds a copy of the first)
    const r = await cli(['report', path.join(sessions, 'harness'), path.join(sessions, 'human-toycal'), path.join(sessions, 'agent-toycal'), '--by', 'actor', '--figures', out]);
    assert.equal(r.code, 0, r.stderr);
    const browser = await launchChromium();
    try {
      const page = await browser.newPage({ viewport: { width: 1100, height: 900 } });
      const requests: string[] = [];
      const refused: string[] = [];
      page.on('request', (q) => requests.push(q.url()));
      page.on('console', (m) => { if (/Content Security Policy|Refused to/i.test(m.text())) refused.push(m.text()); });
      await page.goto(`file://${path.join(out, 'report.html')}`, { waitUntil: 'load' });
      const drawn = await page.evaluate(() => Array.from(document.querySelectorAll('section figure svg')).map((svg) => {
        const box = svg.getBoundingClientRect();
        const painted = Array.from(svg.querySelectorAll('g.bar rect, g.segment rect, g.cell rect')).filter((e) => { const b = e.getBoundingClientRect(); return b.width > 0 && b.height > 0; });
        return { id: svg.getAttribute('data-figure'), w: box.width, h: box.height, painted: painted.length };
      }));
      assert.deepEqual(drawn.map((d) => d.id), FIGURES);
      for (const d of drawn) assert.ok(d.w > 300 && d.h > 150 && d.painted > 0, `${d.id} drawn: ${JSON.stringify(d)}`);
      assert.ok(await page.locator('#metrics-table tbody tr').count() >= 2, 'the table: human and agent');
      assert.deepEqual(requests.filter((u) => !u.startsWith('file://')), [], 'no request beyond file://');
      assert.deepEqual(refused, [], 'nothing refused by the page\'s CSP (nothing tried to load)');
      const file = path.join(IMAGES, '29-report-html.png');
      await page.locator('#funnel').screenshot({ path: file });
      assert.ok(fs.statSync(file).size > 5_000);
    } finally {
      await browser.close();
    }
  });

  describe('the Results view', () => {
    before(async () => {
      const folder = path.join(tmp, 'folder');
      fs.mkdirSync(path.join(folder, '.vscode'), { recursive: true });
      fs.writeFileSync(path.join(folder, '.vscode', 'settings.json'), JSON.stringify({ 'expbench.sessionsDir': sessions }, null, 2));
      await getWorkbench().openFolder(folder);
      await getWorkbench().trustWorkspace(); // the user's own folder: its expbench.sessionsDir applies once trusted (docs/trust.md)
    });
    after(async () => {
      const wb = getWorkbench();
      await wb.openFolder(wb.initialFolder);
    });

    it('Show Results: the funnel of the sessions beside the real harness output, then human vs agent per phase', async () => {
      const wb = getWorkbench();
      await wb.runCommand('EXP-Bench: Show Results');
      const frame = await wb.webviewFrame('Results');
      await frame.locator('#figure-funnel canvas').waitFor({ state: 'visible', timeout: 120_000 });
      // the runs read (the view draws while it reads: "Reading the runs…" until then)
      await frame.locator('#results-status', { hasText: /judged runs/ }).waitFor({ state: 'visible', timeout: 120_000 });
      const status = await frame.locator('#results-status').innerText();
      assert.match(status, /^6 judged runs · policy paper-likely/, status);
      const funnel = (await frame.locator('#figure-funnel .caption').innerText()).replace(/\s+/g, ' ');
      assert.match(funnel, /n: curie\/azure-gpt-4o 4, sessions \(heuristic judge\) 2\)/, funnel);
      assert.equal(await frame.locator('#results-source').innerText(), 'sessions');
      await frame.locator('#figure-funnel').evaluate((e) => e.scrollIntoView({ block: 'start' }));
      await mustShow(wb, '29-results-funnel');
      await frame.locator('#results-by').selectOption('actor');
      await frame.locator('#figure-funnel .caption', { hasText: /n: agent \(heuristic judge\) 1, agent 4, human \(heuristic judge\) 1\)/ }).waitFor({ timeout: 60_000 });
      await frame.locator('#figure-phases-actor canvas').waitFor({ state: 'visible' });
      await frame.locator('#figure-phases-actor').evaluate((e) => e.scrollIntoView({ block: 'start' }));
      assert.match(await frame.locator('#figure-phases-actor .caption').innerText(), /by human vs agent \(n tasks: agent \(heuristic judge\) 1, agent 4, human \(heuristic judge\) 1\)/);
      await mustShow(wb, '29-results-human-agent');
    });

    it('a bar, chosen with the keyboard, opens its runs in Triage; a cell of the heat map opens its one run in the viewer', async () => {
      const wb = getWorkbench();
      const frame = await wb.webviewFrame('Results');
      const chart = frame.locator('#figure-phases-model .chart');
      await chart.focus();
      await frame.locator('#results-live', { hasText: /azure-gpt-4o · D: 3\/4/ }).waitFor({ timeout: 10_000 });
      await wb.page.keyboard.press('Enter');
      const triage = await wb.webviewFrame('Triage: Runs');
      const focus = triage.locator('#triage-focus');
      await focus.filter({ hasText: /From Results: azure-gpt-4o · D: 3\/4 = 75\.0%.* · 4 of 4 runs listed here/ }).waitFor({ timeout: 60_000 });
      assert.equal(await triage.locator('#triage-table tbody tr[data-run]').count(), 4, 'the four harness runs of the bar');
      // a harness record read whole (its config beside it): the task with its conference, the agent and model of the run
      assert.match(await triage.locator('#triage-table').innerText(), /neurips2024\/93022\/0\t[^\t\n]+\tcurie\tazure-gpt-4o/, 'the harness trajectory beside the judge file, named by its record');
      await mustShow(wb, '29-results-triage');
      await triage.locator('#triage-show-all').click();
      await triage.locator('#triage-table tbody tr[data-run]').nth(5).waitFor({ timeout: 30_000 });
      // back to the Results tab: one cell of the heat map holds the person's session alone
      await wb.page.locator('.tabs-container .tab', { hasText: 'Results' }).first().click();
      const results = await wb.webviewFrame('Results');
      const tabs = await wb.page.locator('.tabs-container .tab').count();
      const cell = results.locator('#results-heat td.cell[tabindex="0"]', { hasText: /^\d\/1$/ }).first();
      await cell.scrollIntoViewIfNeeded();
      await cell.click();
      await wb.page.waitForFunction((n) => document.querySelectorAll('.tabs-container .tab').length > n, tabs, { timeout: 60_000 });
    });

    it('follows the folder: a session judged later joins the figures; Export Figures… writes the files report --figures writes', async () => {
      const wb = getWorkbench();
      await wb.page.locator('.tabs-container .tab', { hasText: 'Results' }).first().click();
      const frame = await wb.webviewFrame('Results');
      fs.cpSync(path.join(sessions, 'human-toycal'), path.join(sessions, 'human-toycal-2'), { recursive: true });
      // another preparation, as a second baseliner's session is (a byte copy of one session is that
      // session's copy, which report and the view count once: src/core/interop/collect.ts)
      const manifest = path.join(sessions, 'human-toycal-2', 'private', 'manifest.json');
      fs.writeFileSync(manifest, JSON.stringify({ ...JSON.parse(fs.readFileSync(manifest, 'utf8')), createdAt: new Date().toISOString() }, null, 2));
      await frame.locator('#results-status', { hasText: /^7 judged runs/ }).waitFor({ timeout: 60_000 });
      const out = path.join(tmp, 'exported');
      // the view's own button, the folder typed into the dialog (code-server's: a path box in a quick input)
      fs.mkdirSync(out, { recursive: true });
      await frame.locator('#results-export').click();
      const widget = wb.page.locator('.quick-input-widget');
      await widget.locator('.quick-input-title', { hasText: 'Export Figures' }).waitFor({ state: 'visible', timeout: wb.timeoutMs });
      // the folder typed with its trailing slash, accepted once the dialog lists it (test-results/…/29-export-dialog.png shows that moment)
      await wb.chooseFolderInFileDialog(out, '29-export-dialog');
      const csv = path.join(out, 'table.csv');
      // the view says when it has written them (report.html last)
      await wb.page.locator('.notification-toast', { hasText: /EXP-Bench: wrote \d+ files to / }).first().waitFor({ state: 'visible', timeout: 60_000 });
      assert.ok(fs.existsSync(path.join(out, 'report.html')), 'report.html');
      for (const id of FIGURES) for (const ext of ['svg', 'vl.json']) assert.ok(fs.existsSync(path.join(out, `${id}.${ext}`)), `${id}.${ext}`);
      const cliOut = path.join(tmp, 'cli-figures');
      const r = await cli(['report', sessions, '--by', 'actor', '--figures', cliOut, '--dataset', path.join(repoRoot, '..', 'shared', 'data', 'exp-bench')]);
      assert.equal(r.code, 0, r.stderr);
      const strip = (f: string) => (parse(fs.readFileSync(f, 'utf8'), { columns: true }) as Record<string, string>[]).map(({ runs: _r, correct_runs: _c, ...rest }) => rest);
      assert.deepEqual(strip(csv), strip(path.join(cliOut, 'table.csv')), 'the view\'s export holds the CLI\'s numbers');
    });
  });
});
