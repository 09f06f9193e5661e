import { runVerification, summary, type VerifyOptions } from '../verify';
import type { StepFn } from './steps';

/**
 * The verifier as a step after submit ({@link submitAndScore}'s `verify`): a clean run; `ok` is
 * `E_clean`. Errors (no engine, no image) become the step's `error`.
 */
export function verifyStep(opts: Omit<VerifyOptions, 'signal'> = {}): StepFn {
  return async (layout, signal) => {
    const r = await runVerification(layout.root, { ...opts, signal });
    return { ok: r.E_clean === true, summary: summary(r), record: 'private/verify/latest.json' };
  };
}
