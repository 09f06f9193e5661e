import { z } from 'zod';

/**
 * The one typed message protocol between the extension host and the brief webview (webview-ui/).
 * Both sides validate what crosses the boundary with these schemas. Ground truth never crosses it:
 * {@link BriefView} has no design, requirements text with references, or expected outcome.
 *
 * Flow: webview → `ready`; host → `brief` (and later `state` updates); webview → requests such as
 * `openLink`, `openTask`, `command`. Errors travel as data (`error` message), never as exceptions.
 */

export const BriefViewSchema = z.object({
  taskId: z.string(),
  type: z.union([z.literal(1), z.literal(2), z.literal(3)]),
  paperTitle: z.string().optional(),
  paperUrl: z.string().optional(),
  pdfUrl: z.string().optional(),
  codeUrl: z.string().optional(),
  question: z.string(),
  method: z.string(),
  agentInstructions: z.string(),
  problems: z.array(z.object({ severity: z.string(), pointer: z.string(), message: z.string() })),
  /** Session folder when the brief belongs to an opened task session. */
  sessionDir: z.string().optional(),
});
export type BriefView = z.infer<typeof BriefViewSchema>;

/** UI-only state the webview persists with `setState` (restored after a reload). */
export const WebviewUiStateSchema = z.object({ taskId: z.string(), sessionDir: z.string().optional(), tab: z.string().optional(), scrollY: z.number().optional() });
export type WebviewUiState = z.infer<typeof WebviewUiStateSchema>;

/** Messages from the host to the webview. `extra` carries feature payloads (phases, verify, gaps) by key. */
export const HostMessageSchema = z.discriminatedUnion('type', [
  z.object({ type: z.literal('brief'), brief: BriefViewSchema }),
  z.object({ type: z.literal('section'), key: z.string(), payload: z.unknown() }),
  z.object({ type: z.literal('error'), message: z.string() }),
]);
export type HostMessage = z.infer<typeof HostMessageSchema>;

/** Messages from the webview to the host. */
export const WebviewMessageSchema = z.discriminatedUnion('type', [
  z.object({ type: z.literal('ready') }),
  z.object({ type: z.literal('openLink'), url: z.string() }),
  z.object({ type: z.literal('command'), command: z.string(), args: z.array(z.unknown()).optional() }),
  z.object({ type: z.literal('sectionAction'), key: z.string(), action: z.string(), payload: z.unknown().optional() }),
]);
export type WebviewMessage = z.infer<typeof WebviewMessageSchema>;
