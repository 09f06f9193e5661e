// Packages the extension (dist/expbench-workbench.vsix) with vsce, run in a staging copy of the
// project's own files. vsce lists every file under the folder it runs in and matches each one
// against every pattern of .vscodeignore; on a fresh machine the project's .cache/ holds
// code-server's install and the sandbox's root file system while it is built (some 50,000
// files), and that walk took minutes of `bash scripts/start.sh`. What the .vsix holds is the same:
// the staging folder has the same top-level entries (less the caches, dependencies and outputs
// below, which .vscodeignore excludes anyway) and the same .vscodeignore decides.
// Usage: node scripts/package-vsix.mjs [extra vsce package arguments]
import { spawnSync } from 'node:child_process';
import { cpSync, mkdtempSync, readdirSync, rmSync, symlinkSync } from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { fileURLToPath } from 'node:url';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
/** Top-level entries never shipped (excluded by .vscodeignore's `**`) and large: left out of the staging copy. */
const SKIP = new Set(['.cache', 'node_modules', '.git', 'out', 'test-results', '.vscode-test']);
const OUT = path.join(ROOT, 'dist', 'expbench-workbench.vsix');

const stage = mkdtempSync(path.join(os.tmpdir(), 'expbench-vsix-'));
let status = 1;
try {
  for (const name of readdirSync(ROOT)) {
    if (!SKIP.has(name)) cpSync(path.join(ROOT, name), path.join(stage, name), { recursive: true, verbatimSymlinks: true });
  }
  // vsce reads nothing from node_modules with --no-dependencies; the link keeps any lookup working.
  symlinkSync(path.join(ROOT, 'node_modules'), path.join(stage, 'node_modules'));
  const vsce = path.join(ROOT, 'node_modules', '@vscode', 'vsce', 'vsce');
  const r = spawnSync(process.execPath, [vsce, 'package', '--no-dependencies', '--no-rewrite-relative-links', '--out', OUT, ...process.argv.slice(2)], { cwd: stage, stdio: 'inherit' });
  status = r.status ?? 1;
  if (r.error) console.error(`package-vsix: vsce could not run: ${r.error.message}`);
} finally {
  rmSync(stage, { recursive: true, force: true });
}
process.exit(status);
