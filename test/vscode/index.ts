// Runs inside the real VS Code extension host (code-server), loaded through the workbench's
// `extensionTestsPath` payload by test/harness/run-vscode-tests.ts. Mocha (bdd) runs every
// out/test/vscode/**/*.vscode.test.js; its spec output goes to console.log, which the workbench
// forwards to the launcher through codeAutomationLog. run() rejects when a test fails or none ran.
import * as fs from 'node:fs';
import * as path from 'node:path';
import Mocha from 'mocha';
import SummaryReporter from '../harness/summary-reporter';
import { summaryFile } from '../harness/summary';

/** Compiled test files under `dir`, sorted for a stable order. */
function findTests(dir: string): string[] {
  return (fs.readdirSync(dir, { recursive: true }) as string[])
    .filter((f) => f.endsWith('.vscode.test.js'))
    .map((f) => path.join(dir, f))
    .sort();
}

export async function run(): Promise<void> {
  const files = findTests(__dirname);
  if (files.length === 0) throw new Error(`no *.vscode.test.js under ${__dirname}: run npm run compile-tests`);
  const mocha = new Mocha({
    ui: 'bdd',
    color: false,
    timeout: Number(process.env.EXPBENCH_VSCODE_TEST_TIMEOUT_MS ?? 60_000),
    reporter: SummaryReporter as unknown as string,
    // EXPBENCH_VSCODE_RUN_NAME names the tier's summary too (scripts/test.sh's second pass, vscode-session)
    reporterOptions: { summary: summaryFile(process.env.EXPBENCH_VSCODE_RUN_NAME ?? 'vscode'), tier: process.env.EXPBENCH_VSCODE_RUN_NAME ?? 'vscode' },
    // EXPBENCH_VSCODE_GREP runs only the tests whose full title matches (as EXPBENCH_E2E_GREP).
    ...(process.env.EXPBENCH_VSCODE_GREP ? { grep: process.env.EXPBENCH_VSCODE_GREP } : {}),
  });
  for (const f of files) mocha.addFile(f);
  await mocha.loadFilesAsync();
  const failures = await new Promise<number>((resolve) => mocha.run(resolve));
  const total = mocha.suite.total();
  if (failures > 0) throw new Error(`${failures} of ${total} vscode test(s) failed`);
  if (total === 0) throw new Error('the vscode tier ran no test');
}
