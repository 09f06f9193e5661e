import MarkdownIt from 'markdown-it';

/**
 * Markdown → HTML with raw HTML disabled (`html: false` escapes every tag in the source) and
 * markdown-it's link validation (no `javascript:`/`vbscript:`/`data:` links except images).
 * This is what keeps task text (untrusted input) from injecting markup into the webview;
 * the CSP (no inline scripts) is the second line.
 */
const md = new MarkdownIt({ html: false, linkify: true, breaks: false, typographer: false });

export function renderMarkdown(text: string): string {
  return md.render(text);
}
