import * as vscode from 'vscode';
import { log } from '../../core/log';
import type { SessionLayout } from '../../core/layout';
import type { SessionHandle } from '../../core/flows/sessionService';
import type { StepFn } from '../../core/flows/steps';
import type { Task } from '../../core/tasks/types';
import type { PhasesView } from '../../protocol/messages';
import { withCancellableProgress } from '../progress';
import { submitWarnings } from '../../core/flows/submitChecks';
import { errorMessage } from '../../core/util/errors';

const logger = log('submit');

/** What Submit needs of the window's session (the SessionController gives it; no import back to it). */
export interface SubmitTarget {
  readonly session: SessionHandle;
  readonly task: Task;
  readonly layout: SessionLayout;
  setResults(rows: PhasesView['results']): void;
}

/** What the session needs from the verifier and judge features (wired in the composition root). */
export interface SubmitHooks {
  /** The verifier as a submit step, or undefined when verification is switched off. */
  verify(): StepFn | undefined;
  /** The judge as a submit step (LLM when an endpoint is configured, else heuristic). */
  judge(target: SubmitTarget): Promise<StepFn | undefined>;
  /** Rows for the results table (verifier and judge summaries) from the session's private part. */
  loadResults(layout: SessionLayout): Promise<PhasesView['results']>;
  /** Called after a submission's steps finished (refresh annotations, gap report). */
  afterSubmit(target: SubmitTarget): Promise<void>;
}

/**
 * Submit from the stepper: asks for confirmation (modal), freezes the answers, writes the harness
 * files, then runs the verifier and the judge with cancellable progress, and shows the results.
 */
export async function submitFromEditor(c: SubmitTarget, hooks: SubmitHooks): Promise<void> {
  const s = c.session.state;
  const missing = [
    ...(s.design.constants.length + s.design.independent.length + s.design.dependent.length === 0 && !s.design.freeText.trim() ? ['a design'] : []),
    ...(!s.conclusion.trim() ? ['a conclusion'] : []),
  ];
  await vscode.workspace.saveAll(false);
  const warn = missing.length ? ` Your answers have no ${missing.join(' and no ')}.` : '';
  const checks = await submitWarnings(c.layout, s).catch((e) => {
    logger.warn(`submit checks failed: ${errorMessage(e)}`);
    return [{ kind: 'never-run' as const, items: [], message: `the checks before submitting failed: ${errorMessage(e)}` }];
  });
  const button = missing.length || checks.length ? 'Submit anyway' : 'Submit';
  const ok = await vscode.window.showWarningMessage(`Submit ${c.task.id}? The design, the conclusion, the notes and the patch are frozen, then the verifier and the judge run.${warn}`,
    { modal: true, ...(checks.length ? { detail: `Before you submit:\n${checks.map((w) => `• ${w.message}`).join('\n')}` } : {}) }, button);
  if (ok !== button) return;
  for (const w of checks) logger.info(`submitted despite: ${w.message}`);
  await withCancellableProgress(`EXP-Bench: submitting ${c.task.id}`, async (report, signal) => {
    report('freezing the answers and writing the harness files');
    const verify = hooks.verify();
    const judge = await hooks.judge(c);
    const wrap = (name: string, step: StepFn | undefined): StepFn | undefined => step && (async (layout, stepSignal) => {
      report(`running the ${name}`);
      return step(layout, stepSignal);
    });
    const r = await c.session.submit({ design: s.design, conclusion: s.conclusion }, {
      verify: wrap('verifier', verify), judge: wrap('judge', judge), signal,
    });
    for (const w of r.warnings) logger.warn(w);
    const problems = [r.verify?.error && `verifier: ${r.verify.error}`, r.judge?.error && `judge: ${r.judge.error}`].filter(Boolean);
    if (problems.length) void vscode.window.showWarningMessage(`EXP-Bench: submitted; ${problems.join('; ')}`);
    else void vscode.window.showInformationMessage(`EXP-Bench: submitted ${c.task.id}. ${[r.verify?.summary, r.judge?.summary].filter(Boolean).join(' · ')}`);
  });
  c.setResults(await hooks.loadResults(c.layout));
  await hooks.afterSubmit(c);
}

/** Give up: asks for an optional reason and a confirmation, then records the give-up with the time. */
export async function giveUpFromEditor(c: SubmitTarget): Promise<void> {
  const reason = await vscode.window.showInputBox({ prompt: `Give up ${c.task.id}? Optional: why`, placeHolder: 'reason (optional)', ignoreFocusOut: true });
  if (reason === undefined) return;
  const ok = await vscode.window.showWarningMessage(`Give up ${c.task.id}? This is recorded with the time and cannot be undone.`, { modal: true }, 'Give up');
  if (ok !== 'Give up') return;
  await c.session.giveUp(reason || undefined);
}
