import type { SessionLayout } from '../layout';
import { errorMessage } from '../util/errors';

/** What a step run after submission (verifier, judge) reports back; recorded as `verify.finished` / `judge.finished`. */
export interface StepReport {
  ok: boolean;
  /** One line for people, e.g. `E = true (exit 0, 3/3 claims found)`. */
  summary?: string;
  /** Where the step wrote its result, relative to the session root (e.g. `private/verify/latest.json`). */
  record?: string;
}

/** A step of the flow after submit: works on a session folder, reports what it did. */
export type StepFn = (layout: SessionLayout, signal?: AbortSignal) => Promise<StepReport>;

/** A step's report, or the message of the error it threw (a failing step never undoes what came before). */
export interface StepOutcome extends StepReport { error?: string }

/** Runs `fn`; an error becomes `{ ok: false, error }` instead of a rejection. */
export async function runStep(fn: StepFn, layout: SessionLayout, signal?: AbortSignal): Promise<StepOutcome> {
  try {
    const r = await fn(layout, signal);
    return { ok: r.ok, ...(r.summary ? { summary: r.summary } : {}), ...(r.record ? { record: r.record } : {}) };
  } catch (e) {
    return { ok: false, error: errorMessage(e) };
  }
}
