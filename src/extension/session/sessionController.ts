import * as path from 'node:path';
import * as vscode from 'vscode';
import { log } from '../../core/log';
import { errorMessage } from '../../core/util/errors';
import { claimsStatus } from '../../core/verify/sessionClaims';
import { formatWorking } from '../../core/session/clock';
import { SessionLayout } from '../../core/layout';
import type { SessionHandle, SessionService } from '../../core/flows/sessionService';
import type { SessionState } from '../../core/session/state';
import type { Task } from '../../core/tasks/types';
import { makePatch, type WorkspacePatch } from '../../core/workspace/patch';
import { patchSummary } from './patchSummary';
import type { PhasesAction, PhasesView } from '../../protocol/messages';
import type { BriefPanels } from '../brief/briefPanel';
import { type SubmitHooks, submitFromEditor, giveUpFromEditor } from './submitFlow';
import { setting } from '../settings';
import { WorkContainerManager } from './workContainer';
import { exec } from '../../core/sandbox/exec';

const logger = log('session');

/**
 * Drives one opened task session in this window: the phase stepper in the brief webview
 * (section `phases`), the clock, notes, script runs in the work container, the live patch
 * summary and the claims check, submit and give up. Holds the window's handle of the host-side
 * session service (state on disk within a second of every change) and releases it on dispose
 * (window reload or close).
 */
export class SessionController implements vscode.Disposable {
  private readonly disposables: vscode.Disposable[] = [];
  private patch: PhasesView['patch'] = null;
  private patchSeq = 0;
  private claims: PhasesView['claims'] = [];
  private running: AbortController | undefined;
  private results: PhasesView['results'] = [];
  private pushTimer: NodeJS.Timeout | undefined;

  private constructor(readonly session: SessionHandle, readonly task: Task, readonly container: WorkContainerManager,
    private readonly briefs: BriefPanels, private readonly hooks: SubmitHooks) {
    this.disposables.push(
      briefs.sections.handle('phases', (call) => this.handle(call)),
      briefs.sections.provide((panel) => { if (panel.task.id === task.id) this.push(); }),
      session.onDidChange(() => this.schedulePush()),
      container.onDidChange(() => this.push()),
      vscode.workspace.onDidSaveTextDocument(() => void this.refreshPatch()),
      session.onDidLose((by) => {
        logger.warn(`session ${session.layout.root} taken over by ${by.client} (pid ${by.pid}); this window stops writing it`);
        void vscode.window.showWarningMessage(`EXP-Bench: this task session was opened ${by.client === 'vscode' ? 'in another window' : `by the ${by.client}`} (${by.openedAt}); changes made here are no longer saved. Reload this window to continue here.`);
      }),
    );
    const tick = setInterval(() => { if (session.clockStatus === 'running') this.push(); }, 1000);
    this.disposables.push({ dispose: () => clearInterval(tick) });
  }

  /** Opens the session at `root` (restoring its state exactly) and shows its brief with the stepper. */
  static async open(service: SessionService, root: string, task: Task, briefs: BriefPanels, image: string, hooks: SubmitHooks): Promise<SessionController> {
    const layout = new SessionLayout(root);
    const budgetMin = setting('session.budgetMinutes');
    const session = await service.open(root, { client: 'vscode', taskId: task.id, budgetMs: budgetMin > 0 ? budgetMin * 60_000 : null });
    const container = new WorkContainerManager(layout, task.id, image);
    const c = new SessionController(session, task, container, briefs, hooks);
    await c.refreshPatch(false);
    await c.refreshClaims(false);
    c.results = await hooks.loadResults(layout);
    // At start: without taking the focus (a quick pick the user opened meanwhile stays open), and a
    // brief VS Code restored after a reload stays where and as it is.
    c.showBrief({ atStart: true });
    return c;
  }

  /** Shows the brief with the stepper beside the editor. */
  showBrief(o: { atStart?: boolean } = {}): void {
    this.briefs.show(this.task, {
      column: vscode.ViewColumn.Beside, sessionDir: this.layout.root,
      ...(o.atStart ? { preserveFocus: true, reveal: false } : {}),
    });
    this.push();
  }

  get layout(): SessionLayout {
    return this.session.layout;
  }

  private schedulePush(): void {
    if (this.pushTimer) return;
    this.pushTimer = setTimeout(() => { this.pushTimer = undefined; this.push(); }, 50);
  }

  /** Sends the current view to the task's brief panel (if open). */
  push(): void {
    this.briefs.post(this.task.id, 'phases', this.view());
  }

  view(): PhasesView {
    const s: SessionState = this.session.state;
    const working = this.session.workingMs();
    return {
      kind: 'state',
      phase: s.phase,
      finished: s.submitted ? 'submitted' : s.gaveUp ? 'gaveUp' : null,
      clock: {
        status: this.session.clockStatus, workingMs: working, budgetMs: s.clock.budgetMs, byActor: this.session.workingByActor(),
        text: `${formatWorking(working)}${s.clock.budgetMs ? ` / ${formatWorking(s.clock.budgetMs)}` : ''}${this.session.clockStatus === 'running' ? '' : ' (paused)'}`,
      },
      design: s.design,
      conclusion: s.conclusion,
      notes: s.notes,
      runs: s.runs.map(({ id, startedAt, exitCode, durationMs, error }) => ({ id, startedAt, exitCode, durationMs, ...(error ? { error } : {}) })),
      running: this.running !== undefined,
      container: this.container.state,
      patch: this.patch,
      claims: this.claims,
      results: this.results,
    };
  }

