/**
 * The environment and the configuration every git process of the project starts with, whichever
 * way it is started (simple-git for plain commands, a spawn for stdin plumbing: run.ts).
 */

/**
 * Environment every git call runs with: no prompts, a fixed identity for the commits it makes,
 * C locale (stable messages). No pager is set: git starts none when its output is not a terminal.
 */
export const GIT_ENV: Record<string, string> = {
  GIT_TERMINAL_PROMPT: '0',
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

/**
 * Programs the caller's environment may name for git to start (editors, pagers, an external
 * diff, a template folder): never wanted by a call that is not interactive, so never passed on.
 */
const PROGRAM_ENV = [
  'EDITOR', 'VISUAL', 'GIT_EDITOR', 'GIT_SEQUENCE_EDITOR', 'PAGER', 'GIT_PAGER', 'GIT_EXTERNAL_DIFF', 'GIT_TEMPLATE_DIR',
] as const;

/**
 * How git reaches a remote on the user's behalf (ssh command, askpass helpers, proxy, the user's
 * own config files): passed on only to calls with `userConfig` (clone, fetch, ls-remote of the
 * user's sources), kept from every other call.
 */
const TRANSPORT_ENV = [
  'GIT_SSH', 'GIT_SSH_COMMAND', 'GIT_SSH_VARIANT', 'GIT_ASKPASS', 'SSH_ASKPASS', 'GIT_PROXY_COMMAND',
  'GIT_CONFIG_GLOBAL', 'GIT_CONFIG_SYSTEM', 'GIT_CONFIG_NOSYSTEM',
] as const;

/** `process.env` without {@link LOCAL_REPO_ENV}: what is left of the caller's environment for any git process. */
export function callerEnv(): NodeJS.ProcessEnv {
  const env = { ...process.env };
  for (const k of LOCAL_REPO_ENV) delete env[k];
  return env;
}

/**
 * The whole environment of one git process: the caller's ({@link callerEnv}) without the programs
 * it names ({@link PROGRAM_ENV}), {@link GIT_ENV}, and unless `userConfig`, none of the user's
 * system or global configuration (`GIT_CONFIG_NOSYSTEM`, `GIT_CONFIG_GLOBAL=/dev/null`) nor their
 * transport settings ({@link TRANSPORT_ENV}); then `extra` (a value `undefined` removes a variable).
 */
export function gitEnv(userConfig: boolean, extra: Record<string, string | undefined> = {}): Record<string, string> {
  const env: Record<string, string | undefined> = callerEnv();
  for (const k of PROGRAM_ENV) delete env[k];
  if (!userConfig) for (const k of TRANSPORT_ENV) delete env[k];
  Object.assign(env, GIT_ENV, userConfig ? {} : { GIT_CONFIG_NOSYSTEM: '1', GIT_CONFIG_GLOBAL: '/dev/null' }, extra);
  const out: Record<string, string> = {};
  for (const [k, v] of Object.entries(env)) if (v !== undefined) out[k] = v;
  return out;
}

/**
 * Options given before the command on every call (`git -c …`): settings on the command line win
 * over every configuration file, the repository's own included.
 * - `safe.directory=*`: a workspace is chowned to the container user (uid 1000); the host (often
 *   root) must still read it. Only honoured from the command line or the user's own files.
 * - `core.hooksPath=/dev/null`: no hook of any repository runs (a workspace's `.git` is writable
 *   by the solver's container).
 * - `core.fsmonitor=false`: no file system monitor program named in a repository's config runs.
 */
export const FIXED_CONFIG = ['-c', 'safe.directory=*', '-c', 'core.hooksPath=/dev/null', '-c', 'core.fsmonitor=false'] as const;
