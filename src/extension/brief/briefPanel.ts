import * as vscode from 'vscode';
import { log } from '../../core/log';
import type { Task } from '../../core/tasks/types';
import { BriefView, HostMessage, WebviewMessage, WebviewMessageSchema, WebviewUiStateSchema } from '../../protocol/messages';
import { BRIEF_VIEW_TYPE } from '../ids';
import { briefHtml } from './html';

const logger = log('brief');

type SectionHandler = (action: string, payload: unknown, panel: BriefPanel) => void | Promise<void>;

/**
 * The task brief webview (view type `expbench.brief`): paper title and link, question, method and
 * agent instructions as sanitised markdown. The ground truth (design, expected outcome,
 * requirements) is never sent to it. One panel per task; features add sections (phases, verifier,
 * gap report) with {@link BriefPanel.postSection} and handle their actions with
 * {@link BriefPanel.registerSectionHandler}.
 */
export class BriefPanel implements vscode.Disposable {
  private static readonly panels = new Map<string, BriefPanel>();
  private static readonly handlers = new Map<string, SectionHandler>();
  private static readonly sectionProviders: Array<(panel: BriefPanel) => void | Promise<void>> = [];
  private ready = false;
  private readonly queue: HostMessage[] = [];
  private readonly disposables: vscode.Disposable[] = [];

  private constructor(readonly panel: vscode.WebviewPanel, readonly task: Task, extensionUri: vscode.Uri, readonly sessionDir?: string) {
    panel.webview.options = { enableScripts: true, localResourceRoots: [vscode.Uri.joinPath(extensionUri, 'dist', 'webview')] };
    panel.webview.html = briefHtml(panel.webview, extensionUri);
    panel.title = `Brief ${task.id}`;
    panel.iconPath = vscode.Uri.joinPath(extensionUri, 'media', 'expbench.svg');
    this.disposables.push(
      panel.webview.onDidReceiveMessage((m) => this.receive(m)),
      panel.onDidDispose(() => this.dispose()),
    );
  }

  /**
   * Shows (or reveals) the brief of `task`. `sessionDir` ties it to an opened task session.
   * `preserveFocus`: the new panel does not take the focus (a quick pick open meanwhile stays
   * open); `reveal: false`: an existing panel is left where and as it is.
   */
  static show(
    task: Task, extensionUri: vscode.Uri,
    opts: { column?: vscode.ViewColumn; sessionDir?: string; preserveFocus?: boolean; reveal?: boolean } = {},
  ): BriefPanel {
    const existing = BriefPanel.panels.get(task.id);
    if (existing) {
      if (opts.reveal !== false) existing.panel.reveal(opts.column, opts.preserveFocus);
      return existing;
    }
    const panel = vscode.window.createWebviewPanel(BRIEF_VIEW_TYPE, `Brief ${task.id}`,
      { viewColumn: opts.column ?? vscode.ViewColumn.Active, preserveFocus: opts.preserveFocus === true },
      { enableScripts: true, retainContextWhenHidden: true, localResourceRoots: [vscode.Uri.joinPath(extensionUri, 'dist', 'webview')] });
    return BriefPanel.adopt(panel, task, extensionUri, opts.sessionDir);
  }

  /** Wraps an existing panel (used when VS Code restores one after a reload). */
  static adopt(panel: vscode.WebviewPanel, task: Task, extensionUri: vscode.Uri, sessionDir?: string): BriefPanel {
    const p = new BriefPanel(panel, task, extensionUri, sessionDir);
    BriefPanel.panels.set(task.id, p);
    return p;
  }

  static get(taskId: string): BriefPanel | undefined {
    return BriefPanel.panels.get(taskId);
  }

  static all(): BriefPanel[] {
    return [...BriefPanel.panels.values()];
  }

  /** Registers the handler of a section's actions (`sectionAction` messages with this key). */
  static registerSectionHandler(key: string, handler: SectionHandler): vscode.Disposable {
    BriefPanel.handlers.set(key, handler);
    return new vscode.Disposable(() => BriefPanel.handlers.delete(key));
  }

