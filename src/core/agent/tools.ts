import { promises as fsp } from 'node:fs';
import * as path from 'node:path';
import type Docker from 'dockerode';
import { z } from 'zod';
import type { SessionLayout } from '../layout';
import type { ChatTool } from '../llm/chat';
import { toStrictJsonSchema } from '../llm/client';
import type { NewSessionEvent, SessionEvent } from '../session/events';
import { containerExec, type RunScriptOptions } from '../session/runs';
import type { DesignDraft, Phase, RunRecord, SessionState } from '../session/state';
import { excerpt } from '../steps/events';
import { DesignDraftSchema } from '../steps/phases';
import type { Disposable } from '../util/emitter';
import { errorMessage } from '../util/errors';
import type { ShellApproval } from './control';
import { fileOp, type FileOp } from './files';
import { briefMessage, type AgentBrief } from './prompt';
import { runShell } from './shell';

/**
 * What the agent needs of a session: a structural subset of the session service's
 * `SessionHandle` (src/core/flows/sessionService.ts), so the agent acts on a session only through
 * the handle the flow gives it (as client `agent`).
 */
export interface AgentSession {
  readonly layout: SessionLayout;
  readonly state: SessionState;
  workingMs(): number;
  setPhase(phase: Phase): Promise<void>;
  setDesign(design: DesignDraft): void;
  setConclusion(text: string): void;
  startClock(): Promise<boolean>;
  pauseClock(reason?: string): Promise<boolean>;
  resumeClock(): Promise<boolean>;
  startHeartbeat(everyMs: number): Disposable;
  touch(): void;
  record(event: NewSessionEvent): Promise<SessionEvent>;
  runScript(opts: RunScriptOptions): Promise<RunRecord>;
}

/** Where and how the tools run. */
export interface ToolContext {
  session: AgentSession;
  /** The session's running work container (src/core/sandbox/work.ts). */
  container: Docker.Container;
  /** Default and largest timeout of one shell command, ms. */
  shellTimeoutMs: number;
  /** Characters of a command's (or a script run's) output told to the model (head and tail kept). */
  outputCap: number;
  /** Working time left before the run's time limit, ms (Infinity without one): caps a command's timeout. */
  remainingMs(): number;
  /** When set, each shell command waits for this approval (the researcher's option). */
  approveShell?: (command: string) => Promise<ShellApproval>;
  /** What `read_brief` tells (question, method, agent instructions: never the ground truth, see prompt.ts). */
  brief?: AgentBrief;
  signal?: AbortSignal;
}

/** What one tool call gave: the text told to the model, and what is recorded with it. */
export interface ToolOutcome {
  result: string;
  exitCode?: number | null;
  /** The call was refused or failed; `result` says why (the model is told, the run goes on). */
  error?: string;
  /** `submit` accepted: the loop ends and the flow submits. */
  submit?: boolean;
}

const obj = <S extends z.ZodRawShape>(shape: S) => z.object(shape).strict();
const ARGS = {
  shell: obj({ command: z.string().min(1), timeout_seconds: z.number().positive().optional() }),
  read_file: obj({ path: z.string(), offset: z.number().int().positive().optional(), limit: z.number().int().positive().optional() }),
  write_file: obj({ path: z.string(), content: z.string() }),
  replace_in_file: obj({ path: z.string(), old: z.string().min(1), new: z.string() }),
  list_files: obj({ path: z.string().optional(), depth: z.number().int().min(1).max(10).optional() }),
  set_design: DesignDraftSchema,
  set_conclusion: obj({ text: z.string().min(1) }),
  run_script: obj({}),
  submit: obj({}),
  read_brief: obj({}),
} as const;
export type ToolName = keyof typeof ARGS;
export const TOOL_NAMES = Object.keys(ARGS) as ToolName[];

const DESCRIPTIONS: Record<ToolName, string> = {
  shell: 'Run a bash command in /workspace (no network). Returns the exit code and the output (stdout and stderr interleaved; long output is cut in the middle).',
  read_file: 'Read a text file of the repository. `offset` (1-based first line) and `limit` (number of lines) read a part.',
  write_file: 'Create or overwrite a file with `content` (folders are created). Files ending in .sh become executable.',
  replace_in_file: 'Replace the exact text `old` by `new` in a file; `old` must occur exactly once.',
  list_files: 'List the files under a folder of the repository (default: the root), `depth` levels deep (default 3).',
  set_design: 'Set the experimental design: constant, independent and dependent variables (name, description, values for independent ones) and free text. Replaces the previous design.',
  set_conclusion: 'Set the conclusion: the answer to the question, with the numbers your runs measured. Replaces the previous one.',
  run_script: 'Run reproduce_exp_bench.sh (bash, in /workspace) as the verifier will; returns its exit code and output.',
  submit: 'Submit the design, the conclusion and the workspace as they are now. Ends your work: the experiment is then verified and judged.',
  read_brief: 'Read the task\'s brief again: the question, the method and the instructions.',
};

/** Each tool's name, description and JSON Schema of its arguments (from zod): what the model, MCP clients and VS Code are told. */
export function toolDefinitions(): Array<{ name: ToolName; description: string; parameters: Record<string, unknown> }> {
  return TOOL_NAMES.map((name) => ({ name, description: DESCRIPTIONS[name], parameters: toStrictJsonSchema(ARGS[name]) }));
}

/** The tool schemas sent to the model (JSON Schema of each tool's arguments, from zod). */
export function toolSpecs(): ChatTool[] {
  return toolDefinitions().map((d) => ({ type: 'function', function: d }));
}

