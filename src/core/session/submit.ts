import { z } from 'zod';
import * as path from 'node:path';
import { ExpBenchError } from '../errors';
import { catFileBatch, git } from '../git';
import { log } from '../log';
import { openRegular, writeAtomic, writeJsonAtomic } from '../util/fs';
import { SUBMITTED_REF } from '../workspace/build';
import { assertPreparationFinished } from '../workspace/folder';
import { freezeSubmission } from '../workspace/freeze';
import { openHostRepository } from '../workspace/hostRepo';
import { patchOfTree } from '../workspace/patch';
import { designLines, HarnessAnswers, HarnessAnswersSchema } from './answers';
import { designFromHarnessLines, designToHarnessLines } from './design';
import { HARNESS_FILES, SessionLayout } from '../layout';
import { Session } from './session';
import { SubmitLock } from './submitLock';
import { submittedEvent } from './outcome';
import { readState } from './store';
import { DesignDraft, DesignDraftSchema, isFinished, Outcome, SessionState } from './state';
import { errorMessage } from '../util/errors';

const logger = log('session');

/** Answers as submitted: the harness form, or the structured design from the phase editor. */
export type SubmitAnswers = HarnessAnswers | { design: DesignDraft; conclusion: string };

export interface SubmitOptions {
  /** Names the answers in errors (e.g. the answers file the CLI read); default `answers`. */
  answersSource?: string;
}

export interface SubmitResult {
  answers: HarnessAnswers;
  design: DesignDraft;
  workingMs: number;
  /** Paths written, absolute; `script` is null when the workspace has no reproduce_exp_bench.sh. */
  files: { answers: string; design: string; harnessAnswers: string; patch: string; script: string | null };
  /** The frozen submission: the work tree committed to the host repository (`refs/expbench/submitted`). */
  commit: string;
  warnings: string[];
}

/**
 * Submits the session: commits the work tree to the host repository (the frozen submission,
 * src/core/workspace/freeze.ts: what verify and the judge read from then on), freezes the answers
 * (`private/answers.json`, harness form, and `private/design.json`, structured), writes
 * `private/harness/` ({@link HARNESS_FILES}: the answers, the patch from task start to the frozen
 * commit, the frozen commit's reproduce_exp_bench.sh), stops the clock and records `submitted`.
 * Verifying and judging afterwards is a composition of steps: src/core/flows/submit.ts.
 *
 * One submission at a time ({@link withSubmission}): a second one waits for the first and is
 * then refused as already submitted, without taking the session over.
 *
 * `target` is an open {@link Session} (the extension) or a session folder's layout (opened and
 * closed here, as client `cli`).
 * @throws ExpBenchError `BAD_INPUT` naming `opts.answersSource` when they fail the schema; `SESSION_INVALID`
 *   when the session was already submitted or given up; the freeze's error (nothing is frozen then).
 */
export async function submit(target: Session | SessionLayout, answers: SubmitAnswers, opts: SubmitOptions = {}): Promise<SubmitResult> {
  return withSubmission(target, 'submit', (session) => freezeAndRecord(session, answers, opts));
}

/**
 * The submission itself, on an open session whose submit lock is held: see {@link submit}. Each
 * file is written before `state.json` says submitted (the commit point); a process stopped after
 * that point is completed by the next opener (Session.open records the missing `submitted`).
 */
