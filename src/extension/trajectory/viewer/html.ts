import * as vscode from 'vscode';
import { webviewPage } from '../../brief/page';

/**
 * The trajectory viewer's HTML: the brief's strict CSP (`default-src 'none'`, scripts only by
 * nonce, styles only from the extension; row positions are set through the CSSOM, which the CSP
 * allows), the bundled `dist/webview/trajectory.{js,css}` and an empty root the script fills.
 */
export function viewerHtml(webview: vscode.Webview, extensionUri: vscode.Uri, title: string): string {
  return webviewPage(webview, extensionUri, { bundle: 'trajectory', title, rootClass: 'traj', loading: `Reading ${title}…` });
}
