import * as path from 'node:path';
import { StringDecoder } from 'node:string_decoder';
import type Docker from 'dockerode';
import * as vscode from 'vscode';
import { isExpBenchError } from '../core/errors';
import { log } from '../core/log';
import { DEFAULT_IMAGE } from '../core/sandbox/images';
import { startExec, type ExecSession } from '../core/sandbox/exec';
import { WORKSPACE_MOUNT } from '../core/sandbox/work';
import { SessionLayout } from '../core/layout';
import { readManifest } from '../core/workspace/manifest';
import type { CommandSpec } from './commands';
import type { ActiveSession } from './session/activateSession';
import { WorkContainerManager } from './session/workContainer';
import { setting } from './settings';
import { errorMessage } from '../core/util/errors';

const logger = log('terminal');

/** The terminal's name in the panel. */
export const TERMINAL_NAME = 'EXP-Bench: task container';
/** The Dev Containers extension; when present, "Reopen in Container" is offered. */
export const DEV_CONTAINERS_ID = 'ms-vscode-remote.remote-containers';
/** Shown when no engine answers (the workspace stays usable for editing). */
export const START_ENGINE_ADVICE = 'Start one with `bash scripts/setup-docker.sh` (or `sudo dockerd &`), then run "EXP-Bench: Open Container Terminal" again. The workspace stays open for editing.';

const RED = '\x1b[31m';
const DIM = '\x1b[2m';
const RESET = '\x1b[0m';
/** Terminal text: LF → CRLF (a pseudoterminal writes raw to the emulator). */
const crlf = (s: string): string => s.replace(/\r?\n/g, '\r\n');

/** What the pseudoterminal is doing. */
export type PtyState = 'idle' | 'starting' | 'running' | 'exited' | 'failed' | 'closed';

/** Options of {@link ContainerPty}. */
export interface ContainerPtyOptions {
  /** The running work container (creating or reattaching it). Rejects with an ExpBenchError. */
  container: () => Promise<Docker.Container>;
  /** Program run in the TTY; default `['bash']` (interactive: a TTY is attached). */
  shell?: string[];
  /** Called once per failure to get the container (no engine, no image…), for a notification. */
  onUnavailable?: (e: unknown) => void;
}

/**
 * A VS Code pseudoterminal over `docker exec` with a TTY in the session's work container: the
 * container's (non-root) user, working directory /workspace. Keys go to the TTY as typed (Ctrl-C is
 * `\x03`, so the TTY sends SIGINT to the foreground job); resizes reach the TTY (`exec.resize`).
 * When the shell exits, its exit code is printed and the terminal stays: Enter starts a new shell,
 * any other key closes it. Input typed while the container is starting is kept and sent once the
 * shell runs.
 */
export class ContainerPty implements vscode.Pseudoterminal {
  private readonly writeEmitter = new vscode.EventEmitter<string>();
  private readonly closeEmitter = new vscode.EventEmitter<number | void>();
  private readonly stateEmitter = new vscode.EventEmitter<PtyState>();
  readonly onDidWrite = this.writeEmitter.event;
  readonly onDidClose = this.closeEmitter.event;
  /** Fires on every state change (tests wait on it). */
  readonly onDidChangeState = this.stateEmitter.event;
  state: PtyState = 'idle';
  /** Exit code of the last shell (undefined while none has exited). */
  lastExitCode: number | undefined;
  private exec: ExecSession | undefined;
  private pendingInput: string[] = [];
  private dims: vscode.TerminalDimensions | undefined;

  constructor(private readonly opts: ContainerPtyOptions) {}

  open(initialDimensions: vscode.TerminalDimensions | undefined): void {
    this.dims = initialDimensions;
    void this.startShell();
  }

  /** Writes `text` to the terminal (LF becomes CRLF). */
  print(text: string): void {
    this.writeEmitter.fire(crlf(text));
  }

  /** A method, not a field test: the state changes across awaits. */
  private closed(): boolean {
    return this.state === 'closed';
  }

  private setState(s: PtyState): void {
    this.state = s;
    this.stateEmitter.fire(s);
  }

