// Issue 15, the window's papercuts, seen by a user in the real workbench (code-server in headless
// Chromium, real git, real Docker): the clock says "not started" before the first start and
// "submitted" after submitting; the Tasks tree shows index, type, no_answer and each task's status
// (from the sessions in the default sessions folder, ~/expbench-sessions) at the default side-bar
// width; Open Task on a real paper repository shows its step at once in a progress notification.
// Screenshots (must-show of issue 15): docs/images/15-clock-not-started.png,
// 15-clock-submitted.png, 15-tree-default-width.png, 15-open-task-progress.png.
// The paper repository is a local clone of github:apple/ml-calibration (task iclr2024/18439) named
// by EXPBENCH_E2E_PAPER_REPO; without it the Open Task test is skipped (no network in CI).
import * as assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import type { Frame } from 'playwright-core';
import { SessionService } from '../../src/core/flows/sessionService';
import { connectDocker } from '../../src/core/sandbox/connection';
import { removeWorkContainer } from '../../src/core/sandbox';
import { requireDocker } from '../harness/docker';
import { getWorkbench } from '../harness/e2e-context';
import { repoRoot, sharedDatasetDir } from '../harness/paths';
import type { Workbench } from '../harness/workbench';

/** The extension's default sessions folder (setting expbench.sessionsDir empty). */
const SESSIONS = path.join(os.homedir(), 'expbench-sessions');
const IMAGES = path.join(repoRoot, 'docs', 'images');
const CLI = path.join(repoRoot, 'dist', 'cli.js');
const PAPER_REPO = process.env.EXPBENCH_E2E_PAPER_REPO;

function prepare(task: string, name: string, source?: string): string {
  const root = path.join(SESSIONS, `${task.replace(/\//g, '_')}-${name}-${process.pid}`);
  execFileSync(process.execPath, [CLI, 'prepare', task, '--out', root, ...(source ? ['--source', source] : [])],
    { stdio: 'pipe', timeout: 120_000, env: { ...process.env, EXPBENCH_DATASETS: sharedDatasetDir } });
  return root;
}

/** Saves a must-show screenshot under docs/images (the whole page, or one part of it). */
async function mustShow(wb: Workbench, name: string, part?: string): Promise<string> {
  await wb.dismissHovers();
  const file = path.join(IMAGES, `${name}.png`);
  const box = part ? await wb.page.locator(part).first().boundingBox() : null;
  await wb.page.screenshot({ path: file, ...(box ? { clip: box } : {}) });
  const size = fs.statSync(file).size;
  assert.ok(size > 5_000 && size < 300_000, `screenshot ${file} is ${size} bytes`);
  return file;
}

async function stepper(wb: Workbench, title: string): Promise<Frame> {
  const frame = await wb.webviewFrame(title);
  await frame.locator('section[data-section="phases"] nav.stepper').waitFor({ state: 'visible', timeout: 60_000 });
  return frame;
}

