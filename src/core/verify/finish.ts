import { promises as fsp } from 'node:fs';
import * as path from 'node:path';
import type Docker from 'dockerode';
import { ExpBenchError, cancelled } from '../errors';
import { log } from '../log';
import { dockerError, isEngineGone, statusOf } from '../sandbox/connection';
import { removeContainer } from '../sandbox/containers';
import { HarnessAnswersSchema } from '../session/answers';
import type { EventSink } from '../session/events';
import { SessionLayout } from '../layout';
import { regularFileStat } from '../untrusted';
import { readJsonIfExists } from '../util/fs';
import { checkClaims, OutputSource } from './claims';
import { collectChangedFiles, killSignalsSince, SCRIPT_ENDED, SCRIPT_STARTED, SETUP_FAILED, TREE_INCOMPLETE } from './container-io';
import { asVerifyError } from './ioErrors';
import { readLogText, RunLogs } from './logs';
import { ClaimsResult, saveRecord, VerificationRecord, VerifyRunPaths } from './record';
import { errorMessage } from '../util/errors';

const logger = log('verify');

/** Everything needed to watch a started verify container to its end. */
export interface RunContext {
  docker: Docker;
  layout: SessionLayout;
  paths: VerifyRunPaths;
  /** The record as saved with status `running`. */
  record: VerificationRecord;
  container: Docker.Container;
  logs: RunLogs;
  /** Resolves when the output stream has ended (container exited, or engine lost). */
  drained: Promise<void>;
  signal?: AbortSignal;
  /** When given, a `verify.finished` event is appended (the CLI and the extension pass the session's log). */
  events?: EventSink;
  /**
   * Why the run could not really start, if it could not (clean mode: the tree could not be built
   * or sent in, and the container was killed for it): the record becomes an error with this one.
   */
  startFailure?: () => ExpBenchError | undefined;
  /**
   * Whether the host sent the whole clean tree into the container (clean mode). The wrapper's
   * `tree-incomplete` marker is believed only when it did not: the script runs as the same user in
   * the same out folder and could write the marker itself to turn its own failed run (E false) into
   * an interrupted one (E not verified).
   */
  treeSent?: () => boolean;
}

/**
 * Removals of verify containers still under way after their run's result was returned (see
 * {@link watchToEnd}): each settles (never rejects) once its container is removed or the removal gave up.
 */
const pendingRemovals = new Set<Promise<unknown>>();

/**
 * Resolves once every verify container removal this process started has settled (a removal that
 * fails is logged and left to the orphan sweep of the next run). A host awaits it before it exits:
 * the CLI's `verify` does before its exit, and a process that simply ends waits for it anyway (the
 * engine request keeps Node.js running). Never rejects.
 */
export async function verifyRemovalsSettled(): Promise<void> {
  while (pendingRemovals.size > 0) await Promise.all([...pendingRemovals]);
}

/** How long to wait for the engine to come back to remove a container after losing it, ms. */
export const REMOVE_RETRY_MS = 20_000;

/**
 * Longest setup of a run before its script starts (clean mode: the tree built and copied in), ms:
 * the larger of this and the script's own time limit. Past it the run is killed as an error.
 */
export const SETUP_LIMIT_MS = 30 * 60_000;

/** Longest time the wrapper may take after the script ended (archiving the changed files), ms. */
export const AFTER_SCRIPT_LIMIT_MS = 5 * 60_000;

/** The setup limit of a run with these limits, ms (see {@link SETUP_LIMIT_MS}). */
export function setupLimitMs(limits: { timeoutMs: number }): number {
  return Math.max(SETUP_LIMIT_MS, limits.timeoutMs);
}

/**
 * Waits for the container to exit, killing it at the script's deadline (the script's start, seen
 * as the wrapper's `start` marker in the output folder, + `limits.timeoutMs`; the setup before it
 * has {@link setupLimitMs}) or when `signal` fires; then collects the changed files, runs the claims
 * check, saves the final record (and `latest.json`), appends a `verify.finished` event (when
 * `ctx.events` is given) and removes the container (on every path). The removal starts as soon as
 * the container's state is read and runs while the record is written; the record waits for it
 * unless the script exited 0 by itself (then the removal's outcome cannot change the result, and
 * it may still be under way when the record is returned: {@link verifyRemovalsSettled}).
 * @returns the final record
 * @throws ExpBenchError CANCELLED after saving when `signal` fired; DOCKER_UNAVAILABLE (or
 *   CONTAINER_FAILED) after saving an error record when the engine failed mid-run.
 */
