import * as vscode from 'vscode';
import { log } from '../../core/log';
import { errorMessage } from '../../core/util/errors';
import { TriageWebviewMessageSchema, type TriageFocusMessage, type TriageRowsMessage, type TriageWebviewMessage } from '../../protocol/triage';
import { openTarget, type RunStore } from './runStore';
import { webviewPage } from '../brief/page';

const logger = log('triage');

/** `viewType` of the triage table's webview panel. */
export const TRIAGE_VIEW_TYPE = 'expbench.triage';

/**
 * The triage table (command `expbench.trajectory.triage`): one webview panel listing every run of
 * the {@link RunStore} (sortable, filterable in the webview: webview-ui/src/triage/); a row opens
 * the run in the trajectory viewer at its first flagged step (`expbench.trajectory.open`
 * {uri, step}). The rows are posted again whenever the store changes.
 */
export class TriagePanel implements vscode.Disposable {
  private panel: vscode.WebviewPanel | undefined;
  private readonly subs: vscode.Disposable[] = [];
  /** The last rows message posted (tests). */
  posted: TriageRowsMessage | undefined;
  /** The runs the table is narrowed to (from the Results view), posted after the rows. */
  focused: TriageFocusMessage | undefined;
  private readonly openedEmitter = new vscode.EventEmitter<{ uri: string; step?: number }>();
  /** Fires when a row was opened (after `expbench.trajectory.open` returned). */
  readonly onDidOpen = this.openedEmitter.event;

  constructor(private readonly extensionUri: vscode.Uri, private readonly store: RunStore) {
    this.subs.push(store.onDidChange(() => void this.postRows()), this.openedEmitter);
  }

  /** Shows the panel (creates it, or reveals the one open). */
  show(): vscode.WebviewPanel {
    if (this.panel) { this.panel.reveal(); return this.panel; }
    const panel = vscode.window.createWebviewPanel(TRIAGE_VIEW_TYPE, 'Triage: Runs', vscode.ViewColumn.Active, {
      enableScripts: true, retainContextWhenHidden: true,
      localResourceRoots: [vscode.Uri.joinPath(this.extensionUri, 'dist', 'webview')],
    });
    this.panel = panel;
    panel.webview.html = this.html(panel.webview);
    const sub = panel.webview.onDidReceiveMessage((m: unknown) => void this.receive(m));
    panel.onDidDispose(() => { sub.dispose(); this.panel = undefined; this.focused = undefined; });
    return panel;
  }

  /** Shows the panel narrowed to `runs` (the Results view's runs behind a bar or cell); `label` says what they are. */
  focus(runs: string[], label: string): vscode.WebviewPanel {
    this.focused = { type: 'focus', runs, label };
    const panel = this.show();
    void this.postRows();
    return panel;
  }

  /** Handles one message of the webview (public for tests: the same path the webview's messages take). */
  async receive(raw: unknown): Promise<void> {
    const parsed = TriageWebviewMessageSchema.safeParse(raw);
    if (!parsed.success) { logger.warn(`dropped a malformed triage message: ${parsed.error.message.slice(0, 200)}`); return; }
    const m: TriageWebviewMessage = parsed.data;
    try {
      if (m.type === 'ready') await this.postRows();
      else if (m.type === 'refresh') await this.store.refresh();
      else {
        const row = (await this.store.rows()).find((r) => r.run === m.run);
        const uri = row ? openTarget(row) : m.run;
        await vscode.commands.executeCommand('expbench.trajectory.open', { uri, ...(m.step !== undefined ? { step: m.step } : {}) });
        this.openedEmitter.fire({ uri, ...(m.step !== undefined ? { step: m.step } : {}) });
      }
    } catch (e) {
      logger.warn(`triage ${m.type} failed: ${errorMessage(e)}`);
      void vscode.window.showErrorMessage(`EXP-Bench: ${errorMessage(e)}`);
    }
  }

  private async postRows(): Promise<void> {
    if (!this.panel) return;
    const { rows, skipped } = await this.store.result();
    this.posted = { type: 'rows', policy: this.store.policy.name, rows, problems: skipped };
    await this.panel.webview.postMessage(this.posted);
    if (this.focused) await this.panel.webview.postMessage(this.focused);
  }

  private html(webview: vscode.Webview): string {
    return webviewPage(webview, this.extensionUri, { bundle: 'triage', title: 'Triage: Runs', rootClass: 'triage', loading: 'Reading the runs…' });
  }

  dispose(): void {
    this.panel?.dispose();
    for (const s of this.subs) s.dispose();
  }
}
