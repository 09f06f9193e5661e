import type { Task } from '../core/tasks/types';

/**
 * Where a task stands, from the sessions under the sessions folder: `not-started` (no session),
 * `opened` (prepared, clock never started), `in-progress` (clock started, not finished),
 * `submitted`, `gave-up`.
 */
export type TaskStatus = 'not-started' | 'opened' | 'in-progress' | 'submitted' | 'gave-up';

/** Words for a status, as the tree and the brief say them. */
export const STATUS_TEXT: Record<TaskStatus, string> = {
  'not-started': 'not started', opened: 'opened, clock not started', 'in-progress': 'in progress', submitted: 'submitted', 'gave-up': 'gave up',
};

/** The status as a task row's label ends with it (nothing for `not-started`). */
const SHORT_STATUS: Record<TaskStatus, string> = { 'not-started': '', opened: 'opened', 'in-progress': 'in progress', submitted: 'submitted', 'gave-up': 'gave up' };

/**
 * A task row's label, the essentials first so that the default sidebar width shows them:
 * `<index> · T<type>[ · no_answer][ · ⚠n][ · <status>]` (the tree adds `: <question>`).
 */
export function taskLabel(t: Pick<Task, 'index' | 'type' | 'noAnswer'>, status: TaskStatus, problems: number): string {
  return [`${t.index}`, `T${t.type}`, ...(t.noAnswer ? ['no_answer'] : []), ...(problems ? [`⚠${problems}`] : []),
    ...(status === 'not-started' ? [] : [SHORT_STATUS[status]])].join(' · ');
}