export async function watchToEnd(ctx: RunContext): Promise<VerificationRecord> {
  const { record, container } = ctx;
  let killedBy: 'timeout' | 'cancel' | 'setup' | 'after' | undefined;
  const kill = (why: NonNullable<typeof killedBy>) => {
    if (killedBy) return;
    killedBy = why;
    const what = { timeout: 'time limit reached', setup: 'setup limit reached before the script started', after: 'archiving the changed files took too long', cancel: 'cancelled' }[why];
    logger.info(`run ${record.runId}: ${what}; killing ${container.id.slice(0, 12)}`);
    container.kill().catch(() => undefined);
  };
  const clock = limitClock(ctx, kill);
  const onAbort = () => kill('cancel');
  if (ctx.signal?.aborted) onAbort();
  ctx.signal?.addEventListener('abort', onAbort, { once: true });
  let failure: ExpBenchError | undefined;
  let exitCode: number | null = null;
  let changed: OutputSource[] = [];
  let removal: Promise<'removed' | 'gone' | 'failed'> | undefined;
  let exitedAt: string | undefined;
  let cleanup: Promise<unknown> | undefined;
  let background = false;
  try {
    try {
      const exitedInfo = await exited(container, ctx.drained);
      const [, info] = await Promise.all([withinMs(ctx.drained, 5000), exitedInfo ?? container.inspect()]);
      const state = info.State;
      exitedAt = state.FinishedAt;
      // Everything needed from the container is out (its state; the changed files are in the
      // bind-mounted output folder): remove it while the rest is collected and the record written.
      removal = removeWithRetry(ctx.docker, container.id);
      exitCode = state.ExitCode;
      if (state.OOMKilled) failure = new ExpBenchError('CONTAINER_FAILED', record.runId, `the run was killed for exceeding its memory limit of ${record.limits.memoryBytes} bytes (OOM)`);
      if (!killedBy && !failure) failure = ctx.startFailure?.();
      const incompleteMarked = record.mode === 'clean' && exitCode === 125 && await regularFileStat(path.join(ctx.paths.out, TREE_INCOMPLETE)) !== undefined;
      if (incompleteMarked && ctx.treeSent?.() === true) {
        logger.warn(`run ${record.runId}: a ${TREE_INCOMPLETE} marker with exit 125, though the host sent the whole clean tree: not believed (the script's own exit)`);
      }
      if (!killedBy && !failure && incompleteMarked && ctx.treeSent?.() !== true) {
        failure = new ExpBenchError('CONTAINER_FAILED', record.runId,
          'the clean tree did not arrive complete in the verify container (the verifier was stopped, or its connection cut, while copying it in): the run was interrupted and the script was not run; run the verifier again');
      }
      if (killedBy === 'setup') {
        failure = new ExpBenchError('CONTAINER_FAILED', record.runId,
          `the script had not started ${setupLimitMs(record.limits) / 1000} s after the verify container did (the clean tree was still being copied in): the run was stopped and the script was not run; run the verifier again`);
      }
      if (killedBy === 'after') {
        failure = new ExpBenchError('CONTAINER_FAILED', record.runId,
          `the script ended in time, but archiving the files it changed took more than ${AFTER_SCRIPT_LIMIT_MS / 1000} s: the run was stopped; run the verifier again`);
      }
      if (!killedBy && !failure && exitCode !== 0) failure = await stoppedFromOutside(ctx, state.FinishedAt);
    } catch (e) {
      failure = statusOf(e) === 404
        ? disappeared(container.id)
        : dockerError(e, `verify container ${container.id.slice(0, 12)}`, 'running the verification', ctx.docker);
    }
  } finally {
    clock.stop();
    ctx.signal?.removeEventListener('abort', onAbort);
  }
  removal ??= removeWithRetry(ctx.docker, container.id);
  try {
    const endedAt = new Date();
    // A script shorter than the clock's 100 ms poll ends before its `start` marker is seen: the
    // marker is read once more here, so that its duration is its own, not the container's. The
    // script can touch the marker too: a time outside the run (before its record, after now) is not taken.
    const scriptStart = clock.scriptStart() ?? await regularFileStat(path.join(ctx.paths.out, SCRIPT_STARTED))
      .then((st) => st && withinRun(record, st.mtimeMs, endedAt.getTime()) ? st.mtimeMs : undefined);
    // What the output folder and the logs hold, read at once (each of these used to wait for the one before).
    const [scriptEnd, collected, setupFailed] = await Promise.all([
      // The script's own time when both markers are there; else from the container's start to now.
      scriptStart === undefined ? undefined : regularFileStat(path.join(ctx.paths.out, SCRIPT_ENDED)).then((st) => st?.mtimeMs),
      !killedBy && !failure ? collectChangedFiles(ctx.paths.out).catch((e: unknown) => {
        failure ??= new ExpBenchError('CONTAINER_FAILED', record.runId, `the archive of the files the run changed could not be read: ${errorMessage(e)}`);
        return [];
      }) : [],
      record.setup !== undefined && regularFileStat(path.join(ctx.paths.out, SETUP_FAILED)).then((st) => st !== undefined),
      ctx.logs.close(),
    ]);
    changed = collected;
    // The output folder goes while the claims are checked and the record written (awaited before returning).
    cleanup = fsp.rm(ctx.paths.out, { recursive: true, force: true }).catch(() => undefined);
    // The `end` marker is the script's to touch as well: never later than the run's own end.
    const durationMs = Math.max(0, Math.min(scriptEnd ?? endedAt.getTime(), endedAt.getTime()) - (scriptStart ?? Date.parse(record.startedAt)));
    // The in-container backstop (coreutils `timeout`) exits 124, or 137 after its SIGKILL.
    const backstop = !killedBy && exitCode !== null && [124, 137].includes(exitCode) && durationMs >= record.limits.timeoutMs;
    const timedOut = killedBy === 'timeout' || backstop;
    // A log that could not be written (a full disk) makes the run an error: its output is not all there.
    const logFailure = ctx.logs.writeError;
    if (logFailure && !failure) failure = asVerifyError(logFailure, ctx.layout.root);
    const claims = await claimsFor(ctx.layout, ctx.paths, changed);
    if (killedBy || backstop || failure) exitCode = null;
    const finalRecord = (): VerificationRecord => {
      const ok = exitCode === 0 && !timedOut && !killedBy && !failure;
      return {
        ...record,
        status: failure ? 'error' : 'finished',
        ...(scriptStart !== undefined ? { scriptStartedAt: new Date(scriptStart).toISOString() } : {}),
        endedAt: endedAt.toISOString(),
        ...(exitedAt && Date.parse(exitedAt) > 0 ? { containerExitedAt: exitedAt } : {}),
        durationMs,
        exitCode,
        timedOut,
        cancelled: killedBy === 'cancel',
        ...(failure ? { error: { code: failure.code, message: failure.message } } : {}),
        logTruncated: ctx.logs.truncated,
        E_exit: ok,
        E_clean: record.mode === 'clean' ? ok : null,
        E_claims: claims,
        changedFiles: changed.map((c) => c.source).sort(),
        ...(record.setup ? { setup: { ...record.setup, failed: setupFailed } } : {}),
      };
    };
    // Saved while the container is being removed; saved again in the rare case that it turns out
    // to have been removed by someone else between its exit and our removal (the run was interfered with).
    // A record that cannot be saved (a full disk) is said as such, naming the file and what to do.
    const save = (r: VerificationRecord) => saveRecord(ctx.layout, r).catch((e: unknown) => {
      const err = asVerifyError(e, ctx.layout.root);
      throw new ExpBenchError(err.code, err.input, `${err.message.replace(`${err.input}: `, '')} (the result of run ${record.runId}, ${summary(r)}, could not be saved)`, { cause: e });
    });
    let final = finalRecord();
    await save(final);
    // An exit 0 is the script's own end: nobody removed the container under it (a removal from
    // outside kills it first: exit 137), so whether the removal below finds it cannot change the
    // result, and the result is returned without waiting for it. Any other end waits: a container
    // already removed by someone else means the run was interfered with (an error, not a result).
    background = exitCode === 0 && !failure && !killedBy;
    if (!background && (await removal) === 'gone' && !failure) {
      failure = disappeared(container.id);
      exitCode = null;
      final = finalRecord();
      await save(final);
    }
    const ok = final.E_exit;
    await ctx.events?.append({
      type: 'verify.finished', ok, record: `private/verify/${record.runId}/record.json`,
      summary: summary(final), ...(failure ? { error: failure.message } : {}),
    }).catch((e) => logger.warn(`could not record verify.finished: ${errorMessage(e)}`));
    if (failure) throw failure;
    if (killedBy === 'cancel') throw cancelled(`verification ${record.runId}`);
    return final;
  } finally {
    if (background) {
      const pending = removal.then(() => undefined, () => undefined);
      pendingRemovals.add(pending);
      void pending.then(() => pendingRemovals.delete(pending));
      await cleanup;
    } else {
      await Promise.all([removal, cleanup]);
    }
  }
}

