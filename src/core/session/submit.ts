import { z } from 'zod';
import * as path from 'node:path';
import { ExpBenchError } from '../errors';
import { openRegular, writeAtomic, writeJsonAtomic } from '../util/fs';
import { assertPreparationFinished } from '../workspace/folder';
import { makePatch as workspacePatch } from '../workspace/patch';
import { designLines, HarnessAnswers, HarnessAnswersSchema } from './answers';
import { designFromHarnessLines, designToHarnessLines } from './design';
import { HARNESS_FILES, SessionLayout } from '../layout';
import { Session } from './session';
import { DesignDraft, DesignDraftSchema, isFinished, Outcome } from './state';
import { errorMessage } from '../util/errors';

/** Answers as submitted: the harness form, or the structured design from the phase editor. */
export type SubmitAnswers = HarnessAnswers | { design: DesignDraft; conclusion: string };

export interface SubmitOptions {
  /**
   * Makes the patch (unified diff) of the workspace against its `task start` commit. Default: the
   * text part of src/core/workspace/patch.ts `makePatch` (binary files are listed there, not inlined).
   */
  makePatch?: (workspace: string) => Promise<string>;
  /** Names the answers in errors (e.g. the answers file the CLI read); default `answers`. */
  answersSource?: string;
}

export interface SubmitResult {
  answers: HarnessAnswers;
  design: DesignDraft;
  workingMs: number;
  /** Paths written, absolute; `script` is null when the workspace has no reproduce_exp_bench.sh. */
  files: { answers: string; design: string; harnessAnswers: string; patch: string; script: string | null };
  warnings: string[];
}

/**
 * Submits the session: freezes the answers (`private/answers.json`, harness form, and
 * `private/design.json`, structured), writes `private/harness/` ({@link HARNESS_FILES}: the
 * answers, the patch, a copy of reproduce_exp_bench.sh), stops the clock and records `submitted`.
 * Verifying and judging afterwards is a composition of steps: src/core/flows/submit.ts.
 *
 * `target` is an open {@link Session} (the extension) or a session folder's layout (opened and
 * closed here, as client `cli`).
 * @throws ExpBenchError `BAD_INPUT` naming `opts.answersSource` when they fail the schema; `SESSION_INVALID`
 *   when the session was already submitted or given up; `makePatch`'s error (nothing is frozen then).
 */
export async function submit(target: Session | SessionLayout, answers: SubmitAnswers, opts: SubmitOptions = {}): Promise<SubmitResult> {
  return withSession(target, async (session) => {
    const { layout, store } = session;
    const { harness, structured } = normalise(answers, opts.answersSource ?? 'answers');
    assertNotFinished(session, 'submit');
    await assertPreparationFinished(layout.root, 'submit');
    // Read before anything is frozen: a script that is not a regular file stops the submission.
    const script = await readScript(layout.script);
    await session.recordDrafts();
    const warnings: string[] = [];
    const patch = await (opts.makePatch ?? defaultPatch)(layout.workspace);
    if (patch === '') warnings.push('the workspace has no changes since "task start": the patch is empty');

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
    const rel = (p: string | null) => (p === null ? null : path.relative(layout.root, p).split(path.sep).join('/'));
    await session.events.append({
      type: 'submitted', workingMs, answers: rel(files.answers)!, design: rel(files.design)!,
      patch: rel(files.patch), patchBytes: Buffer.byteLength(patch), script: rel(files.script),
    });

    return { answers: harness, design: structured, workingMs, files, warnings };
  });
}

/**
 * Records an explicit give-up: stops the clock, stores `gaveUp` {at, workingMs, reason} in the
 * state and records `gave_up`. Drafts stay as they are; nothing is judged.
 * @throws ExpBenchError `SESSION_INVALID` when the session was already submitted or given up.
 */
export async function giveUp(target: Session | SessionLayout, reason?: string): Promise<Outcome> {
  return withSession(target, async (session) => {
    assertNotFinished(session, 'give up');
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
 * The solver's script as submitted: undefined when absent.
 * @throws ExpBenchError `BAD_INPUT` naming it when it is a symbolic link, a FIFO, a folder or any
 *   other non-regular file (checked without following links; a FIFO is never waited on)
 */
async function readScript(file: string): Promise<Buffer | undefined> {
  const fh = await openRegular(file, { noFollow: true }).catch((e) => {
    throw new ExpBenchError('BAD_INPUT', file, `nothing was submitted: the script ${errorMessage(e).replace(`${file}: `, '')}`, { cause: e });
  });
  if (!fh) return undefined;
  try {
    return await fh.readFile();
  } finally {
    await fh.close().catch(() => undefined);
  }
}

async function defaultPatch(workspace: string): Promise<string> {
  const p = await workspacePatch(workspace);
  return p.patch;
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

function assertNotFinished(session: Session, action: string): void {
  const s = session.store.state;
  if (isFinished(s)) {
    const when = (s.submitted ?? s.gaveUp)!.at;
    throw new ExpBenchError('SESSION_INVALID', session.layout.root, `cannot ${action}: the session was already ${s.submitted ? 'submitted' : 'given up'} at ${when}`);
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
