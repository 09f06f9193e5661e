// `npm run test:e2e`: end-to-end tests in headless Chromium on the real VS Code UI (code-server).
// Packages the extension (`npm run package` → dist/expbench-workbench.vsix), installs it into a
// fresh extensions dir with code-server's CLI, starts code-server on an empty folder with
// `expbench.datasets` pointing at ../shared/data/exp-bench, opens the workbench, and runs mocha
// (bdd) over out/test/e2e/**/*.e2e.test.js with the page available through getWorkbench().
// Artifacts: test-results/e2e/ (logs, Playwright trace on failure), test-results/screenshots/*.png.
// Env: EXPBENCH_E2E_VSIX=path skips packaging; EXPBENCH_E2E_TIMEOUT_MS per test (default 120000);
// EXPBENCH_E2E_GREP runs only the tests whose full title matches (mocha grep); EXPBENCH_E2E_TRACE=always
// keeps the Playwright trace of a run without failures too (to see where a passing test spends its time).
import * as fs from 'node:fs';
import * as path from 'node:path';
import Mocha from 'mocha';
import type { Browser } from 'playwright-core';
import { launchChromium } from './browser';
import { installExtension, startCodeServer, type CodeServer } from './code-server';
import { setWorkbench } from './e2e-context';
import { freshResultsDir, repoRoot, screenshotsDir, sharedDatasetDir } from './paths';
import { runLogged } from './proc';
import SummaryReporter from './summary-reporter';
import { describeSummary, readSummary, summaryFile } from './summary';
import { Workbench } from './workbench';

function findTests(dir: string): string[] {
  if (!fs.existsSync(dir)) return [];
  return (fs.readdirSync(dir, { recursive: true }) as string[])
    .filter((f) => f.endsWith('.e2e.test.js'))
    .map((f) => path.join(dir, f))
    .sort();
}

async function main(): Promise<number> {
  // EXPBENCH_E2E_RUN_NAME: another folder under test-results/ (default e2e), so that two runs at once do not share one
  const runDir = freshResultsDir(process.env.EXPBENCH_E2E_RUN_NAME ?? 'e2e');
  fs.rmSync(screenshotsDir, { recursive: true, force: true });
  fs.rmSync(summaryFile('e2e'), { force: true });
  const files = findTests(path.join(repoRoot, 'out', 'test', 'e2e'));
  if (files.length === 0) throw new Error('no out/test/e2e/**/*.e2e.test.js: run npm run compile-tests');

  let vsix = process.env.EXPBENCH_E2E_VSIX;
  if (!vsix) {
    console.log('[harness] npm run package');
    await runLogged('npm', ['run', 'package'], { cwd: repoRoot, logFile: path.join(runDir, 'package.log'), timeoutMs: 5 * 60_000 });
    vsix = path.join(repoRoot, 'dist', 'expbench-workbench.vsix');
  }
  const extensionsDir = path.join(runDir, 'extensions');
  await installExtension(path.resolve(vsix), extensionsDir, runDir);
  console.log(`[harness] installed ${path.relative(repoRoot, vsix)} into ${path.relative(repoRoot, extensionsDir)}: ${fs.readdirSync(extensionsDir).filter((d) => !d.endsWith('.json')).join(', ')}`);

  const workspace = path.join(runDir, 'workspace');
  fs.mkdirSync(workspace);
  const browserLog = fs.createWriteStream(path.join(runDir, 'browser-console.log'));
  let server: CodeServer | undefined;
  let browser: Browser | undefined;
  try {
    // the review store of the run (docs/review.md); test/e2e/curation.e2e.test.ts reads it
    process.env.EXPBENCH_E2E_REVIEW_DIR = path.join(runDir, 'review');
    server = await startCodeServer({ runDir, folder: workspace, extensionsDir, settings: { 'expbench.datasets': [sharedDatasetDir], 'expbench.review.folder': process.env.EXPBENCH_E2E_REVIEW_DIR } });
    console.log(`[harness] code-server ${server.baseUrl} (log ${path.relative(repoRoot, server.logFile)})`);
    browser = await launchChromium();
    const context = await browser.newContext({ viewport: { width: 1600, height: 1000 } });
    await context.tracing.start({ screenshots: true, snapshots: true });
    const page = await context.newPage();
    page.on('console', (m) => browserLog.write(`[${m.type()}] ${m.text()}\n`));
    page.on('pageerror', (e) => browserLog.write(`[pageerror] ${e.stack ?? e.message}\n`));
    await page.goto(server.workbenchUrl({ folder: workspace }), { waitUntil: 'domcontentloaded' });
    const srv = server;
    const workbench = new Workbench(page, screenshotsDir, undefined, (folder) => srv.workbenchUrl({ folder }));
    workbench.initialFolder = workspace;
    await workbench.ready();
    setWorkbench(workbench);

    const mocha = new Mocha({
      ui: 'bdd',
      ...(process.env.EXPBENCH_E2E_GREP ? { grep: process.env.EXPBENCH_E2E_GREP } : {}),
      timeout: Number(process.env.EXPBENCH_E2E_TIMEOUT_MS ?? 120_000),
      reporter: SummaryReporter as unknown as string,
      reporterOptions: { summary: summaryFile('e2e'), tier: 'e2e' },
      rootHooks: {
        async afterEach(this: Mocha.Context) {
          const t = this.currentTest;
          if (t?.state === 'failed') {
            const file = await workbench.screenshot(`FAILED-${t.fullTitle()}`).catch(() => undefined);
            if (file) console.log(`      screenshot of the failure: ${path.relative(repoRoot, file)}`);
          }
        },
      },
    });
    for (const f of files) mocha.addFile(f);
    await mocha.loadFilesAsync();
    const failures = await new Promise<number>((resolve) => mocha.run(resolve));
    const total = mocha.suite.total();
    if (failures > 0 || process.env.EXPBENCH_E2E_TRACE === 'always') {
      const trace = path.join(runDir, 'trace.zip');
      await context.tracing.stop({ path: trace });
      console.log(`[harness] Playwright trace: ${path.relative(repoRoot, trace)} (npx playwright show-trace)`);
    } else {
      await context.tracing.stop();
    }
    const summary = readSummary('e2e');
    if (summary) console.log(`[harness] ${describeSummary(summary)}`);
    if (total === 0) console.error('[harness] FAILED: the e2e tier ran no test');
    return failures === 0 && total > 0 ? 0 : 1;
  } finally {
    setWorkbench(undefined);
    await browser?.close().catch(() => undefined);
    await server?.stop();
    browserLog.end();
  }
}

main().then(
  (code) => exitSoon(code),
  (err: unknown) => {
    console.error(`[harness] ${err instanceof Error ? err.stack ?? err.message : String(err)}`);
    exitSoon(1);
  },
);

/** Lets logs flush; exits anyway after 5 s if a handle keeps the loop alive. */
function exitSoon(code: number): void {
  process.exitCode = code;
  setTimeout(() => process.exit(code), 5000).unref();
}
