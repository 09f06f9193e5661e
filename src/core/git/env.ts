/**
 * The environment and the configuration every git process of the project starts with, whichever
 * way it is started (simple-git for plain commands, a spawn for stdin plumbing: run.ts).
 */

/**
 * Environment every git call runs with: no prompts, a fixed identity for the commits it makes,
 * C locale (stable messages). The hardening variables are {@link HARDENED_ENV}.
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
 * it names ({@link PROGRAM_ENV}), {@link GIT_ENV}, {@link HARDENED_ENV}, and unless `userConfig`,
 * none of the user's global configuration (`GIT_CONFIG_GLOBAL=/dev/null`) nor their transport
 * settings ({@link TRANSPORT_ENV}); then `extra` (a value `undefined` removes a variable).
 * The system configuration is never read, not even with `userConfig`.
 */
export function gitEnv(userConfig: boolean, extra: Record<string, string | undefined> = {}): Record<string, string> {
  const env: Record<string, string | undefined> = callerEnv();
  for (const k of PROGRAM_ENV) delete env[k];
  if (!userConfig) for (const k of TRANSPORT_ENV) delete env[k];
  Object.assign(env, GIT_ENV, HARDENED_ENV, userConfig ? {} : { GIT_CONFIG_GLOBAL: '/dev/null' }, extra);
  const out: Record<string, string> = {};
  for (const [k, v] of Object.entries(env)) if (v !== undefined) out[k] = v;
  return out;
}

/**
 * Variables set on every call, whatever the caller's environment says:
 * - `GIT_CONFIG_NOSYSTEM`: no `/etc/gitconfig` (a system file may define drivers or aliases);
 * - `GIT_ATTR_NOSYSTEM`: no `/etc/gitattributes`;
 * - `GIT_NO_REPLACE_OBJECTS`: `refs/replace/` never stands in for an object;
 * - `GIT_PAGER`, `PAGER`: `cat` (no pager even if one is configured);
 * - `GIT_OPTIONAL_LOCKS=0`: a read (`status`) never rewrites an index on the side.
 */
export const HARDENED_ENV: Readonly<Record<string, string>> = {
  GIT_CONFIG_NOSYSTEM: '1', GIT_ATTR_NOSYSTEM: '1', GIT_NO_REPLACE_OBJECTS: '1', GIT_PAGER: 'cat', PAGER: 'cat', GIT_OPTIONAL_LOCKS: '0',
};

/**
 * Options given before the command on every call (`git -c …`): settings on the command line win
 * over every configuration file. The repositories the layer runs in are the host's own (their
 * configuration is written by the layer and defines no driver: repo.ts); these settings hold even
 * where one is not (a user's `--source` checkout, the user's global configuration of a clone).
 * - `core.hooksPath=/dev/null`, `core.fsmonitor=false`: no hook, no file system monitor program;
 * - `core.pager=cat`: no pager (an external diff is never allowed either: every `diff` call says
 *   `--no-ext-diff`, and `GIT_EXTERNAL_DIFF` is never passed on);
 * - `core.attributesFile=/dev/null`, `core.excludesFile=/dev/null`: the host user's own attribute
 *   and ignore files (read by default from `~/.config/git/`) change no result;
 * - `submodule.recurse=false`, `diff.ignoreSubmodules=all`, `status.submoduleSummary=false`,
 *   `fetch.recurseSubmodules=false`: git never starts itself inside another repository (a gitlink);
 * - `core.untrackedCache=false`: no cache of the work tree's folders kept in an index;
 * - `gc.auto=0`, `maintenance.auto=false`: no background `git gc` or maintenance after a command;
 * - `color.ui=false`: plain output.
 * No `safe.directory=*`: git's own ownership check stands; a user's checkout owned by another uid
 * gets `safe.directory=<that path>` for its calls only (`GitRepo.otherOwner`, run.ts).
 */
export const FIXED_CONFIG = [
  '-c', 'core.hooksPath=/dev/null', '-c', 'core.fsmonitor=false', '-c', 'core.pager=cat',
  '-c', 'core.attributesFile=/dev/null', '-c', 'core.excludesFile=/dev/null',
  '-c', 'submodule.recurse=false', '-c', 'diff.ignoreSubmodules=all', '-c', 'status.submoduleSummary=false', '-c', 'fetch.recurseSubmodules=false',
  '-c', 'core.untrackedCache=false', '-c', 'gc.auto=0', '-c', 'maintenance.auto=false', '-c', 'color.ui=false',
] as const;

/**
 * The host-owned `info/attributes` of every repository the layer makes (repo.ts): the highest
 * precedence of all attribute files, so that it wins over every `.gitattributes` of a work tree
 * (git 2.39 has no `--attr-source`): no filter, diff, merge or ident driver and no encoding
 * conversion is ever taken from the solver's files.
 */
export const HOST_ATTRIBUTES = '* !filter !diff !merge !ident !working-tree-encoding\n';
