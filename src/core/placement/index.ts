/**
 * Placement: where a run set's units run (docs/placement.md). The interface (types.ts), fitting
 * resources to capacity (fit.ts), how a unit is started (cli.ts: the project's own CLI), the
 * `local` implementation (local.ts), the `slurm` one (slurm/), and the spec's `placement` member (spec.ts).
 */
export * from './types';
export * from './fit';
export * from './cli';
export * from './local';
export * from './spec';
export * from './slurm/placement';
export * from './slurm/spec';
export * from './slurm/env';
