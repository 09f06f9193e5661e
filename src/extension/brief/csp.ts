/**
 * The brief webview's Content-Security-Policy: nothing by default; scripts only with this page's
 * `nonce` (no inline script without it, no `unsafe-eval`); styles and fonts only from the
 * extension (`cspSource`, no inline styles); images from the extension, https and data URIs.
 * @param cspSource the webview's `cspSource`
 * @param nonce a fresh value of {@link makeNonce} (./nonce.ts) per page
 */
export function briefCsp(cspSource: string, nonce: string): string {
  return [
    "default-src 'none'",
    `style-src ${cspSource}`,
    `font-src ${cspSource}`,
    `img-src ${cspSource} https: data:`,
    `script-src 'nonce-${nonce}'`,
  ].join('; ');
}
