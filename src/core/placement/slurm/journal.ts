import { promises as fsp } from 'node:fs';
import { z } from 'zod';
import { log } from '../../log';
import { errorMessage } from '../../util/errors';
import { readRegularFile, writeJsonAtomic } from '../../util/fs';

const logger = log('slurm');

/** Largest submission record read, bytes. */
const MAX_RECORD_BYTES = 64 * 1024;

/**
 * Where a unit's try went in Slurm: `<log>.slurm.json` beside the try's log, written (durably)
 * before `sbatch` with `jobId` null and again with the array job's id after it. A later `submit`
 * of the same try (the same log) adopts that job instead of queueing the try a second time, also
 * when the process that submitted it died between `sbatch` and recording the ref: the job is then
 * found by its name in squeue or sacct.
 */
export const SubmissionSchema = z.object({
  v: z.literal(1),
  /** The job's name, unique per submission: `expbench-<run set>-<random>`. */
  name: z.string(),
  /** The array job's id; null until sbatch answered. */
  jobId: z.string().nullable(),
  /** The element of the array that runs this try. */
  index: z.number().int().nonnegative(),
  /** When it was handed to sbatch (ISO 8601). */
  at: z.string(),
});
export type Submission = z.infer<typeof SubmissionSchema>;

/** The submission record of the try whose log is `logFile`. */
export function submissionFile(logFile: string): string {
  return `${logFile}.slurm.json`;
}

/** Writes a try's submission record durably. */
export async function writeSubmission(logFile: string, s: Submission): Promise<void> {
  await writeJsonAtomic(submissionFile(logFile), s, { fsync: true });
}

/** The try's submission record; undefined when there is none, or it cannot be read (logged). */
export async function readSubmission(logFile: string): Promise<Submission | undefined> {
  const file = submissionFile(logFile);
  try {
    const st = await fsp.lstat(file);
    if (!st.isFile() || st.size > MAX_RECORD_BYTES) {
      logger.warn(`${file}: not a submission record (${st.isFile() ? `${st.size} bytes` : 'not a regular file'})`);
      return undefined;
    }
    const buf = await readRegularFile(file, { noFollow: true });
    if (!buf) return undefined;
    const r = SubmissionSchema.safeParse(JSON.parse(buf.toString('utf8')));
    if (r.success) return r.data;
    logger.warn(`${file}: not a submission record: ${r.error.issues[0]?.message}`);
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code !== 'ENOENT') logger.warn(`${file}: ${errorMessage(e)}`);
  }
  return undefined;
}
