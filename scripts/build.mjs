// esbuild bundles: the extension (node, vscode external), the CLI (node), the webview (browser).
import * as esbuild from 'esbuild';
import { mkdirSync, writeFileSync } from 'node:fs';

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

const builds = [
  { ...common, entryPoints: ['src/extension/extension.ts'], outfile: 'dist/extension.js', platform: 'node', format: 'cjs', target: 'node20', external: ['vscode', 'cpu-features'], plugins: [noSsh2] },
  { ...common, entryPoints: ['src/cli/main.ts'], outfile: 'dist/cli.js', platform: 'node', format: 'cjs', target: 'node20', external: ['vscode', 'cpu-features'], plugins: [noSsh2], banner: { js: '#!/usr/bin/env node' } },
  { ...common, entryPoints: ['webview-ui/src/main.ts'], outfile: 'dist/webview/main.js', platform: 'browser', format: 'iife', target: 'es2022' },
  { ...common, entryPoints: ['webview-ui/src/main.css'], outfile: 'dist/webview/main.css', bundle: true },
];

mkdirSync('dist', { recursive: true });
const results = await Promise.all(builds.map((b) => esbuild.build(b)));
const sizes = {};
for (const r of results) for (const [file, info] of Object.entries(r.metafile.outputs)) sizes[file] = info.bytes;
writeFileSync('dist/meta.json', JSON.stringify(sizes, null, 2));
console.log(`built ${Object.keys(sizes).filter((f) => !f.endsWith('.map')).join(', ')}${production ? ' (production)' : ''}`);
