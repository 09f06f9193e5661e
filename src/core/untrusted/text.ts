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

/**
 * Control characters a terminal acts on (C0 but for tab, DEL, C1) and the bidirectional controls
 * (U+200E–U+200F, U+202A–U+202E, U+2066–U+2069) that reorder what is shown, plus the line and
 * paragraph separators: a single-character class, so the test takes one pass.
 */
const TERMINAL_UNSAFE = /[\u0000-\u0008\u000a-\u001f\u007f-\u009f\u200e\u200f\u2028\u2029\u202a-\u202e\u2066-\u2069]/g;

/** True when `s` holds one of those characters. */
export function hasControl(s: string): boolean {
  TERMINAL_UNSAFE.lastIndex = 0;
  return TERMINAL_UNSAFE.test(s);
}

/**
 * `s` for a terminal or a one-line cell: each control character (see {@link hasControl}) shown as
 * its escape (`\x1b`, `\u202e`), so what the solver wrote cannot move the cursor, recolour, set
 * the clipboard (OSC 52) or reorder a line of the organiser's screen. Other text is unchanged.
 */
export function printable(s: string): string {
  return s.replace(TERMINAL_UNSAFE, (c) => {
    const n = c.charCodeAt(0);
    return n < 0x100 ? `\\x${n.toString(16).padStart(2, '0')}` : `\\u${n.toString(16).padStart(4, '0')}`;
  });
}

/** {@link printable} of each line of `s`: its line breaks (`\n`) kept, every other control character escaped. */
export function printableLines(s: string): string {
  return s.split('\n').map(printable).join('\n');
}
