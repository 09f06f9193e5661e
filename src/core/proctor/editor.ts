import { execFile } from 'node:child_process';
import { existsSync, realpathSync } from 'node:fs';
import * as path from 'node:path';
import { promisify } from 'node:util';
import { AI_OFF_SETTINGS } from '../channel/aiSettings';
import { ExpBenchError } from '../errors';
import { packageRoot } from '../paths';

const run = promisify(execFile);

/** Where the mounts of the proctored work container appear inside it (docs/architecture.md, "The mount contract"). */
export const PROCTOR_MOUNTS = {
  /**
   * The session's channel folder: code-server.sock and session.sock. The folder itself is the
   * host's (root, mode 0755): the solver connects to both sockets but cannot remove, rename or
   * replace either (editorSocket.ts).
   */
  channel: '/expbench/channel',
  /** The editor's user data (`--user-data-dir`), the solver's (logs, state, backups, the solver's queue). */
  userData: '/expbench/channel/editor',
  /** `User/` of the user data: a mount of its own (it cannot be renamed away), read-write. */
  user: '/expbench/channel/editor/User',
  /** `Machine/` of the user data: a mount of its own, read-write. */
  machine: '/expbench/channel/editor/Machine',
  /** The window's User settings: a read-only file mount inside {@link PROCTOR_MOUNTS}.user (the host's copy, never the solver's). */
  userSettings: '/expbench/channel/editor/User/settings.json',
  /** The window's Machine settings: a read-only file mount inside {@link PROCTOR_MOUNTS}.machine. */
  machineSettings: '/expbench/channel/editor/Machine/settings.json',
  /** The host's code-server install (read-only). */
  editor: '/expbench/editor',
  /** The node binary that runs it (read-only; a single file at `bin/node`). */
  node: '/expbench/node',
  /** The solver build of the extension, unpacked (read-only). */
  extensions: '/expbench/extensions',
} as const;

/** code-server's entry script, relative to its install folder. */
export const CODE_SERVER_ENTRY = path.join('node_modules', 'code-server', 'out', 'node', 'entry.js');

/** The Node major version code-server 4.100 needs (its package.json `engines.node`: 20). */
export const NODE_MAJOR = 20;

/** The host's editor parts the proctored container mounts read-only. */
export interface EditorInstall {
  /** code-server's install folder (holds {@link CODE_SERVER_ENTRY}). */
  codeServerDir: string;
  /** An absolute path to a node binary of major {@link NODE_MAJOR}, symlinks resolved. */
  nodeBinary: string;
  /** Its `--version` output, e.g. `v20.20.2`. */
  nodeVersion: string;
}

/**
 * Finds the code-server install and the node binary to mount.
 *
 * code-server: `opts.codeServerDir`, else `$EXPBENCH_CODE_SERVER_DIR`, else the install of
 * scripts/setup-vscode.sh (`<package>/.cache/tools/code-server`). Node: `opts.nodeBinary`, else
 * `$EXPBENCH_PROCTOR_NODE`, else this process's `process.execPath` when it is a node binary (not an
 * Electron host), else `node` on PATH. The binary must report major version {@link NODE_MAJOR}
 * (Debian 12's own node is 18, too old for code-server 4.100). It runs inside expbench/sandbox:1
 * (Debian 12, glibc 2.36): a glibc-linked build from a Debian 12 host (nodesource's is) runs
 * there; a build linked against a newer glibc does not, and the container then exits at once
 * (the forwarder shows the stopped page and the log names the missing symbol).
 * @throws ExpBenchError BAD_INPUT naming the folder or binary that is missing or has the wrong version
 */
export async function findEditorInstall(opts: { codeServerDir?: string; nodeBinary?: string } = {}): Promise<EditorInstall> {
  const codeServerDir = path.resolve(opts.codeServerDir ?? process.env.EXPBENCH_CODE_SERVER_DIR ?? path.join(packageRoot(), '.cache', 'tools', 'code-server'));
  if (!existsSync(path.join(codeServerDir, CODE_SERVER_ENTRY))) {
    throw new ExpBenchError('BAD_INPUT', codeServerDir, `no code-server install here (no ${CODE_SERVER_ENTRY}): run bash scripts/setup-vscode.sh`);
  }
  const candidate = opts.nodeBinary ?? process.env.EXPBENCH_PROCTOR_NODE
    ?? (/^node(\.exe)?$/.test(path.basename(process.execPath)) ? process.execPath : await which('node'));
  if (!candidate || !existsSync(candidate)) throw new ExpBenchError('BAD_INPUT', candidate ?? 'node', `no node binary found; set EXPBENCH_PROCTOR_NODE to a Node ${NODE_MAJOR} binary`);
  const nodeBinary = realpathSync(candidate);
  const nodeVersion = (await run(nodeBinary, ['--version'], { timeout: 10_000 })).stdout.trim();
  if (Number(/^v(\d+)\./.exec(nodeVersion)?.[1]) !== NODE_MAJOR) {
    throw new ExpBenchError('BAD_INPUT', nodeBinary, `is node ${nodeVersion}; code-server 4.100 needs Node ${NODE_MAJOR}: set EXPBENCH_PROCTOR_NODE to a Node ${NODE_MAJOR} binary`);
  }
  return { codeServerDir, nodeBinary, nodeVersion };
}