/**
 * Waits until the container has exited: the end of its output stream (the engine closes it when
 * the process ends, often well before it answers the `wait` call), confirmed by its state, or the
 * engine's `wait`, whichever comes first. A stream that ends while the container still runs (a
 * script that closed its output) falls back to `wait`.
 * @returns the container's state when it was read here (inspect), else undefined
 * @throws what `wait` throws (404: removed from outside)
 */
async function exited(container: Docker.Container, drained: Promise<void>): Promise<Docker.ContainerInspectInfo | undefined> {
  const wait = container.wait();
  wait.catch(() => undefined); // observed below, or not needed
  const first = await Promise.race([wait.then(() => 'wait' as const), drained.then(() => 'drained' as const)]);
  if (first === 'wait') return undefined;
  const info = await container.inspect().catch(() => undefined);
  if (info && !info.State.Running && info.State.Status === 'exited') return info;
  await wait;
  return undefined;
}

/** Largest delay one Node.js timer keeps, ms (a longer one fires at once). */
const MAX_TIMER_MS = 2 ** 31 - 1;

/** Calls `fn` after `ms` (any length: re-armed in steps of {@link MAX_TIMER_MS}); returns the cancel. */
function longTimeout(fn: () => void, ms: number): () => void {
  let timer: NodeJS.Timeout;
  const until = Date.now() + Math.max(0, ms);
  const arm = () => {
    const left = until - Date.now();
    timer = left > MAX_TIMER_MS ? setTimeout(arm, MAX_TIMER_MS) : setTimeout(fn, Math.max(0, left));
  };
  arm();
  return () => clearTimeout(timer);
}

