import type { Trajectory, TrajectoryFormat, TrajProblem } from './types';

/**
 * What an importer is given: where to hand each finished trajectory (one at a time, so a large
 * file is never held whole) and where file-level problems go.
 */
export interface ImportContext {
  file: string;
  /** Called once per trajectory, in source order; awaited. */
  emit(t: Trajectory): void | Promise<void>;
  /** A problem about the file rather than one trajectory (truncated archive, unreadable entry). */
  problem(p: Omit<TrajProblem, 'file'> & { file?: string }): void;
}

/** An importer: reads `ctx.file` (already detected as its format) and emits its trajectories. */
export type Importer = (ctx: ImportContext, format: TrajectoryFormat) => Promise<void>;
