// esbuild bundles: the extension (node, vscode external), the CLI (node), the webview (browser).
import * as esbuild from 'esbuild';
import { copyFileSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import * as path from 'node:path';

const production = process.argv.includes('--production');
const common = { bundle: true, sourcemap: !production, minify: production, logLevel: 'warning', metafile: true };

// docker-modem (dockerode) requires ssh2 when it loads, but the vsix ships no node_modules and the
// project never talks to Docker over SSH: ssh2 becomes a stub that fails clearly if it is ever used.
const noSsh2 = {
  name: 'no-ssh2',
  setup(b) {
    b.onResolve({ filter: /^ssh2$/ }, () => ({ path: 'ssh2', namespace: 'no-ssh2' }));
    b.onLoad({ filter: /.*/, namespace: 'no-ssh2' }, () => ({
      loader: 'js',
      contents: "class Client { constructor() { throw new Error('EXP-Bench does not support Docker over SSH (DOCKER_HOST=ssh://...)'); } }\nmodule.exports = { Client };",
    }));
  },
};

// Load time of a bundle is dominated by compiling it (activation reads the whole file), so
// never-used parts of libraries are left out:
// - dockerode's BuildKit session (`version: '2'` builds; we never use BuildKit): pulls in
//   @grpc/grpc-js, @grpc/proto-loader and protobufjs. Replaced by a function that fails clearly.
const noBuildKit = {
  name: 'no-buildkit',
  setup(b) {
    b.onResolve({ filter: /^\.\/(session|buildkit)$/ }, (a) => (/[\\/]dockerode[\\/]/.test(a.importer) ? { path: a.path, namespace: 'no-buildkit' } : undefined));
    b.onLoad({ filter: /.*/, namespace: 'no-buildkit' }, () => ({
      loader: 'js',
      contents: "module.exports = function () { throw new Error('EXP-Bench does not use BuildKit sessions (dockerode buildImage version 2)'); };",
    }));
  },
};

// - zod's translated error messages: `z.locales` (every language) is re-exported by zod's entry
//   module; only English, the default (`config(en())`), is kept. `z.locales.<other>` is undefined.
//   Applied to every bundle that takes in zod, the webview's too (the locales were most of it).
const zodEnglishOnly = {
  name: 'zod-english-only',
  setup(b) {
    b.onResolve({ filter: /(^|[\\/])locales[\\/]index\.c?js$/ }, (a) => (/[\\/]zod[\\/]/.test(a.importer)
      ? { path: path.join(a.resolveDir, a.path).replace(/index\.(c?js)$/, 'en.$1'), namespace: 'zod-en' }
      : undefined));
    b.onLoad({ filter: /.*/, namespace: 'zod-en' }, (a) => ({
      loader: 'js', resolveDir: path.dirname(a.path),
      contents: a.path.endsWith('.cjs') ? `module.exports = { en: require(${JSON.stringify(a.path)}).default };` : `export { default as en } from ${JSON.stringify(a.path)};`,
    }));
  },
};

// jsonc-parser's `main` is a UMD module whose factory receives `require` as a value, so esbuild
// cannot follow its internal requires ("Cannot find module './impl/format'" at run time): the
// bundles take its ES module build (`module` field) instead.
const jsoncEsm = {
  name: 'jsonc-esm',
  setup(b) {
    b.onResolve({ filter: /^jsonc-parser$/ }, (a) => b.resolve('jsonc-parser/lib/esm/main.js', { kind: a.kind, resolveDir: a.resolveDir }));
  },
};

const builds = [
  // Two stages (src/extension/extension.ts): what activation registers, and the workbench loaded on first use.
  { ...common, entryPoints: ['src/extension/extension.ts'], outfile: 'dist/extension.js', platform: 'node', format: 'cjs', target: 'node20', external: ['vscode'] },
  { ...common, entryPoints: ['src/extension/workbench.ts'], outfile: 'dist/workbench.js', platform: 'node', format: 'cjs', target: 'node20', external: ['vscode', 'cpu-features'], plugins: [noSsh2, noBuildKit, zodEnglishOnly, jsoncEsm] },
  { ...common, entryPoints: ['src/cli/main.ts'], outfile: 'dist/cli.js', platform: 'node', format: 'cjs', target: 'node20', external: ['vscode', 'cpu-features'], plugins: [noSsh2, noBuildKit, zodEnglishOnly, jsoncEsm], banner: { js: '#!/usr/bin/env node' } },
  // the worker thread of the host's slow work (src/core/flows/offThread.ts looks for it beside the bundle)
  { ...common, entryPoints: ['src/core/flows/offThreadWorker.ts'], outfile: 'dist/offThreadWorker.js', platform: 'node', format: 'cjs', target: 'node20', external: ['vscode', 'cpu-features'], plugins: [noSsh2, noBuildKit, zodEnglishOnly, jsoncEsm] },
  { ...common, entryPoints: ['webview-ui/src/main.ts'], outfile: 'dist/webview/main.js', platform: 'browser', format: 'iife', target: 'es2022', plugins: [zodEnglishOnly] },
  { ...common, entryPoints: ['webview-ui/src/main.css'], outfile: 'dist/webview/main.css', bundle: true },
  // the trajectory viewer (issue 17): its own page, messages in src/protocol/trajectory.ts
  { ...common, entryPoints: ['webview-ui/src/trajectory/main.ts'], outfile: 'dist/webview/trajectory.js', platform: 'browser', format: 'iife', target: 'es2022', plugins: [zodEnglishOnly] },
  { ...common, entryPoints: ['webview-ui/src/trajectory/trajectory.css'], outfile: 'dist/webview/trajectory.css', bundle: true },
  // the triage table (issue 17): its own page, messages in src/protocol/triage.ts; the comparison page takes the same sheet
  { ...common, entryPoints: ['webview-ui/src/triage/main.ts'], outfile: 'dist/webview/triage.js', platform: 'browser', format: 'iife', target: 'es2022', plugins: [zodEnglishOnly] },
  { ...common, entryPoints: ['webview-ui/src/triage/triage.css'], outfile: 'dist/webview/triage.css', bundle: true },
  // the run-set board (issue 27): its own small bundle, as the triage table
  { ...common, entryPoints: ['webview-ui/src/runs/main.ts'], outfile: 'dist/webview/runs.js', platform: 'browser', format: 'iife', target: 'es2022', plugins: [zodEnglishOnly] },
  { ...common, entryPoints: ['webview-ui/src/runs/runs.css'], outfile: 'dist/webview/runs.css', bundle: true },
  // the Results view (issue 29): its own page with Chart.js, messages in src/protocol/results.ts
  { ...common, entryPoints: ['webview-ui/src/results/main.ts'], outfile: 'dist/webview/results.js', platform: 'browser', format: 'iife', target: 'es2022', plugins: [zodEnglishOnly] },
  { ...common, entryPoints: ['webview-ui/src/results/results.css'], outfile: 'dist/webview/results.css', bundle: true },
  // the curator's desk (issue 31): the queue and the task pages, messages in src/protocol/curation.ts
  { ...common, entryPoints: ['webview-ui/src/curation/main.ts'], outfile: 'dist/webview/curation.js', platform: 'browser', format: 'iife', target: 'es2022', plugins: [zodEnglishOnly] },
  { ...common, entryPoints: ['webview-ui/src/curation/curation.css'], outfile: 'dist/webview/curation.css', bundle: true },
  // The solver build (issue 13, docs/proctored.md): an unpacked extension for the proctored window,
  // shipped inside the researcher vsix (its "Start Proctored Baseline…" mounts it). Its own entry and the same webview, built again into its folder;
  // no source maps (the window gets code, not the project's source text).
  { ...common, sourcemap: false, entryPoints: ['src/solver/extension.ts'], outfile: 'dist/solver/extension.js', platform: 'node', format: 'cjs', target: 'node20', external: ['vscode'], plugins: [zodEnglishOnly] },
  { ...common, sourcemap: false, entryPoints: ['webview-ui/src/main.ts'], outfile: 'dist/solver/webview/main.js', platform: 'browser', format: 'iife', target: 'es2022', plugins: [zodEnglishOnly] },
  { ...common, sourcemap: false, entryPoints: ['webview-ui/src/main.css'], outfile: 'dist/solver/webview/main.css', bundle: true },
];

mkdirSync('dist', { recursive: true });
const results = await Promise.all(builds.map((b) => esbuild.build(b)));
const sizes = {};
for (const r of results) for (const [file, info] of Object.entries(r.metafile.outputs)) sizes[file] = info.bytes;
// VS Code counts loading dist/extension.js as activation time (issue 2: ≤ 50 ms): it may take in
// only the activation stage's own files, never a library or the core.
const stage = results[0].metafile.outputs['dist/extension.js'];
const intruders = Object.keys(stage.inputs).filter((f) => !/^src\/extension\/(extension|ids|commands|stage\/[A-Za-z]+)\.ts$/.test(f));
if (intruders.length) {
  console.error(`build: the activation bundle dist/extension.js takes in ${intruders.join(', ')}; import it from src/extension/workbench.ts instead (loaded on first use)`);
  process.exit(1);
}
// The webview loads on every brief shown (issue 11: ≤ 420 KiB minified).
const WEBVIEW_LIMIT = 420 * 1024;
if (production && sizes['dist/webview/main.js'] > WEBVIEW_LIMIT) {
  console.error(`build: dist/webview/main.js is ${sizes['dist/webview/main.js']} bytes, over ${WEBVIEW_LIMIT}; see what it takes in with dist/meta.json's inputs (esbuild metafile)`);
  process.exit(1);
}
// The Results view loads when it is shown (issue 29): the figures, the protocol and Chart.js's bar parts (≈ 160 KiB of it).
const RESULTS_LIMIT = 300 * 1024;
if (production && sizes['dist/webview/results.js'] > RESULTS_LIMIT) {
  console.error(`build: dist/webview/results.js is ${sizes['dist/webview/results.js']} bytes, over ${RESULTS_LIMIT}; see what it takes in with dist/meta.json's inputs (esbuild metafile)`);
  process.exit(1);
}
// The solver bundle may take in only the channel, the step model, the protocol, the solver and
// small utilities: nothing that reaches tasks, ground truth, Docker, the verifier, the judge or models.
// A package's path is read from its `node_modules/` on (a worktree's node_modules may be a link, which esbuild resolves: `../../<checkout>/node_modules/…`).
const fromNodeModules = (f) => (f.includes('node_modules/') ? f.slice(f.indexOf('node_modules/')) : f);
const solverInputs = Object.keys(results.find((r) => r.metafile.outputs['dist/solver/extension.js']).metafile.outputs['dist/solver/extension.js'].inputs).map(fromNodeModules);
const solverIntruders = solverInputs.filter((f) => !/^(src\/solver\/|src\/core\/(channel|steps|untrusted)\/|src\/core\/(errors|log)\.ts$|src\/core\/util\/(emitter|errors|fs|promises)\.ts$|src\/protocol\/|src\/extension\/brief\/(csp|nonce)\.ts$|node_modules\/zod\/|zod-en:)/.test(f));
if (solverIntruders.length) {
  console.error(`build: the solver bundle dist/solver/extension.js takes in ${solverIntruders.join(', ')}; the proctored window may not hold them (docs/proctored.md)`);
  process.exit(1);
}
const solverManifest = JSON.parse(readFileSync('src/solver/package.json', 'utf8'));
solverManifest.version = JSON.parse(readFileSync('package.json', 'utf8')).version;
writeFileSync('dist/solver/package.json', `${JSON.stringify(solverManifest, null, 2)}\n`);
// The pre-judge's Python parser (src/core/judge/codefacts.ts looks beside the bundle first): the
// vsix ships no node_modules, so the two wasm files are copied next to the bundles.
const requireHere = createRequire(import.meta.url);
for (const spec of ['web-tree-sitter/tree-sitter.wasm', 'tree-sitter-python/tree-sitter-python.wasm']) {
  copyFileSync(requireHere.resolve(spec), path.join('dist', path.basename(spec)));
}
writeFileSync('dist/meta.json', JSON.stringify(sizes, null, 2));
console.log(`built ${Object.keys(sizes).filter((f) => !f.endsWith('.map')).join(', ')}${production ? ' (production)' : ''}`);
