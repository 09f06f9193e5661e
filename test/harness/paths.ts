// Paths shared by the test launchers. Compiled to out/test/harness/*.js, so the repository root
// is three levels up from this file's compiled location.
import * as fs from 'node:fs';
import * as path from 'node:path';

/** Absolute path of the repository root (the folder holding package.json). */
export const repoRoot = path.resolve(__dirname, '..', '..', '..');

/**
 * Where every run leaves its logs, summaries and screenshots (gitignored). Override with
 * EXPBENCH_TEST_RESULTS (an absolute path) to run two tiers of the same name side by side.
 */
export const testResultsDir = process.env.EXPBENCH_TEST_RESULTS ?? path.join(repoRoot, 'test-results');

/** Folder of PNG screenshots written by e2e tests. */
export const screenshotsDir = path.join(testResultsDir, 'screenshots');

/** code-server installed by scripts/setup-vscode.sh (override with CODE_SERVER_DIR). */
export const codeServerDir = process.env.CODE_SERVER_DIR ?? path.join(repoRoot, '.cache', 'tools', 'code-server');

/** The real EXP-Bench tasks, beside the repository (`../shared/data/exp-bench`). */
export const sharedDatasetDir = path.resolve(repoRoot, '..', 'shared', 'data', 'exp-bench');

/** Headless browser binary (Debian's chromium). Override with CHROMIUM_PATH. */
export const chromiumPath = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium';

/**
 * Empties (or creates) `test-results/<name>` and returns its absolute path.
 * Each tier owns one such folder, so a run never reads a previous run's files.
 */
export function freshResultsDir(name: string): string {
  const dir = path.join(testResultsDir, name);
  fs.rmSync(dir, { recursive: true, force: true });
  fs.mkdirSync(dir, { recursive: true });
  return dir;
}

/** Throws an Error naming `file` and the command that makes it when `file` is missing. */
export function requireFile(file: string, makeWith: string): string {
  if (!fs.existsSync(file)) {
    throw new Error(`missing ${path.relative(repoRoot, file) || file}: run \`${makeWith}\` first`);
  }
  return file;
}
