import * as vscode from 'vscode';
import { ExpBenchError, isExpBenchError } from '../../core/errors';
import { log } from '../../core/log';
import type { Task } from '../../core/tasks/types';
import { errorMessage } from '../../core/util/errors';
import {
  type BriefView, type HostMessage, RequestHeadSchema, type SectionName, type SectionState, type WebviewMessage, WebviewMessageSchema, WebviewUiStateSchema,
} from '../../protocol/messages';
import { SectionRegistry } from '../../protocol/registry';
import { RequestRunner } from '../../protocol/requests';
import { BRIEF_VIEW_TYPE } from '../ids';
import { briefHtml } from './html';

const logger = log('brief');

/** Logs a failed section request and tells it to the webview: the message, and the ExpBenchError code when there is one (CANCELLED: the user stopped it, no error box). */
function describe(e: unknown): { message: string; code?: string } {
  if (isExpBenchError(e, 'CANCELLED')) logger.info(errorMessage(e));
  else logger.error(e instanceof Error ? e : errorMessage(e));
  return { message: errorMessage(e), ...(isExpBenchError(e) ? { code: e.code } : {}) };
}

/**
 * The window's task brief webviews (view type `expbench.brief`), one panel per task, and the
 * registry of their feature sections (phases, gap report): features register a handler for their
 * section's actions and a provider that posts their section to a panel once it is ready, and post
 * state with {@link BriefPanels.post}. Made once by the composition root. Disposing it detaches the
 * panels (their requests are cancelled) but leaves them open, so VS Code can restore them after a
 * reload.
 */
export class BriefPanels implements vscode.Disposable {
  readonly sections = new SectionRegistry<BriefPanel>();
  private readonly panels = new Map<string, BriefPanel>();

  constructor(private readonly extensionUri: vscode.Uri) {}

  /**
   * Shows (or reveals) the brief of `task`. `sessionDir` ties it to an opened task session.
   * `preserveFocus`: the new panel does not take the focus (a quick pick open meanwhile stays
   * open); `reveal: false`: an existing panel is left where and as it is.
   */
  show(task: Task, opts: { column?: vscode.ViewColumn; sessionDir?: string; preserveFocus?: boolean; reveal?: boolean } = {}): BriefPanel {
    const existing = this.panels.get(task.id);
    if (existing) {
      if (opts.reveal !== false) existing.panel.reveal(opts.column, opts.preserveFocus);
      return existing;
    }
    const panel = vscode.window.createWebviewPanel(BRIEF_VIEW_TYPE, `Brief ${task.id}`,
      { viewColumn: opts.column ?? vscode.ViewColumn.Active, preserveFocus: opts.preserveFocus === true },
      { enableScripts: true, retainContextWhenHidden: true, localResourceRoots: [vscode.Uri.joinPath(this.extensionUri, 'dist', 'webview')] });
    return this.adopt(panel, task, opts.sessionDir);
  }

  /** Wraps an existing panel (used when VS Code restores one after a reload). */
  adopt(panel: vscode.WebviewPanel, task: Task, sessionDir?: string): BriefPanel {
    const p = new BriefPanel(panel, task, this.extensionUri, this.sections, () => { if (this.panels.get(task.id) === p) this.panels.delete(task.id); }, sessionDir);
    this.panels.set(task.id, p);
    return p;
  }

  get(taskId: string): BriefPanel | undefined {
    return this.panels.get(taskId);
  }

  all(): BriefPanel[] {
    return [...this.panels.values()];
  }

  /** Posts `state` to section `section` of the brief of `taskId`, if that brief is open. */
  post<K extends SectionName>(taskId: string, section: K, state: SectionState<K>): void {
    this.panels.get(taskId)?.postSection(section, state);
  }

  dispose(): void {
    for (const p of this.panels.values()) p.detach();
    this.panels.clear();
  }
}

/**
 * One task's brief webview: paper title and link, question, method and agent instructions as
 * sanitised markdown. The ground truth (design, expected outcome, requirements) is never sent to
 * it. Messages posted before the webview is ready wait for its `ready`; section requests run
 * through the window's {@link SectionRegistry}, each answered with one reply.
 */
export class BriefPanel implements vscode.Disposable {
  private ready = false;
  private readonly queue: HostMessage[] = [];
  private readonly disposables: vscode.Disposable[] = [];
  private readonly requests = new RequestRunner((m) => this.post(m), describe);

  constructor(
    readonly panel: vscode.WebviewPanel, readonly task: Task, extensionUri: vscode.Uri,
    private readonly sections: SectionRegistry<BriefPanel>, private readonly onDispose: () => void, readonly sessionDir?: string,
  ) {
    panel.webview.options = { enableScripts: true, localResourceRoots: [vscode.Uri.joinPath(extensionUri, 'dist', 'webview')] };
    // title before html: the content message carries it to the webview's frame (a later set-title can miss a frame still loading)
    panel.title = `Brief ${task.id}`;
    panel.webview.html = briefHtml(panel.webview, extensionUri);
    panel.iconPath = vscode.Uri.joinPath(extensionUri, 'media', 'expbench.svg');
    this.disposables.push(
      panel.webview.onDidReceiveMessage((m) => this.receive(m)),
      panel.onDidDispose(() => this.dispose()),
    );
  }

