import * as path from 'node:path';
import { z } from 'zod';

/** Options of sbatch that the Slurm placement sets itself; `extraArgs` may not give them. */
export const OWN_SBATCH_OPTIONS = [
  'array', 'job-name', 'export', 'export-file', 'output', 'error', 'input', 'open-mode', 'parsable', 'wrap', 'chdir',
  'requeue', 'no-requeue', 'cpus-per-task', 'mem', 'mem-per-cpu', 'time', 'nodes', 'ntasks', 'gres', 'gpus',
  'partition', 'account', 'qos', 'get-user-env',
] as const;

const slurmNames = z.string().regex(/^[\w.+-]{1,64}(?:,[\w.+-]{1,64}){0,15}$/, 'must be a Slurm name (letters, digits, . _ + -), or several separated by commas');

/** One more sbatch option: `--name` or `--name=value`, long form, no white space (it is recorded by Slurm: never a secret). */
const extraArg = z.string()
  .regex(/^--[a-z][a-z0-9-]{0,40}(?:=\S{1,500})?$/, 'must be one long sbatch option, --name or --name=value, without white space')
  .superRefine((a, ctx) => {
    const name = a.slice(2).split('=')[0];
    if ((OWN_SBATCH_OPTIONS as readonly string[]).includes(name)) ctx.addIssue({ code: 'custom', message: `--${name} is set by the placement (from the spec and the task): leave it out` });
  });

/**
 * `"placement": {"kind": "slurm", …}` of a run-set spec (docs/placement.md "Slurm"):
 * - `partition`, `account`, `qos`: sbatch's `--partition`, `--account`, `--qos` (default: the cluster's);
 * - `extraArgs`: more sbatch options (`--constraint=a100`, `--reservation=x`, `--hold`), long form;
 * - `container`: the engine of the units' containers on the nodes: `docker` (the node's socket, or
 *   DOCKER_HOST) or `podman` (each job starts `podman system service` on a socket of its own);
 * - `sharedDir`: a folder every node sees at the same path; the run set's folder must be inside it,
 *   and the CLI is copied there once (`<sharedDir>/.expbench/cli/<hash>/`). Without it the run
 *   set's folder and the CLI are taken to be visible on the nodes where they are.
 */
export const SlurmPlacementSpec = z.strictObject({
  kind: z.literal('slurm'),
  partition: slurmNames.optional(),
  account: slurmNames.optional(),
  qos: slurmNames.optional(),
  extraArgs: z.array(extraArg).max(32).optional(),
  container: z.enum(['docker', 'podman']),
  sharedDir: z.string().min(1).refine((p) => path.isAbsolute(p), 'must be an absolute path (the same on this machine and on every node)').optional(),
});
export type SlurmPlacementSpec = z.infer<typeof SlurmPlacementSpec>;
