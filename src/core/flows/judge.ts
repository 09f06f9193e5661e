import * as path from 'node:path';
import { writeHarnessJudge } from '../interop/harnessOut';
import { SessionLayout } from '../layout';
import { recordJudgement, summarize, type JudgeSessionOptions } from '../judge/session';
import type { JudgeRecord } from '../judge/types';
import type { JudgeRecord as Record_ } from '../judge/types';
import { runOffThread } from './offThread';
import type { StepFn } from './steps';

/** What {@link judgeSession} wrote. */
export interface JudgeFlowResult {
  record: JudgeRecord;
  /** Absolute path of `private/judge/latest.json`. */
  file: string;
  /** Harness-format judge file written beside it (`private/harness/judge.json`, or `judge.heuristic.json`); absent when `latest.json` was kept. */
  harnessFile?: string;
  /** The failed attempt's file (`private/judge/failed-<time>-<kind>.json`) when the record has harness errors. */
  failedFile?: string;
  /** True when `latest.json` (and the harness file) kept the last good record: this attempt had harness errors. */
  keptLatest: boolean;
}

/**
 * Judges one session (src/core/judge/session.ts `recordJudgement`: the LLM judge with an endpoint,
 * the heuristic pre-judge without) and writes the harness-format judge file in `private/harness/`
 * (src/core/interop/harnessOut.ts), except when an attempt with harness errors left the last good
 * `latest.json` in place (then the harness file, which repeats it, stays too). The harness file is
 * written at the same time as the record's files.
 * @throws what `recordJudgement` throws
 */
export async function judgeSession(sessionDir: string, opts: JudgeSessionOptions): Promise<JudgeFlowResult> {
  const layout = new SessionLayout(path.resolve(sessionDir));
  // The harness file is written together with the record's own files (their fsyncs overlap).
  const { record, file, failedFile, keptLatest, alongside: harnessFile } = await recordJudgement(sessionDir, opts,
    (r, input) => writeHarnessJudge(layout, r, { answers: input.answers, patch: input.patch }));
  return { record, file, keptLatest, ...(harnessFile ? { harnessFile } : {}), ...(failedFile ? { failedFile } : {}) };
}

/**
 * The judge as a step after submit (src/core/flows/submit.ts): judges the session and reports a
 * one-line summary such as `llm: design 5/7, implementation 9/14 met, conclusion correct`.
 */
export function judgeStep(opts: Omit<JudgeSessionOptions, 'signal'>): StepFn {
  return async (layout, signal) => {
    const { record, file, failedFile } = await judgeSession(layout.root, { ...opts, signal });
    return { ok: record.harnessErrors.length === 0, summary: summarize(record), record: path.relative(layout.root, failedFile ?? file).split(path.sep).join('/') };
  };
}

/**
 * {@link judgeStep} run in a worker thread (offThread.ts): for hosts whose event loop serves a
 * window or an agent meanwhile (the proctored channel and its forwarder, MCP). Options as
 * judgeStep's, without functions (they do not cross to the worker).
 */
export function judgeStepOffThread(opts: Omit<JudgeSessionOptions, 'signal' | 'makePatch' | 'pristine' | 'now'>): StepFn {
  return async (layout, signal) => {
    const r = await runOffThread<{ record: Record_; file: string; failedFile?: string }>({ kind: 'judge', sessionDir: layout.root, opts }, signal);
    return { ok: r.record.harnessErrors.length === 0, summary: summarize(r.record), record: path.relative(layout.root, r.failedFile ?? r.file).split(path.sep).join('/') };
  };
}
