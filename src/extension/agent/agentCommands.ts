import { promises as fsp } from 'node:fs';
import * as path from 'node:path';
import * as vscode from 'vscode';
import type { ShellApproval } from '../../core/agent/control';
import { ExpBenchError } from '../../core/errors';
import type { SessionHandle, SessionService } from '../../core/flows/sessionService';
import { SessionLayout } from '../../core/layout';
import { endpointFrom } from '../../core/llm/endpoint';
import { log, registerSecret } from '../../core/log';
import { DEFAULT_IMAGE } from '../../core/sandbox/images';
import { assertNotHostUid } from '../../core/sandbox/binds';
import { readTaskSnapshot } from '../../core/session/marker';
import type { Task } from '../../core/tasks/types';
import { errorMessage } from '../../core/util/errors';
import { readManifest } from '../../core/workspace/manifest';
import type { CommandSpec } from '../commands';
import { apiKeyOf } from '../judgeConfig';
import type { ActiveSession } from '../session/activateSession';
import type { SubmitHooks, SubmitTarget } from '../session/submitFlow';
import { WorkContainerManager } from '../session/workContainer';
import { setting } from '../settings';
import type { TaskStore } from '../taskStore';
import { AgentAttachment } from './attachment';

const logger = log('agent');

/**
 * Arguments of `expbench.attachAgent` (each asked for in a dialog when the command runs without
 * an argument object). The API key is never an argument: it is the agent endpoint's key in
 * SecretStorage ("EXP-Bench: Set Agent API Key…").
 */
export interface AttachAgentArgs {
  /** A prepared session's folder; default this window's session. */
  sessionDir?: string;
  /** Default the `expbench.agent.model` setting. */
  model?: string;
  /** Default the `expbench.agent.baseUrl` setting. */
  baseUrl?: string;
  /** Model calls at most (default 50). */
  maxSteps?: number;
  /** USD at most, priced by `expbench.llm.prices` (none by default). */
  budgetUsd?: number;
  maxTokens?: number;
  /**
   * Approve each shell command before it runs: `true` asks in a modal dialog showing the command;
   * a function answers instead (automation and tests). Default false.
   */
  approveShell?: boolean | ((command: string) => Promise<ShellApproval>);
}

/** Why an agent may not attach to the session at `root`, or undefined when it may. */
export async function proctoredReason(layout: SessionLayout): Promise<string | undefined> {
  // A proctored human baseline has the host channel folder (src/core/layout `channel`, made by
  // src/core/flows/proctoredBaseline.ts) and, once the baseliner started, a `baseliner.attested` event.
  if (await fsp.stat(layout.channel).then(() => true, () => false)) return `it is a proctored human baseline (${layout.channel} exists)`;
  const events = await fsp.readFile(layout.events, 'utf8').catch(() => '');
  if (events.split('\n').some((l) => l.includes('"baseliner.attested"'))) return 'it is a proctored human baseline (its event log holds baseliner.attested)';
  return undefined;
}

/** What the agent commands need from the workbench. */
export interface AgentCommandDeps {
  secrets: vscode.SecretStorage;
  service: SessionService;
  store: TaskStore;
  windowSession(): Promise<ActiveSession | undefined>;
  hooks: SubmitHooks;
}

const modal = async (command: string): Promise<ShellApproval> => {
  const run = 'Run';
  const a = await vscode.window.showWarningMessage('EXP-Bench: the agent wants to run a shell command in the task container.', { modal: true, detail: command }, run, 'Refuse');
  return a === run ? { approved: true } : { approved: false, reason: 'the researcher refused the command' };
};

