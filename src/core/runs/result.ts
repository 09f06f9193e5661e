import { z } from 'zod';
import { readJsonIfExists, writeJsonAtomic } from '../util/fs';
import { OutcomeSchema } from './state';

/**
 * What one try of a unit ended with, as its own process (`runs exec`) writes it to
 * `exec/<name>/try-N.result.json` (atomically) before it exits (docs/runs.md):
 * - `done`: the unit's work finished (its outcome, ✓ or ✖ alike);
 * - `failed`: it cannot be done (bad input, a refused request, an invalid task): not tried again;
 * - `retry`: a harness error (a model endpoint's 5xx or timeouts after the client's own retries, the
 *   engine or a container failing, a judge or verifier step that errored): worth another try;
 * - `interrupted`: it was stopped (a signal) and goes on from its session when placed again.
 */
export const UnitResultSchema = z.object({
  v: z.literal(1),
  unit: z.string(),
  try: z.number().int().positive(),
  status: z.enum(['done', 'failed', 'retry', 'interrupted']),
  message: z.string(),
  outcome: OutcomeSchema.optional(),
  at: z.string(),
});
export type UnitResult = z.infer<typeof UnitResultSchema>;

/** Exit codes of `runs exec` (docs/placement.md): 0 done, 75 (EX_TEMPFAIL) retry or interrupted, 1 failed. */
export function exitCodeOf(status: UnitResult['status']): number {
  return status === 'done' ? 0 : status === 'failed' ? 1 : 75;
}

export async function writeUnitResult(file: string, r: UnitResult): Promise<void> {
  await writeJsonAtomic(file, UnitResultSchema.parse(r));
}

/** The result file of a try, when it exists and is one; undefined otherwise (a damaged file counts as none). */
export async function readUnitResult(file: string): Promise<UnitResult | undefined> {
  const raw = await readJsonIfExists(file).catch(() => undefined);
  const r = UnitResultSchema.safeParse(raw);
  return r.success ? r.data : undefined;
}
