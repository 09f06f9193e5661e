import * as vscode from 'vscode';
import { judgeAgreement, type AgreementReport } from '../../core/curation/agreement';
import { log } from '../../core/log';
import { errorMessage } from '../../core/util/errors';
import { makeNonce } from '../brief/nonce';
import type { CommandSpec } from '../commands';
import { shownPath } from '../shownPath';
import { agreementHtml } from './agreementHtml';
import { reviewStore } from './store';

const logger = log('review');

export const SHOW_AGREEMENT_COMMAND = 'expbench.review.showAgreement';

/** Argument of {@link SHOW_AGREEMENT_COMMAND}: folders of judged sessions or harness judge files; without it, the window's folders, else a folder picker. */
export interface ShowAgreementArg {
  inputs?: string[];
}

/**
 * "EXP-Bench: Show Judge Agreement (Curator)": the agreement of each judge with the labels of the
 * review store (`expbench.review.folder`) over the judged sessions of the folders given (default:
 * the window's folders, else the ones picked), as a
 * table and a plot in a webview without scripts (docs/curation.md "Judge agreement").
 */
export class AgreementView implements vscode.Disposable {
  private panel: vscode.WebviewPanel | undefined;
  /** The last report shown (for tests). */
  last: AgreementReport | undefined;

  constructor(private readonly extensionUri: vscode.Uri) {}

  commands(): CommandSpec[] {
    return [{ id: SHOW_AGREEMENT_COMMAND, execute: (arg?: ShowAgreementArg) => this.show(arg) }];
  }

  async show(arg: ShowAgreementArg = {}): Promise<AgreementReport | undefined> {
    let inputs = arg.inputs?.length ? arg.inputs : vscode.workspace.workspaceFolders?.filter((f) => f.uri.scheme === 'file').map((f) => f.uri.fsPath);
    if (!inputs?.length) {
      const picked = await vscode.window.showOpenDialog({ canSelectFolders: true, canSelectFiles: true, canSelectMany: true, openLabel: 'Measure agreement', title: 'Judged sessions or harness judge files' });
      if (!picked?.length) return undefined;
      inputs = picked.map((u) => u.fsPath);
    }
    const store = reviewStore();
    let report: AgreementReport;
    try {
      report = await judgeAgreement(inputs, await store.list());
    } catch (e) {
      void vscode.window.showErrorMessage(`EXP-Bench: judge agreement: ${errorMessage(e)}`);
      return undefined;
    }
    const media = vscode.Uri.joinPath(this.extensionUri, 'media');
    if (!this.panel) {
      this.panel = vscode.window.createWebviewPanel('expbench.agreement', 'Judge Agreement', vscode.ViewColumn.Active, { enableScripts: false, localResourceRoots: [media] });
      this.panel.onDidDispose(() => { this.panel = undefined; });
    }
    const w = this.panel.webview;
    const nonce = makeNonce();
    const csp = [`default-src 'none'`, `style-src ${w.cspSource}`, `img-src ${w.cspSource} data:`, `script-src 'nonce-${nonce}'`].join('; ');
    w.html = agreementHtml(report, { csp, cssUri: w.asWebviewUri(vscode.Uri.joinPath(media, 'agreement.css')).toString(), inputs: inputs.map(shownPath), store: shownPath(store.root) });
    this.panel.reveal();
    this.last = report;
    logger.info(`agreement: ${report.rows.length} rows over ${report.labels} labels from ${store.root}`);
    return report;
  }

  dispose(): void {
    this.panel?.dispose();
  }
}
