import * as fs from 'node:fs';
import * as vscode from 'vscode';
import { log } from '../../core/log';
import { applyRecord, foldRunSet, type RunSetView } from '../../core/runs/fold';
import { RunSetLayout } from '../../core/runs/layout';
import { readOrchestrator } from '../../core/runs/lock';
import { readRunSetName, RunSetFollower } from '../../core/runs/state';
import { boardRows } from '../../core/runs/status';
import { errorMessage } from '../../core/util/errors';
import { RunsWebviewMessageSchema, type RunsBoardMessage, type RunsHostMessage } from '../../protocol/runs';
import { webviewPage } from '../brief/page';
import { campaignBoardPart, isCampaignView, type PersonAction } from './campaign';

const logger = log('runs');

/** `viewType` of the run-set board's webview panel. */
export const RUNS_BOARD_VIEW_TYPE = 'expbench.runs.board';

/** What the board asks of the window (the Run Sets feature gives it): open a unit's session, cancel, resume; a campaign's person's link. */
export interface BoardActions {
  openUnit(dir: string, unit: string): Promise<unknown>;
  cancel(dir: string): Promise<unknown>;
  resume(dir: string): Promise<unknown>;
  /** Copies, re-issues or revokes a person's link; resolves with what was done in words (undefined: the organiser said no). */
  person(dir: string, action: PersonAction, person: string): Promise<string | undefined>;
}

/**
 * The board of one run set (command `expbench.runs.showBoard`): a webview panel (webview-ui/src/runs/)
 * showing every unit by status, phase, elapsed against its limit, tokens, cost and E/D/I/C, that
 * follows the run set's state file (`runset.jsonl`) as it grows: the file is watched and read from
 * where the last read stopped (src/core/runs/state.ts `RunSetFollower`), and each new record folds
 * into the board (`applyRecord`), so a long run is never read again from the start. A row opens the
 * unit's session in the trajectory viewer; Cancel and Resume run `runs cancel` / `runs resume`.
 * A campaign's board (its spec has `baseline`) has people as rows instead: each person's sessions
 * read from their session folders on every read (the 2 s tick follows their clocks), with per-person
 * Copy Link, Re-issue and Revoke (docs/campaigns.md).
 */
export class RunSetBoard implements vscode.Disposable {
  readonly layout: RunSetLayout;
  private panel: vscode.WebviewPanel | undefined;
  private view: RunSetView | undefined;
  private follower: RunSetFollower;
  private watcher: fs.FSWatcher | undefined;
  private timer: NodeJS.Timeout | undefined;
  private reading: Promise<void> | undefined;
  private again = false;
  private readonly posts = new vscode.EventEmitter<RunsBoardMessage>();
  /** Fires after each board posted to the webview (tests wait on it). */
  readonly onDidPost = this.posts.event;
  /** The last board posted (tests). */
  posted: RunsBoardMessage | undefined;

  constructor(private readonly extensionUri: vscode.Uri, dir: string, private readonly actions: BoardActions, private readonly onClosed: () => void) {
    this.layout = new RunSetLayout(dir);
    this.follower = new RunSetFollower(this.layout.state);
  }

  /** Shows the panel (creates it, or reveals the one open) and starts following the state. */
  show(): vscode.WebviewPanel {
    if (this.panel) { this.panel.reveal(); return this.panel; }
    // The title is known before the panel exists: one set later reaches the tab but can miss the
    // webview's frame (VS Code's set-title goes to the active frame only, lost while it loads).
    const name = readRunSetName(this.layout.state);
    const panel = vscode.window.createWebviewPanel(RUNS_BOARD_VIEW_TYPE, name === undefined ? 'Run Set' : `Run Set: ${name}`, vscode.ViewColumn.Active, {
      enableScripts: true, retainContextWhenHidden: true,
      localResourceRoots: [vscode.Uri.joinPath(this.extensionUri, 'dist', 'webview')],
    });
    this.panel = panel;
    panel.webview.html = this.html(panel.webview);
    const sub = panel.webview.onDidReceiveMessage((m: unknown) => void this.receive(m));
    panel.onDidDispose(() => { sub.dispose(); this.panel = undefined; this.stopFollowing(); this.onClosed(); });
    this.follow();
    return panel;
  }

