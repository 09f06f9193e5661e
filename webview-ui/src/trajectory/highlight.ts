import { el } from '../dom';

/** `text` as nodes with each case-insensitive occurrence of `query` in a `<mark>` (text only, never HTML). */
export function highlighted(text: string, query: string): Node[] {
  const q = query.toLowerCase();
  if (!q) return [document.createTextNode(text)];
  const hay = text.toLowerCase();
  const out: Node[] = [];
  let at = 0;
  for (let i = hay.indexOf(q); i >= 0; i = hay.indexOf(q, i + q.length)) {
    if (i > at) out.push(document.createTextNode(text.slice(at, i)));
    out.push(el('mark', {}, text.slice(i, i + q.length)));
    at = i + q.length;
  }
  if (at < text.length) out.push(document.createTextNode(text.slice(at)));
  return out;
}

/** `text` with the ranges `[start, end)` (sorted, within `text`) in `<mark>`s; the first gets `id`. */
export function marked(text: string, ranges: Array<{ start: number; end: number }>): Node[] {
  const out: Node[] = [];
  let at = 0;
  for (const r of ranges) {
    if (r.start < at || r.end > text.length) continue;
    if (r.start > at) out.push(document.createTextNode(text.slice(at, r.start)));
    out.push(el('mark', {}, text.slice(r.start, r.end)));
    at = r.end;
  }
  if (at < text.length) out.push(document.createTextNode(text.slice(at)));
  return out;
}