describe('issue 15: the window (end to end)', function () {
  let wb: Workbench;
  const made: string[] = [];
  let before15: Set<string>;

  before(async function () {
    this.timeout(240_000);
    await requireDocker(this);
    wb = getWorkbench();
    fs.mkdirSync(SESSIONS, { recursive: true });
    before15 = new Set(fs.readdirSync(SESSIONS));
  });

  after(async function () {
    this.timeout(120_000);
    await wb?.openFolder(wb.initialFolder);
    // Sessions this test made: the ones it named, and the one Open Task made (new since the start).
    const docker = connectDocker();
    const opened = fs.readdirSync(SESSIONS).filter((n) => !before15.has(n) && n.startsWith('iclr2024_18439_0-') && !made.includes(path.join(SESSIONS, n)));
    for (const root of [...made, ...opened.map((n) => path.join(SESSIONS, n))]) {
      await removeWorkContainer(docker, path.basename(root)).catch(() => undefined);
      fs.rmSync(root, { recursive: true, force: true });
    }
  });

  it('the clock says "not started" before the first start and "submitted" after submitting', async function () {
    this.timeout(300_000);
    const root = prepare('sample/toycal/0', 'e2e15clock');
    made.push(root);
    await wb.openFolder(path.join(root, 'workspace'));
    const frame = await stepper(wb, 'Brief sample/toycal/0');
    const clock = frame.locator('.clockbar .clock');
    await frame.locator('.clockbar .clock.not-started').waitFor();
    assert.equal(await clock.innerText(), 'Working time 0:00 (not started)');
    await mustShow(wb, '15-clock-not-started');

    await frame.locator('.clock-op[data-op="start"]').click();
    await frame.locator('.clockbar .clock.running').waitFor();
    await frame.locator('.step[data-phase="conclusion"]').click();
    await frame.locator('#conclusion').fill('Temperature scaling lowers the ECE; accuracy is unchanged.');
    await frame.locator('button.submit').click();
    await wb.confirmDialog(/^Submit( anyway)?$/); // "Submit anyway" when the submit check warns (no design, no script)
    await frame.locator('.results .badge', { hasText: 'Submitted' }).waitFor({ timeout: 200_000 });
    await frame.locator('.clockbar .clock').filter({ hasText: '(submitted)' }).waitFor();
    assert.match(await clock.innerText(), /^Working time \d+:\d\d \(submitted\)$/);
    // the badge comes before the verifier and the judge are done: the screenshot shows their rows
    await frame.locator('.results', { hasText: /C conclusion \(/ }).first().waitFor({ timeout: 200_000 });
    await frame.locator('section[data-section="phases"]').evaluate((e) => e.scrollIntoView({ block: 'start' }));
    await mustShow(wb, '15-clock-submitted');
  });

  it('the tree shows index, type, no_answer and the status of each task at the default width', async function () {
    this.timeout(240_000);
    // iclr2024/18439/1 opened (prepared, clock not started), 18439/2 in progress (its clock started
    // through the host-side session service, as a window does); sample/toycal/0 is submitted (above).
    if (!PAPER_REPO) this.skip();
    const source = PAPER_REPO;
    const opened = prepare('iclr2024/18439/1', 'e2e15tree', source);
    const running = prepare('iclr2024/18439/2', 'e2e15tree', source);
    made.push(opened, running);
    const service = new SessionService();
    const h = await service.open(running, { client: 'e2e' });
    await h.startClock();
    await h.release();
    await service.dispose();

    await wb.openFolder(wb.initialFolder);
    await wb.openViewContainer('EXP-Bench');
    await wb.runCommand('EXP-Bench: Refresh Tasks');
    // The command returns when the palette closes; the tree re-renders once the datasets and the
    // sessions are read again, and a click during that re-render is lost: expandTreeItem clicks
    // again until the row says it is expanded.
    await wb.expandTreeItem(/^sample$/);
    await wb.expandTreeItem(/^toycal\b/);
    await wb.treeItem(/^0 · T\d · submitted: /);
    await wb.expandTreeItem(/^iclr2024$/);
    await wb.expandTreeItem(/^17388\b/);
    await wb.treeItem(/^\d+ · T\d · no_answer/);
    await wb.expandTreeItem(/^18439\b/);
    await wb.treeItem(/^0 · T1: Does the smooth reliability/);
    await wb.treeItem(/^1 · T\d · opened: /);
    await wb.treeItem(/^2 · T\d · in progress: /);
    const width = await wb.page.locator('.part.sidebar').first().evaluate((e) => e.getBoundingClientRect().width);
    assert.ok(width >= 200 && width <= 320, `the side bar is ${width} px wide: not the default`);
    await mustShow(wb, '15-tree-default-width', '.part.sidebar');

    // A real task's brief: "Open Task…", what no_answer means, and the raw text of the task.
    const brief = await wb.webviewFromTreeItem(/^1 · T3 · no_answer: /, 'Brief iclr2024/17388/1');
    await brief.locator('button.open-task', { hasText: 'Open Task…' }).waitFor({ state: 'visible' });
    assert.match(await brief.locator('.no-answer').innerText(), /^no_answer: when the dataset was built, no implementation of this experiment was found/);
    await brief.locator('button.raw-toggle').click();
    await brief.locator('#question pre.raw').waitFor({ state: 'visible' });
    assert.equal(await brief.locator('#question .markdown').isVisible(), false);
    await mustShow(wb, '15-brief-no-answer-raw');
  });

  it('Open Task on a real paper repository shows its step at once, then opens the session', async function () {
    this.timeout(300_000);
    if (!PAPER_REPO) this.skip();
    // A fresh clone per run, so that the pristine cache does not have it yet (the whole preparation runs).
    // a clone in the home folder: the progress names it `~/e2e15-ml-calibration-…` (no machine path in the screenshot)
    const source = fs.mkdtempSync(path.join(os.homedir(), 'e2e15-ml-calibration-'));
    execFileSync('git', ['clone', '-q', PAPER_REPO, source]);
    try {
      await wb.openFolder(wb.initialFolder);
      await wb.openViewContainer('EXP-Bench');
      await wb.expandTreeItem(/^iclr2024$/);
      await wb.expandTreeItem(/^18439\b/);
      const task = await wb.treeItem(/^0 · T1: /);
      await wb.contextMenu(task, /^Open Task$/);
      const pick = wb.page.locator('.quick-input-widget');
      await pick.waitFor({ state: 'visible' });
      await pick.locator('.monaco-list-row', { hasText: 'Enter a git URL…' }).click();
      await pick.locator('input').fill(source);
      // The preparation of this small repository takes well under a second, less than one
      // screenshot takes under load: the page is filmed (Chromium's screencast: every frame it
      // paints, with its time) while a MutationObserver in the page reports each change of the
      // notification's text with the time; the frame kept was painted while the text named a step.
      const seen: Array<{ at: number; text: string }> = [];
      await wb.page.exposeFunction('expbench15Toast', (text: string) => {
        if (seen.at(-1)?.text !== text) seen.push({ at: Date.now(), text: text.replace(/\s+/g, ' ') });
      });
      await wb.page.evaluate(() => {
        const report = (window as unknown as { expbench15Toast(t: string): void }).expbench15Toast;
        const read = () => report(Array.from(document.querySelectorAll('.notification-toast')).map((e) => e.textContent ?? '').find((t) => t.includes('EXP-Bench: opening')) ?? '');
        new MutationObserver(read).observe(document.body, { subtree: true, childList: true, characterData: true });
      });
      const cdp = await wb.page.context().newCDPSession(wb.page);
      const frames: Array<{ at: number; png: Buffer }> = [];
      cdp.on('Page.screencastFrame', (f) => {
        frames.push({ at: (f.metadata.timestamp ?? 0) * 1000, png: Buffer.from(f.data, 'base64') });
        void cdp.send('Page.screencastFrameAck', { sessionId: f.sessionId }).catch(() => undefined);
      });
      await cdp.send('Page.startScreencast', { format: 'png', everyNthFrame: 1 });
      const t0 = Date.now();
      await pick.locator('input').press('Enter');
      await stepper(wb, 'Brief iclr2024/18439/0'); // the window reloaded on the new session
      await cdp.send('Page.stopScreencast').catch(() => undefined);
      await cdp.detach().catch(() => undefined);
      const steps = [...new Set(seen.map((x) => /Step \d of 4: [^:(]+|Prepared; opening the workspace/.exec(x.text)?.[0].trim()).filter((x): x is string => !!x))];
      const first = seen.find((x) => x.text);
      assert.ok(first, 'the progress notification never showed');
      console.log(`      progress shown ${first.at - t0} ms after the source was given; steps seen: ${JSON.stringify(steps)}; ${frames.length} frames`);
      assert.match(steps[0], /^Step 1 of 4: getting the repository$/, 'the first thing shown is the first step');
      assert.ok(first.at - t0 < 5_000, 'the progress notification came later than 5 s');
      // The last frame painted while the notification named a step (until its next change).
      const stepTimes = seen.map((x, i) => ({ ...x, until: seen[i + 1]?.at ?? Infinity })).filter((x) => /Step \d of 4/.test(x.text));
      const frame = frames.filter((f) => stepTimes.some((r) => f.at >= r.at && f.at < r.until)).at(-1);
      assert.ok(frame, `no frame painted while a step showed (${frames.length} frames)`);
      fs.writeFileSync(path.join(IMAGES, '15-open-task-progress.png'), frame.png);
    } finally {
      fs.rmSync(source, { recursive: true, force: true });
    }
  });
});
