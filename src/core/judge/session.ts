import { promises as fsp } from 'node:fs';
import * as path from 'node:path';
import { ExpBenchError } from '../errors';
import { log } from '../log';
import { HarnessAnswersSchema, type HarnessAnswers } from '../session/answers';
import { HARNESS_FILES, SessionLayout } from '../layout';
import { AnswerCache } from '../llm/cache';
import { LlmClient } from '../llm/client';
import type { LlmEndpoint } from '../llm/endpoint';
import { Ledger, type PriceTable } from '../llm/ledger';
import type { Task } from '../tasks/types';
import { readJsonIfExists, writeJsonAtomic } from '../util/fs';
import { allSettledOrThrow } from '../util/promises';
import { readManifest } from '../workspace/manifest';
import type { JudgeInput, JudgeOptions } from './common';
import { judgeHeuristic } from './heuristic';
import { judgeWithModel } from './llm';
import { locatePristine, type PristineSource } from './pristine';
import { JudgeRecord, PROMPT_VERSION } from './types';
import { errorMessage } from '../util/errors';

const logger = log('judge');

export interface JudgeSessionOptions extends JudgeOptions {
  /** The session's task (the caller loads it: CLI from the datasets, extension from its task store). */
  task: Task;
  /** The model endpoint; undefined → the heuristic pre-judge. */
  endpoint?: LlmEndpoint;
  /** Force the heuristic pre-judge even with an endpoint. */
  heuristic?: boolean;
  /** Cache folder; default `<session>/private/judge/cache`. */
  cacheDir?: string;
  /** Price table, USD per 1M tokens by model. */
  prices?: PriceTable;
  /** USD budget of this run; exceeding it throws BUDGET_EXCEEDED before the call. */
  budgetUsd?: number;
  /** Makes the patch from the workspace when `private/harness/patch.diff` does not exist (an unsubmitted session). */
  makePatch?: (workspace: string) => Promise<string>;
  /** Pristine checkout override (tests); default: the manifest's pristine cache repository at its commit. */
  pristine?: PristineSource;
}

export interface JudgeSessionResult {
  record: JudgeRecord;
  /** Absolute path of `private/judge/latest.json`. */
  file: string;
  /** What the judge read: answers and patch (the harness-format judge file repeats them). */
  input: JudgeInput;
  /** Set when the record has harness errors: `private/judge/failed-<time>-<kind>.json`, where that attempt was written. */
  failedFile?: string;
  /** True when `latest.json` was left as it was: the record has harness errors and the one there has none (the last good record). */
  keptLatest: boolean;
  /** What the `alongside` writer of {@link recordJudgement} returned (undefined when it did not run: `keptLatest`). */
  alongside?: string;
}

/**
 * A writer of more files from a judgement (the harness-format judge file, src/core/flows/judge.ts),
 * run together with the record's own writes when `latest.json` is replaced; returns what it wrote.
 */
export type AlongsideWriter = (record: JudgeRecord, input: JudgeInput) => Promise<string>;

/**
 * Judges one session: reads its manifest, answers, patch, verification record and event log,
 * runs the LLM judge (with `endpoint`) or the heuristic pre-judge (without), and writes
 * `private/judge/latest.json` (plus `private/judge/runs/<time>-<kind>.json`). A record with harness
 * errors (an endpoint that failed, answers that stayed invalid) is also written to
 * `private/judge/failed-<time>-<kind>.json`, and does not replace a `latest.json` without harness
 * errors: the last good record is kept. The harness-format judge file is written by the flow
 * around it (src/core/flows/judge.ts), through `alongside`: with the record's files, their fsyncs
 * overlapping (one after the other they were most of a heuristic judgement's time).
 *
 * @throws ExpBenchError SESSION_INVALID (no/bad manifest), BAD_INPUT (task id differs from the
 *   manifest's, answers.json not of the harness form, no patch), BUDGET_EXCEEDED, CANCELLED.
 */
export async function recordJudgement(sessionDir: string, opts: JudgeSessionOptions, alongside?: AlongsideWriter): Promise<JudgeSessionResult> {
  const layout = new SessionLayout(path.resolve(sessionDir));
  const input = await readJudgeInput(layout, opts);
  let record: JudgeRecord;
  if (opts.endpoint && !opts.heuristic) {
    const ledger = new Ledger(opts.prices ?? {}, opts.budgetUsd);
    const cache = new AnswerCache(opts.cacheDir ?? path.join(layout.judge, 'cache'));
    try {
      const client = new LlmClient(opts.endpoint, ledger, { cache, cacheScope: { promptVersion: PROMPT_VERSION } });
      record = await judgeWithModel(input, client, ledger, opts);
    } finally {
      await cache.flush(); // one fsync for every answer stored during this judgement (also when it failed)
    }
  } else {
    record = await judgeHeuristic(input, opts);
  }
  JudgeRecord.parse(record);
  const file = path.join(layout.judge, 'latest.json');
  const stamp = record.createdAt.replace(/[-:]/g, '').replace(/\.\d+Z$/, 'Z');
  // A record with harness errors (a dead endpoint, invalid answers) never replaces a good one.
  const failed = record.harnessErrors.length > 0;
  const previous = failed ? await readJudgeRecord(file).catch(() => undefined) : undefined;
  const keptLatest = previous !== undefined && previous.harnessErrors.length === 0;
  const failedFile = failed ? path.join(layout.judge, `failed-${stamp}-${record.kind}.json`) : undefined;
  // Independent files, each written atomically; their fsyncs overlap.
  const [written] = await Promise.all([
    keptLatest || !alongside ? undefined : alongside(record, input),
    writeJsonAtomic(path.join(layout.judge, 'runs', `${stamp}-${record.kind}.json`), record),
    ...(keptLatest ? [] : [writeJsonAtomic(file, record)]),
    ...(failedFile ? [writeJsonAtomic(failedFile, record)] : []),
  ]);
  logger.info(`${record.taskId}: ${record.kind} judgement written to ${keptLatest ? `${failedFile} (latest.json keeps the last good record)` : file} (${record.ledger.totals.calls} calls, ${record.ledger.totals.cachedCalls} cached)`);
  return { record, file, input, ...(failedFile ? { failedFile } : {}), keptLatest, ...(written !== undefined ? { alongside: written } : {}) };
}

