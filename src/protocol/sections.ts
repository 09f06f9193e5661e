import * as z from 'zod/mini';
import { FeasibilityActionSchema, FeasibilityViewSchema } from './feasibility';
import { GapsActionSchema, GapsViewSchema } from './gaps';
import { PhasesActionSchema, PhasesStateSchema } from './phases';

/**
 * The brief's feature sections, one entry each: `state` is what the host posts to the section
 * (host → webview), `action` what the section asks of the host (webview → host, always inside a
 * request with an id, see messages.ts). A section name is a key of this map, so host and webview
 * agree on names and payloads at compile time, and both validate them at run time.
 * A new section: a schema file beside this one, an entry here, its two envelopes in messages.ts (a
 * compile error names a missing one), a renderer in webview-ui/src/sections/ and a handler
 * registered on the host's section registry.
 */
export const SECTIONS = {
  phases: { state: PhasesStateSchema, action: PhasesActionSchema },
  gaps: { state: GapsViewSchema, action: GapsActionSchema },
  feasibility: { state: FeasibilityViewSchema, action: FeasibilityActionSchema },
} as const;

export type Sections = typeof SECTIONS;
export type SectionName = keyof Sections;
/** What the host posts to section `K`. */
export type SectionState<K extends SectionName> = z.infer<Sections[K]['state']>;
/** An action of section `K`: `{ action, payload }`. */
export type SectionAction<K extends SectionName> = z.infer<Sections[K]['action']>;
