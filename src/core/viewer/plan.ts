import { createHash } from 'node:crypto';
import type { Step } from '../steps/step';
import { normalisePath, stepChanges, type FileOp, type Uncertain } from './stepEdits';

/** What step `index` does to the files, paths made workspace-relative. */
export interface PlannedStep {
  index: number;
  ops: FileOp[];
  uncertain: Uncertain[];
}

/**
 * A content-less record of a file change (a session's `file.changed`/`file.created`, seen by the
 * workspace watcher after a 300 ms debounce, at most 2 s: docs/events.md) next to a record that
 * carries the content of the same file (the editor's `file.edited`, the agent's `write_file`) is
 * the same change seen twice: within this many ms of it (both timed), or this many steps (untimed).
 */
const SAME_CHANGE_MS = 3000;
const SAME_CHANGE_STEPS = 3;

/**
 * Every step's file changes ({@link stepChanges}), paths normalised against the base tree's
 * top-level names; an `unknown` change of a file that a nearby step records with its content is
 * dropped as a duplicate ({@link SAME_CHANGE_MS}); a path outside the workspace is uncertain.
 */
export function planSteps(steps: readonly Step[], topLevel: ReadonlySet<string>): PlannedStep[] {
  const plan: PlannedStep[] = steps.map((s, index) => {
    const c = stepChanges(s);
    const ops: FileOp[] = [];
    const uncertain: Uncertain[] = c.uncertain.filter((u) => u.path === undefined);
    for (const op of c.ops) {
      const p = normalisePath(op.path, topLevel);
      if (p === undefined) { uncertain.push({ path: op.path, why: `the path is outside the workspace (${op.kind})` }); continue; }
      ops.push({ ...op, path: p });
    }
    return { index, ops, uncertain };
  });
  const withContent = new Map<string, number[]>();
  plan.forEach((p) => { for (const op of p.ops) if (op.kind !== 'unknown') (withContent.get(op.path) ?? withContent.set(op.path, []).get(op.path)!).push(p.index); });
  for (const p of plan) {
    p.ops = p.ops.filter((op) => {
      if (op.kind !== 'unknown') return true;
      if ((withContent.get(op.path) ?? []).some((j) => sameChange(steps[p.index], steps[j], p.index, j))) return false;
      p.uncertain.push({ path: op.path, why: op.why });
      return true;
    });
  }
  return plan;
}

function sameChange(a: Step, b: Step, i: number, j: number): boolean {
  if (a.time && b.time) return Math.abs(a.time.ms - b.time.ms) <= SAME_CHANGE_MS;
  return Math.abs(i - j) <= SAME_CHANGE_STEPS;
}

/**
 * A running hash of the steps' file changes: `chain[i]` changes when anything that steps 0..i do
 * to files changes (a re-import, another file under the same name), so that a cached tree is
 * reused only for the same history.
 */
export function changeChain(steps: readonly Step[]): string[] {
  const out: string[] = [];
  let h = '';
  for (const s of steps) {
    const relevant = { e: s.edits, t: s.action?.tool, c: s.action?.command, a: s.action?.arguments, x: s.errors, o: s.observation?.error };
    h = createHash('sha1').update(h).update(JSON.stringify(relevant) ?? '').digest('hex');
    out.push(h);
  }
  return out;
}
