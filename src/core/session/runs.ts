import { randomBytes } from 'node:crypto';
import { createWriteStream, promises as fsp } from 'node:fs';
import * as path from 'node:path';
import { StringDecoder } from 'node:string_decoder';
import type Docker from 'dockerode';
import { ExpBenchError } from '../errors';
import { exec } from '../sandbox/exec';
import type { Session } from './session';
import type { RunRecord } from './state';
import { errorMessage } from '../util/errors';

/**
 * Runs a command in the task's WORK container (not the verifier) and reports its output as it
 * comes. Implemented over the sandbox's exec (src/core/sandbox) by the caller; a null exit code
 * means the process did not exit normally (killed, engine error).
 */
export type ScriptExec = (req: {
  /** argv, e.g. `['bash', 'reproduce_exp_bench.sh']`. */
  command: string[];
  /** Working directory inside the container, `/workspace`. */
  cwd: string;
  onOutput: (chunk: string, stream: 'stdout' | 'stderr') => void;
  signal?: AbortSignal;
}) => Promise<{ exitCode: number | null }>;

export interface RunScriptOptions {
  exec: ScriptExec;
  signal?: AbortSignal;
  /** Live output (the log is also written to `private/runs/<id>.log`). */
  onOutput?: (chunk: string, stream: 'stdout' | 'stderr') => void;
}

/**
 * Runs `bash reproduce_exp_bench.sh` in /workspace of the work container through `opts.exec`,
 * streams stdout and stderr (interleaved as they arrive) to `private/runs/<id>.log`, adds the run to
 * the state's history and records a `script.run` event. An exec failure (or cancellation) does not
 * throw: the run is recorded with `exitCode: null` and its `error`.
 * @throws ExpBenchError `BAD_INPUT` naming the script when workspace/reproduce_exp_bench.sh does not exist.
 */
export async function runScript(session: Session, opts: RunScriptOptions): Promise<RunRecord> {
  const { layout, store } = session;
  // lstat, never stat: whether a link's target exists on the HOST is none of the run's business
  // (the container resolves the link in its own file system), and must not be told to the solver.
  if (!(await fsp.lstat(layout.script).then(() => true, () => false))) {
    throw new ExpBenchError('BAD_INPUT', layout.script, 'there is no reproduce_exp_bench.sh at the repository root yet: write it before running it');
  }
  const started = store.now();
  const id = `run-${new Date(started).toISOString().replace(/[-:]/g, '').replace(/\.\d+Z$/, 'Z')}-${randomBytes(2).toString('hex')}`;
  const logFile = path.join(layout.runs, `${id}.log`);
  await fsp.mkdir(layout.runs, { recursive: true });
  const out = createWriteStream(logFile, { flags: 'wx' });
  const opened = new Promise<void>((resolve, reject) => { out.once('open', () => resolve()); out.once('error', reject); });
  await opened;
  let exitCode: number | null = null;
  let error: string | undefined;
  try {
    const r = await opts.exec({
      command: ['bash', 'reproduce_exp_bench.sh'],
      cwd: '/workspace',
      signal: opts.signal,
      onOutput: (chunk, stream) => { out.write(chunk); opts.onOutput?.(chunk, stream); },
    });
    exitCode = r.exitCode;
    if (opts.signal?.aborted) error = 'cancelled by the user';
  } catch (e: any) {
    error = opts.signal?.aborted ? 'cancelled by the user' : errorMessage(e);
  } finally {
    await new Promise<void>((resolve) => out.end(resolve));
  }
  const record: RunRecord = {
    id,
    startedAt: new Date(started).toISOString(),
    exitCode,
    durationMs: Math.max(0, store.now() - started),
    log: path.relative(layout.root, logFile).split(path.sep).join('/'),
    ...(error ? { error } : {}),
  };
  store.update((s) => { s.runs.push(record); });
  await session.events.append({
    type: 'script.run', runId: id, exitCode, durationMs: record.durationMs, log: record.log, ...(error ? { error } : {}),
  });
  return record;
}

/**
 * A {@link ScriptExec} over a running work container (src/core/sandbox `exec`, i.e. `docker exec`):
 * output decoded as UTF-8 per stream (characters split across chunks kept whole); a run killed
 * through `signal` reports `exitCode: null`.
 */
export function containerExec(container: Docker.Container): ScriptExec {
  return async ({ command, cwd, onOutput, signal }) => {
    const out = new StringDecoder('utf8');
    const err = new StringDecoder('utf8');
    const r = await exec(container, {
      cmd: command, workdir: cwd, signal,
      onStdout: (b) => { const t = out.write(b); if (t) onOutput(t, 'stdout'); },
      onStderr: (b) => { const t = err.write(b); if (t) onOutput(t, 'stderr'); },
    });
    const restOut = out.end(); if (restOut) onOutput(restOut, 'stdout');
    const restErr = err.end(); if (restErr) onOutput(restErr, 'stderr');
    return { exitCode: r.aborted ? null : r.exitCode };
  };
}
