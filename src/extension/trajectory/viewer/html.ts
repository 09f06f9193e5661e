import * as vscode from 'vscode';
import { briefCsp } from '../../brief/csp';
import { makeNonce } from '../../brief/nonce';

/**
 * The trajectory viewer's HTML: the brief's strict CSP (`default-src 'none'`, scripts only by
 * nonce, styles only from the extension; row positions are set through the CSSOM, which the CSP
 * allows), the bundled `dist/webview/trajectory.{js,css}` and an empty root the script fills.
 */
export function viewerHtml(webview: vscode.Webview, extensionUri: vscode.Uri, title: string): string {
  const nonce = makeNonce();
  const js = webview.asWebviewUri(vscode.Uri.joinPath(extensionUri, 'dist', 'webview', 'trajectory.js'));
  const css = webview.asWebviewUri(vscode.Uri.joinPath(extensionUri, 'dist', 'webview', 'trajectory.css'));
  const esc = title.replace(/[&<>"]/g, (c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;' }[c] as string));
  return `<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="UTF-8">
<meta http-equiv="Content-Security-Policy" content="${briefCsp(webview.cspSource, nonce)}">
<meta name="viewport" content="width=device-width, initial-scale=1.0">
<link rel="stylesheet" href="${css}">
<title>${esc}</title>
</head>
<body>
<main id="root" class="traj"><p class="muted">Reading ${esc}…</p></main>
<script nonce="${nonce}" src="${js}"></script>
</body>
</html>`;
}
