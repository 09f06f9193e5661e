/**
 * Feature sections of the brief (phases, verifier, gap report) register a renderer here under the
 * key the host uses in `{type: 'section', key, payload}`. Each renderer owns one container element.
 */
export type SectionRenderer = (container: HTMLElement, payload: unknown) => void;

const renderers = new Map<string, SectionRenderer>();
const order: string[] = [];

export function registerSection(key: string, renderer: SectionRenderer): void {
  renderers.set(key, renderer);
  if (!order.includes(key)) order.push(key);
}

export function renderSection(root: HTMLElement, key: string, payload: unknown): void {
  const renderer = renderers.get(key);
  if (!renderer) return;
  let container = root.querySelector<HTMLElement>(`section[data-section="${key}"]`);
  if (!container) {
    container = document.createElement('section');
    container.dataset.section = key;
    container.className = 'feature';
    root.append(container);
  }
  renderer(container, payload);
}
