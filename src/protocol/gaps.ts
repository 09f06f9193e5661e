import * as z from 'zod/mini';

/**
 * Section `gaps`: the gap report of a session's latest judgement (state host → webview, actions
 * webview → host). Registered in the section map (sections.ts).
 */

const OpenDiff = z.object({ action: z.literal('openDiff'), payload: z.object({ index: z.int(), hunk: z.optional(z.int()) }) });
const RevealHunk = z.object({ action: z.literal('revealHunk'), payload: z.object({ path: z.string(), newStart: z.int(), newEnd: z.int() }) });
const ShowRequirement = z.object({ action: z.literal('showRequirement'), payload: z.object({ index: z.int() }) });
/** The step of the session's timeline an item is pinned to (0-based; src/core/viewer/pins.ts). */
const ShowInTimeline = z.object({ action: z.literal('showInTimeline'), payload: z.object({ step: z.int() }) });

/**
 * Actions of section `gaps` (webview → host): the ground truth beside the solver's hunk
 * (`hunk`: position among the requirement's cited hunks, default 0), a hunk of the workspace,
 * a requirement in the Requirements document, judging again. Requirement indexes and line
 * numbers are 1-based.
 */
export const GapsActionSchema = z.discriminatedUnion('action', [
  OpenDiff, RevealHunk, ShowRequirement, ShowInTimeline,
  z.object({ action: z.literal('rerun'), payload: z.optional(z.undefined()) }),
  /** A curator accepts the judge's verdict of an item, or flips it (the host asks for the verdict and the reason): docs/review.md. */
  z.object({ action: z.literal('reviewVerdict'), payload: z.object({ item: z.string(), accept: z.boolean() }) }),
]);
export type GapsAction = z.infer<typeof GapsActionSchema>;

/** A link of the gap report: clicking it asks the host for `call`. */
export const GapsLinkSchema = z.object({ label: z.string(), call: z.discriminatedUnion('action', [OpenDiff, RevealHunk, ShowRequirement, ShowInTimeline]) });
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
  /** The item to show (`expbench.gaps.revealItem`): its phase opened, the row marked and scrolled to. */
  focus: z.optional(z.string()),
  phases: z.array(z.object({
    id: z.enum(['design', 'implementation', 'execution', 'conclusion', 'monitor']),
    title: z.string(),
    score: z.string(),
    items: z.array(z.object({
      /** The item's name, as pins and review judgements name it (`requirement:2`, `design:<variable>`, `conclusion`, `monitor:<line>`). */
      item: z.optional(z.string()),
      label: z.string(),
      verdict: z.string(),
      tone: z.enum(['ok', 'warn', 'bad', 'muted']),
      reason: z.string(),
      links: z.array(GapsLinkSchema),
      /** A judge item curators may accept or flip: its review-store id, the judge's verdict, the verdicts to flip to, the latest curator's verdict. */
      review: z.optional(z.object({
        item: z.string(),
        judged: z.string(),
        choices: z.array(z.string()),
        curator: z.optional(z.object({ verdict: z.string(), by: z.string(), at: z.string(), reason: z.optional(z.string()) })),
      })),
    })),
  })),
});
export type GapsView = z.infer<typeof GapsViewSchema>;