async function askArgs(): Promise<AttachAgentArgs | undefined> {
  const model = await vscode.window.showInputBox({ prompt: 'Model of the agent (OpenAI-compatible endpoint: expbench.agent.baseUrl)', value: setting('agent.model'), ignoreFocusOut: true });
  if (!model) return undefined;
  const steps = await vscode.window.showInputBox({ prompt: 'Most model calls (steps)', value: '50', validateInput: (v) => (/^[1-9]\d*$/.test(v) ? undefined : 'a whole number above 0') });
  if (!steps) return undefined;
  const usd = await vscode.window.showInputBox({ prompt: 'USD budget (empty: none; prices from expbench.llm.prices)', validateInput: (v) => (!v || Number(v) > 0 ? undefined : 'a number above 0, or empty') });
  if (usd === undefined) return undefined;
  const approve = await vscode.window.showQuickPick(['Run shell commands without asking', 'Approve each shell command'], { title: 'Shell commands of the agent' });
  if (!approve) return undefined;
  return { model, maxSteps: Number(steps), ...(usd ? { budgetUsd: Number(usd) } : {}), approveShell: approve.startsWith('Approve') };
}

/**
 * "Attach Agent…", "Pause Agent", "Take Over from Agent", "Resume Agent", "Stop Agent"
 * (`expbench.attachAgent`, `expbench.agent.pause|takeOver|resume|stop`). Attach returns the
 * {@link AgentAttachment} (its steps land live in the "EXP-Bench Agent" output channel); the
 * others act on the attachment of this window (or of `{sessionDir}`) and return what it returns.
 * Refused on a proctored human baseline, and while an agent is attached to the same session.
 */
