import * as path from 'node:path';
import * as vscode from 'vscode';
import { readJudgeRecord } from '../../../core/judge/session';
import { SessionLayout } from '../../../core/layout';
import { log } from '../../../core/log';
import { errorMessage } from '../../../core/util/errors';
import { rawSource } from '../../../core/viewer/rawSource';
import type { Timeline } from '../../../core/viewer/timeline';
import { TrajWebviewMessageSchema, type TrajHostMessage, type TrajJudgement, type TrajPin, type TrajWebviewMessage } from '../../../protocol/trajectory';
import { reviewVerdict } from '../../review/gapsReview';
import { DETAIL_CHARS, FULL_CHARS, header, sessionDirOf, stepDetail, stepRef, viewRows } from './detail';
import type { TrajectoryDocument } from './document';
import type { ViewerExtras } from './extras';
import { shownPath } from '../../shownPath';

const logger = log('trajectory-viewer');

/** What the webview last said it shows (the `rendered` message), for tests and Go to Step. */
export type RenderedState = Extract<TrajWebviewMessage, { type: 'rendered' }>;

/**
 * The host side of one trajectory viewer webview: answers the webview's queries (filters and
 * search over the host's {@link Timeline}), pages of rows, a step's detail and raw source, runs
 * the detail pane's commands and stores review judgements. Holds the steps; the webview never
 * gets them all.
 */
export class ViewerPanel implements vscode.Disposable {
  private key = 0;
  private seq = 0;
  private view: number[] = [];
  private search = '';
  private ready = false;
  private pending?: number;
  private pins = new Map<number, TrajPin[]>();
  private judgements = new Map<number, TrajJudgement[]>();
  private docs = new Map<string, Promise<unknown>>();
  private readonly disposables: vscode.Disposable[] = [];
  private readonly renderedEmitter = new vscode.EventEmitter<RenderedState>();
  /** Fires on each `rendered` message of the webview. */
  readonly onDidRender = this.renderedEmitter.event;
  rendered?: RenderedState;

  constructor(readonly doc: TrajectoryDocument, readonly panel: vscode.WebviewPanel, private readonly extras: ViewerExtras, initialStep?: number) {
    this.pending = initialStep;
    this.disposables.push(
      panel.webview.onDidReceiveMessage((m: unknown) => void this.receive(m)),
      doc.onDidReload(() => void this.postHeader()),
      this.renderedEmitter,
    );
  }

  get file(): string { return this.doc.file; }

  /** The trajectory shown (undefined when the file holds none). */
  get trajectory() { return this.doc.trajectories[this.key]; }

  private get timeline(): Timeline | undefined {
    return this.doc.trajectories[this.key] ? this.doc.timeline(this.key) : undefined;
  }

  /** Shows step `step` (0-based); before the webview is ready, once it is. */
  select(step: number): void {
    if (!this.ready || this.doc.opening) { this.pending = step; return; }
    this.post({ type: 'select', step });
  }

  private post(m: TrajHostMessage): void {
    void this.panel.webview.postMessage(m);
  }

  private async receive(raw: unknown): Promise<void> {
    const parsed = TrajWebviewMessageSchema.safeParse(raw);
    if (!parsed.success) { logger.warn(`dropped a malformed viewer message: ${parsed.error.message.slice(0, 200)}`); return; }
    const m = parsed.data;
    try {
      await this.handle(m);
    } catch (e) {
      logger.warn(`${this.file}: ${m.type} failed: ${errorMessage(e)}`);
      this.post({ type: 'error', message: errorMessage(e) });
    }
  }

  private async handle(m: TrajWebviewMessage): Promise<void> {
    const tl = this.timeline;
    switch (m.type) {
      case 'ready':
        this.ready = true;
        await this.postHeader();
        return;
      case 'sample':
        this.key = Math.max(0, Math.min(this.doc.trajectories.length - 1, Number(m.key) || 0));
        await this.postHeader();
        return;
      case 'query': {
        this.seq = m.seq;
        this.search = m.search;
        if (!tl) { this.view = []; this.post({ type: 'view', seq: m.seq, total: 0, hits: [], occurrences: 0, searchMs: 0, bands: [] }); return; }
        this.view = tl.filter(m.filter, new Set(this.pins.keys()));
        const s = tl.search(m.search, this.view);
        this.post({ type: 'view', seq: m.seq, total: this.view.length, hits: s.positions, occurrences: s.occurrences, searchMs: s.ms, bands: tl.bands(this.view) });
        return;
      }
      case 'rows':
        if (!tl || m.seq !== this.seq) return;
        this.post({ type: 'rows', seq: m.seq, start: m.start, rows: viewRows(tl, this.view, m.start, m.count, this.pins, new Map([...this.judgements].map(([k, v]) => [k, v.length]))) });
        return;
      case 'locate': {
        if (m.seq !== this.seq) return;
        this.post({ type: 'reveal', seq: m.seq, step: m.step, position: position(this.view, m.step) });
        return;
      }
      case 'detail':
        if (!tl || !tl.rows[m.step]) return;
        this.post({ type: 'detail', detail: stepDetail(this.file, tl, m.step, {
          limit: m.full ? FULL_CHARS : DETAIL_CHARS, search: m.search ?? this.search,
          pins: this.pins.get(m.step) ?? [], judgements: this.judgements.get(m.step) ?? [], prices: this.extras.prices(), shownFile: shownPath,
        }) });
        return;
      case 'prefetch':
        if (!tl) return;
        this.post({ type: 'details', search: m.search, details: m.steps.filter((s) => tl.rows[s]).map((s) => stepDetail(this.file, tl, s, {
          limit: DETAIL_CHARS, search: m.search, pins: this.pins.get(s) ?? [], judgements: this.judgements.get(s) ?? [], prices: this.extras.prices(), shownFile: shownPath,
        })) });
        return;
      case 'raw': {
        const s = tl?.trajectory.steps[m.step];
        if (!s) return;
        const r = await rawSource(s.source, (f) => this.wholeDoc(f));
        this.post({ type: 'raw', step: m.step, text: r.text, cut: r.cut, where: r.where.replace(s.source.file, shownPath(s.source.file)) });
        return;
      }
      case 'run':
        await this.run(m.command, m.step, m.item);
        return;
      case 'review': {
        const t = this.trajectory;
        if (!t) return;
        const stored = await this.extras.review(this.file, t, m.step, m.kind, m.value, m.reason);
        this.judgements = await this.extras.judgements(this.file, t);
        this.post({ type: 'notice', message: `Stored: ${stored}` });
        await this.handle({ type: 'detail', step: m.step });
        return;
      }
      case 'rendered':
        this.rendered = m;
        this.renderedEmitter.fire(m);
        return;
    }
  }

