import * as vscode from 'vscode';
import { log } from '../../core/log';
import { errorMessage } from '../../core/util/errors';
import {
  DeskWebviewMessageSchema, type DeskFilterView, type DeskHostMessage, type DeskWebviewMessage, type PageMessage, type QueueMessage,
} from '../../protocol/curation';
import type { DeskData } from './deskData';
import { webviewPage } from '../brief/page';

const logger = log('curation.desk');

export const QUEUE_VIEW_TYPE = 'expbench.curation.queue';
export const TASK_PAGE_VIEW_TYPE = 'expbench.curation.task';

/** What a page's buttons run: the desk's commands (deskCommands.ts), with the page's task. */
export type DeskAction = (task: string, m: DeskWebviewMessage) => Promise<void>;

/**
 * The curator's desk's webviews: the queue (one panel, "Curation: Queue") and one task page per
 * task ("Curate <task id>"). Both load dist/webview/curation.js (webview-ui/src/curation/) and
 * speak src/protocol/curation.ts. The host posts the queue and the pages again on
 * {@link refresh} (after every recorded judgement, edit, re-judge or validation).
 */
export class DeskPanels implements vscode.Disposable {
  private queuePanel: vscode.WebviewPanel | undefined;
  private filter: DeskFilterView = {};
  private readonly pages = new Map<string, vscode.WebviewPanel>();
  /** The last messages posted (tests). */
  readonly posted = { queue: undefined as QueueMessage | undefined, pages: new Map<string, PageMessage>() };
  private readonly postedEmitter = new vscode.EventEmitter<DeskHostMessage>();
  /** Fires after each message posted to a desk webview. */
  readonly onDidPost = this.postedEmitter.event;

  constructor(private readonly extensionUri: vscode.Uri, private readonly data: DeskData, private readonly act: DeskAction) {}

  /** Shows the queue (creates it, or reveals the one open) with `filter` when given. */
  async showQueue(filter?: DeskFilterView): Promise<QueueMessage> {
    if (filter) this.filter = filter;
    if (!this.queuePanel) {
      const panel = this.create(QUEUE_VIEW_TYPE, 'Curation: Queue', 'queue');
      this.queuePanel = panel;
      panel.webview.onDidReceiveMessage((m: unknown) => void this.receive(m, undefined));
      panel.onDidDispose(() => { this.queuePanel = undefined; });
    } else this.queuePanel.reveal();
    return this.postQueue();
  }

  /** Shows task `id`'s page (one per task). */
  async showTask(id: string): Promise<PageMessage | undefined> {
    let panel = this.pages.get(id);
    if (!panel) {
      panel = this.create(TASK_PAGE_VIEW_TYPE, `Curate ${id}`, 'page');
      this.pages.set(id, panel);
      panel.webview.onDidReceiveMessage((m: unknown) => void this.receive(m, id));
      panel.onDidDispose(() => { this.pages.delete(id); this.posted.pages.delete(id); });
    } else panel.reveal();
    return this.postPage(id);
  }

  /** Whether task `id`'s page is open. */
  hasPage(id: string): boolean {
    return this.pages.has(id);
  }

  /** Posts the queue and every open page again. */
  async refresh(opts: { lint?: boolean } = {}): Promise<void> {
    if (opts.lint) this.data.refreshLint();
    await Promise.all([this.queuePanel ? this.postQueue() : undefined, ...[...this.pages.keys()].map((id) => this.postPage(id))]);
  }

  /** Shows `text` at the top of task `id`'s page (and the queue when `id` is undefined). */
  notice(id: string | undefined, level: 'info' | 'error', text: string): void {
    const panel = id ? this.pages.get(id) : this.queuePanel;
    if (panel) this.post(panel, { type: 'notice', level, text });
  }

  /** Handles one message of a desk webview (public for tests: the webview's path). */
  async receive(raw: unknown, task: string | undefined): Promise<void> {
    const parsed = DeskWebviewMessageSchema.safeParse(raw);
    if (!parsed.success) { logger.warn(`dropped a malformed desk message: ${parsed.error.message.slice(0, 200)}`); return; }
    const m = parsed.data;
    try {
      if (m.type === 'ready') await (task ? this.postPage(task) : this.postQueue());
      else if (m.type === 'refresh') await this.refresh({ lint: true });
      else if (m.type === 'filter') { this.filter = m.filter; await this.postQueue(); }
      else if (m.type === 'openTask') await this.showTask(m.task);
      else if (m.type === 'showAgreement') await vscode.commands.executeCommand('expbench.review.showAgreement');
      else if (task) await this.act(task, m);
    } catch (e) {
      logger.warn(`desk ${m.type} failed: ${errorMessage(e)}`);
      this.notice(task, 'error', errorMessage(e));
      void vscode.window.showErrorMessage(`EXP-Bench: ${errorMessage(e)}`);
    }
  }

  private async postQueue(): Promise<QueueMessage> {
    const q = await this.data.queue(this.filter);
    this.posted.queue = q;
    if (this.queuePanel) this.post(this.queuePanel, q);
    return q;
  }

  private async postPage(id: string): Promise<PageMessage | undefined> {
    const panel = this.pages.get(id);
    const task = await this.data.task(id);
    if (!task) {
      if (panel) this.post(panel, { type: 'notice', level: 'error', text: `task ${id} is not in the configured datasets` });
      return undefined;
    }
    const page = await this.data.page(task);
    this.posted.pages.set(id, page);
    if (panel) this.post(panel, page);
    return page;
  }

  private post(panel: vscode.WebviewPanel, m: DeskHostMessage): void {
    void panel.webview.postMessage(m).then(() => this.postedEmitter.fire(m));
  }

  private create(viewType: string, title: string, kind: 'queue' | 'page'): vscode.WebviewPanel {
    const panel = vscode.window.createWebviewPanel(viewType, title, vscode.ViewColumn.Active, {
      enableScripts: true, retainContextWhenHidden: true,
      localResourceRoots: [vscode.Uri.joinPath(this.extensionUri, 'dist', 'webview')],
    });
    panel.webview.html = webviewPage(panel.webview, this.extensionUri, {
      bundle: 'curation', title, rootClass: 'desk', bodyAttrs: { 'data-kind': kind }, loading: `Reading the ${kind === 'queue' ? 'queue' : 'task'}…`,
    });
    return panel;
  }

  dispose(): void {
    this.queuePanel?.dispose();
    for (const p of this.pages.values()) p.dispose();
    this.postedEmitter.dispose();
  }
}
