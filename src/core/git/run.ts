import { spawn, spawnSync, type ChildProcess, type ChildProcessWithoutNullStreams } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { GitPluginError, simpleGit, type SimpleGitOptions } from 'simple-git';
import { ExpBenchError, cancelled } from '../errors';
import { log } from '../log';
import { FIXED_CONFIG, gitEnv, HOST_ATTRIBUTES } from './env';
import { assertHostGitDir, insideMountedFolder } from './guard';
import { errorMessage } from '../util/errors';

const logger = log('git');

/**
 * The repository a call runs in, always named (git never looks for one from the working folder):
 * - `{gitDir, workTree?}`: a repository the host owns (the session's `private/repo.git`, the
 *   pristine cache, a clean tree's own): `--git-dir`, and `--work-tree` when given (its files are
 *   read as data: no driver of any kind is defined, see env.ts). The git folder is checked before
 *   every call ({@link assertHostGitDir}: never one the solver can write).
 * - `{checkout}`: the top folder of a user's own source repository (`--source`), found there and
 *   no further up (`GIT_CEILING_DIRECTORIES`); trusted for that path only (`safe.directory=<it>`,
 *   which a checkout owned by another uid needs), never when it lies in a session's workspace.
 * - `'none'`: a command that needs no repository (`apply` into a plain folder, `diff --no-index`,
 *   `ls-remote`, `clone`, the user's global `config`): run in the layer's own empty repository
 *   ({@link nullGitDir}) with `cwd` as its work tree, so that no repository around `cwd` is read.
 */
export type GitRepo = { gitDir: string; workTree?: string } | { checkout: string } | 'none';

/** Options of {@link git}. */
export interface GitOptions {
  /** The repository (see {@link GitRepo}). */
  repo: GitRepo;
  /** Working directory of the git process (must exist); default the work tree, else the git folder, else the process's. */
  cwd?: string;
  /** Extra environment variables (over the caller's, without git's local repository variables); `undefined` removes one. */
  env?: Record<string, string | undefined>;
  /** Bytes or text written to git's stdin, which is then closed (the call is then a spawn, not simple-git). */
  input?: string | Buffer;
  /** Kills git and rejects with `CANCELLED` when it fires. */
  signal?: AbortSignal;
  /** What the error names when git fails (a URL, a folder); defaults to `cwd`. */
  subject?: string;
  /** Exit codes other than 0 that are not failures (for example 1 for `git diff --exit-code`). */
  okCodes?: number[];
  /**
   * Keep the user's global and system git configuration and transport settings (credential
   * helpers, proxies, `insteadOf` rules, `GIT_SSH_COMMAND`): set for clone, fetch and ls-remote of
   * the user's sources; off for everything that builds or reads a workspace, so that no alias,
   * diff driver or setting of the user's changes the result.
   */
  userConfig?: boolean;
  /** Lets git read `file://` and local-path repositories whatever `protocol.file.allow` says (local sources and their submodules). */
  allowFileProtocol?: boolean;
}

/** What {@link git} gives back: stdout as text, stderr as text, the exit code. */
export interface GitResult {
  text: string;
  stderr: string;
  code: number;
}

/** What a call with `input` gives back: {@link GitResult} and stdout as bytes. */
export interface GitBytesResult extends GitResult {
  stdout: Buffer;
}

/**
 * Runs `git args…` (no shell) and collects its output: through simple-git, or, when `input` is
 * given, a spawn that writes it to git's stdin (`pack-objects`, `cat-file --batch`: simple-git
 * leaves stdin open and unwritten). Either way the process starts with `-c` {@link FIXED_CONFIG}
 * (no hooks, no fsmonitor, `safe.directory`) and the environment of {@link gitEnv} (git's local
 * repository variables from the caller never reach it; no system or global configuration unless
 * `userConfig`).
 *
 * @throws ExpBenchError `GIT_FAILED` (git's own stderr in the message, `subject` as the input)
 *   when git exits with a code not in `okCodes` or cannot be started; `SOURCE_UNAVAILABLE` naming
 *   the object when git reports a missing object ("unable to read sha1 file", "missing blob");
 *   `CANCELLED` when `signal` fires.
 */
