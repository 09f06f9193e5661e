import { createHash } from 'node:crypto';
import type { Subject } from './types';

/**
 * Where a subject's judgements live in the store, and how two subjects are compared.
 *
 *     runs/<run>/                      a run
 *     runs/<run>/steps/<step>/         one step of a run (0-based)
 *     runs/<run>/items/<item>/         a judge item of one run
 *     tasks/<conf>/<paper>/<index>/    a task
 *     tasks/<conf>/<paper>/<index>/items/<item>/   a judge item of a task (no run)
 *
 * Each `<…>` is one path segment made safe by {@link safeSegment}.
 */

/** Longest segment kept as is; longer ones keep a prefix and a hash (file systems cap a name at 255 bytes). */
const MAX_SEGMENT = 96;

/**
 * A string as one portable path segment: ASCII letters, digits, `.`, `_` and `-` stay; every other
 * byte of its UTF-8 form is written `%XX` (so `file:ab#1` is `file%3Aab%231`, and the mapping is
 * one to one); `.` and `..` become `%2E` and `%2E%2E`. Longer than 96 characters: the first 64 and
 * `~` and the first 16 hex characters of the SHA-256 of the whole.
 */
export function safeSegment(s: string): string {
  let out = '';
  for (const b of Buffer.from(s, 'utf8')) {
    const c = String.fromCharCode(b);
    out += /[A-Za-z0-9._-]/.test(c) ? c : `%${b.toString(16).toUpperCase().padStart(2, '0')}`;
  }
  if (out === '.' || out === '..') out = out.replace(/\./g, '%2E');
  if (out.length > MAX_SEGMENT) out = `${out.slice(0, 64)}~${createHash('sha256').update(s).digest('hex').slice(0, 16)}`;
  return out;
}

/** A task id's folder segments (`conf/paper/index`, each made safe). */
function taskSegments(task: string): string[] {
  return task.split('/').map(safeSegment);
}

/** The folder of `subject` under the store's root, as path segments (join with the platform's separator). */
export function subjectSegments(subject: Subject): string[] {
  switch (subject.kind) {
    case 'run':
      return subject.step === undefined ? ['runs', safeSegment(subject.run)] : ['runs', safeSegment(subject.run), 'steps', String(subject.step)];
    case 'item':
      return subject.run === undefined
        ? ['tasks', ...taskSegments(subject.task), 'items', safeSegment(subject.item)]
        : ['runs', safeSegment(subject.run), 'items', safeSegment(subject.item)];
    case 'task':
      return ['tasks', ...taskSegments(subject.task)];
  }
}

/** One string per subject: equal subjects give equal keys (members in a fixed order, absent ones left out). */
export function subjectKey(subject: Subject): string {
  switch (subject.kind) {
    case 'run': return JSON.stringify(['run', subject.run, subject.step ?? null]);
    case 'item': return JSON.stringify(['item', subject.task, subject.item, subject.run ?? null]);
    case 'task': return JSON.stringify(['task', subject.task]);
  }
}

/** A subject's words for a message: `run session:ab12… step 3`, `item requirement:2 of neurips/1/0`, `task neurips/1/0`. */
export function describeSubject(subject: Subject): string {
  switch (subject.kind) {
    case 'run': return `run ${subject.run}${subject.step === undefined ? '' : ` step ${subject.step}`}`;
    case 'item': return `item ${subject.item} of ${subject.task}${subject.run === undefined ? '' : ` in run ${subject.run}`}`;
    case 'task': return `task ${subject.task}`;
  }
}