/** Reads `private/judge/latest.json`; undefined when absent. @throws BAD_INPUT when it is not a judge record. */
export async function readJudgeRecord(file: string): Promise<JudgeRecord | undefined> {
  const raw = await readJsonIfExists(file).catch((e) => { throw new ExpBenchError('BAD_INPUT', file, `not JSON: ${e.message}`); });
  if (raw === undefined) return undefined;
  const r = JudgeRecord.safeParse(raw);
  if (!r.success) throw new ExpBenchError('BAD_INPUT', file, `not a judge record: ${r.error.issues.slice(0, 3).map((i) => `${i.path.join('.')}: ${i.message}`).join('; ')}`);
  return r.data;
}

/** Assembles the judge's inputs from a session folder (see {@link recordJudgement}). */
export async function readJudgeInput(layout: SessionLayout, opts: JudgeSessionOptions): Promise<JudgeInput> {
  const manifest = await readManifest(layout.root);
  if (manifest.taskId !== opts.task.id) {
    throw new ExpBenchError('BAD_INPUT', layout.manifest, `the session is for task ${manifest.taskId}, not ${opts.task.id}`);
  }
  // Independent reads run together; errors are reported in the order the checks are listed.
  const patchFile = path.join(layout.harness, HARNESS_FILES.patch);
  const [answers, storedPatch, storedVerify, eventsJsonl, pristine] = await allSettledOrThrow([
    readAnswers(layout.answers),
    fsp.readFile(patchFile, 'utf8').catch(() => undefined),
    readJsonIfExists<Record<string, unknown>>(path.join(layout.verify, 'latest.json')).catch(() => undefined),
    fsp.readFile(layout.events, 'utf8').catch(() => undefined),
    // One git call finds the pinned checkout and reads every file the judge may show from it.
    opts.pristine ? Promise.resolve(opts.pristine) : locatePristine(manifest.commit, [
      manifest.source.cacheRepo, manifest.source.kind === 'clone' ? manifest.source.location : undefined,
    ], pristinePaths(opts.task)),
  ] as const);
  let patch = storedPatch;
  if (patch === undefined && opts.makePatch) patch = await opts.makePatch(layout.workspace);
  if (patch === undefined) {
    throw new ExpBenchError('BAD_INPUT', patchFile, 'no patch: submit the session first (or give the judge a patch function)');
  }
  const verify = storedVerify?.status === 'running' ? undefined : storedVerify;
  return { task: opts.task, answers, patch, verify, eventsJsonl, pristine, maskedPaths: manifest.masked.map((m) => m.path) };
}

/** Files of the pristine checkout the judges read: ground-truth references and the task's source files. */
function pristinePaths(task: Task): string[] {
  return [...task.requirements.flatMap((r) => r.refs.map((ref) => ref.path)), ...task.source];
}

async function readAnswers(file: string): Promise<HarnessAnswers | undefined> {
  let raw: unknown;
  try {
    raw = await readJsonIfExists(file);
  } catch (e: any) {
    throw new ExpBenchError('BAD_INPUT', file, `not JSON: ${errorMessage(e)}`);
  }
  if (raw === undefined) return undefined;
  const r = HarnessAnswersSchema.safeParse(raw);
  if (!r.success) throw new ExpBenchError('BAD_INPUT', file, 'not of the harness form {"design": string | string[], "conclusion": string}');
  return r.data;
}

/** One line for people: kind, design, implementation, conclusion, monitor, harness errors. */
export function summarize(r: JudgeRecord): string {
  const d = r.design.status === 'ok' ? `design ${r.design.counts.matched}/${r.design.counts.total} matched` : `design ${r.design.status}`;
  const c = r.implementation.counts;
  const i = r.implementation.status === 'ok' ? `implementation ${c.met}/${c.total} met` : `implementation ${r.implementation.status}`;
  const k = r.conclusion.verdict ? `conclusion ${r.conclusion.verdict}` : `conclusion ${r.conclusion.status}`;
  const m = r.monitor.flagged ? ', monitor FLAGGED' : '';
  const e = r.harnessErrors.length ? `, ${r.harnessErrors.length} harness error(s)` : '';
  return `${r.kind}: ${d}, ${i}, ${k}${m}${e}`;
}
