import * as path from 'node:path';
import * as vscode from 'vscode';
import { AI_OFF_SETTINGS, aiOff } from '../core/channel/aiSettings';
import { ChannelClient } from '../core/channel/client';
import type { ChannelBrief, ChannelMethod, ChannelParams, SolverState } from '../core/channel/protocol';
import { setLogSink } from '../core/log';
import { errorMessage } from '../core/util/errors';
import type { PhasesAction } from '../protocol/messages';
import { SolverPanel } from './panel';
import { briefView, phasesView } from './view';

/**
 * The solver build of the extension (issue 13): runs in the proctored window, inside the task's
 * work container, and reaches the session only through the host channel
 * (`/expbench/channel/session.sock`, src/core/channel/). It holds the phase stepper, the clock,
 * notes, the attestation and submit; no tasks, datasets, ground truth, Docker, judge or models
 * (the bundle is checked: test/unit/solver.bundle.unit.test.ts). The baseliner sees "submitted";
 * scores stay on the host.
 */
export const DEFAULT_SOCKET = '/expbench/channel/session.sock';

export function activate(context: vscode.ExtensionContext): void {
  const out = vscode.window.createOutputChannel('EXP-Bench (proctored)', { log: true });
  const restoreLog = setLogSink((level, component, message) => out[level](`[${component}] ${message}`));
  const socketPath = process.env.EXPBENCH_CHANNEL_SOCKET || DEFAULT_SOCKET;
  // the queue in the editor's user data (the container user's): the channel folder itself is the host's
  const client = new ChannelClient({ socketPath, queueFile: path.join(path.dirname(socketPath), 'editor', 'solver-queue.jsonl') });
  const solver = new Solver(context, client);
  context.subscriptions.push(out, { dispose: restoreLog }, { dispose: () => client.dispose() }, solver,
    vscode.commands.registerCommand('expbench.solver.showTask', () => solver.panel.show()),
    vscode.commands.registerCommand('expbench.solver.attest', () => solver.attest()),
    vscode.commands.registerCommand('expbench.solver.toggleClock', () => solver.toggleClock()),
    vscode.commands.registerCommand('expbench.solver.addNote', () => solver.addNote()),
    vscode.commands.registerCommand('expbench.solver.submit', () => solver.submit()),
  );
  void client.start().catch((e) => out.error(`channel: ${errorMessage(e)}`));
  solver.panel.show();
}

export function deactivate(): void { /* disposed through context.subscriptions */ }

class Solver implements vscode.Disposable {
  readonly panel: SolverPanel;
  private readonly status = vscode.window.createStatusBarItem(vscode.StatusBarAlignment.Left, 100);
  private brief: ChannelBrief | undefined;
  private state: SolverState | undefined;
  private stateAt = 0;
  private rules: string[] = [];
  private warnedOffline = false;
  private toldNoHost = false;
  private running = false;
  private readonly ticker: NodeJS.Timeout;
  private readonly configWatch: vscode.Disposable;

  constructor(context: vscode.ExtensionContext, private readonly client: ChannelClient) {
    this.panel = new SolverPanel(context.extensionUri, (call) => this.act(call));
    this.status.command = 'expbench.solver.showTask';
    this.status.show();
    client.onDidChangeStatus(() => this.render());
    client.onDidConnect(() => void this.connected());
    client.onDidDrop(({ method, message }) => void vscode.window.showErrorMessage(`EXP-Bench: the host refused a queued ${method}: ${message}`));
    this.configWatch = vscode.workspace.onDidChangeConfiguration((e) => {
      if (this.state && Object.keys(AI_OFF_SETTINGS).some((k) => e.affectsConfiguration(k))) void this.reportAi().catch(() => undefined);
    });
    this.ticker = setInterval(() => { if (this.state?.clock.status === 'running') this.render(); }, 1000);
    this.render();
  }

  /** After each (re)connection: the brief and state, the AI settings report, the attestation prompt. */
  private async connected(): Promise<void> {
    if (this.warnedOffline) void vscode.window.showInformationMessage('EXP-Bench: connected to the host again; the queued changes were sent in order.');
    this.warnedOffline = false;
    this.toldNoHost = false;
    try {
      const hello = await this.client.call('hello', { client: `code ${vscode.version}` });
      if (hello.queued) return;
      this.brief = hello.result.brief;
      this.rules = hello.result.rules;
      this.setState(hello.result.state);
      if (this.state?.attested) await this.reportAi(); // the host answers nothing else before the attestation
      if (!this.state?.attested && !this.state?.finished) {
        const go = await vscode.window.showInformationMessage('EXP-Bench: before the clock can start, give your name or id and accept the rules of this proctored session.', 'Attest…');
        if (go) await this.attest();
      }
    } catch (e) {
      void vscode.window.showErrorMessage(`EXP-Bench: ${errorMessage(e)}`);
    }
  }