  private async startShell(): Promise<void> {
    if (this.state === 'starting' || this.state === 'running' || this.state === 'closed') return;
    this.setState('starting');
    this.print(`${DIM}Starting the task container…${RESET}\n`);
    let container: Docker.Container;
    try {
      container = await this.opts.container();
    } catch (e) {
      if (this.closed()) return;
      this.fail(e);
      return;
    }
    if (this.closed()) return;
    const decoder = new StringDecoder('utf8');
    try {
      this.exec = await startExec(container, {
        cmd: this.opts.shell ?? ['bash'],
        tty: true,
        workdir: WORKSPACE_MOUNT,
        env: { TERM: 'xterm-256color' },
        size: this.dims ? { cols: this.dims.columns, rows: this.dims.rows } : undefined,
        onStdout: (chunk) => this.writeEmitter.fire(decoder.write(chunk)),
      });
    } catch (e) {
      this.fail(e);
      return;
    }
    if (this.closed()) {
      void this.exec.kill();
      return;
    }
    this.setState('running');
    const session = this.exec;
    for (const data of this.pendingInput.splice(0)) session.write(data);
    session.done.then(
      (r) => {
        const rest = decoder.end();
        if (rest) this.writeEmitter.fire(rest);
        if (this.exec !== session || this.state === 'closed') return;
        this.exec = undefined;
        this.lastExitCode = r.exitCode;
        this.print(`\n${DIM}[the shell exited with code ${r.exitCode}: press Enter to start a new one, any other key to close]${RESET}\n`);
        this.setState('exited');
      },
      (e: unknown) => {
        if (this.exec !== session || this.state === 'closed') return;
        this.exec = undefined;
        this.fail(e);
      });
  }

  private fail(e: unknown): void {
    const msg = errorMessage(e);
    logger.warn(`container terminal: ${msg}`);
    const text = isExpBenchError(e, 'DOCKER_UNAVAILABLE') ? `No Docker engine answers at ${e.input}.\n${START_ENGINE_ADVICE}` : msg;
    this.print(`${RED}${text}${RESET}\n${DIM}[press Enter to try again, any other key to close]${RESET}\n`);
    this.setState('failed');
    this.opts.onUnavailable?.(e);
  }

  handleInput(data: string): void {
    switch (this.state) {
      case 'running': this.exec?.write(data); break;
      case 'starting': this.pendingInput.push(data); break;
      case 'exited':
      case 'failed':
        if (data === '\r') void this.startShell();
        else this.close();
        break;
      default: break;
    }
  }

  setDimensions(dims: vscode.TerminalDimensions): void {
    this.dims = dims;
    void this.exec?.resize(dims.columns, dims.rows);
  }

  /** Called when the user closes the terminal (or by us): ends the shell and its processes. */
  close(): void {
    if (this.state === 'closed') return;
    this.setState('closed');
    const exec = this.exec;
    this.exec = undefined;
    if (exec) void exec.kill();
    this.closeEmitter.fire(this.lastExitCode);
  }
}

/** workspaceState key: the container terminal was offered in this session's window. */
const OFFER_MADE_KEY = 'expbench.containerTerminalOffered';

/** What "Open Container Terminal" returns (used by the extension's own tests). */
export interface ContainerTerminalHandle {
  terminal: vscode.Terminal;
  pty: ContainerPty;
  /** The session's container manager (remove() stops and removes the container). */
  manager: WorkContainerManager;
}

/** Arguments of `expbench.openContainerTerminal` (all optional). */
export interface OpenTerminalArgs {
  /** A session folder other than this window's (tests, scripts). Default: this window's session. */
  sessionDir?: string;
  /** Focus the terminal (default true). */
  focus?: boolean;
}

/**
 * The container terminal feature: the command `expbench.openContainerTerminal`, the offer made
 * when the window's session starts (setting `expbench.container.terminalOnStart`: `open`,
 * `offer` (default) or `off`), and the notifications for a missing engine (how to start one) or a
 * missing image (build it in a terminal).
 */
export class ContainerTerminals implements vscode.Disposable {
  private readonly others = new Map<string, WorkContainerManager>();
  private readonly disposables: vscode.Disposable[] = [];
  private notified = false;

  /** `state`: where the offer remembers it was made (the window's workspaceState: once per session). */
  constructor(private readonly extensionUri: vscode.Uri, private readonly session: () => Promise<ActiveSession | undefined>, private readonly state?: vscode.Memento) {}

  commands(): CommandSpec[] {
    return [{ id: 'expbench.openContainerTerminal', execute: (args?: OpenTerminalArgs) => this.open(args ?? {}) }];
  }

