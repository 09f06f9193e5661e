/** Tiny DOM helpers: text is always set with textContent, never innerHTML (markdown goes through renderMarkdown). */
export function el<K extends keyof HTMLElementTagNameMap>(tag: K, attrs: Record<string, string> = {}, ...children: Array<Node | string>): HTMLElementTagNameMap[K] {
  const e = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs)) e.setAttribute(k, v);
  for (const c of children) e.append(typeof c === 'string' ? document.createTextNode(c) : c);
  return e;
}

/**
 * Whether this page is the proctored window's task panel (src/solver/panel.ts sets
 * `<body data-window="proctored">`): it shows no repository note and no claimed numbers (the host
 * checks claims after submit; the baseliner sees none of its checks).
 */
export function proctoredWindow(): boolean {
  return document.body.dataset.window === 'proctored';
}

export function html(tag: string, className: string, innerHtml: string): HTMLElement {
  const e = document.createElement(tag);
  e.className = className;
  e.innerHTML = innerHtml;
  return e;
}
