import * as z from 'zod/mini';

/**
 * Section `gaps`: the gap report of a session's latest judgement (state host → webview, actions
 * webview → host). Registered in the section map (sections.ts).
 */

const OpenDiff = z.object({ action: z.literal('openDiff'), payload: z.object({ index: z.int(), hunk: z.optional(z.int()) }) });
const RevealHunk = z.object({ action: z.literal('revealHunk'), payload: z.object({ path: z.string(), newStart: z.int(), newEnd: z.int() }) });
const ShowRequirement = z.object({ action: z.literal('showRequirement'), payload: z.object({ index: z.int() }) });

/**
 * Actions of section `gaps` (webview → host): the ground truth beside the solver's hunk
 * (`hunk`: position among the requirement's cited hunks, default 0), a hunk of the workspace,
 * a requirement in the Requirements document, judging again. Requirement indexes and line
 * numbers are 1-based.
 */
export const GapsActionSchema = z.discriminatedUnion('action', [
  OpenDiff, RevealHunk, ShowRequirement,
  z.object({ action: z.literal('rerun'), payload: z.optional(z.undefined()) }),
]);
export type GapsAction = z.infer<typeof GapsActionSchema>;

/** A link of the gap report: clicking it asks the host for `call`. */
export const GapsLinkSchema = z.object({ label: z.string(), call: z.discriminatedUnion('action', [OpenDiff, RevealHunk, ShowRequirement]) });
export type GapsLink = z.infer<typeof GapsLinkSchema>;

/**
 * The report per phase and per item. Sent only once a judgement exists (after submission, or after
 * "Run Judge and Verifier"): it shows requirement texts, which the brief otherwise never receives.
 * `kind` is `heuristic` for the offline pre-judge, whose verdicts are labelled so everywhere.
 */
export const GapsViewSchema = z.object({
  kind: z.enum(['heuristic', 'llm']),
  /** `heuristic`, or the model that judged. */
  by: z.string(),
  createdAt: z.string(),
  /** True when the workspace's patch differs from the judged one (editor annotations are cleared). */
  stale: z.boolean(),
  summary: z.string(),
  notes: z.array(z.string()),
  phases: z.array(z.object({
    id: z.enum(['design', 'implementation', 'execution', 'conclusion', 'monitor']),
    title: z.string(),
    score: z.string(),
    items: z.array(z.object({
      label: z.string(),
      verdict: z.string(),
      tone: z.enum(['ok', 'warn', 'bad', 'muted']),
      reason: z.string(),
      links: z.array(GapsLinkSchema),
    })),
  })),
});
export type GapsView = z.infer<typeof GapsViewSchema>;
