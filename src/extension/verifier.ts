import * as path from 'node:path';
import * as vscode from 'vscode';
import { isExpBenchError } from '../core/errors';
import { log } from '../core/log';
import type { EventSink } from '../core/session/events';
import { SessionLayout } from '../core/layout';
import { registerCommands, type CommandRegistrar } from './commands';
import { withCancellableProgress } from './progress';
import { setting } from './settings';
import {
  collectOrReattach, latestRecordPath, LogLine, readRecord, runVerification, summary, VerificationRecord, VerifyLimits, VerifyMode,
} from '../core/verify';
import { errorMessage } from '../core/util/errors';
import { plural } from '../core/util/plural';
import { errorInWords } from './errorWords';

const logger = log('verifier');

/** Command id of "EXP-Bench: Run Verifier" (contributed in package.json). */
export const RUN_VERIFIER_COMMAND = 'expbench.runVerifier';

/** What the verifier feature needs from the rest of the extension. */
export interface VerifierDeps {
  /** Root of this window's session folder, or undefined when the window is not on a session. */
  sessionRoot(): Promise<string | undefined>;
  /** The session's event log, so that `verify.finished` is recorded (optional). */
  events?(): Promise<EventSink | undefined>;
  /** Called with every final record (the brief refreshes its results from it). */
  onRecord?(record: VerificationRecord): void;
  /** Registers the verifier's command; default {@link registerCommands} (directly with VS Code). */
  register?: CommandRegistrar;
}

/**
 * The verification limits from settings `expbench.verify.*` (defaults in package.json):
 * `timeoutSeconds` (≥ 1), `memoryMb`, `cpus`, `pids` (0 = no limit), `network`, `gpus`. A value
 * below a setting's minimum is not valid and gives its default (src/extension/settings.ts).
 */
export function verifyLimitsFromSettings(): Partial<VerifyLimits> {
  return {
    timeoutMs: Math.round(setting('verify.timeoutSeconds') * 1000),
    memoryBytes: Math.round(setting('verify.memoryMb') * 1024 * 1024),
    cpus: setting('verify.cpus'),
    pids: Math.round(setting('verify.pids')),
    network: setting('verify.network'),
    gpus: setting('verify.gpus'),
  };
}

/**
 * Registers "EXP-Bench: Run Verifier" (`expbench.runVerifier`, optional argument `{mode:
 * 'clean' | 'harness'}`): a cancellable notification progress while the run lasts, every output
 * line in the "EXP-Bench Verifier" log channel, and the result in a status bar item (click: open
 * the record). At activation, a run left `running` by a reloaded window is reattached (or its
 * finished result collected) the same way. Everything is disposed with `context.subscriptions`.
 */
