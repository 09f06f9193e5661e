import { affectedSessions, curatedTaskFile, editedTask, editsOf, type AffectedSession } from '../curation';
import type { JudgeSessionOptions } from '../judge/session';
import type { Judgement } from '../review';
import type { Task } from '../tasks/types';
import { writeJsonAtomic } from '../util/fs';
import { judgeSession, type JudgeFlowResult } from './judge';

/** One affected session and, when re-judged, the judge flow's result (or its error). */
export interface RejudgeResult extends AffectedSession {
  result?: JudgeFlowResult;
  error?: string;
}

/**
 * The judged sessions among `sessionDirs` that an edit of `task` affects (their task snapshot
 * differs from the task with its edits: src/core/curation/edits.ts) and, with `rejudge`, each
 * judged again through the judge flow (src/core/flows/judge.ts) against the edited task (the
 * heuristic without an endpoint, the LLM judge with one), and the edited entry kept in its
 * `private/judge/curated-task.json` (it is then no longer affected). A failure of one session is its `error`;
 * the others go on.
 */
export async function rejudgeAffected(o: {
  task: Task; judgements: readonly Judgement[]; sessionDirs: readonly string[]; rejudge: boolean;
  judge?: Omit<JudgeSessionOptions, 'task'>;
}): Promise<{ edited: Task; affected: RejudgeResult[] }> {
  const edits = editsOf(o.judgements, o.task.id);
  const edited = editedTask(o.task, edits);
  const affected: RejudgeResult[] = await affectedSessions(o.sessionDirs, o.task.id, edited.raw);
  if (o.rejudge) {
    for (const a of affected) {
      try {
        a.result = await judgeSession(a.session, { ...o.judge, task: edited });
        await writeJsonAtomic(curatedTaskFile(a.session), { task: o.task.id, edits: edits.map((e) => e.id), raw: edited.raw });
      } catch (e) {
        a.error = e instanceof Error ? e.message : String(e);
      }
    }
  }
  return { edited, affected };
}
