// Starts the real VS Code (code-server 4.100.3, installed by scripts/setup-vscode.sh) on a free
// loopback port with its own user-data-dir and extensions-dir, and installs .vsix files into it.
// See ../shared/docs/offline-vscode.md for why code-server and not @vscode/test-electron.
import * as fs from 'node:fs';
import * as http from 'node:http';
import * as net from 'node:net';
import * as os from 'node:os';
import * as path from 'node:path';
import { codeServerDir, requireFile } from './paths';
import { runLogged, startProcess, tail, type ManagedProcess } from './proc';

/**
 * User settings every harness run starts from: Workspace Trust on as in scripts/start.sh (a folder
 * opens in Restricted Mode unless a test trusts it, `Workbench.trustWorkspace`), no startup trust
 * prompt (a modal over every new folder; the Restricted Mode banner and status bar item stay),
 * telemetry off, quiet UI.
 */
export const baseSettings: Readonly<Record<string, unknown>> = {
  'security.workspace.trust.enabled': true,
  'security.workspace.trust.startupPrompt': 'never',
  'telemetry.telemetryLevel': 'off',
  'update.mode': 'none',
  'extensions.autoCheckUpdates': false,
  'extensions.autoUpdate': false,
  'extensions.ignoreRecommendations': true,
  'workbench.startupEditor': 'none',
  'workbench.tips.enabled': false,
  'workbench.enableExperiments': false,
  'workbench.welcomePage.walkthroughs.openOnInstall': false,
  'chat.commandCenter.enabled': false,
  'git.autofetch': false,
  'git.openRepositoryInParentFolders': 'never',
  // xterm's DOM renderer: terminal text is in the DOM, readable by tests (no WebGL canvas).
  'terminal.integrated.gpuAcceleration': 'off',
  // no "Your application running on port N is available" toasts over the screenshots
  'remote.autoForwardPorts': false,
};

export interface CodeServerOptions {
  /** Folder for user data, extensions (unless `extensionsDir`), config and the server log. */
  runDir: string;
  /** Folder (absolute) the window opens; none opens an empty window. */
  folder?: string;
  /** Extensions folder; default `<runDir>/extensions`. */
  extensionsDir?: string;
  /** Extra user settings merged over `baseSettings` into `<user-data-dir>/User/settings.json`. */
  settings?: Record<string, unknown>;
  /** Loopback port; default: a free one chosen by the OS. */
  port?: number;
  /** Address to bind; default 127.0.0.1. */
  host?: string;
  /** How long to wait for /healthz (ms, default 60000). */
  readyTimeoutMs?: number;
}

export interface CodeServer {
  readonly port: number;
  /** `http://127.0.0.1:<port>` */
  readonly baseUrl: string;
  /** `127.0.0.1:<port>`: the remote authority of `vscode-remote://` URIs. */
  readonly authority: string;
  readonly userDataDir: string;
  readonly extensionsDir: string;
  readonly logFile: string;
  readonly process: ManagedProcess;
  /**
   * Workbench URL, opening `folder` (absolute; a `.code-workspace` file opens as a workspace, as
   * VS Code does) and passing `payload` pairs (test mode).
   */
  workbenchUrl(opts?: { folder?: string; payload?: [string, string][] }): string;
  /** `vscode-remote://<authority><absPath>` for payload entries. */
  remoteUri(absPath: string): string;
  stop(): Promise<void>;
}

/** Absolute path of code-server's entry script; throws naming the setup script when absent. */
export function codeServerEntry(): string {
  return requireFile(path.join(codeServerDir, 'node_modules', 'code-server', 'out', 'node', 'entry.js'), 'bash scripts/setup-vscode.sh');
}

/** A TCP port free on 127.0.0.1 at the time of the call. */
export function freePort(host = '127.0.0.1'): Promise<number> {
  return new Promise((resolve, reject) => {
    const srv = net.createServer();
    srv.once('error', reject);
    srv.listen(0, host, () => {
      const { port } = srv.address() as net.AddressInfo;
      srv.close(() => resolve(port));
    });
  });
}

function writeSettings(userDataDir: string, settings: Record<string, unknown>): void {
  const dir = path.join(userDataDir, 'User');
  fs.mkdirSync(dir, { recursive: true });
  fs.writeFileSync(path.join(dir, 'settings.json'), JSON.stringify({ ...baseSettings, ...settings }, null, 2));
}

/** Who the windows of a harness run are, for what they record as a curator's or a reviewer's name (git's user.email, src/core/review/keys.ts). */
export const HARNESS_IDENTITY = { name: 'Curator (end-to-end test)', email: 'curator@example.org' } as const;

/**
 * The git configuration of code-server's processes: the user's own (included first, so that what
 * it sets still applies) with {@link HARNESS_IDENTITY} as the user, so that a screenshot never
 * shows the identity of the machine the tests ran on.
 */
