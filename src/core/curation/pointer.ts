import { findNodeAtLocation, parseTree, type Node } from 'jsonc-parser';

/** Where a JSON pointer lands in a JSON text: character offsets (UTF-16, as JavaScript strings count). */
export interface PointerSpan {
  /** Offset of the first character. */
  offset: number;
  /** Characters spanned. */
  length: number;
  /** False when the pointer names a place that does not exist (a missing field) and the span is its deepest existing parent's. */
  exact: boolean;
}

/**
 * The span of RFC 6901 `pointer` in the JSON `text`: for an object member, its key through its
 * value; for an array item, the item. A pointer to a missing member falls back to the deepest
 * parent that exists (`exact: false`); `''` gives the first character (length 0 for an empty
 * text). A text with syntax errors is read as far as jsonc-parser's tolerant parse goes. Never throws.
 */
export function pointerSpan(text: string, pointer: string): PointerSpan {
  const root = parseTree(text);
  if (!root) return { offset: 0, length: Math.min(1, text.length), exact: pointer === '' };
  const segments = pointer === '' ? [] : pointer.slice(1).split('/').map((s) => s.replace(/~1/g, '/').replace(/~0/g, '~'));
  for (let n = segments.length; n >= 0; n--) {
    const path = segments.slice(0, n).map((s, i) => (isArrayAt(root, segments.slice(0, i)) && /^\d+$/.test(s) ? Number(s) : s));
    const node = n === 0 ? root : findNodeAtLocation(root, path);
    if (!node) continue;
    const exact = n === segments.length;
    if (n === 0) return { offset: root.offset, length: 1, exact };
    const span = node.parent?.type === 'property' ? node.parent : node;
    return { offset: span.offset, length: span.length, exact };
  }
  return { offset: 0, length: 1, exact: false };
}

function isArrayAt(root: Node, path: string[]): boolean {
  let node: Node | undefined = root;
  for (const s of path) {
    if (!node) return false;
    node = node.type === 'array' ? node.children?.[Number(s)] : node.children?.find((p) => p.children?.[0]?.value === s)?.children?.[1];
  }
  return node?.type === 'array';
}
