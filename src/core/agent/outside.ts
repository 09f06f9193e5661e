import { promises as fsp } from 'node:fs';
import * as path from 'node:path';
import type Docker from 'dockerode';
import { isExpBenchError } from '../errors';
import { SessionLayout } from '../layout';
import { log, redact } from '../log';
import { readEvents } from '../session/events';
import { excerpt, MAX_EXCERPT_CHARS, type SessionEvent } from '../steps/events';
import { errorMessage } from '../util/errors';
import type { ShellApproval } from './control';
import type { AgentBrief } from './prompt';
import { phaseOf, runTool, toolDefinitions, type AgentSession, type ToolContext, type ToolOutcome } from './tools';

const logger = log('outside');

/** How an outside agent reaches the task's tools: the MCP server or VS Code's language-model tools. */
export type OutsideVia = 'mcp' | 'lm';

/** Who calls: an MCP client (`clientInfo` of its initialize request) or a language-model tool's caller. */
export interface OutsideClient {
  name: string;
  version?: string;
  via: OutsideVia;
  /** `stdio`, `http`, `vscode`: recorded in `agent.attached`. */
  transport?: string;
}

/** One tool as an outside agent sees it: the built-in agent's name, description and JSON Schema of the arguments. */
export interface OutsideToolSpec {
  name: string;
  description: string;
  inputSchema: Record<string, unknown>;
}

/** The built-in agent's tools (src/core/agent/tools.ts `toolDefinitions`), in the shape MCP and VS Code declare tools. */
export function outsideToolSpecs(): OutsideToolSpec[] {
  return toolDefinitions().map((d) => ({ name: d.name, description: d.description, inputSchema: d.parameters }));
}

/** Options of {@link OutsideTools}. */
export interface OutsideToolsOptions {
  session: AgentSession;
  /** The session's running work container (started on first use). */
  container: () => Promise<Docker.Container>;
  brief: AgentBrief;
  /** Largest timeout of one shell command, ms; default 600000. */
  shellTimeoutMs?: number;
  /** Characters of a tool's output told to the agent; default 16000. */
  outputCap?: number;
  /** When set, each shell command waits for this approval (the window's approve-before-run setting). */
  approveShell?: (command: string) => Promise<ShellApproval>;
  /**
   * Called once `submit` was accepted (a design and a conclusion are set): submits, verifies and
   * judges as the window does, and returns what the agent is told.
   */
  submit(): Promise<string>;
  /** The agent keeps its own shell on the host (every MCP client; VS Code's chat agents): recorded in `agent.attached`. */
  unconfined: boolean;
}

/** What one call gave: the outcome of {@link runTool} and its time, ms. */
export interface OutsideCallResult extends ToolOutcome {
  durationMs: number;
}

/**
 * The task's tools for an outside agent (docs/outside-agents.md): the built-in agent's own
 * implementation (src/core/agent/tools.ts `runTool`), acting on the session through its handle,
 * with each call recorded as the built-in agent's are: an `agent.tool_call` event (tool,
 * arguments, result, duration) with the caller's `client` and `via`, after an `agent.attached`
 * event the first time a client calls or connects. The session's clock is started (or resumed)
 * by a call, and its phase moved as for the built-in agent. `submit` submits at once
 * ({@link OutsideToolsOptions.submit}). Never throws for the caller's doing: a refused or failed
 * call is a result with `error`, as the built-in agent is told.
 */
export class OutsideTools {
  private readonly attached = new Map<string, Promise<void>>();

  constructor(private readonly o: OutsideToolsOptions) {}

  /** The tools, for a list request. */
  specs(): OutsideToolSpec[] {
    return outsideToolSpecs();
  }

  /** Records `agent.attached` for `client` (once per name, version and way). Never throws (a failure is logged). */
  attach(client: OutsideClient): Promise<void> {
    const key = `${client.via}\u0000${client.name}\u0000${client.version ?? ''}`;
    let p = this.attached.get(key);
    if (!p) {
      p = this.o.session.record({
        type: 'agent.attached', client: client.name, ...(client.version ? { version: client.version } : {}), via: client.via,
        ...(client.transport ? { transport: client.transport } : {}), unconfined: this.o.unconfined,
      }).then(() => undefined, (e: unknown) => { logger.warn(`recording agent.attached for ${client.name}: ${errorMessage(e)}`); });
      this.attached.set(key, p);
    }
    return p;
  }

