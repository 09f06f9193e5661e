import { randomBytes } from 'node:crypto';
import { Writable, type Duplex } from 'node:stream';
import type Docker from 'dockerode';
import { ExpBenchError } from '../errors';
import { log } from '../log';
import { dockerError, statusOf } from './connection';
import { describeState } from './containers';
import { walksDone } from './pause';
import { errorMessage } from '../util/errors';

const logger = log('sandbox');

/** Options of {@link startExec} and {@link exec}. */
export interface ExecOptions {
  /** Program and arguments (no shell unless you give one, e.g. `['bash', '-lc', '…']`). */
  cmd: string[];
  /** Allocate a TTY: one raw output stream (to `onStdout`), resizable, Ctrl-C via the TTY. */
  tty?: boolean;
  /** Piped to the process's stdin; when it ends, stdin is closed (EOF). */
  stdin?: NodeJS.ReadableStream;
  /** Keep stdin open for {@link ExecSession.write} (implied by `tty`). */
  interactive?: boolean;
  /** Default: the container's user. */
  user?: string;
  /** Default: the container's working directory. */
  workdir?: string;
  /** Added to the container's environment. Never put secrets here. */
  env?: Record<string, string>;
  onStdout?: (chunk: Buffer) => void;
  onStderr?: (chunk: Buffer) => void;
  /** Aborting kills the process group (TERM, then KILL after `killGraceMs`); the result has `aborted: true`. */
  signal?: AbortSignal;
  /** ms between TERM and KILL on abort (default 2000). */
  killGraceMs?: number;
  /** Initial TTY size. */
  size?: { cols: number; rows: number };
}

/** How an exec ended. */
export interface ExecResult {
  /** The process's exit code (128+N when killed by signal N). */
  exitCode: number;
  /** Wall time from start to exit, in ms. */
  durationMs: number;
  /** True when `signal` fired and the process was killed. */
  aborted: boolean;
}

/** A running exec. */
export interface ExecSession {
  /** Exec instance id. */
  id: string;
  /** Writes to stdin (needs `tty`, `interactive` or `stdin`). */
  write(data: string | Buffer): void;
  /** Closes stdin (EOF). */
  endInput(): void;
  /** Resizes the TTY, in character cells. */
  resize(cols: number, rows: number): Promise<void>;
  /** Kills the process group: SIGTERM, then SIGKILL after the grace time. */
  kill(): Promise<void>;
  /** Settles when the process exits. Rejects with DOCKER_UNAVAILABLE (engine gone) or CONTAINER_FAILED (container died). */
  done: Promise<ExecResult>;
}

/**
 * Starts `cmd` in a running container (`docker exec`), streaming output to the callbacks; stdout
 * and stderr are demultiplexed unless `tty`. The command runs under `sh -c 'echo $$ >PIDFILE;
 * exec "$@"'` so that {@link ExecSession.kill} can find its process group (the image contract
 * guarantees `sh`).
 * @throws ExpBenchError CONTAINER_FAILED when the container is not running; DOCKER_UNAVAILABLE when the engine is gone
 */