export function git(args: string[], opts: GitOptions & { input: string | Buffer }): Promise<GitBytesResult>;
export function git(args: string[], opts: GitOptions): Promise<GitResult>;
export function git(args: string[], opts: GitOptions): Promise<GitResult> {
  return run(args, opts, opts.input === undefined);
}

/**
 * {@link git} always as a spawn: for the plumbing of this folder (objects.ts, repo.ts), whose
 * argument lists are fixed here and whose calls are many per preparation: simple-git's checks of
 * arguments and environment are meant for arguments from elsewhere, and cost Node's event loop
 * time on every call. Same environment, settings and errors as {@link git}.
 */
export function plumbing(args: string[], opts: GitOptions): Promise<GitBytesResult> {
  return run(args, opts, false) as Promise<GitBytesResult>;
}

/** Commands that never look for a repository (git.c runs them without setup): no `--git-dir` for them. */
const NO_SETUP = new Set(['init', 'clone']);

/**
 * The arguments before the command, the working folder and the extra environment that make a call
 * run in `opts.repo` and nowhere else (see {@link GitRepo}); checks a host git folder first.
 * @throws ExpBenchError from {@link assertHostGitDir}
 */
export function repoArgs(opts: GitOptions, command: string | undefined): { pre: string[]; cwd: string | undefined; env: Record<string, string | undefined> } {
  const r = opts.repo;
  if (r === 'none') {
    if (command && NO_SETUP.has(command)) return { pre: [], cwd: opts.cwd, env: {} };
    const cwd = opts.cwd;
    return { pre: [`--git-dir=${nullGitDir()}`, ...(cwd ? [`--work-tree=${cwd}`] : [])], cwd, env: {} };
  }
  if ('checkout' in r) {
    const top = path.resolve(r.checkout);
    const mounted = fs.existsSync(top) ? insideMountedFolder(fs.realpathSync(top)) : undefined;
    if (mounted) throw new ExpBenchError('GIT_FAILED', top, `refused to run git here: it is inside ${mounted}, which a work container mounts; nothing was run`);
    return { pre: ['-c', `safe.directory=${top}`], cwd: opts.cwd ?? top, env: { GIT_CEILING_DIRECTORIES: path.dirname(top) } };
  }
  assertHostGitDir(r.gitDir);
  return {
    pre: [`--git-dir=${r.gitDir}`, ...(r.workTree ? [`--work-tree=${r.workTree}`] : [])],
    cwd: opts.cwd ?? r.workTree ?? r.gitDir,
    env: {},
  };
}

function firstCommand(args: string[]): string | undefined {
  for (let i = 0; i < args.length; i++) {
    if (args[i] === '-c') { i++; continue; }
    if (!args[i].startsWith('-')) return args[i];
  }
  return undefined;
}

function run(args: string[], opts: GitOptions, simple: boolean): Promise<GitResult> {
  const subject = opts.subject ?? opts.cwd ?? repoName(opts.repo);
  if (opts.signal?.aborted) return Promise.reject(cancelled(subject));
  let where: ReturnType<typeof repoArgs>;
  try {
    where = repoArgs(opts, firstCommand(args));
  } catch (e) {
    return Promise.reject(e);
  }
  const full = [...FIXED_CONFIG, ...(opts.allowFileProtocol ? ['-c', 'protocol.file.allow=always'] : []), ...where.pre, ...args];
  const env = gitEnv(opts.userConfig === true, { ...where.env, ...opts.env });
  opts = { ...opts, cwd: where.cwd };
  const started = Date.now();
  const done = (r: GitResult) => {
    if (opts.signal?.aborted) throw cancelled(subject);
    logger.trace(`git ${args.slice(0, 3).join(' ')} → ${r.code} in ${Date.now() - started} ms`);
    if (r.code === 0 || opts.okCodes?.includes(r.code)) return r;
    logger.debug(`git ${args.join(' ')} → ${r.code}: ${r.stderr.trim()}`);
    throw gitError(args, r.code, r.stderr, subject);
  };
  return (simple ? viaSimpleGit(full, env, opts, subject) : viaSpawn(full, env, opts, subject)).then(done);
}