/** The phase a tool's work belongs to (the session's phase is moved there before it runs); undefined: unchanged. */
export function phaseOf(tool: string): Phase | undefined {
  switch (tool) {
    case 'set_design': return 'design';
    case 'write_file': case 'replace_in_file': return 'implementation';
    case 'run_script': return 'execution';
    case 'set_conclusion': case 'submit': return 'conclusion';
    default: return undefined;
  }
}

/**
 * Runs one tool call. Bad JSON, unknown tools, arguments that fail the tool's schema, refused
 * paths and failed commands are outcomes with `error` (told to the model), never exceptions.
 * @throws only what the session or the engine throws for reasons that are not the model's (container gone, session taken over)
 */
export async function runTool(ctx: ToolContext, name: string, rawArgs: string): Promise<ToolOutcome> {
  if (!Object.hasOwn(ARGS, name)) return refuse(`unknown tool "${name}": the tools are ${TOOL_NAMES.join(', ')}`);
  let json: unknown;
  try {
    json = rawArgs.trim() === '' ? {} : JSON.parse(rawArgs);
  } catch (e) {
    return refuse(`the arguments are not valid JSON (${errorMessage(e)}): send the call again with one JSON object`);
  }
  const parsed = ARGS[name as ToolName].safeParse(json);
  if (!parsed.success) {
    return refuse(`invalid arguments for ${name}: ${parsed.error.issues.slice(0, 5).map((i) => `${i.path.join('.') || '(root)'}: ${i.message}`).join('; ')}`);
  }
  const args = parsed.data as any;
  switch (name as ToolName) {
    case 'shell': {
      if (ctx.approveShell) {
        const a = await ctx.approveShell(args.command);
        if (!a.approved) return refuse(`the researcher did not approve this command${a.reason ? `: ${a.reason}` : ''}`);
      }
      const limit = Math.min(ctx.shellTimeoutMs, Math.max(1000, ctx.remainingMs()));
      const timeoutMs = Math.min(limit, args.timeout_seconds ? args.timeout_seconds * 1000 : limit);
      const r = await runShell(ctx.container, args.command, { timeoutMs, outputCap: ctx.outputCap, signal: ctx.signal });
      const head = r.timedOut ? `killed after ${Math.round(timeoutMs / 1000)} s (timeout)` : `exit code ${r.exitCode ?? 'none (killed)'}`;
      return { result: `${head}\n${r.output}`, exitCode: r.exitCode, ...(r.timedOut ? { error: 'timeout' } : {}) };
    }
    case 'read_file': return file(ctx, { op: 'read', path: args.path, offset: args.offset, limit: args.limit }, (r) => {
      const more = r.truncated ? `\n[file cut at ${r.lines} lines read]` : '';
      return `${r.path} (${r.lines} lines, from line ${r.from}):\n${r.text}${more}`;
    });
    case 'write_file': return file(ctx, { op: 'write', path: args.path, content: args.content }, (r) => `${r.created ? 'created' : 'wrote'} ${r.path} (${r.bytes} bytes)`);
    case 'replace_in_file': return file(ctx, { op: 'replace', path: args.path, old: args.old, new: args.new }, (r) => `replaced 1 occurrence in ${r.path}`);
    case 'list_files': return file(ctx, { op: 'list', path: args.path, depth: args.depth }, (r) =>
      `${(r.entries as string[]).join('\n') || '(empty)'}${r.truncated ? '\n[more entries not shown]' : ''}`);
    case 'set_design': {
      ctx.session.setDesign(args as DesignDraft);
      const d = args as DesignDraft;
      return { result: `design set: ${d.constants.length} constant, ${d.independent.length} independent, ${d.dependent.length} dependent variables` };
    }
    case 'set_conclusion':
      ctx.session.setConclusion(args.text);
      return { result: `conclusion set (${args.text.length} characters)` };
    case 'run_script': {
      let run: RunRecord;
      try {
        run = await ctx.session.runScript({ exec: containerExec(ctx.container), signal: ctx.signal });
      } catch (e) {
        return refuse(errorMessage(e));
      }
      const log = await fsp.readFile(path.join(ctx.session.layout.root, run.log), 'utf8').catch(() => '');
      return { result: `exit code ${run.exitCode ?? 'none'}${run.error ? ` (${run.error})` : ''} after ${Math.round(run.durationMs)} ms\n${excerpt(log, ctx.outputCap)}`, exitCode: run.exitCode };
    }
    case 'read_brief':
      return ctx.brief ? { result: briefMessage(ctx.brief) } : refuse('this session has no brief to read');
    case 'submit': {
      const s = ctx.session.state;
      const missing = [
        !s.conclusion.trim() && 'the conclusion (set_conclusion)',
        !(s.design.constants.length + s.design.independent.length + s.design.dependent.length) && !s.design.freeText.trim() && 'the design (set_design)',
      ].filter(Boolean);
      if (missing.length) return refuse(`cannot submit yet: set ${missing.join(' and ')} first`);
      return { result: 'submitted', submit: true };
    }
  }
}

function refuse(error: string): ToolOutcome {
  return { result: `error: ${error}`, error };
}

async function file(ctx: ToolContext, req: FileOp, ok: (r: Record<string, any>) => string): Promise<ToolOutcome> {
  const r = await fileOp(ctx.container, req, ctx.signal);
  if (r.error !== undefined) return refuse(r.error);
  return { result: excerpt(ok(r), ctx.outputCap) };
}