  /**
   * Opens a container terminal on this window's session (or on `args.sessionDir`).
   * @returns the terminal, its pseudoterminal and the container manager; undefined (with a
   *   warning) when there is no session
   */
  async open(args: OpenTerminalArgs = {}): Promise<ContainerTerminalHandle | undefined> {
    const manager = args.sessionDir ? await this.managerFor(args.sessionDir) : (await this.session())?.controller.container;
    if (!manager) {
      void vscode.window.showWarningMessage('EXP-Bench: this window is not on a task session. Use "EXP-Bench: Open Task" first.');
      return undefined;
    }
    this.notified = false;
    const pty = new ContainerPty({ container: () => manager.container(), onUnavailable: (e) => this.report(e, manager) });
    const terminal = vscode.window.createTerminal({ name: TERMINAL_NAME, pty, iconPath: new vscode.ThemeIcon('vm') });
    terminal.show(args.focus === false);
    return { terminal, pty, manager };
  }

  /** Called once the window's session is open: opens or offers the terminal (setting). */
  async onSessionStarted(s: ActiveSession | undefined): Promise<void> {
    if (!s) return;
    const mode = setting('container.terminalOnStart');
    if (mode === 'off') return;
    if (mode === 'open') {
      await this.open({ focus: false });
      return;
    }
    // The offer is made once per session (a reload does not repeat it); the notification does not wait for an answer.
    if (this.state?.get<boolean>(OFFER_MADE_KEY)) return;
    await this.state?.update(OFFER_MADE_KEY, true);
    const openTerminal = 'Open Container Terminal';
    const reopen = 'Reopen in Container';
    const choices = vscode.extensions.getExtension(DEV_CONTAINERS_ID) ? [openTerminal, reopen] : [openTerminal];
    const pick = await vscode.window.showInformationMessage(
      `EXP-Bench: ${s.controller.task.id} runs in a container (workspace at ${WORKSPACE_MOUNT}).`, ...choices);
    if (pick === openTerminal) await this.open();
    else if (pick === reopen) await vscode.commands.executeCommand('remote-containers.reopenInContainer');
  }

  private async managerFor(sessionDir: string): Promise<WorkContainerManager> {
    const root = path.resolve(sessionDir);
    const window = await this.session();
    if (window && path.resolve(window.controller.layout.root) === root) return window.controller.container;
    let m = this.others.get(root);
    if (!m) {
      const manifest = await readManifest(root);
      m = new WorkContainerManager(new SessionLayout(root), manifest.taskId, manifest.image || DEFAULT_IMAGE);
      this.others.set(root, m);
      this.disposables.push(m);
    }
    return m;
  }

  /** One notification per failed start: how to start an engine, or to build the missing image. */
  private report(e: unknown, manager: WorkContainerManager): void {
    if (this.notified) return;
    this.notified = true;
    if (isExpBenchError(e, 'DOCKER_UNAVAILABLE')) {
      void vscode.window.showErrorMessage(`EXP-Bench: no Docker engine answers, so the task container cannot start. ${START_ENGINE_ADVICE}`);
      return;
    }
    if (isExpBenchError(e, 'IMAGE_MISSING')) {
      void this.offerBuild(e.input || manager.image);
      return;
    }
    void vscode.window.showErrorMessage(`EXP-Bench: the task container cannot start: ${errorMessage(e)}`);
  }

  /** Offers to build the missing image in a terminal: offline (Debian packages) or from sandbox/Dockerfile. */
  private async offerBuild(image: string): Promise<void> {
    const offline = 'Build it offline (sandbox/build-offline.sh)';
    const online = 'Build from sandbox/Dockerfile (needs network)';
    const pick = await vscode.window.showWarningMessage(`EXP-Bench: the Docker image ${image} is not present.`, offline, online);
    if (!pick) return;
    const sandbox = vscode.Uri.joinPath(this.extensionUri, 'sandbox').fsPath;
    const sudo = process.getuid?.() === 0 ? '' : 'sudo ';
    const quote = (s: string) => `'${s.replace(/'/g, `'\\''`)}'`;
    const command = pick === offline
      ? `${sudo}env EXPBENCH_IMAGE=${quote(image)} bash ${quote(path.join(sandbox, 'build-offline.sh'))}`
      : `docker build -t ${quote(image)} -f ${quote(path.join(sandbox, 'Dockerfile'))} ${quote(sandbox)}`;
    const t = vscode.window.createTerminal({ name: `EXP-Bench: build ${image}`, cwd: path.dirname(sandbox) });
    t.show();
    t.sendText(command);
  }

  dispose(): void {
    for (const d of this.disposables.splice(0)) d.dispose();
    this.others.clear();
  }
}