export async function startExec(container: Docker.Container, opts: ExecOptions): Promise<ExecSession> {
  const label = container.id.slice(0, 12);
  const pidFile = `/tmp/.expbench-exec-${randomBytes(6).toString('hex')}.pid`;
  const attachStdin = Boolean(opts.tty || opts.interactive || opts.stdin);
  let ex: Docker.Exec;
  let stream: Duplex;
  // the engine refuses an exec into a paused container: one asked for while the host walks the workspace waits for the walk
  await walksDone(container.id);
  try {
    ex = await container.exec({
      Cmd: ['sh', '-c', 'echo $$ > "$0"; exec "$@"', pidFile, ...opts.cmd],
      AttachStdin: attachStdin,
      AttachStdout: true,
      AttachStderr: true,
      Tty: Boolean(opts.tty),
      User: opts.user,
      WorkingDir: opts.workdir,
      Env: Object.entries(opts.env ?? {}).map(([k, v]) => `${k}=${v}`),
    });
    stream = (await ex.start({ hijack: true, stdin: attachStdin, Tty: Boolean(opts.tty) })) as unknown as Duplex;
  } catch (e) {
    if (statusOf(e) === 409 || statusOf(e) === 404) {
      throw new ExpBenchError('CONTAINER_FAILED', label, `cannot run ${JSON.stringify(opts.cmd)}: the container is ${await describeState(container)}`, { cause: e });
    }
    throw dockerError(e, label, `starting ${JSON.stringify(opts.cmd)}`);
  }
  const started = Date.now();
  const sink = (fn?: (c: Buffer) => void) => new Writable({ write(chunk: Buffer, _enc, cb) { fn?.(chunk); cb(); } });
  if (opts.tty) stream.on('data', (c: Buffer) => opts.onStdout?.(c));
  else container.modem.demuxStream(stream, sink(opts.onStdout), sink(opts.onStderr));
  if (opts.stdin) opts.stdin.pipe(stream);
  if (opts.tty && opts.size) await ex.resize({ h: opts.size.rows, w: opts.size.cols }).catch(() => undefined);

  let aborted = false;
  const kill = async () => {
    const grace = Math.max(0, Math.round((opts.killGraceMs ?? 2000) / 1000));
    // dash's kill: `kill -SIG -PGID` signals the group (the exec'd process leads its own session).
    const script = `p=$(cat "${pidFile}" 2>/dev/null) || exit 0; kill -TERM -$p 2>/dev/null || kill -TERM $p 2>/dev/null; ` +
      `for i in $(seq ${grace * 10}); do kill -0 -$p 2>/dev/null || exit 0; sleep 0.1; done; kill -KILL -$p 2>/dev/null || kill -KILL $p 2>/dev/null; exit 0`;
    try {
      // As the exec's own user: with no-new-privileges and a non-root image user, a root exec gets
      // no capabilities (no CAP_KILL), so only the same uid may signal the group.
      const k = await container.exec({ Cmd: ['sh', '-c', script], User: opts.user, AttachStdout: true, AttachStderr: true });
      const ks = await k.start({});
      await new Promise<void>((resolve) => { ks.on('end', resolve); ks.on('error', () => resolve()); ks.resume(); });
    } catch (e) {
      logger.debug(`kill of exec in ${label} failed (the container may be gone): ${errorMessage(e)}`);
    }
  };
  const onAbort = () => { aborted = true; void kill(); };
  if (opts.signal?.aborted) onAbort();
  else opts.signal?.addEventListener('abort', onAbort, { once: true });

  const done = new Promise<ExecResult>((resolve, reject) => {
    let settled = false;
    const finish = async (streamError?: Error) => {
      if (settled) return;
      settled = true;
      opts.signal?.removeEventListener('abort', onAbort);
      try {
        let info = await ex.inspect();
        for (let i = 0; info.Running && i < 50; i++) { // the stream can end a moment before the exec is marked done
          await new Promise((r) => setTimeout(r, 20));
          info = await ex.inspect();
        }
        if (info.Running || info.ExitCode === null || info.ExitCode === undefined) {
          const state = await describeState(container);
          throw new ExpBenchError('CONTAINER_FAILED', label, `${JSON.stringify(opts.cmd)} ended without an exit code; the container is ${state}${streamError ? ` (${streamError.message})` : ''}`);
        }
        const durationMs = Date.now() - started;
        // The exec's exit code means nothing when its container stopped or went away meanwhile.
        let state = await describeState(container);
        // Killed by a signal: the container may be going down (force removal, docker kill), still
        // marked running for a moment; look again for up to 500 ms before trusting the exit code.
        for (let i = 0; state === 'running' && info.ExitCode >= 128 && i < 10; i++) {
          await new Promise((r) => setTimeout(r, 50));
          state = await describeState(container);
        }
        if (state !== 'running') throw new ExpBenchError('CONTAINER_FAILED', label, `the container stopped while running ${JSON.stringify(opts.cmd)}: ${state}`);
        resolve({ exitCode: info.ExitCode, durationMs, aborted });
      } catch (e) {
        if (statusOf(e) === 404) {
          const state = await describeState(container).catch(() => 'unknown');
          reject(new ExpBenchError('CONTAINER_FAILED', label, `the container went away while running ${JSON.stringify(opts.cmd)} (${state})`, { cause: e }));
        } else reject(dockerError(e, label, `running ${JSON.stringify(opts.cmd)}`));
      }
    };
    stream.on('end', () => void finish());
    stream.on('close', () => void finish());
    stream.on('error', (e: Error) => void finish(e));
  });

  return {
    id: ex.id,
    write: (data) => { stream.write(data); },
    endInput: () => { stream.end(); },
    resize: async (cols, rows) => {
      try { await ex.resize({ h: rows, w: cols }); } catch (e) { logger.debug(`resize failed: ${errorMessage(e)}`); }
    },
    kill,
    done,
  };
}

/**
 * Runs `cmd` in a running container to completion. See {@link startExec}.
 * @returns exit code, duration (ms) and whether `signal` aborted it
 */
export async function exec(container: Docker.Container, opts: ExecOptions): Promise<ExecResult> {
  return (await startExec(container, opts)).done;
}

/** Runs `cmd` and collects its output as UTF-8 text (for short commands). */
export async function execText(container: Docker.Container, opts: Omit<ExecOptions, 'onStdout' | 'onStderr'>): Promise<ExecResult & { stdout: string; stderr: string }> {
  const out: Buffer[] = [];
  const err: Buffer[] = [];
  const r = await exec(container, { ...opts, onStdout: (c) => out.push(c), onStderr: (c) => err.push(c) });
  return { ...r, stdout: Buffer.concat(out).toString('utf8'), stderr: Buffer.concat(err).toString('utf8') };
}