export function registerVerifier(context: vscode.ExtensionContext, deps: VerifierDeps): vscode.Disposable {
  const channel = vscode.window.createOutputChannel('EXP-Bench Verifier', { log: true });
  const status = vscode.window.createStatusBarItem('expbench.verifier', vscode.StatusBarAlignment.Left, 90);
  status.name = 'EXP-Bench Verifier';
  let active: PromiseLike<unknown> | undefined;

  const show = (r: VerificationRecord, root: string) => {
    const pass = r.mode === 'clean' ? r.E_clean : r.E_exit;
    const found = r.E_claims.claims.filter((c) => c.found).length;
    status.text = `$(${r.status === 'error' ? 'error' : pass ? 'pass' : 'circle-slash'}) E ${r.status === 'error' ? 'error' : pass ? 'pass' : 'fail'} · claims ${found}/${r.E_claims.claims.length}`;
    status.tooltip = `${summary(r)}${r.lint.length ? `\nLint: ${r.lint.map((l) => l.message).join('; ')}` : ''}\nClick to open the record.`;
    status.command = { title: 'Open verification record', command: 'vscode.open', arguments: [vscode.Uri.file(path.join(new SessionLayout(root).verify, r.runId, 'record.json'))] };
    status.backgroundColor = pass && (r.E_claims.allProduced ?? r.E_claims.allFound) ? undefined : new vscode.ThemeColor('statusBarItem.warningBackground');
    status.show();
    deps.onRecord?.(r);
  };
  /** The result as a notification (after a run, not when a reloaded window shows the last one). */
  const notify = async (r: VerificationRecord, root: string) => {
    const open = 'Open Record';
    const text = `EXP-Bench verifier: ${verdictInWords(r)}`;
    const pass = (r.mode === 'clean' ? r.E_clean : r.E_exit) && r.E_claims.allFound;
    const pick = await (r.status === 'error' ? vscode.window.showErrorMessage(text, open, 'Show Output')
      : pass ? vscode.window.showInformationMessage(text, open) : vscode.window.showWarningMessage(text, open, 'Show Output'));
    if (pick === open) await vscode.commands.executeCommand('vscode.open', vscode.Uri.file(path.join(new SessionLayout(root).verify, r.runId, 'record.json')));
    else if (pick === 'Show Output') channel.show(true);
  };
  const onLine = (l: LogLine) => (l.stream === 'stderr' ? channel.warn(l.text) : channel.info(l.text));

  const report = (e: unknown) => {
    if (isExpBenchError(e, 'CANCELLED')) { channel.info('verification cancelled'); return; }
    const msg = errorMessage(e);
    logger.error(msg);
    void Promise.resolve(vscode.window.showErrorMessage(`EXP-Bench verifier: ${errorInWords(e)}`, 'Show Output')).then((pick) => { if (pick) channel.show(true); });
  };

  const run = async (arg?: { mode?: VerifyMode }) => {
    if (active) { channel.show(true); void vscode.window.showInformationMessage('EXP-Bench: a verification is already running (see the "EXP-Bench Verifier" output).'); return undefined; }
    const root = await deps.sessionRoot();
    if (!root) { void vscode.window.showWarningMessage('EXP-Bench: this window is not on a task session. Use "EXP-Bench: Open Task" first.'); return undefined; }
    const mode = arg?.mode ?? 'clean';
    channel.show(true);
    channel.info(`verifying ${root} (${mode} mode)`);
    status.text = '$(sync~spin) E running…';
    status.show();
    const events = await deps.events?.();
    const job = withCancellableProgress(`EXP-Bench: verifying (${mode})`, (progress, signal) => runVerification(root, {
      mode, limits: verifyLimitsFromSettings(), signal, events, onLine, onStatus: (m) => { progress(m); channel.info(m); },
    }));
    active = job;
    try {
      const r = await job;
      channel.info(summary(r));
      show(r, root);
      void notify(r, root);
      return r;
    } catch (e) {
      report(e);
      const last = await readRecord(latestRecordPath(new SessionLayout(root))).catch(() => undefined);
      if (last) show(last, root); else status.hide();
      return undefined;
    } finally {
      active = undefined;
    }
  };

  /** After a reload: reattach to a run left `running`, or show the last result. */
  const resume = async () => {
    const root = await deps.sessionRoot();
    if (!root) return;
    const last = await readRecord(latestRecordPath(new SessionLayout(root))).catch(() => undefined);
    if (!last) return;
    if (last.status !== 'running') { show(last, root); return; }
    channel.info(`reattaching to verification ${last.runId}`);
    status.text = '$(sync~spin) E running…';
    status.show();
    const events = await deps.events?.();
    const job = withCancellableProgress('EXP-Bench: verification in progress (reattached)', (_report, signal) => collectOrReattach(root, { signal, onLine, events }));
    active = job;
    try {
      const r = await job;
      if (r.kind !== 'none') { show(r.record, root); void notify(r.record, root); }
    } catch (e) {
      report(e);
    } finally {
      active = undefined;
    }
  };
  void resume().catch((e) => logger.warn(`could not resume the verifier: ${errorMessage(e)}`));

  const disposables = [channel, status, ...(deps.register ?? registerCommands)([{ id: RUN_VERIFIER_COMMAND, execute: run }])];
  context.subscriptions.push(...disposables);
  return vscode.Disposable.from(...disposables);
}

/**
 * A verification record's E result in words: whether the script reproduced from a clean tree
 * (`clean` mode: `E_clean`; `harness` mode: `E_exit`, the script's exit status in the workspace)
 * and how many of the conclusion's numbers its outputs contain. Reads only the record.
 */
export function verdictInWords(r: VerificationRecord): string {
  if (r.status === 'error') return `the verification could not run: ${r.error?.message ?? 'unknown error'}.`;
  const pass = r.mode === 'clean' ? r.E_clean : r.E_exit;
  const where = r.mode === 'clean' ? 'from a clean tree in a new container' : 'in the workspace';
  const how = r.cancelled ? 'it was cancelled' : r.timedOut ? `it timed out after ${r.limits.timeoutMs / 1000} s` : `exit status ${r.exitCode}`;
  const found = r.E_claims.claims.filter((c) => c.found).length;
  const total = r.E_claims.claims.length;
  const claims = total === 0 ? (r.E_claims.note ? ` No claimed numbers were checked (${r.E_claims.note}).` : ' The conclusion claims no numbers.')
    : ` ${found} of ${plural(total, 'number')} claimed in the conclusion ${found === 1 ? 'was' : 'were'} found in its outputs.`;
  return `E ${pass ? 'passed' : 'failed'}: reproduce_exp_bench.sh ran ${where} (${how}).${claims}`;
}
