import * as path from 'node:path';
import * as vscode from 'vscode';
import { collectFigures } from '../../core/figures/collect';
import type { FigureSet } from '../../core/figures/model';
import { writeFigures } from '../../core/figures/write';
import { log } from '../../core/log';
import { POLICIES, policyByName } from '../../core/metrics/policies';
import type { Task } from '../../core/tasks/types';
import { errorMessage } from '../../core/util/errors';
import { ResultsWebviewMessageSchema, type ResultsHostMessage, type ResultsMessage, type ResultsStatus, type ResultsWebviewMessage } from '../../protocol/results';
import { RECHECK_MS, Recheck } from '../follow/recheck';
import { resultsMessage } from './payload';
import { sourceFor, type ResultsSource } from './source';
import { webviewPage } from '../brief/page';

const logger = log('results');

/** `viewType` of the Results view's webview panel. */
export const RESULTS_VIEW_TYPE = 'expbench.results';
/** workspaceState key of the folder the view follows (a path; absent: `expbench.sessionsDir`). */
export const RESULTS_SOURCE_KEY = 'expbench.results.source';

export interface ResultsDeps {
  /** The loaded datasets (task types, conferences). */
  tasks: () => Promise<readonly Task[]>;
  /** The folder followed when the user chose none (`expbench.sessionsDir`). */
  defaultDir: () => string;
  state: vscode.Memento;
  /** Opens runs: one in the viewer, several in Triage (src/extension/results/openRuns.ts). */
  openRuns: (opens: string[], label: string) => Promise<void>;
  /** Quiet time after a change on disk before the figures are computed again, ms. */
  debounceMs?: number;
  /** Interval of the re-check behind the watcher, ms (default RECHECK_MS of src/extension/follow/recheck.ts). */
  recheckMs?: number;
  /** false: no VS Code file watcher, the re-check alone (tests: a watcher that gives no event). */
  watch?: boolean;
}

/**
 * The Results view (command "EXP-Bench: Show Results"): the figures of src/core/figures over the
 * folder or run set it follows (docs/results.md), drawn by webview-ui/src/results/ with Chart.js.
 * Computed again when the source changes on disk (a session judged, a unit finished: VS Code's
 * file watcher, and a stat-only re-check every `recheckMs` while the panel is visible, since the
 * watcher of a folder outside the workspace can miss events), when the policy or grouping
 * changes, and on Refresh; a bar, segment or cell opens its runs.
 */
export class ResultsPanel implements vscode.Disposable {
  private panel: vscode.WebviewPanel | undefined;
  private source: ResultsSource | undefined;
  private sourceSub: vscode.Disposable | undefined;
  private recheck: Recheck | undefined;
  private policy = 'paper-likely';
  private by: 'folder' | 'actor' = 'folder';
  private computing: Promise<void> | undefined;
  private again = false;
  /** The last figures computed, with the inputs they came from (Export Figures… writes these). */
  last: { set: FigureSet; inputs: string[] } | undefined;
  /** The last message posted (tests). */
  posted: ResultsMessage | ResultsStatus | undefined;
  private readonly postedEmitter = new vscode.EventEmitter<ResultsHostMessage>();
  /** Fires after each message posted to the webview (tests wait on it). */
  readonly onDidPost = this.postedEmitter.event;

  constructor(private readonly extensionUri: vscode.Uri, private readonly deps: ResultsDeps) {}

  /** The folder followed now. */
  sourceDir(): string {
    return this.deps.state.get<string>(RESULTS_SOURCE_KEY) ?? this.deps.defaultDir();
  }

