import type { Trajectory, TrajectoryFormat, TrajProblem } from './types';

/**
 * What an importer is given: where to hand each finished trajectory (one at a time, so a large
 * file is never held whole) and where file-level problems go.
 */
export interface ImportContext {
  file: string;
  /** Called once per trajectory, in source order; awaited. */
  emit(t: Trajectory): void | Promise<void>;
  /**
   * When given, an importer that reads a large trajectory whole (an Inspect sample of more than
   * {@link HEAD_EVENTS} events) first hands over its head: the same mapping over the first
   * {@link HEAD_EVENTS} events only (a viewer shows it while the rest is mapped; the trajectory
   * itself follows through `emit`). Never awaited for long: the caller only keeps it.
   */
  head?(t: Trajectory): void;
  /** A problem about the file rather than one trajectory (truncated archive, unreadable entry). */
  problem(p: Omit<TrajProblem, 'file'> & { file?: string }): void;
}

/** Source events of a trajectory's head (see {@link ImportContext.head}): about 2,000 rows of an Inspect react agent. */
export const HEAD_EVENTS = 5000;

/** An importer: reads `ctx.file` (already detected as its format) and emits its trajectories. */
export type Importer = (ctx: ImportContext, format: TrajectoryFormat) => Promise<void>;