export function agentCommands(deps: AgentCommandDeps): {
  commands: CommandSpec[];
  /**
   * Whether an agent is attached to the session whose work container is labelled `session` (the
   * session folder's name) and not stopped: running, between its commands, paused or taken over.
   * The idle stopper counts it as activity (src/extension/session/workContainer.ts).
   */
  atWork(session: string): boolean;
  dispose(): void;
} {
  const attached = new Map<string, AgentAttachment>();
  let channel: vscode.OutputChannel | undefined;
  const find = async (a?: { sessionDir?: string }): Promise<AgentAttachment | undefined> => {
    const root = a?.sessionDir ? path.resolve(a.sessionDir) : (await deps.windowSession())?.controller.layout.root;
    const at = root ? attached.get(root) : attached.size === 1 ? [...attached.values()][0] : undefined;
    if (!at) void vscode.window.showWarningMessage('EXP-Bench: no agent is attached to this session. Use "EXP-Bench: Attach Agent…" first.');
    return at;
  };
  const attach = async (args?: AttachAgentArgs): Promise<AgentAttachment | undefined> => {
    const a = args ?? (await askArgs());
    if (!a) return undefined;
    const win = await deps.windowSession();
    const root = a.sessionDir ? path.resolve(a.sessionDir) : win?.controller.layout.root;
    if (!root) throw new ExpBenchError('BAD_INPUT', 'sessionDir', 'this window is not on a task session: open one, or give the command {sessionDir}');
    const layout = new SessionLayout(root);
    const refused = await proctoredReason(layout);
    if (refused) throw new ExpBenchError('BAD_INPUT', root, `an agent is never attached to this session: ${refused}`);
    if (attached.has(root)) throw new ExpBenchError('BAD_INPUT', root, 'an agent is already attached to this session (stop it first)');
    const model = a.model || setting('agent.model');
    const apiKey = await apiKeyOf(deps.secrets, 'agent');
    registerSecret(apiKey);
    const endpoint = endpointFrom('agent', { baseUrl: a.baseUrl || setting('agent.baseUrl'), model, organization: setting('agent.organization'), apiKey }, 'expbench.agent.model');
    if (!endpoint) throw new ExpBenchError('BAD_INPUT', 'expbench.agent.baseUrl', 'no agent endpoint: set expbench.agent.baseUrl (and the key with "EXP-Bench: Set Agent API Key…")');

    const own = win && win.controller.layout.root === root ? undefined : await openOther(deps, layout);
    const handle: SessionHandle = own?.handle ?? win!.controller.session;
    const task: Task = own?.task ?? win!.controller.task;
    const manager = own?.manager ?? win!.controller.container;
    try {
      if (handle.state.submitted || handle.state.gaveUp) throw new ExpBenchError('BAD_INPUT', root, 'the session is finished (submitted or given up)');
      const container = await manager.container();
      // an agent never runs as this window's own uid (issue 26): it could change the host's files of the session
      assertNotHostUid((await container.inspect()).Config.User ?? '', 'the agent');
      channel ??= vscode.window.createOutputChannel('EXP-Bench Agent');
      channel.show(true);
      const at = AgentAttachment.start({
        handle, task, container, endpoint, prices: setting('llm.prices'), channel,
        limits: { maxSteps: a.maxSteps ?? 50, ...(a.budgetUsd ? { budgetUsd: a.budgetUsd } : {}), ...(a.maxTokens ? { maxTokens: a.maxTokens } : {}) },
        ...(a.approveShell ? { approveShell: typeof a.approveShell === 'function' ? a.approveShell : modal } : {}),
        onSubmit: async (h) => {
          const target: SubmitTarget = { session: h, task, layout, setResults: () => undefined };
          const verify = deps.hooks.verify();
          const judge = await deps.hooks.judge(target);
          const r = await h.submit({ design: h.state.design, conclusion: h.state.conclusion }, { ...(verify ? { verify } : {}), ...(judge ? { judge } : {}) });
          if (win && win.controller.layout.root === root) win.controller.setResults(await deps.hooks.loadResults(layout));
          return `submitted; ${JSON.stringify(r).slice(0, 300)}`;
        },
      });
      attached.set(root, at);
      void at.done.then((r) => {
        void vscode.window.showInformationMessage(`EXP-Bench: the agent stopped: ${r.stop}: ${r.message}`);
      }, (e: unknown) => logger.error(`agent run on ${root} failed: ${errorMessage(e)}`)).finally(async () => {
        attached.delete(root);
        if (own) {
          own.manager.dispose();
          await own.handle.release().catch((e: unknown) => logger.warn(`releasing ${root}: ${errorMessage(e)}`));
        }
      });
      return at;
    } catch (e) {
      if (own) { own.manager.dispose(); await own.handle.release(); }
      throw e;
    }
  };
  const report = (fn: (...args: any[]) => Promise<unknown>) => async (...args: any[]) => {
    try {
      return await fn(...args);
    } catch (e) {
      void vscode.window.showErrorMessage(`EXP-Bench: ${errorMessage(e)}`);
      if (args[0] !== undefined) throw e; // a caller with arguments (a script, a test) gets the error
      return undefined;
    }
  };
  return {
    commands: [
      { id: 'expbench.attachAgent', execute: report(attach) },
      { id: 'expbench.agent.pause', execute: report(async (a?: { sessionDir?: string }) => { const at = await find(a); await at?.pause(); return at?.state; }) },
      { id: 'expbench.agent.takeOver', execute: report(async (a?: { sessionDir?: string }) => { const at = await find(a); await at?.takeOver(); return at?.state; }) },
      {
        id: 'expbench.agent.resume',
        execute: report(async (a?: { sessionDir?: string; note?: string }) => {
          const at = await find(a);
          if (!at) return undefined;
          const note = a ? a.note : await vscode.window.showInputBox({ prompt: 'A note for the agent (optional; it is told what changed in any case)' });
          return at.resume(note);
        }),
      },
      { id: 'expbench.agent.stop', execute: report(async (a?: { sessionDir?: string }) => (await find(a))?.stop()) },
    ],
    atWork: (session) => [...attached.entries()].some(([root, at]) => path.basename(root) === session && at.state !== 'stopped'),
    dispose: () => { for (const at of attached.values()) at.dispose(); channel?.dispose(); },
  };
}

/** Opens a session that is not this window's through the service as `client` (default `agent`), with its work container manager. */
export async function openOther(deps: Pick<AgentCommandDeps, 'service' | 'store'>, layout: SessionLayout, client = 'agent'): Promise<{ handle: SessionHandle; task: Task; manager: WorkContainerManager }> {
  const manifest = await readManifest(layout.root);
  const task = (await deps.store.find(manifest.taskId)) ?? (await readTaskSnapshot(layout.root));
  if (!task) throw new ExpBenchError('BAD_INPUT', layout.root, `task ${manifest.taskId} is neither in the configured datasets nor in the session's private/task.json`);
  const handle = await deps.service.open(layout.root, { client, taskId: task.id });
  return { handle, task, manager: new WorkContainerManager(layout, task.id, manifest.image || DEFAULT_IMAGE) };
}
