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
 * is taken when it and its two folders are this user's alone (as below); else the package's runtime files (`package.json`, `dist/cli.js`, the bundled
 * sample `samples/`) are copied once into `<sharedDir>/.expbench/cli/<hash>/`, `<hash>` the first
 * 16 hex digits of the SHA-256 of the bundle and package.json, through a temporary folder renamed
 * into place (a copy is whole or absent). `.expbench/`, `.expbench/cli/` and the copy must be
 * this user's own and writable by nobody else, and a copy found there must hold the same bytes:
 * else it is refused (another user of a shared folder could otherwise choose the program every
 * job starts). Each job checks the SHA-256 of `dist/cli.js` again before starting it
 * ({@link cliDigest}, script.ts). Returns the bundle's path there and its SHA-256.
 * @throws ExpBenchError BAD_INPUT when the bundle's package cannot be found, the shared folder cannot be written, or a folder or file of the copy is not this user's alone or not the same bytes
 */
export async function stageCli(cli: CliEntry, sharedDir: string): Promise<StagedCli> {
  const script = cli.args[0];
  if (isInside(script, sharedDir)) {
    // The user's own copy in the shared folder: held to the same rule as a staged one, and checked by each job.
    for (const d of [path.dirname(path.dirname(script)), path.dirname(script)]) await assertOwn(d, 'directory');
    await assertOwn(script, 'file');
    return { script, sha256: cliDigest(await fsp.readFile(script)) };
  }
  const root = path.dirname(path.dirname(script));
  const pkg = path.join(root, 'package.json');
  if (path.basename(path.dirname(script)) !== 'dist' || !existsSync(pkg)) {
    throw new ExpBenchError('BAD_INPUT', script, `not the dist/cli.js of a package: copy the package to ${sharedDir} and set EXPBENCH_CLI to its dist/cli.js`);
  }
  const [bundle, pj] = await Promise.all([fsp.readFile(script), fsp.readFile(pkg)]);
  const hash = createHash('sha256').update(bundle).update(pj).digest('hex').slice(0, 16);
  const top = path.join(sharedDir, '.expbench');
  const cliDir = path.join(top, 'cli');
  const dest = path.join(cliDir, hash);
  const staged = path.join(dest, 'dist', 'cli.js');
  // The folders above the copy: made by this user, writable by nobody else (a folder another user can
  // write lets them put their own program where the jobs start the CLI).
  for (const d of [top, cliDir]) {
    await fsp.mkdir(d, { mode: 0o755 }).catch((e: NodeJS.ErrnoException) => { if (e.code !== 'EEXIST') throw stageError(sharedDir, e); });
    await assertOwn(d, 'directory');
  }
  if (existsSync(staged)) {
    await assertStaged(dest, bundle, pj);
    return { script: staged, sha256: cliDigest(bundle) };
  }
  const tmp = path.join(cliDir, `.tmp-${process.pid}-${randomBytes(4).toString('hex')}`);
  try {
    await fsp.mkdir(path.join(tmp, 'dist'), { recursive: true, mode: 0o755 });
    await fsp.writeFile(path.join(tmp, 'package.json'), pj);
    await fsp.writeFile(path.join(tmp, 'dist', 'cli.js'), bundle, { mode: 0o755 });
    const samples = path.join(root, 'samples');
    if (existsSync(samples)) {
      await fsp.cp(samples, path.join(tmp, 'samples'), { recursive: true, verbatimSymlinks: true });
      await dropGroupWrite(path.join(tmp, 'samples'));
    }
    await fsp.chmod(tmp, 0o755);
    await fsp.chmod(path.join(tmp, 'dist'), 0o755);
    await fsp.rename(tmp, dest).catch(async (e: NodeJS.ErrnoException) => {
      // Another process staged the same bundle first: as good when it is this user's and the same bytes (checked below).
      if (!existsSync(staged)) throw e;
      await fsp.rm(tmp, { recursive: true, force: true });
    });
  } catch (e) {
    await fsp.rm(tmp, { recursive: true, force: true }).catch(() => undefined);
    throw stageError(sharedDir, e);
  }
  await assertStaged(dest, bundle, pj);
  logger.info(`copied the CLI to ${dest}`);
  return { script: staged, sha256: cliDigest(bundle) };
}

/** The CLI the jobs start: its path in the shared folder, and the SHA-256 (hex) of its bytes, which each job checks. */
export interface StagedCli { script: string; sha256: string }

/** The SHA-256 of the staged `dist/cli.js` (hex), which each job checks before it starts it (script.ts). */
export function cliDigest(bundle: Buffer): string {
  return createHash('sha256').update(bundle).digest('hex');
}

/** Clears the group and others' write bits under `dir` (a copy keeps the install's modes, 0664 under umask 002); links are left as they are. */
async function dropGroupWrite(dir: string): Promise<void> {
  for (const e of await fsp.readdir(dir, { recursive: true, withFileTypes: true })) {
    if (e.isSymbolicLink()) continue;
    const p = path.join(e.parentPath, e.name);
    const st = await fsp.lstat(p);
    if (st.mode & 0o022) await fsp.chmod(p, st.mode & 0o7755);
  }
  const st = await fsp.lstat(dir);
  if (st.mode & 0o022) await fsp.chmod(dir, st.mode & 0o7755);
}

function stageError(sharedDir: string, e: unknown): ExpBenchError {
  return e instanceof ExpBenchError ? e : new ExpBenchError('BAD_INPUT', sharedDir, `cannot copy the CLI into the shared folder: ${(e as Error).message}`, { cause: e });
}

/**
 * `p` is a `kind` (never a link) owned by this user and not writable by group or others.
 * @throws ExpBenchError BAD_INPUT naming `p`, its owner and mode, when not
 */
async function assertOwn(p: string, kind: 'directory' | 'file'): Promise<void> {
  const st = await fsp.lstat(p);
  const uid = process.getuid?.();
  const isKind = kind === 'directory' ? st.isDirectory() : st.isFile();
  const problem = !isKind ? `is not a ${kind}${st.isSymbolicLink() ? ' (a symbolic link)' : ''}`
    : uid !== undefined && st.uid !== uid ? `belongs to user ${st.uid}, not to you (${uid})`
      : (st.mode & 0o022) !== 0 ? `can be written by ${st.mode & 0o020 ? 'its group' : 'others'} (mode ${(st.mode & 0o777).toString(8)})` : undefined;
  if (problem) {
    throw new ExpBenchError('BAD_INPUT', p, `${problem}: the Slurm jobs would start the CLI from a place someone else can change; remove it (or fix its owner and mode) and run again, or choose another placement.sharedDir`);
  }
}

/** The staged copy at `dest` is this user's, writable by nobody else, and holds exactly `bundle` and `pj`. */
async function assertStaged(dest: string, bundle: Buffer, pj: Buffer): Promise<void> {
  for (const d of [dest, path.join(dest, 'dist')]) await assertOwn(d, 'directory');
  for (const [rel, want] of [['dist/cli.js', bundle], ['package.json', pj]] as const) {
    const f = path.join(dest, rel);
    await assertOwn(f, 'file');
    if (!(await fsp.readFile(f)).equals(want)) {
      throw new ExpBenchError('BAD_INPUT', f, 'is not the CLI being staged (its bytes differ from this installation\'s): remove the folder and run again');
    }
  }
}