  /** Shows the panel (creates it, or reveals the one open) and computes the figures. */
  show(): vscode.WebviewPanel {
    if (this.panel) { this.panel.reveal(); return this.panel; }
    const panel = vscode.window.createWebviewPanel(RESULTS_VIEW_TYPE, 'Results', vscode.ViewColumn.Active, {
      enableScripts: true, retainContextWhenHidden: true,
      localResourceRoots: [vscode.Uri.joinPath(this.extensionUri, 'dist', 'webview')],
    });
    this.panel = panel;
    panel.webview.html = this.html(panel.webview);
    const sub = panel.webview.onDidReceiveMessage((m: unknown) => void this.receive(m));
    this.recheck = new Recheck({
      everyMs: this.deps.recheckMs ?? RECHECK_MS,
      active: () => this.panel?.visible === true && this.source !== undefined && !this.computing,
      fingerprint: async () => (this.source ? this.source.fingerprint() : ''),
      changed: () => { logger.info(`results: ${this.sourceDir()} changed on disk (seen by the re-check)`); void this.refresh(); },
      checked: (at) => void this.post({ type: 'checked', at: at.toISOString(), everyS: Math.round((this.deps.recheckMs ?? RECHECK_MS) / 100) / 10 }),
    });
    panel.onDidDispose(() => { sub.dispose(); this.recheck?.dispose(); this.recheck = undefined; this.panel = undefined; this.unfollow(); });
    return panel;
  }

  /** Follows `dir` from now on (remembered for this workspace); undefined: back to `expbench.sessionsDir`. */
  async follow(dir: string | undefined): Promise<void> {
    await this.deps.state.update(RESULTS_SOURCE_KEY, dir === undefined ? undefined : path.resolve(dir));
    this.unfollow();
    await this.refresh();
  }

  /** The default folder changed (the setting): follow it again when no folder was chosen. */
  async defaultChanged(): Promise<void> {
    if (this.deps.state.get<string>(RESULTS_SOURCE_KEY) === undefined) { this.unfollow(); await this.refresh(); }
  }

  private unfollow(): void {
    this.sourceSub?.dispose();
    this.source?.dispose();
    this.source = undefined;
    this.sourceSub = undefined;
  }

  private async currentSource(): Promise<ResultsSource> {
    if (!this.source) {
      this.source = await sourceFor(this.sourceDir(), { debounceMs: this.deps.debounceMs, watch: this.deps.watch });
      this.sourceSub = this.source.onDidChange(() => void this.refresh());
    }
    return this.source;
  }

  /** Computes the figures again and posts them (a call while one runs queues one more run). */
  async refresh(): Promise<void> {
    if (this.computing) { this.again = true; return this.computing; }
    this.computing = (async () => {
      do {
        this.again = false;
        await this.compute();
      } while (this.again);
    })().finally(() => { this.computing = undefined; });
    return this.computing;
  }

  private async compute(): Promise<void> {
    const base = { policy: this.policy, policies: Object.keys(POLICIES), by: this.by, sourceDir: this.sourceDir() };
    let label = path.basename(base.sourceDir) || base.sourceDir;
    try {
      const source = await this.currentSource();
      await this.post({ type: 'status', source: source.label, text: 'Reading the runs…', busy: true, ...base });
      // the baseline of the re-check: what changes from here on, during this read too, is read again
      await this.recheck?.reset();
      const { inputs, note } = await source.inputs();
      label = note ? `${source.label} · ${note}` : source.label;
      if (inputs.length === 0) { this.last = undefined; await this.post({ type: 'status', source: label, text: 'No finished unit yet: the figures appear as units finish.', busy: false, ...base }); return; }
      const r = await collectFigures({ inputs, policy: policyByName(this.policy), by: this.by, tasks: this.deps.tasks });
      if (!r.set) {
        this.last = undefined;
        await this.post({ type: 'status', source: label, text: `No judged run under ${inputs.length === 1 ? inputs[0] : `${inputs.length} folders`} yet (a session counts once private/judge/latest.json is written; harness judge files count as they are). Choose another folder, or judge a session.`, busy: false, ...base });
        return;
      }
      this.last = { set: r.set, inputs };
      await this.post(resultsMessage(r.set, { source: label, sourceDir: base.sourceDir, policies: base.policies, by: this.by, skipped: r.skipped }));
    } catch (e) {
      logger.warn(`results: ${errorMessage(e)}`);
      this.last = undefined;
      await this.post({ type: 'status', source: label, text: `Cannot read the results: ${errorMessage(e)}`, busy: false, ...base });
    }
  }