  /** Registers a function called for every panel once its webview is ready (to post initial sections). */
  static registerSectionProvider(provider: (panel: BriefPanel) => void | Promise<void>): vscode.Disposable {
    BriefPanel.sectionProviders.push(provider);
    return new vscode.Disposable(() => {
      const i = BriefPanel.sectionProviders.indexOf(provider);
      if (i >= 0) BriefPanel.sectionProviders.splice(i, 1);
    });
  }

  /** Sends a feature section's payload (rendered by webview-ui's section of the same key). */
  postSection(key: string, payload: unknown): void {
    this.post({ type: 'section', key, payload });
  }

  private post(m: HostMessage): void {
    if (!this.ready) this.queue.push(m);
    else void this.panel.webview.postMessage(m);
  }

  private async receive(raw: unknown): Promise<void> {
    const parsed = WebviewMessageSchema.safeParse(raw);
    if (!parsed.success) {
      logger.warn(`ignored a malformed message from the brief webview: ${parsed.error.issues[0]?.message}`);
      return;
    }
    const m: WebviewMessage = parsed.data;
    try {
      switch (m.type) {
        case 'ready':
          this.ready = true;
          void this.panel.webview.postMessage({ type: 'brief', brief: briefView(this.task, this.sessionDir) } satisfies HostMessage);
          for (const q of this.queue.splice(0)) void this.panel.webview.postMessage(q);
          for (const provider of BriefPanel.sectionProviders) await provider(this);
          break;
        case 'openLink':
          if (/^https?:\/\//.test(m.url)) await vscode.env.openExternal(vscode.Uri.parse(m.url));
          break;
        case 'command':
          if (m.command.startsWith('expbench.')) await vscode.commands.executeCommand(m.command, ...(m.args ?? []));
          break;
        case 'sectionAction': {
          const h = BriefPanel.handlers.get(m.key);
          if (!h) logger.warn(`no handler for section ${m.key}`);
          else await h(m.action, m.payload, this);
          break;
        }
      }
    } catch (e) {
      logger.error(e as Error);
      this.post({ type: 'error', message: e instanceof Error ? e.message : String(e) });
    }
  }

  dispose(): void {
    BriefPanel.panels.delete(this.task.id);
    for (const d of this.disposables.splice(0)) d.dispose();
    this.panel.dispose();
  }
}

/** What the webview may see of a task: no design ground truth, no expected outcome, no requirements. */
export function briefView(t: Task, sessionDir?: string): BriefView {
  return {
    taskId: t.id, type: t.type,
    paperTitle: t.paper?.title, paperUrl: t.paper?.url, pdfUrl: t.paper?.pdfUrl, codeUrl: t.paper?.codeUrl,
    question: t.question, method: t.method, agentInstructions: t.agentInstructions,
    problems: t.problems.filter((p) => p.severity !== 'info').map(({ severity, pointer, message }) => ({ severity, pointer, message })),
    sessionDir,
  };
}

/** Restores brief panels after a window reload, from the UI state the webview saved. */
export class BriefSerializer implements vscode.WebviewPanelSerializer {
  constructor(private readonly findTask: (id: string) => Promise<Task | undefined>, private readonly extensionUri: vscode.Uri) {}

  async deserializeWebviewPanel(panel: vscode.WebviewPanel, state: unknown): Promise<void> {
    const s = WebviewUiStateSchema.safeParse(state);
    const task = s.success ? await this.findTask(s.data.taskId) : undefined;
    if (!task) {
      panel.webview.html = '<!DOCTYPE html><html><body><p>This task is no longer in the configured datasets.</p></body></html>';
      return;
    }
    if (BriefPanel.get(task.id)) {
      // The window's session opened its brief before VS Code restored this one: one panel per task.
      panel.dispose();
      return;
    }
    BriefPanel.adopt(panel, task, this.extensionUri, s.success ? s.data.sessionDir : undefined);
  }
}
