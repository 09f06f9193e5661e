import * as path from 'node:path';
import { parseLine } from '../steps/events';
import type { Phase } from '../steps/phases';
import { stepFromSessionEvent } from '../steps/step';
import { readLines } from '../util/jsonl';
import { finishTrajectory } from './finish';
import { TrajectoryBuilder, type Trajectory } from './types';

/**
 * This project's own session log `private/events.jsonl` (docs/events.md) → one trajectory, phases
 * exact (steps/step.ts `stepFromSessionEvent`). Invalid lines and a torn last line are problems.
 * The id is the session folder's name when the file sits in `<session>/private/`.
 * `opts.maxLines`: read only the first lines (the viewer's first page while the rest is imported);
 * a cut import has no problem for the cut, the caller knows it asked for a prefix.
 */
export async function importOwnEvents(file: string, opts: { maxLines?: number } = {}): Promise<Trajectory> {
  const dir = path.dirname(file);
  const id = path.basename(dir) === 'private' ? path.basename(path.dirname(dir)) : path.basename(file, '.jsonl');
  const b = new TrajectoryBuilder(id, 'expbench-events', file);
  b.exactPhases = true;
  let phase: Phase = 'design';
  for await (const l of readLines(file, { missing: 'throw' })) {
    if (opts.maxLines !== undefined && l.line > opts.maxLines) break;
    if (l.kind === 'torn') { b.problem('', `torn last line (no newline; ${l.text.length} characters): a writer died mid-line`, { line: l.line, offset: l.offset }); continue; }
    b.sourceEvents++;
    const p = parseLine(l.text, l.line, l.offset);
    if (p.kind !== 'event') { b.problem('', p.kind === 'invalid' ? p.error : 'torn line', { line: l.line, offset: l.offset }); continue; }
    if (p.event.type === 'session.opened' && p.event.taskId) b.task = p.event.taskId;
    const r = stepFromSessionEvent(p.event, phase, { file, line: l.line, offset: l.offset });
    phase = r.phase;
    if (r.step) { b.add(r.step); b.mappedEvents++; }
  }
  return finishTrajectory(b);
}
