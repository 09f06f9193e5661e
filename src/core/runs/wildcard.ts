/**
 * Whether `text` matches `pattern`, where `*` stands for any run of characters (none included)
 * and every other character for itself. Iterative, with one backtrack point: at most
 * O(|pattern| · |text|) steps, whatever the input (no regular expression is built from it).
 */
export function wildcard(pattern: string, text: string): boolean {
  let p = 0;
  let t = 0;
  let star = -1;
  let mark = 0;
  while (t < text.length) {
    if (p < pattern.length && pattern[p] !== '*' && pattern[p] === text[t]) { p++; t++; continue; }
    if (p < pattern.length && pattern[p] === '*') { star = p++; mark = t; continue; }
    if (star >= 0) { p = star + 1; t = ++mark; continue; }
    return false;
  }
  while (p < pattern.length && pattern[p] === '*') p++;
  return p === pattern.length;
}
