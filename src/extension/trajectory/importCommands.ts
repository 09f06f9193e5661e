import * as vscode from 'vscode';
import { isExpBenchError } from '../../core/errors';
import { importSession, type ImportSessionResult } from '../../core/flows/importSession';
import { judgeStep } from '../../core/flows/judge';
import { verifyStep } from '../../core/flows/verify';
import { log } from '../../core/log';
import { importFiles, summarize, type ImportResult, type TrajectorySummary } from '../../core/trajectory/import';
import type { CommandSpec } from '../commands';
import type { JudgeConfig } from '../judgeConfig';
import { newSessionDir } from '../openTask';
import { withCancellableProgress } from '../progress';
import { openSessionFolder, showFailure } from '../switchSession';
import { pickTask } from '../taskCommands';
import type { TaskStore } from '../taskStore';
import { verifyLimitsFromSettings } from '../verifier';
import { importSummaryMarkdown, trajectorySummaryMarkdown } from './summary';

const logger = log('trajectory');

export const IMPORT_TRAJECTORY_COMMAND = 'expbench.importTrajectory';
export const IMPORT_AS_SESSION_COMMAND = 'expbench.importAsSession';

/** Arguments of "Import Trajectory…" for tests and scripts (given ones skip their dialog). */
export interface ImportTrajectoryArgs {
  files?: string[];
  /** false: do not open the summary document (default true). */
  show?: boolean;
}

/** Arguments of "Import as Session…" for tests and scripts (given ones skip their dialog). */
export interface ImportAsSessionArgs {
  files?: string[];
  taskId?: string;
  /** The paper's repository; default asked (prefilled from the task), or the task's own when scripted. */
  source?: string;
  commit?: string;
  /** Session folder to create; default a new folder in `expbench.sessionsDir`. */
  outDir?: string;
  /** false: do not run the verifier (default: run it, with the settings' limits). */
  verify?: boolean;
  /** false: do not run the judge (default: run it: the configured endpoint, else the heuristic). */
  judge?: boolean;
  /** false: do not open the session in the window afterwards (default: offered). */
  open?: boolean;
  show?: boolean;
}

export interface TrajectoryCommandDeps {
  store: TaskStore;
  judgeConfig: () => Promise<JudgeConfig>;
}

/**
 * "Import Trajectory…" (`expbench.importTrajectory`) and "Import as Session…"
 * (`expbench.importAsSession`). The first reads trajectory files of any known format
 * (src/core/trajectory/import.ts) and shows a markdown summary: trajectories, steps, share of
 * events mapped, redactions, problems. The second turns one agent run into a session
 * (src/core/flows/importSession.ts) with progress and cancellation, verifies and judges it, shows
 * its import record in words and offers to open it (its gaps then show as for a human's).
 * Both take one argument object ({@link ImportTrajectoryArgs}, {@link ImportAsSessionArgs}) and
 * return what they did (tests); without arguments they ask with dialogs.
 */
export function trajectoryCommands(deps: TrajectoryCommandDeps): CommandSpec[] {
  return [
    {
      id: IMPORT_TRAJECTORY_COMMAND,
      async execute(args: ImportTrajectoryArgs = {}): Promise<{ trajectories: TrajectorySummary[]; result: ImportResult } | undefined> {
        const files = args.files ?? (await pickFiles('Import'));
        if (!files?.length) return undefined;
        try {
          const trajectories: TrajectorySummary[] = [];
          const result = await withCancellableProgress('EXP-Bench: importing trajectories', async (report) => {
            report(`reading ${files.length} file(s)…`);
            return importFiles(files, (t) => { trajectories.push(summarize(t)); report(`${trajectories.length} trajectories read`); });
          });
          logger.info(`imported ${trajectories.length} trajectories from ${files.length} file(s); ${result.problems.length} file problems`);
          if (args.show !== false) await showMarkdown(trajectorySummaryMarkdown(trajectories, result));
          return { trajectories, result };
        } catch (e) {
          void showFailure('cannot import the trajectories', e);
          return undefined;
        }
      },
    },
    {
      id: IMPORT_AS_SESSION_COMMAND,
      async execute(args: ImportAsSessionArgs = {}): Promise<ImportSessionResult | undefined> {
        const scripted = args.files !== undefined && args.taskId !== undefined;
        const files = args.files ?? (await pickFiles('Import as Session'));
        if (!files?.length) return undefined;
        const task = await pickTask(deps.store, args.taskId);
        if (!task) return undefined;
        const known = task.paper?.localRepo ?? task.paper?.codeUrl;
        const source = args.source ?? (scripted ? known : await vscode.window.showInputBox({
          prompt: `The repository of ${task.id} (git URL or folder) the run worked in`, value: known ?? task.paper?.suggestedCodeUrl ?? '', ignoreFocusOut: true,
        }));
        if (!source) return undefined;
        const outDir = args.outDir ?? newSessionDir(task);
        const config = args.judge === false ? undefined : await deps.judgeConfig();
        try {
          const r = await withCancellableProgress(`EXP-Bench: importing a run as a session of ${task.id}`, (report, signal) => importSession({
            files, task, source, commit: args.commit, outDir, signal,
            ...(args.verify === false ? {} : { verify: verifyStep({ fallbackLimits: verifyLimitsFromSettings() }) }),
            ...(config ? { judge: judgeStep({ task, endpoint: config.endpoint, prices: config.prices, budgetUsd: config.budgetUsd }) } : {}),
            onProgress: (p) => report(`${p.step}: ${p.message}`),
          }));
          logger.info(`imported ${r.trajectory.id} as ${task.id} in ${r.sessionDir}: ${r.problems.length} problems, E ${String(r.execution?.E)}`);
          if (args.show !== false) await showMarkdown(importSummaryMarkdown(r));
          if (args.open === true || (args.open === undefined && !scripted)) {
            const choice = args.open === true ? 'Open Session' : await vscode.window.showInformationMessage(
              `EXP-Bench: ${r.trajectory.id} imported as a session of ${task.id} (${r.problems.length} problems).`, 'Open Session');
            if (choice === 'Open Session') await openSessionFolder(r.sessionDir, task.id);
          }
          return r;
        } catch (e) {
          if (isExpBenchError(e, 'CANCELLED')) {
            void vscode.window.showInformationMessage(`EXP-Bench: import of the run cancelled; nothing was left in ${outDir}.`);
            return undefined;
          }
          void showFailure(`cannot import the run as a session of ${task.id}`, e);
          return undefined;
        }
      },
    },
  ];
}

async function pickFiles(openLabel: string): Promise<string[] | undefined> {
  const uris = await vscode.window.showOpenDialog({ canSelectMany: true, canSelectFiles: true, canSelectFolders: false, openLabel, title: 'Trajectory files (Inspect, OpenHands, SWE-agent, mini-swe-agent, ATIF, EXP-Bench harness, session events) and patches' });
  return uris?.map((u) => u.fsPath);
}

async function showMarkdown(content: string): Promise<void> {
  const doc = await vscode.workspace.openTextDocument({ language: 'markdown', content });
  await vscode.window.showTextDocument(doc, { preview: true, viewColumn: vscode.ViewColumn.Active });
}
