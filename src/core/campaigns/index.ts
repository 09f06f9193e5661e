/**
 * Baseline campaigns (docs/campaigns.md, issue 32): a run set whose units are people's proctored
 * sessions. The spec (spec.ts), assignment (assign.ts), planning and creation into a run set
 * (plan.ts), the campaign's own log of links (log.ts), per-person link tokens (tokens.ts), what
 * is read of each session (sessions.ts), the person's view, the organiser's board and the time
 * sheet (views.ts), working-time budgets of `perPerson.hours` (budget.ts), the front door
 * (front.ts) and the sessions it serves (serve.ts, proxy.ts).
 */
export * from './spec';
export * from './assign';
export * from './plan';
export * from './log';
export * from './tokens';
export * from './sessions';
export * from './views';
export * from './links';
export * from './front';
export * from './budget';
export * from './proxy';
export * from './serve';
