import * as vscode from 'vscode';
import { errorMessage } from '../core/util/errors';
import { briefCsp } from '../extension/brief/csp';
import { makeNonce } from '../extension/brief/nonce';
import { WebviewMessageSchema, type HostMessage, type PhasesAction } from '../protocol/messages';

/** What the panel asks of the solver extension: one phase action; throws to show an error in the webview. */
export type ActionHandler = (call: PhasesAction) => Promise<void>;

/**
 * The solver window's task panel: the researcher window's webview bundle (webview-ui/, built a
 * second time into dist/solver/webview/), showing the brief and section `phases`. Same protocol
 * (src/protocol/messages.ts) and CSP as the researcher's brief; only `phases` requests are answered.
 */
export class SolverPanel implements vscode.Disposable {
  private panel: vscode.WebviewPanel | undefined;
  private ready = false;
  private last: HostMessage[] = [];
  /** An `error` box is on the page (the webview keeps it until the page is loaded again). */
  private errorShown = false;

  constructor(private readonly extensionUri: vscode.Uri, private readonly onAction: ActionHandler) {}

  /** Shows the panel (made on first use, beside the editor). */
  show(): void {
    if (this.panel) return this.panel.reveal(undefined, true);
    const root = vscode.Uri.joinPath(this.extensionUri, 'webview');
    const panel = vscode.window.createWebviewPanel('expbench.solver.task', 'EXP-Bench: Task (proctored)', { viewColumn: vscode.ViewColumn.Beside, preserveFocus: true },
      { enableScripts: true, retainContextWhenHidden: true, localResourceRoots: [root] });
    this.panel = panel;
    this.load(panel);
    panel.webview.onDidReceiveMessage((raw) => void this.receive(raw));
    panel.onDidDispose(() => { this.panel = undefined; this.ready = false; });
  }

  /** Loads the page; once it is ready it gets {@link last} again. */
  private load(panel: vscode.WebviewPanel): void {
    const root = vscode.Uri.joinPath(this.extensionUri, 'webview');
    this.ready = false;
    this.errorShown = false;
    const nonce = makeNonce();
    const js = panel.webview.asWebviewUri(vscode.Uri.joinPath(root, 'main.js'));
    const css = panel.webview.asWebviewUri(vscode.Uri.joinPath(root, 'main.css'));
    panel.webview.html = `<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="UTF-8">
<meta http-equiv="Content-Security-Policy" content="${briefCsp(panel.webview.cspSource, nonce)}">
<meta name="viewport" content="width=device-width, initial-scale=1.0">
<link rel="stylesheet" href="${css}">
<title>EXP-Bench Task</title>
</head>
<body data-window="proctored">
<main id="root" aria-live="polite"><p class="muted">Connecting to the host…</p></main>
<script nonce="${nonce}" src="${js}"></script>
</body>
</html>`;
  }

  /**
   * Posts the brief and the phases state (kept, and posted again when the webview is (re)loaded).
   * The first post without an `error` after one (the host is back) loads the page again, so the
   * "host side is not running" box does not stay above the brief.
   */
  post(messages: HostMessage[]): void {
    this.last = messages;
    if (!this.panel) return;
    const hasError = messages.some((m) => m.type === 'error');
    if (this.errorShown && !hasError) return this.load(this.panel);
    if (!this.ready) return;
    for (const m of messages) void this.panel.webview.postMessage(m);
    if (hasError) this.errorShown = true;
  }

  /** Posts messages that are not kept for a reload (a run's log chunk): dropped while the page is not ready. */
  postTransient(messages: HostMessage[]): void {
    if (!this.panel || !this.ready || this.errorShown) return;
    for (const m of messages) void this.panel.webview.postMessage(m);
  }

  private async receive(raw: unknown): Promise<void> {
    const parsed = WebviewMessageSchema.safeParse(raw);
    if (!parsed.success || !this.panel) return;
    const m = parsed.data;
    if (m.type === 'ready') {
      this.ready = true;
      this.post(this.last);
      return;
    }
    if (m.type !== 'request') return;
    const reply = (error?: string): void => {
      void this.panel?.webview.postMessage(error === undefined ? { type: 'reply', id: m.id, ok: true } : { type: 'reply', id: m.id, ok: false, error: { message: error } });
    };
    if (m.section !== 'phases') return reply('not available in the proctored window');
    try {
      await this.onAction(m.call);
      reply();
    } catch (e) {
      reply(errorMessage(e));
    }
  }

  dispose(): void { this.panel?.dispose(); }
}