async function which(name: string): Promise<string | undefined> {
  for (const dir of (process.env.PATH ?? '').split(path.delimiter)) {
    const p = path.join(dir, name);
    if (dir && existsSync(p)) return p;
  }
  return undefined;
}

/** The solver build's extension id (its package.json `publisher.name`): the only extension the proctored window allows. */
export const SOLVER_EXTENSION_ID = 'expbench.expbench-solver';

/**
 * The user settings of the proctored window (`User/settings.json` of its user data folder,
 * mounted read-only): no AI (AI_OFF_SETTINGS of src/core/channel/aiSettings.ts: chat, agent mode,
 * language-model tools, MCP, inline completions, natural-language search), no extension but the
 * solver build (`extensions.allowed`, VS Code 1.96+: installing any other, from the gallery, a VSIX
 * or "Install Extension from Location", is refused), no telemetry, no extension gallery or
 * updates, no workspace trust prompt, and auto-save after one second so what is typed reaches the
 * workspace. With `aiAllowed`, the AI settings are left at VS Code's defaults (the window still has
 * no AI extension installed and no network). Keys are VS Code 1.100's.
 */
export function proctoredSettings(aiAllowed = false): Record<string, unknown> {
  return {
    ...(aiAllowed ? {} : AI_OFF_SETTINGS),
    'extensions.allowed': { [SOLVER_EXTENSION_ID]: true },
    'telemetry.telemetryLevel': 'off',
    'extensions.autoCheckUpdates': false,
    'extensions.autoUpdate': false,
    'extensions.ignoreRecommendations': true,
    'update.mode': 'none',
    'security.workspace.trust.enabled': false,
    'workbench.startupEditor': 'none',
    'workbench.enableExperiments': false,
    'files.autoSave': 'afterDelay',
    'files.autoSaveDelay': 1000,
    'files.hotExit': 'onExitAndWindowClose',
    'terminal.integrated.defaultProfile.linux': 'bash',
    // The DOM renderer: browsers without GPU (remote desktops, headless checks) show the terminal.
    'terminal.integrated.gpuAcceleration': 'off',
  };
}

/**
 * The container's main process: code-server from the read-only install, run by the mounted node,
 * listening only on `<channel>/code-server.sock`, user data in `<channel>/editor`, extensions
 * from the read-only solver build, opened on `workspace`. No password (`--auth none`): the
 * socket is reachable only through the host's forwarder, which checks the session token.
 * `--disable-proxy`: no `/proxy/<port>/` or `/absproxy/<port>/` routes (a second server started
 * in the terminal is not reachable through this one; the forwarder refuses those paths too).
 * `--config /dev/null`: no configuration file from the solver's home (`~/.config/code-server/
 * config.yaml` could add flags, e.g. `builtin-extensions-dir`); code-server reads an empty one.
 * `--disable-file-uploads`: nothing dropped in from the baseliner's machine (the paper's code).
 */
export function codeServerCommand(workspace: string): string[] {
  return [
    `${PROCTOR_MOUNTS.node}/bin/node`, `${PROCTOR_MOUNTS.editor}/${CODE_SERVER_ENTRY.split(path.sep).join('/')}`,
    '--config', '/dev/null',
    '--auth', 'none',
    '--socket', `${PROCTOR_MOUNTS.channel}/code-server.sock`, '--socket-mode', '666',
    '--user-data-dir', PROCTOR_MOUNTS.userData,
    '--extensions-dir', PROCTOR_MOUNTS.extensions,
    '--disable-proxy', '--disable-file-uploads',
    '--disable-telemetry', '--disable-update-check', '--disable-workspace-trust', '--disable-getting-started-override',
    '--ignore-last-opened',
    workspace,
  ];
}