/**
 * Whether a marker's time (ms since the epoch) can be the wrapper's: from the record's start (less
 * 1 s for the file system's time granularity) to `now`. The markers' folder is the script's to
 * write too, so a time outside the run is the script's, not the wrapper's.
 */
function withinRun(record: VerificationRecord, ms: number, now: number): boolean {
  return ms >= Date.parse(record.startedAt) - 1000 && ms <= now;
}

/**
 * The run's limits: until the script starts (the wrapper's `start` marker appears in the output
 * folder, polled every 100 ms; or the record's `scriptStartedAt`), the setup limit from
 * `startedAt`; from then, the script's limit from the marker's time. At that deadline, a script
 * that had ended in time (the `end` marker, no later than the deadline) is not killed: the
 * wrapper gets {@link AFTER_SCRIPT_LIMIT_MS} to archive the changed files. `scriptStart()` gives
 * the start (ms since the epoch) once known.
 */
function limitClock(ctx: RunContext, kill: (why: 'timeout' | 'setup' | 'after') => void): { stop(): void; scriptStart(): number | undefined } {
  const { record } = ctx;
  let started = record.scriptStartedAt !== undefined ? Date.parse(record.scriptStartedAt) : undefined;
  let stopped = false;
  let cancel: () => void = () => undefined;
  let poll: NodeJS.Timeout | undefined;
  // The `end` marker's folder is writable by the script: the script counts as ended only when the
  // marker is there in time AND the wrapper's `timeout` process around the script is gone.
  const scriptGone = () => ctx.container.top({ ps_args: '-eo pid,args' })
    .then((t: { Processes?: string[][] }) => !(t.Processes ?? []).some((p) => (p[p.length - 1] ?? '').startsWith('timeout -k ')), () => false);
  const atDeadline = (deadline: number) => {
    void Promise.all([regularFileStat(path.join(ctx.paths.out, SCRIPT_ENDED)).then((st) => st !== undefined && st.mtimeMs <= deadline), scriptGone()])
      .then(([endedInTime, gone]) => {
        if (stopped) return;
        if (endedInTime && gone) cancel = longTimeout(() => kill('after'), AFTER_SCRIPT_LIMIT_MS);
        else kill('timeout');
      });
  };
  const armScript = (t0: number) => {
    started = t0;
    cancel();
    const deadline = t0 + record.limits.timeoutMs;
    cancel = longTimeout(() => atDeadline(deadline), deadline - Date.now());
  };
  if (started !== undefined) armScript(started);
  else {
    cancel = longTimeout(() => kill('setup'), Date.parse(record.startedAt) + setupLimitMs(record.limits) - Date.now());
    const marker = path.join(ctx.paths.out, SCRIPT_STARTED);
    const check = () => {
      void regularFileStat(marker).then((st) => {
        if (stopped) return;
        // The script can touch the marker to another time: one outside the run counts as now.
        if (st) armScript(withinRun(record, st.mtimeMs, Date.now()) ? st.mtimeMs : Date.now());
        else poll = setTimeout(check, 100);
      });
    };
    check();
  }
  return {
    stop: () => { stopped = true; cancel(); clearTimeout(poll); },
    scriptStart: () => started,
  };
}

