import * as vscode from 'vscode';
import { briefCsp } from './csp';
import { makeNonce } from './nonce';

/**
 * The brief webview's HTML: a strict CSP (`default-src 'none'`, scripts only by nonce, styles and
 * fonts only from the extension, no `unsafe-eval`, no inline styles), the bundled
 * `dist/webview/main.{js,css}`, and an empty root the script fills.
 */
export function briefHtml(webview: vscode.Webview, extensionUri: vscode.Uri): string {
  const nonce = makeNonce();
  const js = webview.asWebviewUri(vscode.Uri.joinPath(extensionUri, 'dist', 'webview', 'main.js'));
  const css = webview.asWebviewUri(vscode.Uri.joinPath(extensionUri, 'dist', 'webview', 'main.css'));
  const csp = briefCsp(webview.cspSource, nonce);
  return `<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="UTF-8">
<meta http-equiv="Content-Security-Policy" content="${csp}">
<meta name="viewport" content="width=device-width, initial-scale=1.0">
<link rel="stylesheet" href="${css}">
<title>EXP-Bench Task Brief</title>
</head>
<body>
<main id="root" aria-live="polite"><p class="muted">Loading the task brief…</p></main>
<script nonce="${nonce}" src="${js}"></script>
</body>
</html>`;
}
