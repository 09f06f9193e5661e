import { spawn } from 'node:child_process';
import { ExpBenchError, cancelled } from '../errors';
import { log } from '../log';

const logger = log('git');

/** A full git object id: 40 hex digits (SHA-1) or 64 (SHA-256), lower case. */
export const FULL_SHA = /^[0-9a-f]{40}([0-9a-f]{24})?$/;

/** Options of {@link git}. */
export interface GitOptions {
  /** Working directory of the git process. */
  cwd?: string;
  /** Extra environment variables (merged over `process.env`). */
  env?: Record<string, string | undefined>;
  /** Bytes or text written to git's stdin, which is then closed; without it, stdin is `/dev/null`. */
  input?: string | Buffer;
  /** Kills git (SIGTERM, then SIGKILL after 2000 ms) and rejects with `CANCELLED` when it fires. */
  signal?: AbortSignal;
  /** What the error names when git fails (a URL, a folder); defaults to `cwd`. */
  subject?: string;
  /** Exit codes other than 0 that are not failures (for example 1 for `git diff --exit-code`). */
  okCodes?: number[];
  /**
   * Keep the user's global and system git configuration (credential helpers, proxies, `insteadOf`
   * rules): set for clone and fetch from the user's sources; off for everything that builds or
   * reads a workspace, so that no alias, diff driver or hook setting changes the result.
   */
  userConfig?: boolean;
}

/** What {@link git} gives back: stdout as bytes and text, stderr as text, the exit code. */
export interface GitResult {
  stdout: Buffer;
  text: string;
  stderr: string;
  code: number;
}

/**
 * Environment every git call of the workspace module runs with: no prompts, no pager, a fixed
 * identity for the commits it makes, C locale (stable messages).
 */
export const GIT_ENV: Record<string, string> = {
  GIT_TERMINAL_PROMPT: '0',
  GIT_PAGER: 'cat',
  GIT_AUTHOR_NAME: 'EXP-Bench',
  GIT_AUTHOR_EMAIL: 'expbench@localhost',
  GIT_COMMITTER_NAME: 'EXP-Bench',
  GIT_COMMITTER_EMAIL: 'expbench@localhost',
  LC_ALL: 'C',
};

/**
 * Environment variables that point git at a repository, an index, an object store or injected
 * configuration: `git rev-parse --local-env-vars` (git 2.39), the list git itself clears when it
 * runs a command in another repository. Removed from the caller's environment for every call
 * (a user's shell, or a git hook, may set `GIT_DIR`: git would then read and write that
 * repository instead of the one in `cwd`); a call sets one explicitly through `GitOptions.env`.
 */
export const LOCAL_REPO_ENV = [
  'GIT_ALTERNATE_OBJECT_DIRECTORIES', 'GIT_CONFIG', 'GIT_CONFIG_PARAMETERS', 'GIT_CONFIG_COUNT',
  'GIT_OBJECT_DIRECTORY', 'GIT_DIR', 'GIT_WORK_TREE', 'GIT_IMPLICIT_WORK_TREE', 'GIT_GRAFT_FILE',
  'GIT_INDEX_FILE', 'GIT_NO_REPLACE_OBJECTS', 'GIT_REPLACE_REF_BASE', 'GIT_PREFIX',
  'GIT_INTERNAL_SUPER_PREFIX', 'GIT_SHALLOW_FILE', 'GIT_COMMON_DIR',
] as const;

/** `process.env` without {@link LOCAL_REPO_ENV}: the environment for a git process started outside {@link git} (a stream). */
export function callerEnv(): NodeJS.ProcessEnv {
  const env = { ...process.env };
  for (const k of LOCAL_REPO_ENV) delete env[k];
  return env;
}

/**
 * Runs `git args…` (no shell) and collects its output. The caller's environment reaches git
 * without {@link LOCAL_REPO_ENV}.
 *
 * @throws ExpBenchError `GIT_FAILED` (git's own stderr in the message, `subject` as the input)
 *   when git exits with a code not in `okCodes`; `SOURCE_UNAVAILABLE` naming the object when git
 *   reports a missing object ("unable to read sha1 file", "missing blob"); `CANCELLED` when
 *   `signal` fires.
 */
