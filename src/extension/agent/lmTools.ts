import * as path from 'node:path';
import * as vscode from 'vscode';
import { OutsideTools, outsideAgentRefusal, outsideToolSpecs, type OutsideClient } from '../../core/agent/outside';
import { agentBrief } from '../../core/agent/prompt';
import { ExpBenchError } from '../../core/errors';
import type { SessionHandle, SessionService } from '../../core/flows/sessionService';
import { SessionLayout } from '../../core/layout';
import { log } from '../../core/log';
import type { Task } from '../../core/tasks/types';
import { errorMessage } from '../../core/util/errors';
import type { CommandSpec } from '../commands';
import type { ActiveSession } from '../session/activateSession';
import type { SubmitHooks, SubmitTarget } from '../session/submitFlow';
import type { WorkContainerManager } from '../session/workContainer';
import { setting } from '../settings';
import type { TaskStore } from '../taskStore';
import { openOther } from './agentCommands';

const logger = log('lmTools');

/** Prefix of each language-model tool's name (VS Code's rule: no `copilot_` or `vscode_` prefix): `expbench_shell`, … */
export const LM_TOOL_PREFIX = 'expbench_';
/** Context key that the tools' `when` clause reads (package.json `languageModelTools`): true while a session's tools are offered. */
export const LM_TOOLS_CONTEXT = 'expbench.lmTools';

/** What the feature needs from the workbench. */
export interface LmToolsDeps {
  service: SessionService;
  store: TaskStore;
  hooks: SubmitHooks;
  windowSession(): Promise<ActiveSession | undefined>;
}

/** What {@link LmToolsFeature.offer} did. */
export interface OfferResult {
  offered: boolean;
  /** The session whose tools are offered (or that was refused). */
  sessionDir?: string;
  /** Why not, when not offered. */
  reason?: string;
  /** The registered tool names. */
  tools: string[];
}

interface Offered {
  root: string; tools: OutsideTools; disposables: vscode.Disposable[]; release?: () => Promise<void>;
  /** The registered implementations, by tool name (`expbench_shell`, …). */
  impls: Map<string, vscode.LanguageModelTool<Record<string, unknown>>>;
}

/**
 * The task's tools as VS Code language-model tools (`vscode.lm.registerTool`; declared in
 * package.json `contributes.languageModelTools` with `when: expbench.lmTools`): the built-in
 * agent's tools (src/core/agent/tools.ts) run and recorded by {@link OutsideTools} as the MCP
 * server's are, so that a chat agent in this window (or any extension, through
 * `vscode.lm.invokeTool`) works the session's container and phases. Offered for this window's
 * session when it opens, or for `{sessionDir}` ("EXP-Bench: Offer Task Tools to Chat Agents");
 * never for a proctored human baseline (its `channel/` folder or a `baseliner.attested` event):
 * then nothing is registered and the context key stays false, so `vscode.lm.tools` lists none.
 * A shell command asks for confirmation first when `expbench.agent.approveShell` is on.
 */
export class LmToolsFeature implements vscode.Disposable {
  private current: Offered | undefined;

  constructor(private readonly deps: LmToolsDeps) {}

  /** Offers this window's session's tools when the window is on a session (and it allows AI). */
  async offerWindowSession(): Promise<OfferResult | undefined> {
    const win = await this.deps.windowSession();
    return win ? this.offer({ sessionDir: win.controller.layout.root }) : undefined;
  }

  /**
   * Registers the tools for the session at `a.sessionDir` (default this window's), replacing an
   * earlier offer. A proctored session is refused (`offered: false` with the reason).
   * @throws ExpBenchError `BAD_INPUT` when there is no session to offer, or its task cannot be found
   */
  async offer(a?: { sessionDir?: string }): Promise<OfferResult> {
    const win = await this.deps.windowSession();
    const root = a?.sessionDir ? path.resolve(a.sessionDir) : win?.controller.layout.root;
    if (!root) throw new ExpBenchError('BAD_INPUT', 'sessionDir', 'this window is not on a task session: open one, or give the command {sessionDir}');
    const layout = new SessionLayout(root);
    const refused = await outsideAgentRefusal(layout);
    if (refused) {
      await this.withdraw();
      logger.info(`language-model tools not offered for ${root}: ${refused}`);
      return { offered: false, sessionDir: root, reason: `no chat agent works this session: ${refused}`, tools: [] };
    }
    if (this.current?.root === root) return { offered: true, sessionDir: root, tools: this.names() };
    await this.withdraw();
    const isWindow = win?.controller.layout.root === root;
    let handle: SessionHandle; let task: Task; let manager: WorkContainerManager; let release: (() => Promise<void>) | undefined;
    if (isWindow) {
      ({ session: handle, task, container: manager } = win!.controller);
    } else {
      const own = await openOther(this.deps, layout, 'lm');
      ({ handle, task, manager } = own);
      release = async () => { own.manager.dispose(); await own.handle.release(); };
    }
    const tools = new OutsideTools({
      session: handle, container: () => manager.container(), brief: agentBrief(task), unconfined: true,
      submit: () => this.submit(handle, task, layout, isWindow ? win : undefined),
    });
    const impls = new Map<string, vscode.LanguageModelTool<Record<string, unknown>>>();
    const disposables = outsideToolSpecs().map((spec) => vscode.lm.registerTool<Record<string, unknown>>(`${LM_TOOL_PREFIX}${spec.name}`, setImpl(impls, `${LM_TOOL_PREFIX}${spec.name}`, {
      prepareInvocation: (options) => this.prepare(spec.name, options.input),
      invoke: async (options, token) => {
        const client: OutsideClient = { name: options.toolInvocationToken ? 'vscode-chat' : 'vscode-extension', via: 'lm', transport: 'vscode' };
        const ac = new AbortController();
        const sub = token.onCancellationRequested(() => ac.abort());
        try {
          const r = await tools.call(client, spec.name, options.input, ac.signal);
          return new vscode.LanguageModelToolResult([new vscode.LanguageModelTextPart(r.result)]);
        } finally {
          sub.dispose();
        }
      },
    })));
    this.current = { root, tools, disposables, release, impls };
    await vscode.commands.executeCommand('setContext', LM_TOOLS_CONTEXT, true);
    logger.info(`language-model tools offered for ${root}: ${this.names().join(', ')}`);
    return { offered: true, sessionDir: root, tools: this.names() };
  }

