import * as z from 'zod/mini';

/**
 * Section `feasibility`: "Can this task run here?" (src/core/curation/feasibility.ts), shown in the
 * brief for everyone before the clock starts. Registered in the section map (sections.ts). It
 * carries what the environment needs (GPUs, packages, data, run time), never the ground truth.
 */

/** Actions (webview → host): check again (after installing a package, attaching a GPU…). */
export const FeasibilityActionSchema = z.discriminatedUnion('action', [
  z.object({ action: z.literal('recheck'), payload: z.optional(z.undefined()) }),
]);
export type FeasibilityAction = z.infer<typeof FeasibilityActionSchema>;

/** The check's state: `checking` while it runs; then the verdict, one line, and each need. */
export const FeasibilityViewSchema = z.object({
  status: z.enum(['checking', 'can-run', 'cannot-run', 'unknown', 'failed']),
  summary: z.string(),
  /** `curation`, `probe` or `none`: where the needs were read. */
  from: z.optional(z.string()),
  image: z.optional(z.string()),
  needs: z.array(z.object({
    kind: z.string(),
    what: z.string(),
    /** `yes` present, `no` missing, `info` not a check. */
    have: z.enum(['yes', 'no', 'info']),
    detail: z.string(),
  })),
  notes: z.array(z.string()),
});
export type FeasibilityView = z.infer<typeof FeasibilityViewSchema>;
