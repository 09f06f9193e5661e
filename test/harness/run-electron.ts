// `npm run test:electron`: the same extension-host tests (test/vscode, via out/test/vscode/index.js)
// in desktop VS Code downloaded by @vscode/test-electron. FOR MACHINES WITH NETWORK ACCESS ONLY:
// the download from Microsoft's update servers fails offline (see ../shared/docs/offline-vscode.md),
// so CI and scripts/test.sh use run-vscode-tests.ts (code-server) instead. On a headless Linux box
// run it under a display server, e.g. `xvfb-run -a npm run test:electron`.
// Env: EXPBENCH_ELECTRON_VERSION (default 1.100.3, the version code-server 4.100.3 ships).
import * as fs from 'node:fs';
import * as path from 'node:path';
import { runTests } from '@vscode/test-electron';
import { baseSettings } from './code-server';
import { freshResultsDir, repoRoot, requireFile, sharedDatasetDir } from './paths';
import { describeSummary, readSummary, summaryFile } from './summary';

async function main(): Promise<number> {
  requireFile(path.join(repoRoot, 'dist', 'extension.js'), 'npm run build');
  const testsEntry = requireFile(path.join(repoRoot, 'out', 'test', 'vscode', 'index.js'), 'npm run compile-tests');
  const runDir = freshResultsDir('electron');
  fs.rmSync(summaryFile('vscode'), { force: true });
  const userDataDir = path.join(runDir, 'user-data');
  fs.mkdirSync(path.join(userDataDir, 'User'), { recursive: true });
  fs.writeFileSync(path.join(userDataDir, 'User', 'settings.json'),
    JSON.stringify({ ...baseSettings, 'expbench.datasets': [sharedDatasetDir] }, null, 2));
  const workspace = path.join(runDir, 'workspace');
  fs.mkdirSync(workspace);
  const code = await runTests({
    version: process.env.EXPBENCH_ELECTRON_VERSION ?? '1.100.3',
    cachePath: path.join(repoRoot, '.vscode-test'),
    extensionDevelopmentPath: repoRoot,
    extensionTestsPath: testsEntry,
    launchArgs: [
      workspace, '--user-data-dir', userDataDir, '--extensions-dir', path.join(runDir, 'extensions'),
      '--disable-workspace-trust', '--skip-welcome', '--skip-release-notes', '--disable-gpu', '--no-sandbox',
    ],
  });
  const summary = readSummary('vscode');
  if (summary) console.log(`[harness] electron: ${describeSummary(summary)}`);
  return code;
}

main().then(
  (code) => { process.exitCode = code; },
  (err: unknown) => {
    console.error(`[harness] test:electron failed: ${err instanceof Error ? err.message : String(err)}`);
    console.error('[harness] (it downloads VS Code: offline machines use `npm run test:vscode`, which runs the same tests in code-server)');
    process.exitCode = 1;
  },
);