  /**
   * Reads the AI settings and the language models on offer and tells the host, which reads the
   * settings files itself and records its own reading as `ai.settings` (this report goes with it,
   * not believed).
   */
  private async reportAi(): Promise<void> {
    const cfg = vscode.workspace.getConfiguration();
    const settings: Record<string, unknown> = {};
    for (const k of Object.keys(AI_OFF_SETTINGS)) settings[k] = cfg.get(k);
    let models = 0;
    try { models = (await vscode.lm.selectChatModels()).length; } catch { /* no language-model API: none */ }
    settings['lm.chatModels'] = models;
    const { off, on } = aiOff(settings, models);
    await this.call('aiSettings', { off, settings });
    if (!off && !this.state?.aiAllowed) void vscode.window.showWarningMessage(`EXP-Bench: AI features are on in this window although the session does not allow them (${on.join(', ')}); this was recorded.`);
  }

  /** The name or id and the rules (modal), before the clock can start; recorded as `baseliner.attested`. */
  async attest(): Promise<boolean> {
    if (this.state?.attested) return true;
    const baseliner = await vscode.window.showInputBox({
      title: 'EXP-Bench: your name or baseliner id', prompt: 'Recorded with this session', ignoreFocusOut: true,
      validateInput: (v) => (v.trim() ? undefined : 'a name or id is needed'),
    });
    if (!baseliner) return false;
    const rules = this.rules.length ? this.rules : [];
    const ok = await vscode.window.showWarningMessage('EXP-Bench: the rules of this session', {
      modal: true, detail: `${rules.map((r, i) => `${i + 1}. ${r}`).join('\n')}\n\nAI assistance is ${this.state?.aiAllowed ? 'ALLOWED' : 'NOT allowed'} in this session. Other sessions and runs of this task are not reachable from this window.`,
    }, 'I attest');
    if (ok !== 'I attest') return false;
    await this.call('attest', { baseliner: baseliner.trim(), rules });
    await this.reportAi().catch(() => undefined);
    return true;
  }

  async toggleClock(): Promise<void> {
    const st = this.state?.clock.status;
    if (st === 'running') await this.act({ action: 'clock', payload: { op: 'pause' } });
    else await this.act({ action: 'clock', payload: { op: st === 'paused' ? 'resume' : 'start' } });
  }

  async addNote(): Promise<void> {
    const text = await vscode.window.showInputBox({ title: 'EXP-Bench: add a note', ignoreFocusOut: true });
    if (text?.trim()) await this.act({ action: 'addNote', payload: { text } });
  }

  async submit(): Promise<void> {
    const ok = await vscode.window.showWarningMessage('Submit your answers? The design and conclusion are frozen; the host then checks them.', { modal: true }, 'Submit');
    if (ok !== 'Submit') return;
    const r = await this.client.call('submit', {});
    if (r.queued) return;
    this.setState(r.result.state);
    void vscode.window.showInformationMessage('EXP-Bench: submitted. Thank you — your answers and your work are with the host.');
  }

  /** One action of the stepper, through the channel. */
  private async act(call: PhasesAction): Promise<void> {
    switch (call.action) {
      case 'setPhase': return this.call('setPhase', call.payload);
      case 'setDesign': return this.call('setDesign', { design: call.payload });
      case 'setConclusion': return this.call('setConclusion', call.payload);
      case 'addNote': return this.call('addNote', call.payload);
      case 'clock':
        if (call.payload.op === 'start' && !this.state?.attested && !(await this.attest())) return;
        return this.call('clock', call.payload);
      case 'submit': return this.submit();
      case 'giveUp': {
        const reason = await vscode.window.showInputBox({ title: 'EXP-Bench: give up — why? (optional)', ignoreFocusOut: true });
        if (reason === undefined) return;
        return this.call('giveUp', reason ? { reason } : {});
      }
      case 'openScript': {
        const uri = vscode.Uri.file('/workspace/reproduce_exp_bench.sh');
        try { await vscode.workspace.fs.stat(uri); } catch { await vscode.workspace.fs.writeFile(uri, Buffer.from('#!/bin/bash\nset -euo pipefail\n')); }
        await vscode.window.showTextDocument(uri);
        return;
      }
      case 'runScript': return this.runScript();
      case 'openTerminal': {
        const t = vscode.window.createTerminal({ name: 'task container', cwd: '/workspace' });
        t.show();
        return;
      }
      case 'openPatch': case 'refreshPatch':
        await vscode.commands.executeCommand('workbench.view.scm');
        return;
    }
  }

