import MarkdownIt from 'markdown-it';

/**
 * Markdown → HTML with raw HTML disabled (`html: false` escapes every tag in the source) and
 * markdown-it's link validation (no `javascript:`/`vbscript:`/`data:` links except images).
 * This is what keeps task text (untrusted input) from injecting markup into the webview;
 * the CSP (no inline scripts) is the second line.
 *
 * Task text is prose with code and formulas in it (`f + 0.2*sin(2*pi*f)`), so `*` follows the rule
 * CommonMark gives `_` (spec 0.31, "left-/right-flanking delimiter run", rules 2 and 6): a `*` run
 * inside a word (a letter or digit on both sides) neither opens nor closes emphasis. `*x*` and
 * `**x**` delimited by spaces or punctuation are still emphasis.
 */
const md = new MarkdownIt({ html: false, linkify: true, breaks: false, typographer: false });
type StateInline = Parameters<Parameters<typeof md.inline.ruler.before>[2]>[0];

/**
 * markdown-it's `emphasis` tokenizer (lib/rules_inline/emphasis.mjs) with one change: `*` is
 * scanned with `canSplitWord = false`, as `_` is. The delimiters it records are paired by
 * markdown-it's own `balance_pairs` and `emphasis` post-processing rules, unchanged.
 */
function starNotIntraword(state: StateInline, silent: boolean): boolean {
  const marker = state.src.charCodeAt(state.pos);
  if (silent || marker !== 0x2a /* * */) return false;
  const scanned = state.scanDelims(state.pos, false);
  for (let i = 0; i < scanned.length; i++) {
    const token = state.push('text', '', 0);
    token.content = '*';
    state.delimiters.push({ marker, length: scanned.length, token: state.tokens.length - 1, end: -1, open: scanned.can_open, close: scanned.can_close });
  }
  state.pos += scanned.length;
  return true;
}
md.inline.ruler.before('emphasis', 'star_not_intraword', starNotIntraword);

export function renderMarkdown(text: string): string {
  return md.render(text);
}