  /** Sends section `section`'s state (rendered by webview-ui's section of the same name). */
  postSection<K extends SectionName>(section: K, state: SectionState<K>): void {
    this.post({ type: 'section', section, state } as HostMessage);
  }

  private post(m: HostMessage): void {
    if (!this.ready) this.queue.push(m);
    else void this.panel.webview.postMessage(m);
  }

  private async receive(raw: unknown): Promise<void> {
    const parsed = WebviewMessageSchema.safeParse(raw);
    if (!parsed.success) {
      const why = parsed.error.issues[0]?.message ?? 'not a message';
      logger.warn(`ignored a malformed message from the brief webview: ${why}`);
      // a request whose id is readable still gets its one reply, so that the webview does not wait forever
      const r = RequestHeadSchema.safeParse(raw);
      if (r.success) void this.requests.run(r.data.id, () => { throw new ExpBenchError('BAD_INPUT', `request ${r.data.id}`, `malformed: ${why}`); });
      return;
    }
    const m: WebviewMessage = parsed.data;
    try {
      switch (m.type) {
        case 'ready': {
          this.ready = true;
          void this.panel.webview.postMessage({ type: 'brief', brief: briefView(this.task, this.sessionDir) } satisfies HostMessage);
          for (const q of this.queue.splice(0)) void this.panel.webview.postMessage(q);
          const errors = await this.sections.provideAll(this);
          for (const e of errors) this.fail(e);
          break;
        }
        case 'openLink':
          if (/^https?:\/\//.test(m.url)) await vscode.env.openExternal(vscode.Uri.parse(m.url));
          break;
        case 'openTask':
          await vscode.commands.executeCommand('expbench.openTask', this.task.id);
          break;
        case 'request':
          await this.requests.run(m.id, (signal) => this.sections.dispatch(m, this, signal));
          break;
        case 'cancel':
          this.requests.cancel(m.id);
          break;
      }
    } catch (e) {
      this.fail(e);
    }
  }

  private fail(e: unknown): void {
    logger.error(e instanceof Error ? e : errorMessage(e));
    this.post({ type: 'error', message: errorMessage(e) });
  }

  /** Stops listening and cancels running requests, leaving the webview open. */
  detach(): void {
    this.requests.cancelAll();
    for (const d of this.disposables.splice(0)) d.dispose();
  }

  dispose(): void {
    this.detach();
    this.onDispose();
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
    sessionDir, noAnswer: t.noAnswer,
  };
}

/** What a restored brief shows until its task is found (no script: nothing for the CSP to allow). */
export const LOADING_HTML = `<!DOCTYPE html><html lang="en"><head><meta charset="UTF-8"><meta http-equiv="Content-Security-Policy" content="default-src 'none'"></head><body><p>Loading the task brief…</p></body></html>`;

/** Restores brief panels after a window reload, from the UI state the webview saved. */
export class BriefSerializer implements vscode.WebviewPanelSerializer {
  constructor(private readonly findTask: (id: string) => Promise<Task | undefined>, private readonly briefs: BriefPanels) {}

  async deserializeWebviewPanel(panel: vscode.WebviewPanel, state: unknown): Promise<void> {
    // "Loading…" at once: finding the task may load the datasets first (seconds on a large family).
    panel.webview.html = LOADING_HTML;
    const s = WebviewUiStateSchema.safeParse(state);
    const task = s.success ? await this.findTask(s.data.taskId) : undefined;
    if (!task) {
      // Say which of the two it is: the saved state unreadable, or its task id not found now.
      const why = s.success
        ? `Task ${escapeHtml(s.data.taskId)} is not in the datasets this window has configured (setting expbench.datasets); add its folder and reopen the brief from the Tasks view.`
        : 'The saved state of this brief could not be read; reopen the brief from the Tasks view.';
      panel.webview.html = `<!DOCTYPE html><html><body><p>${why}</p></body></html>`;
      return;
    }
    const existing = this.briefs.get(task.id);
    if (existing) {
      // The window's session opened its brief before VS Code restored this one. One panel per task,
      // and the restored one is where the user left it: it replaces the new one (whose editor group
      // closes when empty), unless the user has already moved to the new one.
      if (existing.panel.active) { panel.dispose(); return; }
      const sessionDir = existing.sessionDir ?? (s.success ? s.data.sessionDir : undefined);
      existing.dispose();
      this.briefs.adopt(panel, task, sessionDir);
      return;
    }
    this.briefs.adopt(panel, task, s.success ? s.data.sessionDir : undefined);
  }
}

function escapeHtml(text: string): string {
  return text.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);
}
