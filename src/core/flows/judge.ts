import * as path from 'node:path';
import { writeHarnessJudge } from '../interop/harnessOut';
import { SessionLayout } from '../layout';
import { recordJudgement, summarize, type JudgeSessionOptions } from '../judge/session';
import type { JudgeRecord } from '../judge/types';
import type { StepFn } from './steps';

/** What {@link judgeSession} wrote. */
export interface JudgeFlowResult {
  record: JudgeRecord;
  /** Absolute path of `private/judge/latest.json`. */
  file: string;
  /** Harness-format judge file written beside it (`private/harness/judge.json`, or `judge.heuristic.json`). */
  harnessFile: string;
}

/**
 * Judges one session (src/core/judge/session.ts `recordJudgement`: the LLM judge with an endpoint,
 * the heuristic pre-judge without) and writes the harness-format judge file in `private/harness/`
 * (src/core/interop/harnessOut.ts).
 * @throws what `recordJudgement` throws
 */
export async function judgeSession(sessionDir: string, opts: JudgeSessionOptions): Promise<JudgeFlowResult> {
  const { record, file, input } = await recordJudgement(sessionDir, opts);
  const harnessFile = await writeHarnessJudge(new SessionLayout(path.resolve(sessionDir)), record, { answers: input.answers, patch: input.patch });
  return { record, file, harnessFile };
}

/**
 * The judge as a step after submit (src/core/flows/submit.ts): judges the session and reports a
 * one-line summary such as `llm: design 5/7, implementation 9/14 met, conclusion correct`.
 */
export function judgeStep(opts: Omit<JudgeSessionOptions, 'signal'>): StepFn {
  return async (layout, signal) => {
    const { record, file } = await judgeSession(layout.root, { ...opts, signal });
    return { ok: record.harnessErrors.length === 0, summary: summarize(record), record: path.relative(layout.root, file).split(path.sep).join('/') };
  };
}
