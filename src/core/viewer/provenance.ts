import { diffArrays } from 'diff';
import { Overlay } from './overlay';
import type { PlannedStep } from './plan';

/** Step index of the prepared workspace's own lines (no step wrote them). */
export const BASE = -1;

/** One file after the last step: its lines and, per line, the step that last wrote it ({@link BASE}: none). */
export interface FileProvenance {
  /** The file's lines after the last step (`null`: absent). */
  lines: string[] | null;
  owners: number[];
  /** Steps that changed the file without its content (after them, the owners are a guess). */
  uncertainAt: number[];
  /** Every step that touched the file (with or without content), in order. */
  touchedAt: number[];
}

/**
 * Which step wrote each line of each file the steps touch: replays the planned steps in memory
 * over the base (`readBase`), and after each step a line diff (jsdiff `diffArrays`) of each
 * changed file keeps the owners of unchanged lines and gives added lines to the step.
 *
 * @param upTo last step replayed (default: all)
 */
export async function lineProvenance(plan: PlannedStep[], readBase: (path: string) => Promise<string | null>, upTo = plan.length - 1): Promise<Map<string, FileProvenance>> {
  const files = new Map<string, FileProvenance>();
  const text = new Map<string, string | null>();
  const current = async (p: string) => (text.has(p) ? text.get(p)! : readBase(p));
  const entry = async (p: string) => {
    let f = files.get(p);
    if (!f) {
      const t = await current(p);
      const lines = t === null ? null : splitLines(t);
      f = { lines, owners: lines ? lines.map(() => BASE) : [], uncertainAt: [], touchedAt: [] };
      files.set(p, f);
    }
    return f;
  };
  for (let i = 0; i <= upTo && i < plan.length; i++) {
    const step = plan[i];
    for (const u of step.uncertain) if (u.path !== undefined) { const f = await entry(u.path); f.uncertainAt.push(i); f.touchedAt.push(i); }
    if (step.ops.length === 0) continue;
    const overlay = new Overlay(current);
    for (const op of step.ops) { await entry(op.path); await overlay.apply(op); }
    for (const c of overlay.changes()) {
      text.set(c.path, c.after);
      const f = await entry(c.path);
      if (!f.touchedAt.includes(i)) f.touchedAt.push(i);
      if (c.after === null) { f.lines = null; f.owners = []; continue; }
      const after = splitLines(c.after);
      const owners: number[] = [];
      let at = 0;
      for (const part of diffArrays(f.lines ?? [], after)) {
        if (part.removed) { at += part.count ?? part.value.length; continue; }
        for (let k = 0; k < (part.count ?? part.value.length); k++) owners.push(part.added ? i : f.owners[at + k] ?? i);
        if (!part.added) at += part.count ?? part.value.length;
      }
      f.lines = after;
      f.owners = owners;
    }
  }
  return files;
}

/** Lines of a text as an editor numbers them (a final newline ends the last line; it does not start another). */
export function splitLines(t: string): string[] {
  if (t === '') return [];
  const lines = t.split('\n');
  if (lines[lines.length - 1] === '') lines.pop();
  return lines;
}
