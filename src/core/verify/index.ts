/**
 * The verifier (E): clean run, claims check, script lint, record. See run.ts for the run,
 * claims.ts for the claim rules, lint.ts for the lint rules, record.ts for the record schema.
 */

export { checkClaims, extractClaims } from './claims';
export { summary, verifyRemovalsSettled } from './finish';
export { claimsStatus } from './sessionClaims';
export type { SessionClaimsStatus } from './sessionClaims';
export { lintScript } from './lint';
export type { LogLine } from './logs';
export { DEFAULT_LOG_CAP_BYTES, MIN_LOG_CAP_BYTES } from './logs';
export { collectOrReattach } from './reattach';
export type { ReattachResult } from './reattach';
export * from './record';
export { DEFAULT_LIMITS, runVerification, VERIFY_COMMAND } from './run';
export type { VerifyOptions } from './run';
