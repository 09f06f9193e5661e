import { promises as fsp } from 'node:fs';
import * as path from 'node:path';
import * as vscode from 'vscode';
import { isExpBenchError } from '../../core/errors';
import { judgeSession } from '../../core/flows/judge';
import { summarize } from '../../core/judge/session';
import type { JudgeRecord } from '../../core/judge/types';
import { log } from '../../core/log';
import type { EventSink } from '../../core/session/events';
import { SessionLayout } from '../../core/layout';
import { readTaskSnapshot } from '../../core/session/marker';
import { readState } from '../../core/session/store';
import { HARNESS_FILES } from '../../core/layout';
import type { Task } from '../../core/tasks/types';
import { latestRecordPath, readRecord } from '../../core/verify';
import { RUN_VERIFIER_COMMAND } from '../verifier';
import { readManifest } from '../../core/workspace/manifest';
import { makePatch } from '../../core/workspace/patch';
import type { CommandSpec } from '../commands';
import type { JudgeConfig } from '../judgeConfig';
import { withCancellableProgress } from '../progress';
import type { GapsController } from './gapsController';
import { errorMessage } from '../../core/util/errors';

const logger = log('gaps');
export const RUN_JUDGE_AND_VERIFIER_COMMAND = 'expbench.runJudgeAndVerifier';

/** What "Run Judge and Verifier" needs from the rest of the extension. */
export interface RunJudgeDeps {
  gaps: GapsController;
  /** The judge's endpoint (settings + SecretStorage; none → the heuristic pre-judge), prices and budget. */
  judgeConfig(): Promise<JudgeConfig>;
  /** This window's session: root, task, event log, and a way to refresh its results table. */
  windowSession(): Promise<{ root: string; task: Task; events?: EventSink; refreshResults?(): Promise<void> } | undefined>;
  findTask(id: string): Promise<Task | undefined>;
}

/** What one run did (returned by the command, for tests). */
export interface RunJudgeResult {
  record: JudgeRecord;
  /** Why E is missing or old, when the verifier did not produce a fresh record (Docker down, cancelled…). */
  verifierProblem?: string;
}

/**
 * "EXP-Bench: Run Judge and Verifier" (`expbench.runJudgeAndVerifier`, optional argument: a
 * session root; default this window's session). With one cancellable notification progress:
 * 1. the verifier: the `expbench.runVerifier` command (src/extension/verifier.ts: its own
 *    cancellable progress, limits from settings, log and status bar), clean mode. A failure (Docker unavailable, image missing…) does not stop the judge: the
 *    judge runs without a fresh E, and the message says so;
 * 2. the judge (`judgeSession`) with the configured endpoint, or the heuristic pre-judge without
 *    one (labelled "heuristic" in the progress, the message and every annotation);
 * 3. the gap annotations and report are refreshed.
 * Before the session is submitted it asks first (judging shows the ground-truth requirements).
 * Cancelling stops after the current step; nothing half-written is shown.
 */
export function runJudgeCommand(deps: RunJudgeDeps): CommandSpec {
  let active = false;
  return {
    id: RUN_JUDGE_AND_VERIFIER_COMMAND,
    async execute(rootArg?: unknown): Promise<RunJudgeResult | undefined> {
      if (active) { void vscode.window.showInformationMessage('EXP-Bench: the judge is already running.'); return undefined; }
      const win = await deps.windowSession();
      const root = typeof rootArg === 'string' ? path.resolve(rootArg) : rootArg instanceof vscode.Uri ? rootArg.fsPath : win?.root;
      if (!root) { void vscode.window.showWarningMessage('EXP-Bench: this window is not on a task session. Use "EXP-Bench: Open Task" first.'); return undefined; }
      const ours = win && path.resolve(win.root) === root ? win : undefined;
      const layout = new SessionLayout(root);
      const manifest = await readManifest(root);
      const task = ours?.task ?? (await deps.findTask(manifest.taskId)) ?? (await readTaskSnapshot(root));
      if (!task) { void vscode.window.showErrorMessage(`EXP-Bench: task ${manifest.taskId} of ${root} is neither in the datasets nor in private/task.json.`); return undefined; }
      const state = await readState(layout.state).catch(() => undefined);
      if (!state?.submitted && !state?.gaveUp) {
        const ok = await vscode.window.showWarningMessage(`${task.id} is not submitted yet. Judging shows you the ground-truth requirements; a human-baseline result should be judged after submitting.`,
          { modal: true }, 'Judge Anyway');
        if (ok !== 'Judge Anyway') return undefined;
      }
      active = true;
      try {
        const { endpoint, prices, budgetUsd } = await deps.judgeConfig();
        const kind = endpoint ? `model ${endpoint.model}` : 'heuristic';
        return await withCancellableProgress(`EXP-Bench: verifier and judge (${kind})`,
          async (report, signal) => {
            report('running the verifier (Docker)');
            const verifierProblem = await verify(root);
            if (signal.aborted) return undefined;
            report(`judging (${kind})`);
            const ws = layout.workspace;
            const frozen = await fsp.readFile(path.join(layout.harness, HARNESS_FILES.patch), 'utf8').catch(() => undefined);
            const patch = frozen ?? (await makePatch(ws)).patch;
            deps.gaps.rememberJudgedPatch(root, patch);
            const { record } = await judgeSession(root, { task, endpoint, prices, budgetUsd, signal, makePatch: async () => patch });
            report('refreshing the annotations');
            await deps.gaps.refresh(root);
            await ours?.refreshResults?.();
            const line = `EXP-Bench: ${summarize(record)}`;
            if (verifierProblem) void vscode.window.showWarningMessage(`${line}. Judged without a fresh E: ${verifierProblem}`);
            else void vscode.window.showInformationMessage(line);
            return { record, verifierProblem };
          });
      } catch (e) {
        if (isExpBenchError(e, 'CANCELLED')) { logger.info('judge cancelled'); return undefined; }
        const msg = errorMessage(e);
        logger.error(`judge failed: ${msg}`);
        void vscode.window.showErrorMessage(`EXP-Bench judge: ${msg}`);
        return undefined;
      } finally {
        active = false;
      }
    },
  };
}

/** Runs the verifier; returns why E is not fresh (undefined when a new final record was written). @throws CANCELLED */
async function verify(root: string): Promise<string | undefined> {
  const latest = latestRecordPath(new SessionLayout(root));
  const before = await readRecord(latest).catch(() => undefined);
  try {
    await vscode.commands.executeCommand(RUN_VERIFIER_COMMAND, { mode: 'clean' });
  } catch (e) {
    if (isExpBenchError(e, 'CANCELLED')) throw e;
    const msg = errorMessage(e);
    logger.warn(`verifier failed, judging without a fresh E: ${msg}`);
    return `${msg}${before ? ' (the judge used the previous verification record)' : ''}`;
  }
  const after = await readRecord(latest).catch(() => undefined);
  if (!after || after.runId === before?.runId) return `the verifier wrote no new record (see the "EXP-Bench Verifier" output)${before ? '; the judge used the previous one' : ''}`;
  if (after.status === 'error') return `the verifier failed: ${after.error?.message ?? 'error'}`;
  return undefined;
}