/**
 * simple-git's unsafe-operation checks (`@simple-git/argv-parser`) refuse settings and variables
 * that make git run a program or read another configuration. Allowed only where the guarantees of
 * {@link git} need them:
 * - `allowUnsafeConfigPaths`: `GIT_CONFIG_GLOBAL=/dev/null` is how the user's configuration is
 *   kept out; with `userConfig`, the user's own `GIT_CONFIG_GLOBAL`/`GIT_CONFIG_SYSTEM`;
 * - `allowUnsafeHooksPath`, `allowUnsafeFsMonitor`, `allowUnsafePager`: `core.hooksPath=/dev/null`,
 *   `core.fsmonitor=false`, `core.pager=cat` of {@link FIXED_CONFIG} (and `GIT_PAGER`/`PAGER=cat`
 *   of env.ts) turn hooks, monitors and pagers OFF;
 * - `allowUnsafeTemplateDir`: `init --template=` (empty: no template, so no sample hooks);
 * - `allowUnsafeProtocolOverride`: only with `allowFileProtocol`;
 * - with `userConfig` only, the user's transport settings (`GIT_SSH_COMMAND`, askpass helpers,
 *   `GIT_PROXY_COMMAND`): the reason `userConfig` exists.
 */
function unsafeFor(args: string[], opts: GitOptions): SimpleGitOptions['unsafe'] {
  const user = opts.userConfig === true;
  return {
    allowUnsafeConfigPaths: true,
    allowUnsafeHooksPath: true,
    allowUnsafeFsMonitor: true,
    allowUnsafePager: true,
    allowUnsafeTemplateDir: args.includes('--template='),
    allowUnsafeProtocolOverride: opts.allowFileProtocol === true,
    allowUnsafeSshCommand: user,
    allowUnsafeAskPass: user,
    allowUnsafeGitProxy: user,
  };
}

async function viaSimpleGit(args: string[], env: Record<string, string>, opts: GitOptions, subject: string): Promise<GitResult> {
  let code = -1;
  let stderr = '';
  try {
    const text = await simpleGit({
      baseDir: opts.cwd ?? process.cwd(),
      unsafe: unsafeFor(args, opts),
      ...(opts.signal ? { abort: opts.signal } : {}),
      // Only `close` ends a call (simple-git 3 may otherwise end it 50 ms after `exit`, before all output is read).
      completion: { onClose: true, onExit: false },
      // Every call's exit code and stderr are kept and the caller's okCodes decide what fails (in
      // `git`); only a plugin's refusal (abort, an unsafe option) fails the call here.
      errors: (error, result) => {
        code = result.exitCode ?? -1;
        stderr = Buffer.concat(result.stdErr).toString('utf8');
        return error instanceof GitPluginError ? error : undefined;
      },
    }).env(env).outputHandler((_bin, stdout) => {
      // simple-git (3.36, completion-detection plugin) waits 50 ms more after a process that wrote
      // nothing to stdout or stderr (`init --quiet`, `read-tree`, `update-ref`…); an empty chunk
      // when stdout ends tells it the output is complete. Checked by the timing test in
      // test/unit/git.layer.unit.test.ts.
      stdout.once('end', () => stdout.emit('data', Buffer.alloc(0)));
    }).raw(args);
    return { text, stderr, code };
  } catch (e) {
    if (opts.signal?.aborted) throw cancelled(subject);
    throw new ExpBenchError('GIT_FAILED', subject, `cannot run git ${args.slice(FIXED_CONFIG.length).join(' ')}: ${errorMessage(e)}`, { cause: e });
  }
}

/**
 * Starts `git args…` in `opts.repo` with {@link FIXED_CONFIG} and the environment of
 * {@link gitEnv}, every pipe open: for callers in this folder that talk to git through stdin and
 * stdout while it runs (`mktree --batch`). `signal` kills it (SIGTERM, then SIGKILL after 2000 ms).
 * @throws ExpBenchError from {@link assertHostGitDir}
 */
