import * as path from 'node:path';
import { ExpBenchError } from '../errors';
import { SessionLayout } from '../layout';
import { compareJudgements, type Judgement, type PatchOperation } from '../review';
import { readTaskSnapshot } from '../session/marker';
import { normaliseTask } from '../tasks/normalise';
import type { Task } from '../tasks/types';
import { readJsonIfExists } from '../util/fs';
import { applyJsonPatch, deepEqual } from './jsonPatch';

/**
 * Versioned edits of task fields (docs/curation.md "Edits"): each edit is a `task-edit` judgement
 * of the review store, `{patch}` = RFC 6902 operations on the task's entry of `questions` in its
 * task file (`/expected_outcome`, `/requirements/2`), with author, time and reason. Edits are
 * applied in time order on export and for a re-judge; the task file itself is never changed.
 */

/** The edits of `task` among `all`, oldest first. */
export function editsOf(all: readonly Judgement[], task: string): Judgement[] {
  return all.filter((j) => j.kind === 'task-edit' && j.subject.kind === 'task' && j.subject.task === task).sort(compareJudgements);
}

/**
 * `entry` (a task's raw entry) with `edits` applied in order, as a new object.
 * @throws ExpBenchError `BAD_INPUT` naming the task and the edit that does not apply (a `test` that fails, a path that is not there)
 */
export function applyEdits(entry: Record<string, unknown>, edits: readonly Judgement[], task: string): Record<string, unknown> {
  let doc: unknown = entry;
  for (const e of edits) {
    doc = applyJsonPatch(doc, (e.value as { patch: PatchOperation[] }).patch, `${task} edit ${e.id} by ${e.by}`);
    if (doc === null || typeof doc !== 'object' || Array.isArray(doc)) throw new ExpBenchError('BAD_INPUT', `${task} edit ${e.id}`, 'the edit leaves the task entry not an object');
  }
  return doc as Record<string, unknown>;
}

/** `task` with `edits` applied, normalised again as the loader does (same file, index and paper). */
export function editedTask(task: Task, edits: readonly Judgement[]): Task {
  if (edits.length === 0) return task;
  const raw = applyEdits(task.raw, edits, task.id);
  return normaliseTask(raw, { file: task.file, conference: task.conference, paperId: task.paperId, index: task.index }, task.paper);
}

/**
 * `private/judge/curated-task.json` of a session: the edited task entry it was last re-judged
 * against (`{task, edits: [ids], raw}`), written by the re-judge (src/core/flows/rejudge.ts).
 */
export function curatedTaskFile(sessionDir: string): string {
  return path.join(new SessionLayout(sessionDir).judge, 'curated-task.json');
}

/** A judged session whose task content differs from the edited task. */
export interface AffectedSession {
  session: string;
  /** Top-level fields of the entry whose content differs (`expected_outcome`, `requirements`). */
  fields: string[];
}

/**
 * The sessions among `sessionDirs` of `taskId` whose task snapshot (`private/task.json`, what
 * they were prepared and judged with; `private/judge/curated-task.json` once re-judged after an
 * edit) differs from `edited` (the task's entry with its edits):
 * they were judged against other ground truth than the curated one. Sessions of other tasks and
 * folders without a snapshot are left out.
 */
export async function affectedSessions(sessionDirs: readonly string[], taskId: string, edited: Record<string, unknown>): Promise<AffectedSession[]> {
  const out: AffectedSession[] = [];
  for (const dir of sessionDirs) {
    const snap = await readTaskSnapshot(dir);
    if (!snap || snap.id !== taskId || !snap.raw) continue;
    const curated = await readJsonIfExists<{ raw?: Record<string, unknown> }>(curatedTaskFile(dir)).catch(() => undefined);
    const judgedWith = curated?.raw ?? snap.raw;
    const keys = [...new Set([...Object.keys(judgedWith), ...Object.keys(edited)])].sort();
    const fields = keys.filter((k) => !deepEqual(judgedWith[k], edited[k]));
    if (fields.length > 0) out.push({ session: dir, fields });
  }
  return out;
}
