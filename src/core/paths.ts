import { existsSync, readFileSync } from 'node:fs';
import * as path from 'node:path';

let cached: string | undefined;

/**
 * The folder of this package (the one whose package.json is named `expbench-workbench`), found by
 * walking up from this module: works from `dist/` bundles, from `out/` test builds and from an
 * installed `.vsix`. Throws when no such folder exists (a broken install).
 */
export function packageRoot(): string {
  if (cached) return cached;
  let dir = __dirname;
  for (;;) {
    const pj = path.join(dir, 'package.json');
    if (existsSync(pj)) {
      try {
        if (JSON.parse(readFileSync(pj, 'utf8')).name === 'expbench-workbench') return (cached = dir);
      } catch { /* keep walking */ }
    }
    const up = path.dirname(dir);
    if (up === dir) throw new Error(`expbench-workbench: package root not found above ${__dirname}`);
    dir = up;
  }
}

/** The bundled sample dataset (EXP-Bench format), shipped with the extension and the CLI. */
export function bundledDatasetDir(): string {
  return path.join(packageRoot(), 'samples', 'exp-bench');
}

/** The version in package.json (recorded in session manifests). */
export function toolVersion(): string {
  return JSON.parse(readFileSync(path.join(packageRoot(), 'package.json'), 'utf8')).version as string;
}
