import * as vscode from 'vscode';
import { briefCsp } from './csp';
import { makeNonce } from './nonce';

/** What differs between the extension's script-driven webview pages. */
export interface WebviewPageSpec {
  /** The bundle's base name in `dist/webview/` (`<bundle>.js`, `<bundle>.css`), e.g. `runs`. */
  bundle: string;
  /** The document's `<title>` (escaped here). */
  title: string;
  /** The class of the `<main id="root">` the script fills. */
  rootClass?: string;
  /** Attributes of `<body>` and `<main>` (names as given, values escaped). */
  bodyAttrs?: Record<string, string>;
  mainAttrs?: Record<string, string>;
  /** The muted line shown until the script draws (escaped here). */
  loading: string;
}

const ENTITY: Record<string, string> = { '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;' };
/** Escapes text for HTML text and double-quoted attribute values. */
export function escapeHtml(s: string): string {
  return s.replace(/[&<>"]/g, (c) => ENTITY[c]);
}

function attrs(a: Record<string, string> | undefined): string {
  return a ? Object.entries(a).map(([k, v]) => ` ${k}="${escapeHtml(v)}"`).join('') : '';
}

/**
 * The HTML of one of the extension's webview pages: the brief's strict CSP (`default-src 'none'`,
 * scripts only by a fresh nonce, styles and fonts only from the extension: {@link briefCsp}), the
 * bundle `dist/webview/<bundle>.{js,css}` and an empty `<main id="root">` holding a loading line
 * until the script draws. Every page (brief, viewer, triage, results, run-set board, curator's
 * desk) is this one shape, so a change to the CSP or the scaffolding is made once.
 */
export function webviewPage(webview: vscode.Webview, extensionUri: vscode.Uri, spec: WebviewPageSpec): string {
  const nonce = makeNonce();
  const uri = (ext: string) => webview.asWebviewUri(vscode.Uri.joinPath(extensionUri, 'dist', 'webview', `${spec.bundle}.${ext}`));
  const mainAttrs = { ...(spec.rootClass ? { class: spec.rootClass } : {}), ...spec.mainAttrs };
  return `<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="UTF-8">
<meta http-equiv="Content-Security-Policy" content="${briefCsp(webview.cspSource, nonce)}">
<meta name="viewport" content="width=device-width, initial-scale=1.0">
<link rel="stylesheet" href="${uri('css')}">
<title>${escapeHtml(spec.title)}</title>
</head>
<body${attrs(spec.bodyAttrs)}>
<main id="root"${attrs(mainAttrs)}><p class="muted">${escapeHtml(spec.loading)}</p></main>
<script nonce="${nonce}" src="${uri('js')}"></script>
</body>
</html>`;
}
