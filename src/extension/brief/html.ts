import * as vscode from 'vscode';
import { webviewPage } from './page';

/**
 * The brief webview's HTML: a strict CSP (`default-src 'none'`, scripts only by nonce, styles and
 * fonts only from the extension, no `unsafe-eval`, no inline styles), the bundled
 * `dist/webview/main.{js,css}`, and an empty root the script fills.
 */
export function briefHtml(webview: vscode.Webview, extensionUri: vscode.Uri): string {
  return webviewPage(webview, extensionUri, { bundle: 'main', title: 'EXP-Bench Task Brief', mainAttrs: { 'aria-live': 'polite' }, loading: 'Loading the task brief…' });
}