export function git(args: string[], opts: GitOptions = {}): Promise<GitResult> {
  const subject = opts.subject ?? opts.cwd ?? 'git';
  if (opts.signal?.aborted) return Promise.reject(cancelled(subject));
  return new Promise((resolve, reject) => {
    // A workspace is chowned to the container user (uid 1000); `safe.directory` lets the host
    // (often root) still read it. Only honoured from the command line, never from a repository.
    const isolated = opts.userConfig ? {} : { GIT_CONFIG_NOSYSTEM: '1', GIT_CONFIG_GLOBAL: '/dev/null' };
    const child = spawn('git', ['-c', 'safe.directory=*', ...args], {
      cwd: opts.cwd,
      env: { ...callerEnv(), ...GIT_ENV, ...isolated, ...opts.env },
      // No input: stdin is /dev/null (one pipe fewer to make per call).
      stdio: [opts.input === undefined ? 'ignore' : 'pipe', 'pipe', 'pipe'],
    });
    const started = Date.now();
    const out: Buffer[] = [];
    const err: Buffer[] = [];
    let killTimer: NodeJS.Timeout | undefined;
    const onAbort = () => {
      child.kill('SIGTERM');
      killTimer = setTimeout(() => child.kill('SIGKILL'), 2000);
    };
    opts.signal?.addEventListener('abort', onAbort, { once: true });
    child.stdout?.on('data', (b: Buffer) => out.push(b));
    child.stderr?.on('data', (b: Buffer) => err.push(b));
    child.stdin?.on('error', () => undefined); // git may exit before reading all input
    child.on('error', (e) => {
      opts.signal?.removeEventListener('abort', onAbort);
      reject(new ExpBenchError('GIT_FAILED', subject, `cannot run git: ${e.message}`, { cause: e }));
    });
    child.on('close', (code) => {
      opts.signal?.removeEventListener('abort', onAbort);
      if (killTimer) clearTimeout(killTimer);
      const stdout = Buffer.concat(out);
      const stderr = Buffer.concat(err).toString('utf8');
      if (opts.signal?.aborted) return reject(cancelled(subject));
      const c = code ?? -1;
      logger.trace(`git ${args.slice(0, 3).join(' ')} → ${c} in ${Date.now() - started} ms`);
      if (c === 0 || opts.okCodes?.includes(c)) {
        return resolve({ stdout, text: stdout.toString('utf8'), stderr, code: c });
      }
      logger.debug(`git ${args.join(' ')} → ${c}: ${stderr.trim()}`);
      reject(gitError(args, c, stderr, subject));
    });
    child.stdin?.end(opts.input);
  });
}

/** The object id git names in a "missing object" message, or undefined. */
export function missingObjectIn(stderr: string): string | undefined {
  const m =
    /unable to read sha1 file of .*?\(([0-9a-f]{40,64})\)/.exec(stderr) ??
    /unable to read ([0-9a-f]{40,64})/.exec(stderr) ??
    /missing (?:blob|tree|commit) (?:object )?'?([0-9a-f]{40,64})/.exec(stderr) ??
    /(?:bad object|could not read|object not found:?) '?([0-9a-f]{40,64})/i.exec(stderr);
  return m?.[1];
}

function gitError(args: string[], code: number, stderr: string, subject: string): ExpBenchError {
  const missing = missingObjectIn(stderr);
  const text = stderr.trim() || '(no output)';
  if (missing) {
    return new ExpBenchError('SOURCE_UNAVAILABLE', subject,
      `object ${missing} is missing from the repository (an incomplete snapshot?): git ${args[0]} said: ${text}`);
  }
  return new ExpBenchError('GIT_FAILED', subject, `git ${args.join(' ')} failed (exit ${code}): ${text}`);
}
