import { z } from 'zod';

/**
 * The solver's answers in the reference harness's JSON form: `{ "design": string | string[],
 * "conclusion": string }` (EXP-Bench harness, step 2 in docs/exp-bench-harness.md).
 */
export const HarnessAnswersSchema = z.object({
  design: z.union([z.string(), z.array(z.string())]),
  conclusion: z.string(),
});
export type HarnessAnswers = z.infer<typeof HarnessAnswersSchema>;

/** `design` as a list of strings, whichever form the answers used. */
export function designLines(a: HarnessAnswers): string[] {
  return Array.isArray(a.design) ? a.design : a.design.split(/\r?\n/).filter((l) => l.trim() !== '');
}
