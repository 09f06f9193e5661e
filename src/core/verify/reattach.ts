import { promises as fsp } from 'node:fs';
import type Docker from 'dockerode';
import { ExpBenchError } from '../errors';
import { log } from '../log';
import { connectDocker, dockerError, ensureEngine, statusOf } from '../sandbox/connection';
import { LABEL_OWNER } from '../sandbox/containers';
import { ownerGone } from '../sandbox/processes';
import type { EventSink } from '../session/events';
import { SessionLayout } from '../layout';
import { logsSince, pipeLines, toDockerSince } from './container-io';
import { removeWithRetry, watchToEnd } from './finish';
import { asVerifyError } from './ioErrors';
import { DEFAULT_LOG_CAP_BYTES, LogLine, RunLogs } from './logs';
import { REPLAY_WINDOW_MS, ReplayFilter, storedTail } from './overlap';
import { readLatestRecord, saveRecord, VerificationRecord, VerifyRunPaths } from './record';
import { errorMessage } from '../util/errors';

const logger = log('verify');

/** Runs being watched by this process (container id → true), so they are not taken for stale. */
const watched = new Set<string>();

export interface ReattachOptions {
  docker?: Docker;
  signal?: AbortSignal;
  onLine?: (line: LogLine) => void;
  /** When given, a `verify.finished` event is appended when the run ends. */
  events?: EventSink;
}

/** What {@link collectOrReattach} found. */
export type ReattachResult =
  | { kind: 'none' }
  | { kind: 'done'; record: VerificationRecord; damaged?: string }
  | { kind: 'collected'; record: VerificationRecord; damaged?: string };

/**
 * After a window reload: looks at `private/verify/latest.json`. No record, or a finished one →
 * returned as is (a damaged `latest.json` is replaced by the newest run record, said in `damaged`).
 * A record still `running`: when its container is still running, reattaches
 * (follows its output from the last stored line, enforces the remaining time, honours `signal`)
 * and resolves when the run ends; when the container has exited, collects the result; when the
 * container is gone (removed, engine restarted and cleaned), saves the record as an error.
 * Output written while no process watched is fetched from the engine's log, read again from a
 * little before the last stored line; the lines already stored are recognised by their text and
 * not stored twice (overlap.ts: the stored times are the watcher's, not the engine's).
 * @throws as {@link watchToEnd}; DOCKER_UNAVAILABLE when no engine answers
 */
export async function collectOrReattach(sessionDir: string, opts: ReattachOptions = {}): Promise<ReattachResult> {
  const layout = new SessionLayout(sessionDir);
  const { record, damaged } = await readLatestRecord(layout);
  if (damaged) logger.warn(`${damaged}; using the newest run record instead`);
  if (!record) return { kind: 'none' };
  const note = damaged ? { damaged: `${damaged}; the newest run record (${record.runId}) was used instead (the next run replaces the file)` } : {};
  if (record.status !== 'running') return { kind: 'done', record, ...note };
  const docker = opts.docker ?? connectDocker();
  await ensureEngine(docker);
  try {
    return { kind: 'collected', record: await resume(layout, docker, record, opts), ...note };
  } catch (e) {
    throw asVerifyError(e, layout.root);
  }
}

/**
 * Before a new run: a `running` latest record whose container still runs and is not watched by
 * this process means another run is in progress → SESSION_INVALID, unless the process that
 * started it (the container's `expbench.owner`) is gone: a verifier killed with kill -9 (or on a
 * machine that lost power) left it, nobody will collect it, so its container is stopped and
 * removed and its record saved as an error saying so (told through `say`). Otherwise it is
 * collected (or marked as an error when its container is gone).
 */
export async function settlePrevious(layout: SessionLayout, docker: Docker, say: (message: string) => void = () => undefined): Promise<void> {
  // A damaged latest.json never stops a new run: the new record replaces it.
  const { record } = await readLatestRecord(layout).catch((e: unknown) => {
    logger.warn(`${errorMessage(e)}; the new run's record replaces it`);
    return { record: undefined };
  });
  if (!record || record.status !== 'running' || !record.containerId) return;
  if (watched.has(record.containerId)) {
    throw new ExpBenchError('SESSION_INVALID', layout.root, `a verification (${record.runId}) is already running for this session: wait for it or cancel it`);
  }
  const state = await containerState(docker, record.containerId);
  const owner = state === 'running' ? await ownerOf(docker, record.containerId) : undefined;
  if (state === 'running' && ownerGone(owner) === true) {
    await stopOrphanRun(layout, docker, record, owner!);
    say(`the previous verification ${record.runId} was left running by a verifier that ended without finishing it (${owner}): its container was stopped and its record saved as an error`);
    return;
  }
  if (state === 'running') {
    throw new ExpBenchError('SESSION_INVALID', layout.root,
      `a verification (${record.runId}, container ${record.containerId.slice(0, 12)}) is still running for this session: reattach to it (Run Verifier after a reload does) or wait for it to end`);
  }
  await resume(layout, docker, record, {}).catch((e) => logger.warn(`previous run ${record.runId}: ${errorMessage(e)}`));
}

