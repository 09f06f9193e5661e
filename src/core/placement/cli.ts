import { existsSync } from 'node:fs';
import * as path from 'node:path';
import { ExpBenchError } from '../errors';
import { packageRoot } from '../paths';

/** How to start the project's own CLI: the program, its first arguments, the environment it needs. */
export interface CliEntry {
  /** The program (node). */
  exe: string;
  /** Arguments before the command's own (the CLI script). */
  args: string[];
  /** Environment the program needs to act as node (Electron's `ELECTRON_RUN_AS_NODE`). */
  env: Record<string, string>;
}

/**
 * The project's own CLI as this process can start it: node (this process's own binary; under
 * Electron, the same binary with `ELECTRON_RUN_AS_NODE=1`) and the bundle `dist/cli.js` of this
 * package (src/core/paths.ts `packageRoot`). `EXPBENCH_CLI` names another bundle (a copy on a
 * cluster's shared path).
 * @throws ExpBenchError BAD_INPUT when the bundle is not there (`npm run build` makes it)
 */
export function projectCli(env: NodeJS.ProcessEnv = process.env): CliEntry {
  const script = env.EXPBENCH_CLI ? path.resolve(env.EXPBENCH_CLI) : path.join(packageRoot(), 'dist', 'cli.js');
  if (!existsSync(script)) throw new ExpBenchError('BAD_INPUT', script, 'the expbench CLI bundle is not there (npm run build makes dist/cli.js)');
  return { exe: process.execPath, args: [script], env: process.versions.electron ? { ELECTRON_RUN_AS_NODE: '1' } : {} };
}

/** The arguments of the CLI command that runs one unit (docs/placement.md): `runs exec DIR --unit KEY --try N`. */
export function unitArgs(runSetDir: string, unit: string, attemptTry: number): string[] {
  return ['runs', 'exec', runSetDir, '--unit', unit, '--try', String(attemptTry)];
}
