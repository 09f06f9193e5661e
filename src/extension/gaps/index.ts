import * as vscode from 'vscode';
import { log } from '../../core/log';
import type { BriefPanels } from '../brief/briefPanel';
import type { CommandSpec } from '../commands';
import { GapsController, type OpenDiffArg } from './gapsController';
import { runJudgeCommand, type RunJudgeDeps } from './runJudge';
import { OPEN_DIFF_COMMAND } from './annotations';
import { errorMessage } from '../../core/util/errors';

const logger = log('gaps');

export { GapsController } from './gapsController';
export type { RunJudgeResult } from './runJudge';

/** What {@link activateGaps} needs (the composition root supplies it). */
export type GapsFeatureDeps = Omit<RunJudgeDeps, 'gaps'> & { briefs: BriefPanels };

/**
 * The "gaps in the editor" feature (issue 5, part 7): builds the {@link GapsController} (put on
 * `context.subscriptions`) and returns it with its commands for the composition root to register:
 * `expbench.runJudgeAndVerifier` (see runJudge.ts), `expbench.refreshGaps` (optional argument: a
 * session root; returns what is shown), and `expbench.openGroundTruthDiff` ({@link OpenDiffArg};
 * without an argument a quick pick of the requirements). When the window is on a judged session,
 * its gaps are shown once the session has opened.
 */
export function activateGaps(context: vscode.ExtensionContext, deps: GapsFeatureDeps): { gaps: GapsController; commands: CommandSpec[] } {
  const gaps = new GapsController({ windowRoot: async () => (await deps.windowSession())?.root, findTask: deps.findTask, briefs: deps.briefs });
  context.subscriptions.push(gaps);
  // a window reopened on a judged session shows its gaps again (after activation returns)
  void deps.windowSession().then((w) => (w ? gaps.refresh(w.root) : undefined))
    .catch((e) => logger.warn(`cannot show the gaps of this window's session: ${errorMessage(e)}`));
  const commands: CommandSpec[] = [
    runJudgeCommand({ ...deps, gaps }),
    {
      id: 'expbench.refreshGaps',
      async execute(root?: unknown) {
        const s = await gaps.refresh(typeof root === 'string' ? root : root instanceof vscode.Uri ? root.fsPath : undefined);
        return s && { root: s.root, taskId: s.taskId, kind: s.record.kind, stale: gaps.shown?.stale ?? false };
      },
    },
    {
      // from the trajectory viewer's pins: {sessionDir, item} (item as src/core/viewer/pins.ts names it)
      id: 'expbench.gaps.revealItem',
      execute: (arg?: { sessionDir?: unknown; item?: unknown }) => (typeof arg?.sessionDir === 'string' && typeof arg.item === 'string'
        ? gaps.revealItem(arg.sessionDir, arg.item)
        : Promise.resolve(void vscode.window.showErrorMessage('EXP-Bench: the pin belongs to no judged session (a trajectory file that is not a session has no gap report).')).then(() => false)),
    },
    {
      id: OPEN_DIFF_COMMAND,
      execute: (arg?: OpenDiffArg) => (arg && typeof arg.index === 'number' ? gaps.openDiff(arg) : gaps.pickAndOpenDiff()),
    },
  ];
  return { gaps, commands };
}
