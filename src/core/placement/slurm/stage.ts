import { createHash, randomBytes } from 'node:crypto';
import { existsSync, promises as fsp } from 'node:fs';
import * as path from 'node:path';
import { ExpBenchError } from '../../errors';
import { log } from '../../log';
import type { CliEntry } from '../cli';

const logger = log('slurm');

/** Whether `p` is `dir` or inside it (both absolute; no link is followed). */
export function isInside(p: string, dir: string): boolean {
  const rel = path.relative(path.resolve(dir), path.resolve(p));
  return rel === '' || (!rel.startsWith('..') && !path.isAbsolute(rel));
}

/**
 * The CLI as the nodes start it, with a shared folder (`sharedDir`): a bundle already inside it
 * is taken as it is; else the package's runtime files (`package.json`, `dist/cli.js`, the bundled
 * sample `samples/`) are copied once into `<sharedDir>/.expbench/cli/<hash>/`, `<hash>` the first
 * 16 hex digits of the SHA-256 of the bundle and package.json, through a temporary folder renamed
 * into place (a copy is whole or absent). Returns the bundle's path there.
 * @throws ExpBenchError BAD_INPUT when the bundle's package cannot be found or the shared folder cannot be written
 */
export async function stageCli(cli: CliEntry, sharedDir: string): Promise<string> {
  const script = cli.args[0];
  if (isInside(script, sharedDir)) return script;
  const root = path.dirname(path.dirname(script));
  const pkg = path.join(root, 'package.json');
  if (path.basename(path.dirname(script)) !== 'dist' || !existsSync(pkg)) {
    throw new ExpBenchError('BAD_INPUT', script, `not the dist/cli.js of a package: copy the package to ${sharedDir} and set EXPBENCH_CLI to its dist/cli.js`);
  }
  const [bundle, pj] = await Promise.all([fsp.readFile(script), fsp.readFile(pkg)]);
  const hash = createHash('sha256').update(bundle).update(pj).digest('hex').slice(0, 16);
  const dest = path.join(sharedDir, '.expbench', 'cli', hash);
  const staged = path.join(dest, 'dist', 'cli.js');
  if (existsSync(staged)) return staged;
  const tmp = path.join(sharedDir, '.expbench', 'cli', `.tmp-${process.pid}-${randomBytes(4).toString('hex')}`);
  try {
    await fsp.mkdir(path.join(tmp, 'dist'), { recursive: true });
    await fsp.writeFile(path.join(tmp, 'package.json'), pj);
    await fsp.writeFile(path.join(tmp, 'dist', 'cli.js'), bundle, { mode: 0o755 });
    const samples = path.join(root, 'samples');
    if (existsSync(samples)) await fsp.cp(samples, path.join(tmp, 'samples'), { recursive: true, verbatimSymlinks: true });
    await fsp.rename(tmp, dest).catch(async (e: NodeJS.ErrnoException) => {
      // Another process staged the same bundle first: theirs is as good.
      if (!existsSync(staged)) throw e;
      await fsp.rm(tmp, { recursive: true, force: true });
    });
  } catch (e) {
    await fsp.rm(tmp, { recursive: true, force: true }).catch(() => undefined);
    throw new ExpBenchError('BAD_INPUT', sharedDir, `cannot copy the CLI into the shared folder: ${(e as Error).message}`, { cause: e });
  }
  logger.info(`copied the CLI to ${dest}`);
  return staged;
}
