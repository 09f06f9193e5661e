import { createPatch } from 'diff';
import type { Step } from '../steps/step';

/** One file edit of a step as the viewer shows it: a unified diff, made from before/after when the source has none. */
export interface EditDiff {
  path: string;
  op?: string;
  /** Unified diff text (may be empty: a created or deleted file whose contents the source does not carry). */
  diff: string;
  /** True when the diff was made here (jsdiff `createPatch`) from the source's before/after text. */
  made: boolean;
}

/**
 * The diffs of a step's edits: the source's unified diff when it has one (not empty), else jsdiff's
 * `createPatch(path, before, after)` of the before/after text (`old_str`/`new_str`,
 * `file_text`: a missing side is empty), else an empty diff (the source says only that a file
 * changed).
 */
export function editDiffs(step: Step): EditDiff[] {
  return (step.edits ?? []).map((e) => {
    // an empty diff beside before/after text (OpenHands V0 str_replace observations) says nothing: made from the texts
    if (e.diff !== undefined && (e.diff.trim() !== '' || (e.before === undefined && e.after === undefined))) return { path: e.path, op: e.op, diff: e.diff, made: false };
    if (e.before !== undefined || e.after !== undefined) {
      return { path: e.path, op: e.op, diff: createPatch(e.path, e.before ?? '', e.after ?? '', '', '', { context: 3 }), made: true };
    }
    return { path: e.path, op: e.op, diff: '', made: false };
  });
}