function harnessGitConfig(runDir: string): string {
  const file = path.join(runDir, 'gitconfig');
  const home = process.env.HOME ?? os.homedir();
  fs.mkdirSync(runDir, { recursive: true });
  fs.writeFileSync(file, `[include]\n\tpath = ${path.join(home, '.gitconfig')}\n[user]\n\tname = ${HARNESS_IDENTITY.name}\n\temail = ${HARNESS_IDENTITY.email}\n`);
  return file;
}

/** Environment for code-server: its config file stays in `runDir`, never in the user's home; git's user is the harness's. */
function serverEnv(runDir: string): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = { ...process.env, XDG_CONFIG_HOME: path.join(runDir, 'xdg-config'), XDG_DATA_HOME: path.join(runDir, 'xdg-data'), GIT_CONFIG_GLOBAL: harnessGitConfig(runDir) };
  delete env.PORT; // code-server reads $PORT over --bind-addr
  delete env.PASSWORD;
  delete env.HASHED_PASSWORD;
  delete env.VSCODE_IPC_HOOK_CLI; // we may run inside another VS Code's terminal
  return env;
}

function healthy(url: string): Promise<boolean> {
  return new Promise((resolve) => {
    const req = http.get(url, { timeout: 2000 }, (res) => {
      res.resume();
      resolve(res.statusCode === 200);
    });
    req.on('error', () => resolve(false));
    req.on('timeout', () => req.destroy());
  });
}

/** Installs a .vsix into `extensionsDir` with code-server's own CLI (offline, < 1 s). */
export async function installExtension(vsix: string, extensionsDir: string, runDir: string): Promise<void> {
  requireFile(vsix, 'npm run package');
  fs.mkdirSync(extensionsDir, { recursive: true });
  await runLogged(process.execPath, [
    codeServerEntry(), '--user-data-dir', path.join(runDir, 'user-data'), '--extensions-dir', extensionsDir,
    '--force', '--install-extension', vsix,
  ], { logFile: path.join(runDir, 'install-extension.log'), env: serverEnv(runDir), timeoutMs: 120_000 });
}

/**
 * Starts code-server and resolves once GET /healthz answers 200.
 * Rejects (after stopping it) when the process exits first or `readyTimeoutMs` passes,
 * with the tail of `<runDir>/code-server.log` in the message.
 */
export async function startCodeServer(opts: CodeServerOptions): Promise<CodeServer> {
  const host = opts.host ?? '127.0.0.1';
  const port = opts.port ?? (await freePort(host));
  const userDataDir = path.join(opts.runDir, 'user-data');
  const extensionsDir = opts.extensionsDir ?? path.join(opts.runDir, 'extensions');
  fs.mkdirSync(extensionsDir, { recursive: true });
  writeSettings(userDataDir, opts.settings ?? {});
  const configFile = path.join(opts.runDir, 'code-server.yaml');
  fs.writeFileSync(configFile, 'auth: none\ncert: false\n');
  const logFile = path.join(opts.runDir, 'code-server.log');
  const args = [
    codeServerEntry(), '--config', configFile, '--auth', 'none', '--bind-addr', `${host}:${port}`,
    '--user-data-dir', userDataDir, '--extensions-dir', extensionsDir,
    '--disable-telemetry', '--disable-update-check', '--disable-getting-started-override',
    '--ignore-last-opened',
  ];
  if (opts.folder) args.push(opts.folder);
  const proc = startProcess(process.execPath, args, { logFile, env: serverEnv(opts.runDir) });
  const baseUrl = `http://${host}:${port}`;
  const deadline = Date.now() + (opts.readyTimeoutMs ?? 60_000);
  let exited = false;
  void proc.exited.then(() => (exited = true));
  while (!(await healthy(`${baseUrl}/healthz`))) {
    if (exited || Date.now() > deadline) {
      await proc.stop();
      throw new Error(`code-server did not become ready on ${baseUrl} (${exited ? 'it exited' : 'timeout'}); log ${logFile}:\n${tail(logFile)}`);
    }
    await new Promise((r) => setTimeout(r, 200));
  }
  const authority = `${host}:${port}`;
  return {
    port, baseUrl, authority, userDataDir, extensionsDir, logFile, process: proc,
    remoteUri: (absPath) => `vscode-remote://${authority}${absPath}`,
    workbenchUrl: ({ folder, payload } = {}) => {
      const q = new URLSearchParams();
      if (folder) q.set(folder.endsWith('.code-workspace') ? 'workspace' : 'folder', folder);
      if (payload) q.set('payload', JSON.stringify(payload));
      const qs = q.toString();
      return `${baseUrl}/${qs ? `?${qs}` : ''}`;
    },
    stop: () => proc.stop(),
  };
}
