/**
 * The verifier (E): clean run, claims check, script lint, record. See run.ts for the run,
 * claims.ts for the claim rules, lint.ts for the lint rules, record.ts for the record schema.
 */
import type { StepFn } from '../session/submit';
import { summary } from './finish';
import { runVerification, VerifyOptions } from './run';

export { checkClaims, extractClaims } from './claims';
export { summary } from './finish';
export { lintScript } from './lint';
export type { LogLine } from './logs';
export { DEFAULT_LOG_CAP_BYTES } from './logs';
export { collectOrReattach } from './reattach';
export type { ReattachResult } from './reattach';
export * from './record';
export { DEFAULT_LIMITS, runVerification, VERIFY_COMMAND } from './run';
export type { VerifyOptions } from './run';

/**
 * The verifier as a submit step (src/core/session/submit.ts `SubmitOptions.verify`): a clean run;
 * `ok` is `E_clean`. Errors (no engine, no image) propagate to the submit step's `error`.
 */
export function verifyStep(opts: Omit<VerifyOptions, 'signal'> = {}): StepFn {
  return async (layout, signal) => {
    const r = await runVerification(layout.root, { ...opts, signal });
    return { ok: r.E_clean === true, summary: summary(r), record: 'private/verify/latest.json' };
  };
}
