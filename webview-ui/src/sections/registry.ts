import type { SectionName, SectionState, SectionStateMessage } from '../../../src/protocol/messages';

/**
 * Feature sections of the brief (phases, gap report) register a renderer here under their name in
 * the section map (src/protocol/sections.ts). Each renderer owns one container element and gets
 * its section's state already validated.
 */
export type SectionRenderer<K extends SectionName> = (container: HTMLElement, state: SectionState<K>) => void;

const renderers: { [K in SectionName]?: SectionRenderer<K> } = {};

export function registerSection<K extends SectionName>(section: K, renderer: SectionRenderer<K>): void {
  renderers[section] = renderer as (typeof renderers)[K];
}

/** Renders a section's state into its container (made at the end of `root` on first use). */
export function renderSection(root: HTMLElement, m: SectionStateMessage): void {
  const renderer = renderers[m.section] as SectionRenderer<typeof m.section> | undefined;
  if (!renderer) return;
  let container = root.querySelector<HTMLElement>(`section[data-section="${m.section}"]`);
  if (!container) {
    container = document.createElement('section');
    container.dataset.section = m.section;
    container.className = 'feature';
    root.append(container);
  }
  renderer(container, m.state as never);
}
