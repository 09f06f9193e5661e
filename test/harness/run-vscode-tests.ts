// `npm run test:vscode`: runs test/vscode/**/*.vscode.test.ts inside the real VS Code extension
// host. Starts code-server (fresh user data and extensions dirs under test-results/vscode), opens
// the workbench in headless Chromium with the extensionDevelopmentPath (repo root) and
// extensionTestsPath (out/test/vscode/index.js) payload, forwards the extension host's console,
// and exits with the code the workbench passes to codeAutomationExit (0 when run() resolved).
// Env: EXPBENCH_VSCODE_TIMEOUT_MS (whole run, default 600000 ms); EXPBENCH_VSCODE_GREP runs only
// the tests whose full title matches (mocha grep); EXPBENCH_VSCODE_SESSION=<task id> prepares a
// session of that task (`node dist/cli.js prepare`, under test-results/vscode/session-<pid>) and opens
// the window on its workspace, so that the window has a task session of its own (the tests that
// need one, e.g. "in the window's own session", run only then: pair it with EXPBENCH_VSCODE_GREP).
import { execFileSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';
import * as util from 'node:util';
import { launchChromium } from './browser';
import { startCodeServer, type CodeServer } from './code-server';
import { freshResultsDir, repoRoot, requireFile, sharedDatasetDir } from './paths';
import { describeSummary, readSummary, summaryFile } from './summary';
import type { Browser } from 'playwright-core';

const TIMEOUT_MS = Number(process.env.EXPBENCH_VSCODE_TIMEOUT_MS ?? 600_000);

interface ExitLog { relativePath: string; contents: string }

/**
 * The workbench sends its own log and the extension host's console here. Info lines (mocha's spec
 * output among them) are printed whole; warnings and errors only by their first line (the full
 * text is in test-results/vscode/extension-host-console.log).
 */
function printWorkbenchLog(level: string, text: string): void {
  if (level === 'info' || level === 'debug' || level === 'trace') process.stdout.write(`${text}\n`);
  else process.stdout.write(`[workbench ${level}] ${text.split('\n', 1)[0].slice(0, 200)}\n`);
}

async function main(): Promise<number> {
  requireFile(path.join(repoRoot, 'dist', 'extension.js'), 'npm run build');
  const testsEntry = requireFile(path.join(repoRoot, 'out', 'test', 'vscode', 'index.js'), 'npm run compile-tests');
  // EXPBENCH_VSCODE_RUN_NAME: another folder under test-results/ (default vscode), so that two runs at once do not share user data
  const tier = process.env.EXPBENCH_VSCODE_RUN_NAME ?? 'vscode';
  const runDir = freshResultsDir(tier);
  fs.rmSync(summaryFile(tier), { force: true });
  let workspace = path.join(runDir, 'workspace');
  fs.mkdirSync(workspace);
  const sessionTask = process.env.EXPBENCH_VSCODE_SESSION;
  if (sessionTask) {
    const root = path.join(runDir, `session-${process.pid}`); // its name labels the work container: unique on a shared engine
    execFileSync(process.execPath, [path.join(repoRoot, 'dist', 'cli.js'), 'prepare', sessionTask, '--out', root], { cwd: repoRoot, stdio: 'pipe', timeout: 300_000 });
    workspace = path.join(root, 'workspace');
    console.log(`[harness] the window opens the session of ${sessionTask}: ${path.relative(repoRoot, root)}`);
  }
  const hostLog = fs.createWriteStream(path.join(runDir, 'extension-host-console.log'));
  const browserLog = fs.createWriteStream(path.join(runDir, 'browser-console.log'));

  let server: CodeServer | undefined;
  let browser: Browser | undefined;
  const started = Date.now();
  try {
    server = await startCodeServer({ runDir, settings: { 'expbench.datasets': [sharedDatasetDir] } });
    console.log(`[harness] code-server ${server.baseUrl} (log ${path.relative(repoRoot, server.logFile)})`);
    browser = await launchChromium();
    const page = await browser.newPage();
    page.on('console', (m) => browserLog.write(`[${m.type()}] ${m.text()}\n`));
    page.on('pageerror', (e) => browserLog.write(`[pageerror] ${e.stack ?? e.message}\n`));

    let finish!: (code: number) => void;
    const exit = new Promise<number>((resolve) => (finish = resolve));
    await page.exposeFunction('codeAutomationLog', (level: string, args: unknown) => {
      const text = Array.isArray(args) ? util.format(...(args as unknown[])) : String(args);
      hostLog.write(`[${level}] ${text}\n`);
      printWorkbenchLog(level, text);
    });
    await page.exposeFunction('codeAutomationExit', (code: number, logs?: ExitLog[]) => {
      for (const l of logs ?? []) {
        const file = path.join(runDir, 'workbench-logs', l.relativePath);
        fs.mkdirSync(path.dirname(file), { recursive: true });
        fs.writeFileSync(file, l.contents);
      }
      finish(code);
    });

    const url = server.workbenchUrl({
      folder: workspace,
      payload: [
        ['extensionDevelopmentPath', server.remoteUri(repoRoot)],
        ['extensionTestsPath', server.remoteUri(testsEntry)],
      ],
    });
    fs.writeFileSync(path.join(runDir, 'workbench-url.txt'), url + '\n');
    await page.goto(url, { waitUntil: 'domcontentloaded' });

    let settled = false;
    const failure = (why: string): number => {
      if (!settled) console.error(`[harness] FAILED: ${why}`);
      return 1;
    };
    const code = await Promise.race([
      exit,
      new Promise<number>((r) => setTimeout(r, TIMEOUT_MS, -1).unref()).then((c) =>
        c === -1 ? failure(`no codeAutomationExit within ${TIMEOUT_MS} ms (the tests hung or the extension host never started; see test-results/vscode/)`) : c),
      server.process.exited.then(() => failure(`code-server exited during the run (log ${server!.logFile})`)),
      new Promise<void>((r) => browser!.once('disconnected', () => r())).then(() => failure('the browser disconnected')),
    ]);
    settled = true;
    const summary = readSummary(tier);
    console.log(`[harness] codeAutomationExit(${code}) after ${((Date.now() - started) / 1000).toFixed(1)} s`);
    if (summary) console.log(`[harness] ${describeSummary(summary)}`);
    else console.error(`[harness] no mocha summary at ${path.relative(repoRoot, summaryFile(tier))}: the tests did not run to the end`);
    return code === 0 && summary && summary.failures === 0 && summary.tests > 0 ? 0 : 1;
  } finally {
    await browser?.close().catch(() => undefined);
    await server?.stop();
    hostLog.end();
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