  /**
   * Runs tool `name` with `args` (an object, as the client sent it) for `client`, recorded.
   * @returns the outcome; `error` set when refused or failed (unknown tool, bad arguments, a path outside /workspace, the session taken over)
   */
  async call(client: OutsideClient, name: string, args: unknown, signal?: AbortSignal): Promise<OutsideCallResult> {
    await this.attach(client);
    const s = this.o.session;
    const rawArgs = JSON.stringify(args ?? {});
    const t0 = performance.now();
    let r: ToolOutcome;
    try {
      if (s.state.submitted || s.state.gaveUp) {
        r = refused(`the session was ${s.state.submitted ? 'submitted' : 'given up'}: nothing more can be done in it`);
      } else {
        await s.startClock();
        const phase = phaseOf(name);
        if (phase && phase !== s.state.phase) await s.setPhase(phase);
        const ctx: ToolContext = {
          session: s, container: await this.o.container(), shellTimeoutMs: this.o.shellTimeoutMs ?? 600_000, outputCap: this.o.outputCap ?? 16_000,
          remainingMs: () => Infinity, approveShell: this.o.approveShell, brief: this.o.brief, signal,
        };
        r = await runTool(ctx, name, rawArgs);
        if (r.submit) r = await this.submit();
      }
    } catch (e) {
      r = refused(isExpBenchError(e, 'SESSION_INVALID') ? `the session cannot be changed here: ${errorMessage(e)}` : `${name} failed: ${errorMessage(e)}`);
    }
    const durationMs = performance.now() - t0;
    try {
      await s.record({
        type: 'agent.tool_call', tool: name, arguments: excerpt(redact(rawArgs), MAX_EXCERPT_CHARS), result: excerpt(redact(r.result), MAX_EXCERPT_CHARS),
        ...(r.exitCode !== undefined ? { exitCode: r.exitCode } : {}), durationMs: Math.round(durationMs), ...(r.error ? { error: redact(r.error) } : {}),
        client: client.name, via: client.via,
      });
      s.touch();
    } catch (e) {
      logger.warn(`recording the ${name} call of ${client.name}: ${errorMessage(e)}`);
      if (!r.error) r = { ...r, error: `the call ran but was not recorded: ${errorMessage(e)}` };
    }
    return { ...r, durationMs };
  }

  private async submit(): Promise<ToolOutcome> {
    try {
      return { result: await this.o.submit(), submit: true };
    } catch (e) {
      return refused(`submitting failed: ${errorMessage(e)}`);
    }
  }
}

function refused(error: string): ToolOutcome {
  return { result: `error: ${error}`, error };
}

/**
 * Why no outside agent may work the session at `layout`, or undefined when one may: a proctored
 * human baseline, known by its host channel folder `<session>/channel/` (made by
 * src/core/flows/proctoredBaseline.ts) or a `baseliner.attested` event in its log (the rule of
 * src/extension/agent/agentCommands.ts `proctoredReason`, for the built-in agent).
 */
export async function outsideAgentRefusal(layout: SessionLayout): Promise<string | undefined> {
  if (await fsp.stat(layout.channel).then(() => true, () => false)) return `it is a proctored human baseline (${layout.channel} exists)`;
  const events = await fsp.readFile(layout.events, 'utf8').catch(() => '');
  if (events.split('\n').some((l) => l.includes('"baseliner.attested"'))) return 'it is a proctored human baseline (its event log holds baseliner.attested)';
  return undefined;
}

/** An outside agent with its own shell on the host that attached to a session (from its `agent.attached` events). */
export interface UnconfinedAgent {
  client: string;
  via: OutsideVia;
  /** When it first attached, ISO 8601. */
  at: string;
}

/**
 * The outside agents of `events` that keep their own shell on the host (`agent.attached` with
 * `unconfined`), once per name and way: a non-empty list marks the session "unconfined" in
 * `expbench session show` and `expbench report` (its work may hold what the agent did outside the
 * task's tools, unrecorded).
 */
export function unconfinedAgents(events: Iterable<SessionEvent>): UnconfinedAgent[] {
  const seen = new Map<string, UnconfinedAgent>();
  for (const e of events) {
    if (e.type !== 'agent.attached' || !e.unconfined) continue;
    const key = `${e.via}\u0000${e.client}`;
    if (!seen.has(key)) seen.set(key, { client: e.client, via: e.via, at: e.at });
  }
  return [...seen.values()];
}

/**
 * The unconfined sessions among `files` (paths inside session folders, e.g. the judge records a
 * report read: `<session>/private/judge/latest.json`), each once with its agents; files outside a
 * session's `private/` are skipped. Reads each session's event log.
 */
export async function unconfinedSessions(files: Iterable<string>): Promise<Array<{ session: string; agents: UnconfinedAgent[] }>> {
  const roots = new Set<string>();
  for (const f of files) {
    const parts = path.resolve(f).split(path.sep);
    const i = parts.lastIndexOf('private');
    if (i > 0) roots.add(parts.slice(0, i).join(path.sep) || path.sep);
  }
  const out: Array<{ session: string; agents: UnconfinedAgent[] }> = [];
  for (const root of roots) {
    const { events } = await readEvents(new SessionLayout(root).events).catch(() => ({ events: [] as SessionEvent[] }));
    const agents = unconfinedAgents(events);
    if (agents.length) out.push({ session: root, agents });
  }
  return out;
}