export async function freezeAndRecord(session: Session, answers: SubmitAnswers, opts: SubmitOptions = {}): Promise<SubmitResult> {
  const { layout, store } = session;
  const { harness, structured } = normalise(answers, opts.answersSource ?? 'answers');
  assertNotFinished(session.layout, store.state, 'submit');
  await assertPreparationFinished(layout.root, 'submit');
  // Checked before anything is frozen: a script that is not a regular file stops the submission.
  await checkScript(layout.script);
  await session.recordDrafts();
  const warnings: string[] = [];
  const h = await openHostRepository(layout);
  // A freeze left by a submission that stopped before its commit point (state.json not
  // submitted, its lock's process gone) is replaced: the session was never submitted.
  const stale = await git(['rev-parse', '--verify', '--quiet', SUBMITTED_REF], { repo: { gitDir: h.gitDir }, okCodes: [1] });
  if (stale.code === 0) {
    logger.warn(`${layout.root}: replacing the freeze ${stale.text.trim().slice(0, 12)} of a submission that did not finish`);
    await git(['update-ref', '-d', SUBMITTED_REF], { repo: { gitDir: h.gitDir } });
  }
  const frozen = await freezeSubmission(h);
  const p = await patchOfTree(h, frozen.tree, { nested: frozen.snapshot.nestedRepositories, caches: frozen.snapshot.caches });
  const patch = p.patch;
  if (patch === '') warnings.push('the workspace has no changes since "task start": the patch is empty');
  if (p.nestedRepositories.length) warnings.push(`nested repositories taken as plain files (their own .git left out): ${p.nestedRepositories.join(', ')}`);
  const script = await frozenScript(h.gitDir, frozen.commit);

  await writeJsonAtomic(layout.answers, harness);
  const designFile = path.join(layout.private, 'design.json');
  await writeJsonAtomic(designFile, structured);
  const files: SubmitResult['files'] = {
    answers: layout.answers, design: designFile, harnessAnswers: path.join(layout.harness, HARNESS_FILES.answers),
    patch: path.join(layout.harness, HARNESS_FILES.patch), script: null,
  };
  await writeJsonAtomic(files.harnessAnswers, harness);
  await writeAtomic(files.patch, patch);
  if (script !== undefined) {
    files.script = path.join(layout.harness, HARNESS_FILES.script);
    await writeAtomic(files.script, script);
  } else {
    warnings.push('workspace/reproduce_exp_bench.sh does not exist: the verifier will fail (E = false)');
  }

  const workingMs = session.clock.stop('submitted');
  const outcome: Outcome = { at: new Date(store.now()).toISOString(), workingMs };
  store.update((s) => { s.design = structured; s.conclusion = harness.conclusion; s.submitted = outcome; });
  await store.flush();
  await session.events.append(submittedEvent(layout, { workingMs, patchBytes: Buffer.byteLength(patch), script: files.script !== null, commit: frozen.commit }));
  return { answers: harness, design: structured, workingMs, files, warnings, commit: frozen.commit };
}

/** `reproduce_exp_bench.sh` of the frozen commit (a regular file of its tree), or undefined. */
async function frozenScript(gitDir: string, commit: string): Promise<Buffer | undefined> {
  const [entry] = (await git(['ls-tree', '-z', commit, '--', HARNESS_FILES.script], { repo: { gitDir } })).text.split('\0');
  if (!entry || !/^100(644|755) blob /.test(entry)) return undefined;
  const [obj] = (await catFileBatch(gitDir, [`${commit}:${HARNESS_FILES.script}`])) ?? [];
  return obj && 'data' in obj ? Buffer.from(obj.data) : undefined;
}

/**
 * Records an explicit give-up: stops the clock, stores `gaveUp` {at, workingMs, reason} in the
 * state and records `gave_up`. Drafts stay as they are; nothing is judged.
 * @throws ExpBenchError `SESSION_INVALID` when the session was already submitted or given up.
 */
export async function giveUp(target: Session | SessionLayout, reason?: string): Promise<Outcome> {
  return withSubmission(target, 'give up', async (session) => {
    assertNotFinished(session.layout, session.store.state, 'give up');
    await session.recordDrafts();
    const workingMs = session.clock.stop('gave_up');
    const why = reason?.trim();
    const outcome: Outcome = { at: new Date(session.store.now()).toISOString(), workingMs, ...(why ? { reason: why } : {}) };
    session.store.update((s) => { s.gaveUp = outcome; });
    await session.store.flush();
    await session.events.append({ type: 'gave_up', workingMs, ...(why ? { reason: why } : {}) });
    return outcome;
  });
}

/**
 * Checks the solver's script before anything is frozen (its content is then taken from the
 * frozen commit): absent is fine.
 * @throws ExpBenchError `BAD_INPUT` naming it when it is a symbolic link, a FIFO, a folder or any
 *   other non-regular file (checked without following links; a FIFO is never waited on)
 */
async function checkScript(file: string): Promise<void> {
  const fh = await openRegular(file, { noFollow: true }).catch((e) => {
    throw new ExpBenchError('BAD_INPUT', file, `nothing was submitted: the script ${errorMessage(e).replace(`${file}: `, '')}`, { cause: e });
  });
  await fh?.close().catch(() => undefined);
}