  private async post(m: ResultsHostMessage): Promise<void> {
    if (m.type !== 'checked') this.posted = m;
    if (this.panel) await this.panel.webview.postMessage(m);
    this.postedEmitter.fire(m);
  }

  /** Handles one message of the webview (public for tests: the path the webview's messages take). */
  async receive(raw: unknown): Promise<void> {
    const parsed = ResultsWebviewMessageSchema.safeParse(raw);
    if (!parsed.success) { logger.warn(`dropped a malformed results message: ${parsed.error.message.slice(0, 200)}`); return; }
    const m: ResultsWebviewMessage = parsed.data;
    try {
      switch (m.type) {
        case 'ready': case 'refresh': await this.refresh(); break;
        case 'options':
          if (m.policy) this.policy = policyByName(m.policy).name;
          if (m.by) this.by = m.by;
          await this.refresh();
          break;
        case 'export': await this.exportFigures(); break;
        case 'chooseSource': await this.chooseSource(); break;
        case 'open': await this.open(m.runs, m.label); break;
      }
    } catch (e) {
      logger.warn(`results ${m.type} failed: ${errorMessage(e)}`);
      void vscode.window.showErrorMessage(`EXP-Bench: ${errorMessage(e)}`);
    }
  }

  /** Opens the runs of a datum (their keys): one in the trajectory viewer, several in Triage. */
  async open(keys: string[], label: string): Promise<void> {
    const runs = this.last?.set.runs ?? {};
    const opens = [...new Set(keys.map((k) => runs[k]?.open).filter((o): o is string => !!o))];
    if (opens.length === 0) throw new Error(`none of the ${keys.length} runs of ${label} is among the results shown`);
    await this.deps.openRuns(opens, label);
  }

  /** Asks for a folder (sessions, harness judge files or a run set) and follows it. */
  async chooseSource(): Promise<string | undefined> {
    const picked = await vscode.window.showOpenDialog({ title: 'Results: follow a folder of sessions, harness judge files or a run set', canSelectFolders: true, canSelectFiles: false, canSelectMany: false, openLabel: 'Follow', defaultUri: vscode.Uri.file(this.sourceDir()) });
    if (!picked?.[0]) return undefined;
    await this.follow(picked[0].fsPath);
    return picked[0].fsPath;
  }

  /**
   * "Export Figures…": writes the files `expbench report --figures` writes (src/core/figures/write.ts)
   * for the figures shown, into `dir` or a folder the user picks; run keys relative to it when under it.
   * @returns the files written; undefined when cancelled or when there is nothing to export (said)
   */
  async exportFigures(dir?: string): Promise<string[] | undefined> {
    if (!this.last) await this.refresh();
    const last = this.last;
    if (!last) { void vscode.window.showWarningMessage('EXP-Bench: no figures to export yet (no judged run in the folder the Results view follows).'); return undefined; }
    const out = dir ?? (await vscode.window.showOpenDialog({ title: 'Export Figures: choose a folder', canSelectFolders: true, canSelectFiles: false, canSelectMany: false, openLabel: 'Export Here' }))?.[0]?.fsPath;
    if (!out) return undefined;
    const files = await writeFigures(out, last.set, { inputs: last.inputs, keysRelativeTo: out });
    void vscode.window.showInformationMessage(`EXP-Bench: wrote ${files.length} files to ${out} (table.csv, SVG and Vega-Lite per figure, report.html).`);
    return files;
  }

  private html(webview: vscode.Webview): string {
    return webviewPage(webview, this.extensionUri, { bundle: 'results', title: 'Results', rootClass: 'results', loading: 'Reading the runs…' });
  }

  dispose(): void {
    this.panel?.dispose();
    this.unfollow();
    this.postedEmitter.dispose();
  }
}
