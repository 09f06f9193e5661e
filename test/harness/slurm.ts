/**
 * Test helpers for tests that need a real Slurm with job accounting (scripts/setup-slurm.sh makes
 * one on this machine; scripts/test.sh runs it as a setup step).
 *
 * - {@link requireSlurm}: finds the configuration (`SLURM_CONF`, else the local Slurm of this
 *   checkout: `$EXPBENCH_SLURM_DIR/etc/slurm.conf`, default `.cache/slurm/`), sets `SLURM_CONF` in
 *   this process's environment (the placement and the CLI's children inherit it), and checks that
 *   `sinfo` and `sacct` answer. In CI (`CI=true`) a missing Slurm FAILS the test, unless
 *   setup-slurm.sh recorded that Slurm cannot run on this machine at all (`<folder>/unavailable`:
 *   not root, no packages); then, as everywhere outside CI, it is skipped with the reason printed
 *   and in its title.
 * - {@link squeueOf}, {@link sacctOf}: what Slurm says, for assertions.
 */
import { execFile } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import * as path from 'node:path';
import { inCI } from './docker';
import { repoRoot } from './paths';

/** The local Slurm's configuration of this checkout (scripts/setup-slurm.sh). */
export function localSlurmConf(): string {
  return path.join(process.env.EXPBENCH_SLURM_DIR ?? path.join(repoRoot, '.cache', 'slurm'), 'etc', 'slurm.conf');
}

/** Runs a Slurm client; resolves with its exit status and output. */
export function slurm(program: string, args: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    execFile(program, args, { env: process.env, timeout: 60_000, encoding: 'utf8' }, (err, stdout, stderr) => {
      const code = err ? (typeof (err as { code?: unknown }).code === 'number' ? (err as { code: number }).code : 127) : 0;
      resolve({ code, stdout, stderr: stderr || (err && code === 127 ? err.message : '') });
    });
  });
}

/**
 * Makes sure a Slurm with accounting answers; skips (locally) or fails (CI) the test otherwise.
 * Call with `this` of a mocha hook or test.
 * @returns the configuration file in use
 */
export async function requireSlurm(ctx: Mocha.Context): Promise<string> {
  if (!process.env.SLURM_CONF && existsSync(localSlurmConf())) process.env.SLURM_CONF = localSlurmConf();
  const conf = process.env.SLURM_CONF ?? '/etc/slurm/slurm.conf';
  // scripts/setup-slurm.sh found that Slurm cannot run on this machine at all (not root, no packages): its reason.
  const unavailable = path.join(path.dirname(path.dirname(localSlurmConf())), 'unavailable');
  const cannot = existsSync(unavailable) ? readFileSync(unavailable, 'utf8').trim().slice(0, 500) : undefined;
  const fail = (why: string): never => {
    const reason = cannot
      ? `${why}; scripts/setup-slurm.sh: Slurm cannot run here: ${cannot}`
      : `${why} (SLURM_CONF=${conf}; bash scripts/setup-slurm.sh makes a local Slurm)`;
    if (inCI && !cannot) throw new Error(`CI=true and ${reason}`);
    if (ctx.test) ctx.test.title += ` (SKIPPED: ${reason})`;
    console.warn(`  [slurm] skipping: ${reason}`);
    ctx.skip();
  };
  const info = await slurm('sinfo', ['-h', '-o', '%t']);
  if (info.code !== 0) fail(`sinfo does not answer: ${info.stderr.trim().split('\n')[0]}`);
  if (!info.stdout.split('\n').some((s) => /^(idle|mix|alloc|comp)/.test(s))) fail(`no node is up (sinfo: ${info.stdout.trim()})`);
  const acct = await slurm('sacct', ['-n', '-X', '-S', 'now-1minute']);
  if (acct.code !== 0) fail(`sacct does not answer: ${acct.stderr.trim().split('\n')[0]}`);
  return conf;
}

/** squeue's lines `id|state|reason|name` of every job (all states the controller holds), one per array element. */
export async function squeueOf(jobIds?: string[]): Promise<Array<{ id: string; state: string; reason: string; name: string }>> {
  const r = await slurm('squeue', ['-h', '-r', '-t', 'all', ...(jobIds?.length ? ['-j', jobIds.join(',')] : []), '-o', '%i|%T|%r|%j']);
  return r.stdout.split('\n').filter(Boolean).map((l) => { const [id, state, reason, name] = l.split('|'); return { id, state, reason, name }; });
}

/** sacct's lines `JobID|JobName|State|SubmitLine` of jobs with these names (every element). */
export async function sacctByName(names: string[]): Promise<Array<{ id: string; name: string; state: string; submitLine: string }>> {
  const r = await slurm('sacct', ['-n', '-X', '-P', '-S', 'now-1day', '--name', names.join(','), '-o', 'JobID,JobName%200,State,SubmitLine%2000']);
  return r.stdout.split('\n').filter(Boolean).map((l) => { const [id, name, state, submitLine] = l.split('|'); return { id, name, state, submitLine }; });
}
