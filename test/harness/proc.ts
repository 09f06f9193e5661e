// Child processes for the launchers: each runs in its own process group with stdout/stderr
// appended to a log file, and is stopped with its whole group (no orphans), also when the
// launcher itself exits or is interrupted.
import { spawn, type ChildProcess } from 'node:child_process';
import * as fs from 'node:fs';

export interface ManagedProcess {
  readonly child: ChildProcess;
  readonly logFile: string;
  /** Resolves with the exit code (null when killed by a signal) once the leader exits. */
  readonly exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
  /** SIGTERM to the group, SIGKILL after `graceMs` (default 5000 ms). Safe to call twice. */
  stop(graceMs?: number): Promise<void>;
}

const live = new Set<number>();
let hooksInstalled = false;

function killGroup(pid: number, signal: NodeJS.Signals): void {
  try {
    process.kill(-pid, signal);
  } catch {
    /* group already gone */
  }
}

function installExitHooks(): void {
  if (hooksInstalled) return;
  hooksInstalled = true;
  process.on('exit', () => {
    for (const pid of live) killGroup(pid, 'SIGKILL');
  });
  for (const sig of ['SIGINT', 'SIGTERM', 'SIGHUP'] as const) {
    process.once(sig, () => {
      for (const pid of live) killGroup(pid, 'SIGKILL');
      process.exit(128 + (sig === 'SIGINT' ? 2 : sig === 'SIGTERM' ? 15 : 1));
    });
  }
}

/** Starts `command args` detached in a new process group, logging to `logFile` (appended). */
export function startProcess(
  command: string,
  args: string[],
  opts: { logFile: string; cwd?: string; env?: NodeJS.ProcessEnv },
): ManagedProcess {
  installExitHooks();
  const fd = fs.openSync(opts.logFile, 'a');
  fs.writeSync(fd, `$ ${command} ${args.join(' ')}\n`);
  const child = spawn(command, args, {
    cwd: opts.cwd,
    env: opts.env ?? process.env,
    detached: true,
    stdio: ['ignore', fd, fd],
  });
  fs.closeSync(fd);
  const pid = child.pid;
  if (pid === undefined) throw new Error(`could not start ${command}`);
  live.add(pid);
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) => {
    child.once('exit', (code, signal) => resolve({ code, signal }));
    child.once('error', () => resolve({ code: -1, signal: null }));
  });
  let stopping: Promise<void> | undefined;
  const stop = (graceMs = 5000): Promise<void> => {
    stopping ??= (async () => {
      killGroup(pid, 'SIGTERM');
      const timer = new Promise<'timeout'>((r) => setTimeout(() => r('timeout'), graceMs).unref());
      if ((await Promise.race([exited, timer])) === 'timeout') killGroup(pid, 'SIGKILL');
      // The leader may be gone while children of the group linger: make sure of the group.
      killGroup(pid, 'SIGKILL');
      live.delete(pid);
    })();
    return stopping;
  };
  return { child, logFile: opts.logFile, exited, stop };
}

/** Runs a command to completion (own group, logged); rejects naming the log when it fails. */
export async function runLogged(
  command: string,
  args: string[],
  opts: { logFile: string; cwd?: string; env?: NodeJS.ProcessEnv; timeoutMs?: number },
): Promise<void> {
  const p = startProcess(command, args, opts);
  const timeoutMs = opts.timeoutMs ?? 10 * 60_000;
  const timer = new Promise<'timeout'>((r) => setTimeout(() => r('timeout'), timeoutMs).unref());
  const result = await Promise.race([p.exited, timer]);
  await p.stop();
  if (result === 'timeout') throw new Error(`${command} ${args.join(' ')} timed out after ${timeoutMs} ms (log: ${opts.logFile})`);
  if (result.code !== 0) {
    throw new Error(`${command} ${args.join(' ')} exited with ${result.code ?? result.signal} (log: ${opts.logFile})\n${tail(opts.logFile)}`);
  }
}

/** The last `lines` lines of a log file ('' when unreadable). */
export function tail(file: string, lines = 30): string {
  try {
    return fs.readFileSync(file, 'utf8').split('\n').slice(-lines).join('\n');
  } catch {
    return '';
  }
}