/**
 * A run that the engine stopped with SIGTERM (its stop signal) is not a result of the script: the
 * engine was shutting down or restarting (it stops every container), or someone ran `docker stop`.
 * The verifier itself only ever sends SIGKILL. SIGKILL from outside (`docker kill`, like the
 * kernel's OOM killer) stays a result: exit 137.
 */
async function stoppedFromOutside(ctx: RunContext, finishedAt: string): Promise<ExpBenchError | undefined> {
  let signals: string[];
  try {
    signals = await killSignalsSince(ctx.docker, ctx.container.id, ctx.record.startedAt);
  } catch (e) {
    return dockerError(e, `verify container ${ctx.container.id.slice(0, 12)}`, 'reading why the run stopped', ctx.docker);
  }
  if (!signals.some((s) => s === '15' || s === 'SIGTERM' || s === 'TERM')) return undefined;
  return new ExpBenchError('CONTAINER_FAILED', ctx.container.id.slice(0, 12),
    `the Docker engine stopped the verify container at ${finishedAt} (SIGTERM: the engine shutting down or restarting, or \`docker stop\`); the run was interrupted, not finished: run the verifier again`);
}

function disappeared(id: string): ExpBenchError {
  return new ExpBenchError('CONTAINER_FAILED', id.slice(0, 12), 'the verify container disappeared during the run (removed from outside the verifier)');
}

/** Waits for `p`, at most `ms` (the timer does not keep the process alive afterwards). */
async function withinMs(p: Promise<unknown>, ms: number): Promise<void> {
  let timer: NodeJS.Timeout | undefined;
  await Promise.race([p, new Promise((r) => { timer = setTimeout(r, ms); })]);
  clearTimeout(timer);
}

/** One line for people: `E_clean ✓ (exit 0, 12.3 s), claims 3/3 found`. */
export function summary(r: VerificationRecord): string {
  const e = r.mode === 'clean' ? `E_clean ${r.E_clean ? 'pass' : 'fail'}` : `E_exit ${r.E_exit ? 'pass' : 'fail'}`;
  const why = r.error ? r.error.message : r.cancelled ? 'cancelled' : r.timedOut ? `timed out after ${r.limits.timeoutMs / 1000} s` : `exit ${r.exitCode}`;
  const found = r.E_claims.claims.filter((c) => c.found).length;
  return `${e} (${why}, ${((r.durationMs ?? 0) / 1000).toFixed(1)} s), claims ${found}/${r.E_claims.claims.length} found`;
}

async function claimsFor(layout: SessionLayout, paths: VerifyRunPaths, changed: OutputSource[]): Promise<ClaimsResult> {
  // Answers that cannot be read (not JSON, not a file) leave the claims unchecked, never the record unfinished.
  let unreadable: string | undefined;
  const raw = await readJsonIfExists(layout.answers).catch((e: Error) => { unreadable = e.message; return undefined; });
  const answers = raw === undefined ? undefined : HarnessAnswersSchema.safeParse(raw);
  if (!answers?.success) {
    const why = unreadable ?? (raw === undefined ? `no submitted answers (${layout.answers})` : `${layout.answers} is not {design, conclusion}`);
    return { claims: [], allFound: false, note: `${why}: the conclusion's claims were not checked` };
  }
  const outputs: OutputSource[] = [
    { source: 'stdout', text: await readLogText(paths.stdout) },
    { source: 'stderr', text: await readLogText(paths.stderr) },
    ...changed,
  ];
  return checkClaims(answers.data.conclusion, outputs);
}

/**
 * Removes the container; when the engine is gone, retries until it answers again (up to
 * {@link REMOVE_RETRY_MS}). A container that still cannot be removed is left for the orphan sweep
 * at the next start (logged).
 * @returns `removed`; `gone` when it was already removed (or being removed) by someone else; `failed`
 */
export async function removeWithRetry(docker: Docker, id: string): Promise<'removed' | 'gone' | 'failed'> {
  const until = Date.now() + REMOVE_RETRY_MS;
  for (;;) {
    try {
      return (await removeContainer(docker, id)) ? 'removed' : 'gone';
    } catch (e) {
      const gone = isEngineGone(e) || (e instanceof ExpBenchError && e.code === 'DOCKER_UNAVAILABLE');
      if (!gone || Date.now() > until) {
        logger.warn(`could not remove verify container ${id.slice(0, 12)} (${errorMessage(e)}); it will be removed at the next start`);
        return 'failed';
      }
      await new Promise((r) => setTimeout(r, 500));
    }
  }
}
