import { el } from '../dom';

/**
 * A unified diff as lines coloured by their first character: `+` added, `-` removed, `@@` hunk
 * headers, `diff`/`---`/`+++`/`index` file headers; everything as text (never HTML).
 */
export function renderDiff(diff: string): HTMLElement {
  const pre = el('pre', { class: 'diff' });
  for (const line of diff.split('\n')) {
    const cls = /^(diff |index |--- |\+\+\+ |=+$)/.test(line) ? 'meta' : line.startsWith('@@') ? 'hunk' : line.startsWith('+') ? 'add' : line.startsWith('-') ? 'del' : 'ctx';
    pre.append(el('span', { class: `dl ${cls}` }, line || ' '));
  }
  return pre;
}
