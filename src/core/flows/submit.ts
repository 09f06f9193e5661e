import type { SessionLayout } from '../layout';
import type { Session } from '../session/session';
import { freezeAndRecord, withSubmission, type SubmitAnswers, type SubmitOptions, type SubmitResult } from '../session/submit';
import { runStep, type StepFn, type StepOutcome } from './steps';

/** Options of {@link submitAndScore}: those of the session's submit, plus the steps after it. */
export interface SubmitFlowOptions extends SubmitOptions {
  /** Runs the verifier (E) after submission; omitted → skipped. */
  verify?: StepFn;
  /** Runs the judge (D, I, C) after verification; omitted → skipped. */
  judge?: StepFn;
  signal?: AbortSignal;
}

/** A submission and the outcomes of the steps run after it. */
export interface SubmitFlowResult extends SubmitResult {
  verify?: StepOutcome;
  judge?: StepOutcome;
}

/**
 * The flow submit → verify → judge on one session: freezes the work tree and the answers
 * (src/core/session/submit.ts), then runs `verify` and `judge` if given (both read the frozen
 * submission, never the live workspace), each recorded as `verify.finished` / `judge.finished`
 * in the session's event log. A failing step is reported in the result; it never undoes the
 * submission. The submit lock is held for the freeze only: a second submission waits for it,
 * then is refused without taking the session over, so that this one's steps are still recorded.
 *
 * `target` is an open {@link Session} (held by the session service) or a session folder's layout
 * (opened and closed here, as client `cli`).
 * @throws what `submit` throws (nothing is frozen then)
 */
export async function submitAndScore(target: Session | SessionLayout, answers: SubmitAnswers, opts: SubmitFlowOptions = {}): Promise<SubmitFlowResult> {
  return withSubmission(target, 'submit', async (session, release) => {
    const result: SubmitFlowResult = await freezeAndRecord(session, answers, opts);
    await release();
    if (opts.verify) {
      result.verify = await runStep(opts.verify, session.layout, opts.signal);
      await session.events.append({ type: 'verify.finished', ...result.verify });
    }
    if (opts.judge) {
      result.judge = await runStep(opts.judge, session.layout, opts.signal);
      await session.events.append({ type: 'judge.finished', ...result.judge });
    }
    return result;
  });
}