/** The container's `expbench.owner` label (the process that created it), if it can be read. */
async function ownerOf(docker: Docker, id: string): Promise<string | undefined> {
  try {
    return (await docker.getContainer(id).inspect()).Config?.Labels?.[LABEL_OWNER];
  } catch {
    return undefined;
  }
}

/** The run of a verifier that is gone: its container killed and removed, its record an error naming why. */
async function stopOrphanRun(layout: SessionLayout, docker: Docker, record: VerificationRecord, owner: string): Promise<void> {
  const id = record.containerId!;
  await docker.getContainer(id).kill().catch(() => undefined);
  await removeWithRetry(docker, id);
  const now = new Date().toISOString();
  await saveRecord(layout, {
    ...record, status: 'error', endedAt: now, exitCode: null,
    error: { code: 'CONTAINER_FAILED', message: `the verifier that started this run (${owner}) ended before the run finished (killed, or its machine stopped); its container ${id.slice(0, 12)} was still running and was stopped at ${now} by the next verification: the run's result is not known; run the verifier again` },
    E_exit: false, E_clean: record.mode === 'clean' ? false : null,
    E_claims: { claims: [], allFound: false, note: 'the run did not finish: claims not checked' },
  });
  await fsp.rm(new VerifyRunPaths(layout, record.runId).out, { recursive: true, force: true }).catch(() => undefined);
}

/** `created`: the verifier stopped between saving the `running` record and starting the container. */
async function containerState(docker: Docker, id: string): Promise<'running' | 'exited' | 'created' | 'gone'> {
  try {
    const s = (await docker.getContainer(id).inspect()).State;
    return s.Running ? 'running' : s.Status === 'created' ? 'created' : 'exited';
  } catch (e) {
    if (statusOf(e) === 404) return 'gone';
    throw dockerError(e, id.slice(0, 12), 'inspecting the verify container', docker);
  }
}

async function resume(layout: SessionLayout, docker: Docker, record: VerificationRecord, opts: ReattachOptions): Promise<VerificationRecord> {
  const paths = new VerifyRunPaths(layout, record.runId);
  const id = record.containerId ?? '';
  const state = id ? await containerState(docker, id) : 'gone';
  if (state === 'gone' || state === 'created') {
    // A created container never ran the script: waiting on it would report exit code 0.
    if (state === 'created') await removeWithRetry(docker, id);
    const why = state === 'created'
      ? 'was never started (the verifier stopped before starting it)'
      : record.owner && ownerGone(record.owner) === true
        ? `was gone, and the verifier that started the run (${record.owner}) had ended without saving its result (killed, or the disk was full when it wrote the record)`
        : 'was gone before its result was collected (engine restarted, or removed from outside)';
    const failed: VerificationRecord = {
      ...record, status: 'error', endedAt: new Date().toISOString(),
      error: { code: 'CONTAINER_FAILED', message: `the verify container ${id.slice(0, 12)} ${why}` },
      E_exit: false, E_clean: record.mode === 'clean' ? false : null,
      E_claims: { claims: [], allFound: false, note: 'the run did not finish: claims not checked' },
    };
    await saveRecord(layout, failed);
    return failed;
  }
  const logs = new RunLogs(paths, record.logCapBytes ?? DEFAULT_LOG_CAP_BYTES, opts.onLine);
  await logs.open();
  // Lines already stored are not stored again: the engine's log is read from a little before the
  // last stored line and the overlap is found by text (overlap.ts).
  const tail = await storedTail({ stdout: paths.stdout, stderr: paths.stderr });
  const container = docker.getContainer(id);
  const since = tail ? toDockerSince(nsToIso(tail.lastNs - BigInt(REPLAY_WINDOW_MS) * 1_000_000n)) : undefined;
  const stream = await logsSince(container, state === 'running', since);
  const replay = tail ? new ReplayFilter(tail.stored, (l) => logs.add(l)) : undefined;
  const drained = pipeLines(docker, stream, (l) => (replay ? replay.add(l) : logs.add(l)), true).then(() => replay?.end());
  logger.info(`run ${record.runId}: ${state === 'running' ? 'reattached to' : 'collecting'} ${id.slice(0, 12)}`);
  watched.add(id);
  try {
    return await watchToEnd({ docker, layout, paths, record, container, logs, drained, signal: opts.signal, events: opts.events });
  } finally {
    watched.delete(id);
  }
}

/** Marks a container as watched by this process (runVerification does, for its own runs). */
export function markWatched(id: string, on: boolean): void {
  if (on) watched.add(id); else watched.delete(id);
}

function nsToIso(ns: bigint): string {
  const ms = Number(ns / 1_000_000n);
  const frac = (ns % 1_000_000_000n).toString().padStart(9, '0');
  return new Date(ms).toISOString().replace(/\.\d+Z$/, `.${frac}Z`);
}