  /** Handles one message of the webview (public for tests: the same path the webview's messages take). */
  async receive(raw: unknown): Promise<void> {
    const parsed = RunsWebviewMessageSchema.safeParse(raw);
    if (!parsed.success) { logger.warn(`dropped a malformed board message: ${parsed.error.message.slice(0, 200)}`); return; }
    const m = parsed.data;
    try {
      if (m.type === 'ready' || m.type === 'refresh') {
        if (m.type === 'refresh') { this.follower = new RunSetFollower(this.layout.state); this.view = undefined; }
        await this.read();
      } else if (m.type === 'open') await this.actions.openUnit(this.layout.root, m.unit);
      else if (m.type === 'person') {
        const done = await this.actions.person(this.layout.root, m.action, m.person);
        if (done) await this.post({ type: 'done', message: done });
        await this.read();
      } else {
        await this.post({ type: 'busy', what: m.type });
        try {
          await (m.type === 'cancel' ? this.actions.cancel(this.layout.root) : this.actions.resume(this.layout.root));
        } finally {
          await this.post({ type: 'busy', what: null });
        }
        await this.read();
      }
    } catch (e) {
      logger.warn(`board ${m.type} failed: ${errorMessage(e)}`);
      await this.post({ type: 'error', message: errorMessage(e) });
    }
  }

  /** Reads what the state file gained since the last read and posts the board. */
  read(): Promise<void> {
    if (this.reading) { this.again = true; return this.reading; }
    this.reading = (async () => {
      do {
        this.again = false;
        await this.readOnce().catch((e) => logger.warn(`reading ${this.layout.state}: ${errorMessage(e)}`));
      } while (this.again);
    })().finally(() => { this.reading = undefined; });
    return this.reading;
  }

  private async readOnce(): Promise<void> {
    const records = await this.follower.next();
    if (records === undefined) { await this.post({ type: 'error', message: `${this.layout.root} holds no run set (no runset.jsonl)` }); return; }
    if (!this.view) this.view = foldRunSet(records);
    else for (const r of records) applyRecord(this.view, r);
    if (!this.view) return;
    const orch = await readOrchestrator(this.layout.orchestrator);
    const v = this.view;
    const board: RunsBoardMessage = {
      type: 'board', dir: this.layout.root, id: v.id, name: v.name, counts: { ...v.counts },
      // orchestrator.json while one runs; else the last one the state recorded (ended).
      orchestrator: orch ? { pid: orch.record.pid, command: orch.record.command, since: orch.record.since, alive: orch.alive ?? null }
        : v.orchestrator ? { pid: Number(v.orchestrator.owner.split('/')[1]) || 0, command: v.orchestrator.command, since: v.orchestrator.at, alive: false } : null,
      cancelled: v.cancelled, rows: boardRows(v, this.layout), invalidLines: this.follower.invalid.length, at: new Date().toISOString(),
      // a campaign: people as rows, read from each session (docs/campaigns.md "The board")
      ...(isCampaignView(v) ? { campaign: await campaignBoardPart(this.layout.root, v) } : {}),
    };
    if (this.panel) this.panel.title = `Run Set: ${v.name}`;
    this.posted = board;
    await this.post(board);
    this.posts.fire(board);
  }

  private async post(m: RunsHostMessage): Promise<void> {
    if (this.panel) await this.panel.webview.postMessage(m);
  }

  /** Watches the run set's folder (the state file and orchestrator.json change there); a 2 s tick also re-reads (elapsed times move, watchers can miss). */
  private follow(): void {
    try {
      this.watcher = fs.watch(this.layout.root, (_e, name) => { if (name === 'runset.jsonl' || name === 'orchestrator.json' || name === 'campaign.jsonl') void this.read(); });
      this.watcher.on('error', () => undefined);
    } catch (e) {
      logger.debug(`cannot watch ${this.layout.root}: ${errorMessage(e)}; polling only`);
    }
    this.timer = setInterval(() => void this.read(), 2000);
  }

  private stopFollowing(): void {
    this.watcher?.close();
    this.watcher = undefined;
    if (this.timer) clearInterval(this.timer);
    this.timer = undefined;
  }

  private html(webview: vscode.Webview): string {
    return webviewPage(webview, this.extensionUri, { bundle: 'runs', title: 'Run Set', rootClass: 'runs', loading: 'Reading the run set…' });
  }

  dispose(): void {
    this.stopFollowing();
    this.panel?.dispose();
    this.posts.dispose();
  }
}