export function startGit(args: string[], opts: Pick<GitOptions, 'repo' | 'cwd' | 'signal' | 'env'>): ChildProcessWithoutNullStreams {
  const where = repoArgs(opts, firstCommand(args));
  const child = spawn('git', [...FIXED_CONFIG, ...where.pre, ...args], { cwd: where.cwd, env: gitEnv(false, { ...where.env, ...opts.env }), stdio: ['pipe', 'pipe', 'pipe'] });
  return watch(child, opts.signal);
}

/** What an error names for a call without `cwd` or `subject`. */
function repoName(r: GitRepo): string {
  return r === 'none' ? 'git' : 'checkout' in r ? r.checkout : r.workTree ?? r.gitDir;
}

let nullDir: string | undefined;

/**
 * The layer's own empty repository, for calls that need none (`GitRepo` `'none'`): a bare
 * repository with the layer's attributes (no driver), made once per process in a folder of its
 * own under the temporary folder, only this process's uid able to enter it (mode 0700), and
 * removed when the process exits.
 */
export function nullGitDir(): string {
  if (nullDir && fs.existsSync(nullDir)) return nullDir;
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), `expbench-nullgit-${process.pid}-`));
  fs.chmodSync(dir, 0o700);
  const gitDir = path.join(dir, 'null.git');
  const r = spawnSync('git', [...FIXED_CONFIG, 'init', '--quiet', '--bare', '--template=', gitDir], { env: gitEnv(false), encoding: 'utf8' });
  if (r.status !== 0) throw new ExpBenchError('GIT_FAILED', gitDir, `cannot make the layer's empty repository: ${r.stderr || r.error?.message}`);
  fs.mkdirSync(path.join(gitDir, 'info'), { recursive: true });
  fs.writeFileSync(path.join(gitDir, 'info', 'attributes'), HOST_ATTRIBUTES);
  if (!nullDir) process.once('exit', () => { if (nullDir) fs.rmSync(path.dirname(nullDir), { recursive: true, force: true }); });
  nullDir = gitDir;
  return gitDir;
}

/** `signal` kills `child` (SIGTERM, then SIGKILL after 2000 ms); stdin errors (git exited before reading it all) are ignored. */
function watch<C extends ChildProcess>(child: C, signal?: AbortSignal): C {
  let killTimer: NodeJS.Timeout | undefined;
  const onAbort = () => {
    child.kill('SIGTERM');
    killTimer = setTimeout(() => child.kill('SIGKILL'), 2000);
  };
  signal?.addEventListener('abort', onAbort, { once: true });
  child.on('close', () => {
    signal?.removeEventListener('abort', onAbort);
    if (killTimer) clearTimeout(killTimer);
  });
  child.stdin?.on('error', () => undefined); // git may exit before reading all input
  return child;
}

function viaSpawn(args: string[], env: Record<string, string>, opts: GitOptions, subject: string): Promise<GitBytesResult> {
  return new Promise((resolve, reject) => {
    // Without input, stdin is /dev/null (one pipe fewer).
    const child = watch(spawn('git', args, { cwd: opts.cwd, env, stdio: [opts.input === undefined ? 'ignore' : 'pipe', 'pipe', 'pipe'] }), opts.signal);
    const out: Buffer[] = [];
    const err: Buffer[] = [];
    child.stdout!.on('data', (b: Buffer) => out.push(b));
    child.stderr!.on('data', (b: Buffer) => err.push(b));
    child.on('error', (e) => reject(new ExpBenchError('GIT_FAILED', subject, `cannot run git: ${e.message}`, { cause: e })));
    child.on('close', (code) => {
      if (opts.signal?.aborted) return reject(cancelled(subject));
      const stdout = Buffer.concat(out);
      resolve({ stdout, text: stdout.toString('utf8'), stderr: Buffer.concat(err).toString('utf8'), code: code ?? -1 });
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

export function gitError(args: string[], code: number, stderr: string, subject: string): ExpBenchError {
  const missing = missingObjectIn(stderr);
  const text = stderr.trim() || '(no output)';
  if (missing) {
    return new ExpBenchError('SOURCE_UNAVAILABLE', subject,
      `object ${missing} is missing from the repository (an incomplete snapshot?): git ${args[0]} said: ${text}`);
  }
  return new ExpBenchError('GIT_FAILED', subject, `git ${args.join(' ')} failed (exit ${code}): ${text}`);
}
