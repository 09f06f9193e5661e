/**
 * The trajectory viewer measured where a reviewer uses it (issue 30): the real VS Code (code-server)
 * in headless Chromium, the extension packaged and installed as a user installs it. Part of
 * bench/viewer.bench.ts. Figures:
 * - first rows: from the click on "Open as Trajectory" (the Explorer's context menu) to the first
 *   timeline row drawn in the viewer's webview, per file: the shared Inspect, OpenHands and
 *   SWE-agent runs, a 10 MB Inspect `.eval`, a 10 MB session log, a large session log (loaded
 *   progressively); the first open of the window apart (it loads the workbench bundle);
 * - a step move: key press (`j`) → the next animation frame after the next step's detail is drawn,
 *   timed inside the webview (`performance.now`), N moves per run, p50 and p90; and the webview's
 *   own figure of the same (`data-moves`, key press → frame after the detail drawn).
 * The machine is shared: the load average is printed beside the figures.
 */
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import type { Browser, Frame, Page } from 'playwright-core';
import { launchChromium } from '../test/harness/browser';
import { installExtension, startCodeServer, type CodeServer } from '../test/harness/code-server';
import { freshResultsDir, repoRoot, sharedDatasetDir } from '../test/harness/paths';
import { runLogged } from '../test/harness/proc';
import { Workbench } from '../test/harness/workbench';

const MOVES = Number(process.env.BENCH_VIEWER_MOVES ?? 60);

export interface ChromiumFigures {
  firstRowsMs: Record<string, number>;
  moves: Record<string, { p50: number; p90: number; own50: number; own90: number; n: number }>;
  /** Files that were not measured, with the reason (one file's failure does not lose the others' figures). */
  failed: Record<string, string>;
  load: string;
}

const pct = (xs: number[], p: number) => [...xs].sort((a, b) => a - b)[Math.min(xs.length - 1, Math.floor(xs.length * p))];

/** The frame of the visible viewer of `name` once its first row is drawn, polled every 5 ms; the time of that moment. */
async function firstRows(page: Page, name: string, timeoutMs = 120_000): Promise<{ frame: Frame; at: number }> {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    for (const frame of page.frames()) {
      const ok = await frame.evaluate((n) => {
        const t = document.querySelector('main.traj .head .title strong');
        return !!t && t.textContent === n && !!document.querySelector('main.traj .row[data-step]');
      }, name).catch(() => false);
      if (ok) return { frame, at: performance.now() };
    }
    await new Promise((r) => setTimeout(r, 5));
  }
  throw new Error(`no viewer of ${name} with rows within ${timeoutMs} ms`);
}

async function openAsTrajectory(wb: Workbench, name: string): Promise<{ frame: Frame; ms: number }> {
  await wb.page.keyboard.press('Control+Shift+E');
  const entry = wb.page.locator('.monaco-menu .action-item').filter({ has: wb.page.locator('.action-label', { hasText: /^\s*Open as Trajectory\s*$/ }) }).first();
  // the Explorer's menu holds the extension's entries once the window has read the extensions: asked again until it does
  for (let attempt = 1; ; attempt++) {
    await (await wb.treeItem(name)).click({ button: 'right' });
    if (await entry.waitFor({ state: 'visible', timeout: 10_000 }).then(() => true, () => false)) break;
    await wb.page.keyboard.press('Escape');
    if (attempt === 6) throw new Error(`no "Open as Trajectory" in the Explorer's menu of ${name}`);
  }
  const t0 = performance.now();
  await entry.click();
  const r = await firstRows(wb.page, name);
  return { frame: r.frame, ms: r.at - t0 };
}

