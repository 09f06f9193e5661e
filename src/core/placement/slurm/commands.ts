import { execFile } from 'node:child_process';
import { ExpBenchError } from '../../errors';
import { log } from '../../log';

const logger = log('slurm');

/** Most a Slurm client may print that is read (bytes); more is an error, never a hang. */
const MAX_OUTPUT = 16 * 1024 * 1024;

/** What a Slurm client printed. */
export interface SlurmOutput {
  stdout: string;
  stderr: string;
  code: number;
}

/**
 * Runs one of Slurm's clients (`sbatch`, `squeue`, `sacct`, `sinfo`, `scancel`, `scontrol`) with
 * `args` (an argument vector, never a shell) and `env` (the caller's environment: `SLURM_CONF`,
 * and for sbatch the values the job's `--export` names). Resolves with the output and the exit
 * status, whatever the status.
 * @throws ExpBenchError SCHEDULER_FAILED when the program is missing, does not end within `timeoutMs`, or prints more than 16 MiB
 */
export function runSlurm(program: string, args: string[], env: NodeJS.ProcessEnv, timeoutMs = 60_000): Promise<SlurmOutput> {
  return new Promise((resolve, reject) => {
    execFile(program, args, { env, timeout: timeoutMs, maxBuffer: MAX_OUTPUT, encoding: 'utf8' }, (err, stdout, stderr) => {
      const e = err as (NodeJS.ErrnoException & { code?: string | number; killed?: boolean }) | null;
      if (e && typeof e.code === 'string') {
        const why = e.code === 'ENOENT' ? `${program} is not installed here (Slurm's client programs are needed where the run set is placed from; scripts/setup-slurm.sh makes a local Slurm)` : e.message;
        reject(new ExpBenchError('SCHEDULER_FAILED', program, why));
        return;
      }
      if (e?.killed) {
        reject(new ExpBenchError('SCHEDULER_FAILED', `${program} ${args.join(' ')}`.slice(0, 200), `no answer within ${Math.round(timeoutMs / 1000)} s (is slurmctld up? scontrol ping)`));
        return;
      }
      const code = e ? (typeof e.code === 'number' ? e.code : 1) : 0;
      if (code) logger.debug(`${program} exited ${code}: ${stderr.trim().slice(0, 500)}`);
      resolve({ stdout, stderr, code });
    });
  });
}

/**
 * {@link runSlurm}, and an error unless it exited 0.
 * @throws ExpBenchError SCHEDULER_FAILED with what the client printed on stderr
 */
export async function runSlurmOk(program: string, args: string[], env: NodeJS.ProcessEnv, timeoutMs?: number): Promise<string> {
  const r = await runSlurm(program, args, env, timeoutMs);
  if (r.code !== 0) throw new ExpBenchError('SCHEDULER_FAILED', program, `exited with status ${r.code}: ${(r.stderr.trim() || r.stdout.trim()).slice(0, 1000) || 'no message'}`);
  return r.stdout;
}