  /**
   * Does what the stepper asks. After Submit (or Give up) the design, the conclusion and the notes
   * are frozen: the session refuses their changes (`SESSION_INVALID`, the error goes back to the
   * webview) and the view is sent again from state.json, so that it never drifts from it.
   */
  private async handle(a: PhasesAction): Promise<void> {
    try {
      await this.act(a);
    } finally {
      this.push();
    }
  }

  private async act(a: PhasesAction): Promise<void> {
    switch (a.action) {
      case 'setPhase': await this.session.setPhase(a.payload.phase); break;
      case 'setDesign': this.session.setDesign(a.payload); break;
      case 'setConclusion':
        this.session.setConclusion(a.payload.text);
        await this.refreshClaims();
        break;
      case 'addNote': await this.session.addNote(a.payload.text); break;
      case 'clock':
        if (a.payload.op === 'start') await this.session.startClock();
        else if (a.payload.op === 'pause') await this.session.pauseClock(a.payload.reason);
        else await this.session.resumeClock();
        break;
      case 'runScript': await this.runScript(); break;
      case 'openScript': await this.openScript(); break;
      case 'openPatch': await vscode.commands.executeCommand('expbench.showPatch'); break;
      case 'openTerminal': await vscode.commands.executeCommand('expbench.openContainerTerminal'); break;
      case 'refreshPatch': await this.refreshPatch(); break;
      case 'submit': await submitFromEditor(this, this.hooks); break;
      case 'giveUp': await giveUpFromEditor(this); break;
    }
  }

  /** Sets the results rows shown under Submit (verifier and judge summaries). */
  setResults(rows: PhasesView['results']): void {
    this.results = rows;
    this.push();
  }

  /**
   * Recomputes the live patch summary (the submission's own rule: {@link patchSummary}). Called on
   * open, on saves, on every batch of changes on disk (the workspace watcher) and on Refresh; when
   * calls overlap, the summary of the latest call wins.
   */
  async refreshPatch(push = true): Promise<WorkspacePatch | undefined> {
    const seq = ++this.patchSeq;
    try {
      const p = await makePatch(this.layout.workspace);
      if (seq === this.patchSeq) this.patch = patchSummary(p);
      if (push) this.push();
      return p;
    } catch (e) {
      if (seq === this.patchSeq) this.patch = { files: [], additions: 0, deletions: 0, ignored: 0, error: errorMessage(e) };
      if (push) this.push();
      return undefined;
    }
  }

  private async refreshClaims(push = true): Promise<void> {
    try {
      const r = await claimsStatus(this.layout, this.session.state.conclusion);
      this.claims = r.claims.map((c) => ({
        text: c.text, found: c.found, where: c.where?.[0] ? `${path.basename(String(c.where[0].source))}:${c.where[0].line}` : undefined,
        ...(c.derived ? { derived: `${c.derived.op} of ${c.derived.sources.map((s) => `${s.text} (${path.basename(s.source)}:${s.line})`).join(' and ')}` } : {}),
      }));
    } catch (e) {
      logger.warn(`claims check failed: ${errorMessage(e)}`);
    }
    if (push) this.push();
  }

  private async openScript(): Promise<void> {
    const uri = vscode.Uri.file(this.layout.script);
    try {
      await vscode.workspace.fs.stat(uri);
    } catch {
      await vscode.workspace.fs.writeFile(uri, Buffer.from('#!/usr/bin/env bash\n# Reproduces the whole experiment (EXP-Bench: reproduce_exp_bench.sh).\nset -euo pipefail\ncd "$(dirname "$0")"\n\n'));
    }
    await vscode.window.showTextDocument(uri, { viewColumn: vscode.ViewColumn.One });
  }

  /** Runs reproduce_exp_bench.sh in the work container, streaming the log into the Execution phase. */
  async runScript(): Promise<void> {
    if (this.running) return;
    await vscode.workspace.saveAll(false);
    const ac = (this.running = new AbortController());
    this.push();
    try {
      const container = await this.container.container();
      let runId = '';
      const rec = await this.session.runScript({
        signal: ac.signal,
        exec: async (req) => {
          const r = await exec(container, {
            cmd: req.command, workdir: req.cwd, signal: req.signal,
            onStdout: (b) => req.onOutput(b.toString('utf8'), 'stdout'),
            onStderr: (b) => req.onOutput(b.toString('utf8'), 'stderr'),
          });
          return { exitCode: r.aborted ? null : r.exitCode };
        },
        onOutput: (chunk) => this.briefs.post(this.task.id, 'phases', { kind: 'log', runId: runId || 'current', text: chunk }),
      });
      runId = rec.id;
      void vscode.window.setStatusBarMessage(`EXP-Bench: reproduce_exp_bench.sh ${rec.exitCode === 0 ? 'succeeded' : `failed (${rec.exitCode ?? rec.error})`}`, 5000);
    } catch (e) {
      const msg = errorMessage(e);
      void vscode.window.showErrorMessage(`EXP-Bench: cannot run the script: ${msg}`);
      this.briefs.post(this.task.id, 'phases', { kind: 'log', runId: 'error', text: `${msg}\n`, reset: true });
    } finally {
      this.running = undefined;
      await this.refreshClaims(false);
      this.push();
    }
  }

  /** Cancels a running script, if any. */
  cancelRun(): void {
    this.running?.abort();
  }

  dispose(): void {
    this.running?.abort();
    if (this.pushTimer) clearTimeout(this.pushTimer);
    for (const d of this.disposables.splice(0)) d.dispose();
    this.container.dispose();
    void this.session.release().catch((e) => logger.error(`closing the session failed: ${errorMessage(e)}`));
  }
}