/** `n` step moves with `j` from the first row: each timed in the page from the key press to the frame after the detail was drawn. */
async function moves(frame: Frame, n: number): Promise<{ times: number[]; own: number[] }> {
  await frame.locator('.row[data-step]').first().click();
  await frame.locator('.detail-body').first().waitFor({ state: 'visible', timeout: 30_000 });
  const times = await frame.evaluate(async (count) => {
    const out: number[] = [];
    for (let i = 0; i < count; i++) {
      const before = document.querySelector('.detail-body')?.getAttribute('data-step');
      const t0 = performance.now();
      document.dispatchEvent(new KeyboardEvent('keydown', { key: 'j', bubbles: true }));
      await new Promise<void>((resolve) => {
        const moved = () => { const s = document.querySelector('.detail-body')?.getAttribute('data-step'); return s !== null && s !== undefined && s !== before; };
        if (moved()) return resolve();
        const mo = new MutationObserver(() => { if (moved()) { mo.disconnect(); resolve(); } });
        mo.observe(document.body, { childList: true, subtree: true });
        setTimeout(() => { mo.disconnect(); resolve(); }, 5000);
      });
      await new Promise((r) => requestAnimationFrame(() => r(undefined)));
      out.push(performance.now() - t0);
      // a reviewer reads between moves; the page's idle work (the panes built ahead) runs then
      await new Promise((r) => setTimeout(r, 60));
    }
    return out;
  }, n);
  const own = ((await frame.locator('#root').getAttribute('data-moves')) ?? '').split(' ').filter(Boolean).map(Number);
  return { times, own };
}

export async function chromium(files: Array<{ file: string; label: string; moves?: boolean }>): Promise<ChromiumFigures> {
  const runDir = freshResultsDir('bench-viewer');
  let vsix = process.env.BENCH_VSIX;
  if (!vsix) {
    await runLogged('npm', ['run', 'package'], { cwd: repoRoot, logFile: path.join(runDir, 'package.log'), timeoutMs: 5 * 60_000 });
    vsix = path.join(repoRoot, 'dist', 'expbench-workbench.vsix');
  }
  const extensionsDir = path.join(runDir, 'extensions');
  await installExtension(path.resolve(vsix), extensionsDir, runDir);
  const workspace = path.join(runDir, 'runs');
  fs.mkdirSync(workspace, { recursive: true });
  for (const f of files) fs.copyFileSync(f.file, path.join(workspace, path.basename(f.file)));
  fs.writeFileSync(path.join(workspace, 'warm-up.traj'), fs.readFileSync(files.find((f) => f.file.endsWith('.traj'))?.file ?? files[0].file));
  let server: CodeServer | undefined;
  let browser: Browser | undefined;
  try {
    server = await startCodeServer({ runDir, folder: workspace, extensionsDir, settings: { 'expbench.datasets': [sharedDatasetDir] } });
    browser = await launchChromium();
    const context = await browser.newContext({ viewport: { width: 1600, height: 1000 } });
    const page = await context.newPage();
    await page.goto(server.workbenchUrl({ folder: workspace }), { waitUntil: 'domcontentloaded' });
    const wb = new Workbench(page, path.join(runDir, 'screenshots'), 60_000);
    await wb.ready();
    const firstRowsMs: Record<string, number> = {};
    // the first open loads the workbench bundle (dist/workbench.js): measured apart
    firstRowsMs['first open of the window (warm-up.traj)'] = (await openAsTrajectory(wb, 'warm-up.traj')).ms;
    const out: ChromiumFigures['moves'] = {};
    const failed: Record<string, string> = {};
    for (const f of files) {
      const name = path.basename(f.file);
      try {
        const r = await openAsTrajectory(wb, name);
        firstRowsMs[f.label] = r.ms;
        if (f.moves) {
          const m = await moves(r.frame, MOVES);
          out[f.label] = { p50: pct(m.times, 0.5), p90: pct(m.times, 0.9), own50: pct(m.own, 0.5), own90: pct(m.own, 0.9), n: m.times.length };
        }
      } catch (e) {
        failed[f.label] = e instanceof Error ? e.message : String(e);
        await wb.screenshot(`bench-failed-${name}`).catch(() => undefined);
      }
      await page.keyboard.press('Escape');
      await page.keyboard.press('Control+W');
    }
    return { firstRowsMs, moves: out, failed, load: os.loadavg().map((x) => x.toFixed(2)).join(' ') };
  } finally {
    await browser?.close().catch(() => undefined);
    await server?.stop();
  }
}
