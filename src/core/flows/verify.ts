import { runVerification, summary, type VerifyLimits, type VerifyOptions } from '../verify';
import { recordedVerifyOptions } from './prepareTask';
import type { StepFn } from './steps';

/**
 * The verifier as a step after submit ({@link submitAndScore}'s `verify`): a clean run; `ok` is
 * `E_clean`. Errors (no engine, no image) become the step's `error`. The session's recorded
 * environment (manifest `environment`: image, time, memory, GPUs) applies over `fallbackLimits`
 * (defaults such as the window's settings) and under `opts.limits` and `opts.image` (explicit).
 */
export function verifyStep(opts: Omit<VerifyOptions, 'signal'> & { fallbackLimits?: Partial<VerifyLimits> } = {}): StepFn {
  const { fallbackLimits, ...rest } = opts;
  return async (layout, signal) => {
    const recorded = await recordedVerifyOptions(layout.root);
    const r = await runVerification(layout.root, {
      ...rest, image: rest.image ?? recorded.image, limits: { ...fallbackLimits, ...recorded.limits, ...rest.limits }, signal,
    });
    return { ok: r.E_clean === true, summary: summary(r), record: 'private/verify/latest.json' };
  };
}
