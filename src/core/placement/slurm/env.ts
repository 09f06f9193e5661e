/**
 * The scheduler's job this process runs in, as a session records it in `session.opened` (`job`;
 * docs/events.md): Slurm's `SLURM_ARRAY_JOB_ID`_`SLURM_ARRAY_TASK_ID` for an element of an array
 * job (the id `squeue`, `sacct` and `scancel` take, and the run set's ref), else `SLURM_JOB_ID`;
 * with the job's own id, the node and the cluster. Source: sbatch(1), OUTPUT ENVIRONMENT VARIABLES.
 */
export interface SchedulerJob {
  scheduler: 'slurm';
  /** `<array job id>_<index>`, or `<job id>` outside an array. */
  id: string;
  /** `SLURM_JOB_ID`: the element's own job id (an array element has one of its own). */
  jobId: string;
  node?: string;
  cluster?: string;
}

const digits = (v: string | undefined): v is string => typeof v === 'string' && /^\d{1,20}$/.test(v);
const word = (v: string | undefined): string | undefined => (typeof v === 'string' && /^[\w.-]{1,128}$/.test(v) ? v : undefined);

/** The Slurm job of a process with environment `env`; undefined outside Slurm. */
export function schedulerJobOf(env: NodeJS.ProcessEnv = process.env): SchedulerJob | undefined {
  const jobId = env.SLURM_JOB_ID;
  if (!digits(jobId)) return undefined;
  const array = env.SLURM_ARRAY_JOB_ID;
  const task = env.SLURM_ARRAY_TASK_ID;
  const node = word(env.SLURMD_NODENAME);
  const cluster = word(env.SLURM_CLUSTER_NAME);
  return {
    scheduler: 'slurm', id: digits(array) && digits(task) ? `${array}_${task}` : jobId, jobId,
    ...(node ? { node } : {}), ...(cluster ? { cluster } : {}),
  };
}
