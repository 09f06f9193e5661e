/**
 * Run sets (docs/runs.md): a benchmark's worth of units (tasks × actors × attempts) run as one
 * resumable thing. The spec (spec.ts), units keyed by content (keys.ts, plan.ts, imports.ts), the
 * append-only state (state.ts, fold.ts), the orchestrator (orchestrator.ts) and one unit's
 * execution (exec.ts, result.ts), status and board rows (status.ts), cancel (cancel.ts), the
 * report (report.ts). Units are placed through src/core/placement (docs/placement.md).
 */
export * from './spec';
export * from './keys';
export * from './plan';
export * from './state';
export * from './fold';
export * from './layout';
export * from './lock';
export * from './create';
export * from './result';
export * from './session';
export * from './exec';
export * from './orchestrator';
export * from './status';
export * from './cancel';
export * from './report';