function normalise(answers: SubmitAnswers, source: string): { harness: HarnessAnswers; structured: DesignDraft } {
  const d = (answers as { design?: unknown } | null)?.design;
  if (d && typeof d === 'object' && !Array.isArray(d)) {
    const structured = DesignDraftSchema.safeParse(d);
    const conclusion = typeof answers.conclusion === 'string' ? answers.conclusion : undefined;
    if (!structured.success || conclusion === undefined) {
      throw new ExpBenchError('BAD_INPUT', source, `structured answers need {design: {constants, independent, dependent, freeText}, conclusion: string}: ${structured.error?.message ?? 'conclusion is not a string'}`);
    }
    return { harness: { design: designToHarnessLines(structured.data), conclusion }, structured: structured.data };
  }
  const parsed = HarnessAnswersSchema.safeParse(answers);
  if (!parsed.success) {
    throw new ExpBenchError('BAD_INPUT', source, `expected the harness form {"design": string | string[], "conclusion": string}: ${z.prettifyError(parsed.error).replace(/\n/g, "; ")}`);
  }
  return { harness: parsed.data, structured: designFromHarnessLines(designLines(parsed.data)) };
}

function assertNotFinished(layout: SessionLayout, s: SessionState, action: string): void {
  if (isFinished(s)) {
    const when = (s.submitted ?? s.gaveUp)!.at;
    throw new ExpBenchError('SESSION_INVALID', layout.root, `cannot ${action}: the session was already ${s.submitted ? 'submitted' : 'given up'} at ${when}`);
  }
}

/**
 * Runs `fn` on `target` holding the session's submit lock (`private/submit.lock`, submitLock.ts:
 * one submission or give-up at a time, across processes; a lock whose process is gone is taken
 * over). `fn` may let the lock go early through its second argument (the flow does, before
 * verifying). Once the lock is held, the state is read from disk: a session already submitted
 * or given up is refused WITHOUT being opened (so that the process that submitted keeps it, for
 * its verifier and judge), except when its `submitted`/`gave_up` event is missing (the
 * submitting process stopped after its commit point): then it is opened once, which records the
 * missing event (Session.open), and refused.
 *
 * `target` is an open {@link Session} as it is, or a session folder's layout opened (client
 * `cli`, clock not resumed) and closed afterwards.
 * @throws ExpBenchError `SESSION_INVALID` when already submitted or given up, or when another
 *   submission holds the lock longer than {@link SubmitLock.acquire} waits
 */
export async function withSubmission<T>(
  target: Session | SessionLayout, action: string, fn: (s: Session, release: () => Promise<void>) => Promise<T>,
): Promise<T> {
  const layout = target instanceof Session ? target.layout : target;
  if (!(target instanceof Session)) await assertPreparationFinished(layout.root, 'open the session');
  const lock = await SubmitLock.acquire(layout, action);
  const release = () => lock.release();
  try {
    const onDisk = await readState(layout.state).catch(() => undefined);
    if (onDisk && isFinished(onDisk)) {
      if (!(target instanceof Session) && (await Session.missingOutcomeEvent(layout, onDisk))) {
        const repaired = await Session.open(layout, { client: 'cli', resumeClock: false });
        await repaired.close();
        if (onDisk.submitted) {
          // The stopped process never ran its steps either: say so, and how to run them (they read the frozen submission).
          throw new ExpBenchError('SESSION_INVALID', layout.root,
            `cannot ${action}: the session was already submitted at ${onDisk.submitted.at}, by a process that stopped before recording it ` +
            `(the submitted event is recorded now); its verification and judgement did not run: expbench verify ${layout.root}, then expbench judge ${layout.root}`);
        }
      }
      assertNotFinished(layout, onDisk, action);
    }
    if (target instanceof Session) return await fn(target, release);
    const session = await Session.open(target, { client: 'cli', resumeClock: false });
    try {
      return await fn(session, release);
    } finally {
      await session.close();
    }
  } finally {
    await release();
  }
}

/**
 * Runs `fn` on `target`: an open {@link Session} as it is, or a session folder's layout opened
 * (client `cli`, clock not resumed) and closed afterwards.
 */
export async function withSession<T>(target: Session | SessionLayout, fn: (s: Session) => Promise<T>): Promise<T> {
  if (target instanceof Session) return fn(target);
  // Checked before opening: opening writes owner.json and state.json into the folder.
  await assertPreparationFinished(target.root, 'open the session');
  const session = await Session.open(target, { client: 'cli', resumeClock: false });
  try {
    return await fn(session);
  } finally {
    await session.close();
  }
}
