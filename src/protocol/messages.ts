import * as z from 'zod/mini';
import { SECTIONS, type SectionName } from './sections';

/**
 * The one typed message protocol between the extension host and the brief webview (webview-ui/).
 * Both sides validate what crosses the boundary with these schemas. Ground truth never crosses it:
 * {@link BriefView} has no design, requirements text with references, or expected outcome.
 *
 * Flow: webview → `ready`; host → `brief`, then `section` states (sections.ts: `phases`, `gaps`, `feasibility`)
 * whenever they change. A section's actions go webview → host as `request`s with an id the webview
 * chooses (a positive integer, unique per webview); the host answers each with exactly one `reply`
 * of that id, ok or an error as data. The webview may `cancel` a request: the host aborts the
 * handler's AbortSignal and replies with code `CANCELLED`. Failures outside a request travel as an
 * `error` message, never as exceptions.
 *
 * The schemas use `zod/mini` (the same checks as `zod`, functions instead of methods), so that the
 * webview bundle takes in only the parts of zod it uses: `zod`'s methods bring in all of it.
 */

export * from './feasibility';
export * from './gaps';
export * from './phases';
export * from './sections';

export const BriefViewSchema = z.object({
  taskId: z.string(),
  type: z.union([z.literal(1), z.literal(2), z.literal(3)]),
  paperTitle: z.optional(z.string()),
  paperUrl: z.optional(z.string()),
  pdfUrl: z.optional(z.string()),
  codeUrl: z.optional(z.string()),
  question: z.string(),
  method: z.string(),
  agentInstructions: z.string(),
  problems: z.array(z.object({ severity: z.string(), pointer: z.string(), message: z.string() })),
  /** Session folder when the brief belongs to an opened task session. */
  sessionDir: z.optional(z.string()),
  /** The task's `no_answer`: the dataset's extraction found no implementation of it (no requirements). */
  noAnswer: z.optional(z.boolean()),
});
export type BriefView = z.infer<typeof BriefViewSchema>;

/** UI-only state the webview persists with `setState` (restored after a reload). */
export const WebviewUiStateSchema = z.object({ taskId: z.string(), sessionDir: z.optional(z.string()), tab: z.optional(z.string()), scrollY: z.optional(z.number()) });
export type WebviewUiState = z.infer<typeof WebviewUiStateSchema>;

/** A request id: chosen by the webview, positive, unique among its requests. */
export const RequestIdSchema = z.int().check(z.positive());
export type RequestId = z.infer<typeof RequestIdSchema>;

/** What any request has, however malformed the rest (the host answers a malformed request by this id). */
export const RequestHeadSchema = z.object({ type: z.literal('request'), id: RequestIdSchema });

/** `{type: 'section', section, state}`: the state of one section (host → webview). */
export const SectionStateMessageSchema = z.discriminatedUnion('section', [
  z.object({ type: z.literal('section'), section: z.literal('phases'), state: SECTIONS.phases.state }),
  z.object({ type: z.literal('section'), section: z.literal('gaps'), state: SECTIONS.gaps.state }),
  z.object({ type: z.literal('section'), section: z.literal('feasibility'), state: SECTIONS.feasibility.state }),
]);
export type SectionStateMessage = z.infer<typeof SectionStateMessageSchema>;

/** `{type: 'request', id, section, call}`: one action of one section (webview → host). */
export const SectionRequestSchema = z.discriminatedUnion('section', [
  z.object({ type: z.literal('request'), id: RequestIdSchema, section: z.literal('phases'), call: SECTIONS.phases.action }),
  z.object({ type: z.literal('request'), id: RequestIdSchema, section: z.literal('gaps'), call: SECTIONS.gaps.action }),
  z.object({ type: z.literal('request'), id: RequestIdSchema, section: z.literal('feasibility'), call: SECTIONS.feasibility.action }),
]);
export type SectionRequest = z.infer<typeof SectionRequestSchema>;

// Every section of the map has its state message and its request (a compile error otherwise).
type Missing = Exclude<SectionName, SectionStateMessage['section'] | SectionRequest['section']>;
const everySection: [Missing] extends [never] ? true : Missing = true;
void everySection;

/** The answer to request `id`: done, or failed with a message for a person and an ErrorCode-like `code` (`CANCELLED` when cancelled). */
export const ReplySchema = z.discriminatedUnion('ok', [
  z.object({ type: z.literal('reply'), id: RequestIdSchema, ok: z.literal(true) }),
  z.object({ type: z.literal('reply'), id: RequestIdSchema, ok: z.literal(false), error: z.object({ message: z.string(), code: z.optional(z.string()) }) }),
]);
export type Reply = z.infer<typeof ReplySchema>;

/** Messages from the host to the webview. */
export const HostMessageSchema = z.discriminatedUnion('type', [
  z.object({ type: z.literal('brief'), brief: BriefViewSchema }),
  SectionStateMessageSchema,
  ReplySchema,
  z.object({ type: z.literal('error'), message: z.string() }),
]);
export type HostMessage = z.infer<typeof HostMessageSchema>;

/** Messages from the webview to the host. */
export const WebviewMessageSchema = z.discriminatedUnion('type', [
  z.object({ type: z.literal('ready') }),
  z.object({ type: z.literal('openLink'), url: z.string() }),
  /** The brief's "Open Task" button: the host runs `expbench.openTask` on the brief's task. */
  z.object({ type: z.literal('openTask') }),
  SectionRequestSchema,
  z.object({ type: z.literal('cancel'), id: RequestIdSchema }),
]);
export type WebviewMessage = z.infer<typeof WebviewMessageSchema>;