  private async run(command: Extract<TrajWebviewMessage, { type: 'run' }>['command'], step: number, item?: string): Promise<void> {
    const uri = this.file;
    switch (command) {
      case 'copyRef':
        await vscode.env.clipboard.writeText(stepRef(this.file, step));
        this.post({ type: 'notice', message: `Copied ${path.basename(this.file)}#step=${step}` });
        return;
      case 'copyLink':
        await vscode.env.clipboard.writeText(this.extras.link(this.doc.uri, step));
        this.post({ type: 'notice', message: 'Copied a link to this step' });
        return;
      case 'goToStep':
        await vscode.commands.executeCommand('expbench.trajectory.goToStep');
        return;
      case 'compareSteps': {
        const other = await vscode.window.showInputBox({ prompt: `Compare step ${step} with step… (0 to ${(this.trajectory?.steps.length ?? 1) - 1})`, validateInput: (v) => (/^\d+$/.test(v.trim()) ? undefined : 'a step number') });
        if (other === undefined) return;
        await vscode.commands.executeCommand('expbench.trajectory.compareSteps', { uri, step, other: Number(other) });
        return;
      }
      case 'revealItem':
        await vscode.commands.executeCommand('expbench.gaps.revealItem', { sessionDir: sessionDirOf(this.file), item });
        return;
      case 'acceptVerdict':
      case 'flipVerdict': {
        const sessionDir = sessionDirOf(this.file);
        if (!sessionDir || !item) { this.post({ type: 'notice', message: 'Verdicts can be reviewed on a session\'s own log (private/events.jsonl)' }); return; }
        const record = await readJudgeRecord(path.join(new SessionLayout(sessionDir).judge, 'latest.json'));
        if (!record) { this.post({ type: 'notice', message: 'This session has no judgement (private/judge/latest.json)' }); return; }
        const j = await reviewVerdict(record, sessionDir, item, command === 'acceptVerdict');
        if (!j) return;
        const v = j.value as { verdict: string; judged: string };
        this.post({ type: 'notice', message: `${command === 'acceptVerdict' ? 'Accepted' : 'Flipped'} ${item}: ${v.judged}${v.verdict !== v.judged ? ` → ${v.verdict}` : ''} (${j.by})` });
        await this.postHeader();
        return;
      }
      default:
        await vscode.commands.executeCommand(`expbench.trajectory.${command}`, { uri, step });
    }
  }

  /** Posts the header of the trajectory shown (after `ready`, a reload, another sample). */
  async postHeader(): Promise<void> {
    // nothing read yet: the document fires onDidReload when there is
    if (!this.ready || this.doc.opening) return;
    const t = this.trajectory;
    if (t) {
      this.pins = await this.extras.pins(this.file, t).catch((e) => { logger.warn(`no pins for ${this.file}: ${errorMessage(e)}`); return new Map<number, TrajPin[]>(); });
      this.judgements = await this.extras.judgements(this.file, t).catch((e) => { logger.warn(`no judgements for ${this.file}: ${errorMessage(e)}`); return new Map<number, TrajJudgement[]>(); });
    }
    const h = header(this.file, path.basename(this.file), this.doc.trajectories, this.key, this.timeline, this.doc.fileProblems, {
      live: this.doc.live, loading: this.doc.partial, updatedAt: this.doc.updatedAt, failure: this.doc.failure, can: await this.extras.can(this.file, t), pinned: this.pins.size,
      prices: this.extras.prices(),
    });
    const select = this.pending !== undefined && (!this.doc.partial || this.pending < (t?.steps.length ?? 0)) ? this.pending : undefined;
    if (select !== undefined) this.pending = undefined;
    this.post({ type: 'loaded', header: h, ...(select !== undefined ? { select } : {}) });
  }

  private wholeDoc(file: string): Promise<unknown> {
    let d = this.docs.get(file);
    if (!d) {
      d = import('node:fs').then((fs) => fs.promises.readFile(file, 'utf8')).then((t) => JSON.parse(t.replace(/^\uFEFF/, '')) as unknown);
      this.docs.set(file, d);
      d.catch(() => this.docs.delete(file));
    }
    return d;
  }

  dispose(): void {
    for (const d of this.disposables) d.dispose();
  }
}

/** Position of `step` in the ascending list `view`, or -1. */
function position(view: readonly number[], step: number): number {
  let lo = 0; let hi = view.length - 1;
  while (lo <= hi) {
    const mid = (lo + hi) >> 1;
    if (view[mid] === step) return mid;
    if (view[mid] < step) lo = mid + 1; else hi = mid - 1;
  }
  return -1;
}