  /**
   * What the registered implementation of `name` (`expbench_shell`, …) answers to VS Code's
   * `prepareInvocation` for `input`: the message shown while it runs and, for `expbench_shell`
   * with `expbench.agent.approveShell` on, the confirmation (title, and a message holding the
   * command) that VS Code asks the person before it calls `invoke`. Undefined when no such tool is
   * registered. (VS Code calls the same method before each `vscode.lm.invokeTool`; this lets a
   * test read its answer without a chat view to answer the confirmation.)
   */
  async prepared(name: string, input: Record<string, unknown>): Promise<vscode.PreparedToolInvocation | undefined> {
    const impl = this.current?.impls.get(name);
    if (!impl?.prepareInvocation) return undefined;
    const cts = new vscode.CancellationTokenSource();
    try {
      return (await impl.prepareInvocation({ input }, cts.token)) ?? undefined;
    } finally {
      cts.dispose();
    }
  }

  /** Unregisters the tools (and releases a session opened for them). */
  async withdraw(): Promise<void> {
    const c = this.current;
    this.current = undefined;
    await vscode.commands.executeCommand('setContext', LM_TOOLS_CONTEXT, false);
    if (!c) return;
    // VS Code (1.100) drops a tool from the extension host's `vscode.lm.tools` only while its
    // implementation is still registered there: the `when` clause must hide the tools first.
    const deadline = Date.now() + 5000;
    while (vscode.lm.tools.some((t) => t.name.startsWith(LM_TOOL_PREFIX)) && Date.now() < deadline) await new Promise((r) => setTimeout(r, 50));
    for (const d of c.disposables) d.dispose();
    await c.release?.().catch((e: unknown) => logger.warn(`releasing ${c.root}: ${errorMessage(e)}`));
  }

  /** "EXP-Bench: Offer Task Tools to Chat Agents" (`{sessionDir?}`) and "EXP-Bench: Withdraw Task Tools". */
  commands(): CommandSpec[] {
    return [
      { id: 'expbench.agent.offerTools', execute: (a?: { sessionDir?: string }) => this.report(() => this.offer(a), a !== undefined) },
      { id: 'expbench.agent.withdrawTools', execute: async () => { await this.withdraw(); return { offered: false, tools: [] }; } },
    ];
  }

  dispose(): void {
    void this.withdraw();
  }

  private names(): string[] {
    return outsideToolSpecs().map((s) => `${LM_TOOL_PREFIX}${s.name}`);
  }

  private prepare(tool: string, input: Record<string, unknown>): vscode.PreparedToolInvocation {
    if (tool === 'shell' && setting('agent.approveShell')) {
      const command = String(input?.command ?? '');
      return {
        invocationMessage: 'Running a command in the task container',
        confirmationMessages: {
          title: 'Run this command in the task container?',
          message: new vscode.MarkdownString(`The chat agent wants to run, in \`/workspace\` of the session's work container:\n\n\`\`\`bash\n${command}\n\`\`\``),
        },
      };
    }
    return { invocationMessage: `EXP-Bench: ${tool.replace(/_/g, ' ')}` };
  }

  private async submit(handle: SessionHandle, task: Task, layout: SessionLayout, win: ActiveSession | undefined): Promise<string> {
    const target: SubmitTarget = win?.controller ?? { session: handle, task, layout, setResults: () => undefined };
    const verify = this.deps.hooks.verify();
    const judge = await this.deps.hooks.judge(target);
    const r = await handle.submit({ design: handle.state.design, conclusion: handle.state.conclusion }, { ...(verify ? { verify } : {}), ...(judge ? { judge } : {}) });
    target.setResults(await this.deps.hooks.loadResults(layout));
    await this.deps.hooks.afterSubmit(target).catch((e: unknown) => logger.warn(`after submit: ${errorMessage(e)}`));
    const step = (name: string, s?: { ok: boolean; summary?: string; error?: string }) => (s ? `; ${name}: ${s.ok ? 'ok' : 'FAILED'}${s.summary ? ` ${s.summary}` : ''}${s.error ? ` ${s.error}` : ''}` : '');
    return `submitted${step('verify', r.verify)}${step('judge', r.judge)}`;
  }

  private async report<T>(fn: () => Promise<T>, rethrow: boolean): Promise<T | undefined> {
    try {
      return await fn();
    } catch (e) {
      void vscode.window.showErrorMessage(`EXP-Bench: ${errorMessage(e)}`);
      if (rethrow) throw e;
      return undefined;
    }
  }
}

function setImpl<T>(map: Map<string, T>, name: string, impl: T): T {
  map.set(name, impl);
  return impl;
}
