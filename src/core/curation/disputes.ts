import { promises as fsp } from 'node:fs';
import { ExpBenchError } from '../errors';
import { runKeyForSession, type Judgement, type ReviewStore } from '../review';
import { readManifest } from '../workspace/manifest';
import { inspectSessionFolder } from '../workspace/folder';

/**
 * Disputes of a task's ground truth (docs/curation.md "Disputes"): a baseliner after submit, or a
 * reviewer, says a field is wrong (`expected_outcome`, `requirements`, …) with a reason and
 * evidence (a run, a diff file). A dispute is a `dispute` judgement on the task; it stays open in
 * the curators' queue until a `resolution` lists its id.
 */

/** The channel socket of a proctored work container (src/solver/extension.ts): present only inside one. */
export const PROCTORED_SOCKET = '/expbench/channel/session.sock';

export interface DisputeInput {
  task: string;
  /** The field disputed: `expected_outcome`, `requirements`, `design_complexity`, … */
  about: string;
  reason: string;
  /** A run key, a run id, a diff file: each kept as given (a diff file's path is checked to exist). */
  evidence: { run?: string; diff?: string; file?: string; note?: string }[];
  /** The baseliner's session: it must be submitted; its run key is added to the evidence. */
  session?: string;
  by?: string;
}

/**
 * Adds a dispute. Refused inside a proctored work container (the channel socket is there: a
 * baseliner disputes from the host, after submit), for a session that is not submitted, or of another task.
 * @throws ExpBenchError `BAD_INPUT` naming the session or the file; `SESSION_INVALID` for a session not submitted
 */
export async function addDispute(store: ReviewStore, d: DisputeInput): Promise<Judgement> {
  if (await fsp.access(PROCTORED_SOCKET).then(() => true, () => false)) {
    throw new ExpBenchError('BAD_INPUT', PROCTORED_SOCKET, 'this is a proctored work container: dispute a task from the host, after submit (`expbench curate dispute`)');
  }
  if (!d.reason.trim()) throw new ExpBenchError('BAD_INPUT', d.task, 'a dispute needs a reason');
  const evidence = [...d.evidence];
  for (const e of evidence) {
    for (const f of [e.diff, e.file]) {
      if (f !== undefined && !(await fsp.stat(f).then((s) => s.isFile(), () => false))) throw new ExpBenchError('BAD_INPUT', f, 'evidence file does not exist or is not a file');
    }
  }
  if (d.session !== undefined) {
    const state = (await inspectSessionFolder(d.session)).state;
    if (state !== 'submitted') throw new ExpBenchError('SESSION_INVALID', d.session, `is ${state}, not submitted: a baseliner disputes a task after submit`);
    const m = await readManifest(d.session);
    if (m.taskId !== d.task) throw new ExpBenchError('BAD_INPUT', d.session, `is a session of ${m.taskId}, not ${d.task}`);
    evidence.unshift({ run: await runKeyForSession(d.session) });
  }
  return store.add({ subject: { kind: 'task', task: d.task }, kind: 'dispute', value: { about: d.about, evidence }, reason: d.reason, ...(d.by ? { by: d.by } : {}) });
}
