/**
 * Linear string helpers for text the solver wrote, in place of the regular expressions that
 * retry a quantifier at every position of a long run (`/[.;:]+$/` on a line of 990,000 dots takes
 * time quadratic in its length; these take one pass). Each says which expression it replaces.
 */

/** True for the characters of `\s` in a JavaScript regular expression. */
export function isSpace(c: string): boolean {
  return /\s/.test(c);
}

/** `s` without the characters at its end that are in `chars` (a string of them, or a test): `s.replace(/[chars]+$/, '')`. */
export function trimEndOf(s: string, chars: string | ((c: string) => boolean)): string {
  const has = typeof chars === 'string' ? (c: string) => chars.includes(c) : chars;
  let end = s.length;
  while (end > 0 && has(s[end - 1])) end--;
  return end === s.length ? s : s.slice(0, end);
}

/** `s` without the characters at its start that are in `chars`: `s.replace(/^[chars]+/, '')`. */
export function trimStartOf(s: string, chars: string | ((c: string) => boolean)): string {
  const has = typeof chars === 'string' ? (c: string) => chars.includes(c) : chars;
  let start = 0;
  while (start < s.length && has(s[start])) start++;
  return start === 0 ? s : s.slice(start);
}

/** True when `s` holds a line terminator (what `.` of a regular expression does not match: `\n`, `\r`, U+2028, U+2029). */
export function hasLineTerminator(s: string): boolean {
  return /[\n\r\u2028\u2029]/.test(s);
}