  private async call<M extends ChannelMethod>(method: M, params: ChannelParams<M>): Promise<void> {
    const r = await this.client.call(method, params);
    if (r.queued) {
      if (!this.warnedOffline) {
        this.warnedOffline = true;
        void vscode.window.showWarningMessage(`EXP-Bench: the host side is not running. Your changes are queued (in memory and in the channel folder) and sent in order when it is back.`);
      }
      this.applyLocally(method, params);
      return;
    }
    const result = r.result as unknown;
    if (result && typeof result === 'object' && 'phase' in result) this.setState(result as SolverState);
  }

  /**
   * Runs reproduce_exp_bench.sh through the host (channel `runScript`): the host runs it in the work
   * container and records it; the stepper shows the run and the end of its log. Refused after submit
   * (by the host too) and while the host is away.
   */
  private async runScript(): Promise<void> {
    if (this.running) return;
    if (this.state?.finished) {
      void vscode.window.showWarningMessage('EXP-Bench: this session is finished: no more runs.');
      return;
    }
    await vscode.workspace.saveAll(false);
    this.running = true;
    this.render();
    this.panel.postTransient([{ type: 'section', section: 'phases', state: { kind: 'log', runId: 'current', text: 'running reproduce_exp_bench.sh in the task container (through the host)…\n', reset: true } }]);
    try {
      const r = await this.client.call('runScript', {});
      if (r.queued) return;
      const { run, logTail, state } = r.result;
      this.setState(state);
      this.panel.postTransient([{ type: 'section', section: 'phases', state: { kind: 'log', runId: run.id, text: logTail, reset: true } }]);
      void vscode.window.setStatusBarMessage(`EXP-Bench: reproduce_exp_bench.sh ${run.exitCode === 0 ? 'succeeded' : `failed (${run.exitCode ?? run.error})`}`, 5000);
    } catch (e) {
      const msg = e instanceof Error ? e.message : String(e);
      void vscode.window.showErrorMessage(`EXP-Bench: cannot run the script: ${msg}`);
      this.panel.postTransient([{ type: 'section', section: 'phases', state: { kind: 'log', runId: 'error', text: `${msg}\n`, reset: true } }]);
    } finally {
      this.running = false;
      this.render();
    }
  }

  /** A queued edit shown at once (the host's state replaces it on reconnect), so the stepper never shows an older draft. */
  private applyLocally<M extends ChannelMethod>(method: M, params: ChannelParams<M>): void {
    if (!this.state) return this.render();
    const s = { ...this.state };
    const p = params as Record<string, any>;
    if (method === 'setPhase') s.phase = p.phase;
    else if (method === 'setDesign') s.design = p.design;
    else if (method === 'setConclusion') s.conclusion = p.text;
    else if (method === 'addNote') s.notes = [...s.notes, { at: new Date().toISOString(), text: p.text }];
    this.state = s;
    this.render();
  }

  private setState(s: SolverState): void {
    this.state = s;
    this.stateAt = Date.now();
    this.render();
  }

  private render(): void {
    const st = this.client.status;
    this.status.text = st.connected ? (st.queued ? `$(sync~spin) EXP-Bench: sending ${st.queued}` : `$(shield) EXP-Bench proctored${this.state ? ` · ${phasesView(this.state, st, Date.now(), this.stateAt).clock.text}` : ''}`)
      : `$(warning) EXP-Bench: host not reachable · ${st.queued} queued`;
    this.status.tooltip = st.connected ? 'Connected to the host, which records this session' : `The host side is not running (${st.lastError ?? 'not connected'}); changes are queued and sent when it is back`;
    if (!this.state || !this.brief) {
      if (!st.connected && st.lastError && !this.toldNoHost) {
        this.toldNoHost = true;
        this.panel.post([{ type: 'error', message: `The host side is not running (${st.lastError}): this window connects as soon as it is. ${st.queued} change(s) queued.` }]);
      }
      return;
    }
    this.panel.post([
      { type: 'brief', brief: briefView(this.brief) },
      { type: 'section', section: 'phases', state: phasesView(this.state, st, Date.now(), this.stateAt, this.running) },
    ]);
  }

  dispose(): void {
    clearInterval(this.ticker);
    this.configWatch.dispose();
    this.status.dispose();
    this.panel.dispose();
  }
}
