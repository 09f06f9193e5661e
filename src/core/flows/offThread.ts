import { existsSync } from 'node:fs';
import * as path from 'node:path';
import { Worker } from 'node:worker_threads';
import { cancelled, ExpBenchError } from '../errors';
import type { JudgeSessionOptions } from '../judge/session';
import { log } from '../log';
import { errorMessage } from '../util/errors';

const logger = log('offThread');

/** The work a worker thread does (offThreadWorker.ts): serialisable inputs only. */
export type OffThreadTask =
  | { kind: 'judge'; sessionDir: string; opts: Omit<JudgeSessionOptions, 'signal' | 'makePatch' | 'pristine' | 'now'> };

/** The worker's script: beside this file (tsc's out/) or beside the bundle that holds this code (dist/). */
export function workerScript(): string {
  const file = path.join(__dirname, 'offThreadWorker.js');
  if (!existsSync(file)) {
    throw new ExpBenchError('BAD_INPUT', file, 'the worker script of the host\'s slow work (judge) is missing: rebuild with npm run build');
  }
  return file;
}

/**
 * Runs `task` in a worker thread of this process (Node `worker_threads`), so that the event loop
 * of the caller (the proctored window's channel, the forwarder, an MCP server) keeps answering
 * while the judge works on long solver text. Same process, so the session keeps one owner
 * (private/owner.json names this pid); the worker writes only the judge's files.
 * @returns what the task returns (structured clone)
 * @throws the task's error as an ExpBenchError with its code and input when it was one; CANCELLED when `signal` aborts (the worker is ended)
 */
export function runOffThread<T>(task: OffThreadTask, signal?: AbortSignal): Promise<T> {
  if (signal?.aborted) return Promise.reject(cancelled(task.kind));
  return new Promise<T>((resolve, reject) => {
    const worker = new Worker(workerScript(), { workerData: task });
    let settled = false;
    const finish = (fn: () => void) => { if (!settled) { settled = true; signal?.removeEventListener('abort', onAbort); fn(); } };
    const onAbort = () => { void worker.terminate(); finish(() => reject(cancelled(task.kind))); };
    signal?.addEventListener('abort', onAbort, { once: true });
    worker.once('message', (m: { ok: true; value: T } | { ok: false; code?: string; input?: string; message: string }) => finish(() => {
      if (m.ok) resolve(m.value);
      else if (m.code && m.input !== undefined) reject(new ExpBenchError(m.code as ExpBenchError['code'], m.input, m.message.startsWith(`${m.input}: `) ? m.message.slice(m.input.length + 2) : m.message));
      else reject(new Error(m.message));
    }));
    worker.once('error', (e) => finish(() => reject(e)));
    worker.once('exit', (code) => finish(() => reject(new Error(`the worker thread of ${task.kind} ended (exit ${code}) without an answer`))));
  }).catch((e: unknown) => {
    logger.debug(`${task.kind} off the thread: ${errorMessage(e)}`);
    throw e;
  });
}
