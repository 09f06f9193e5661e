import { promises as fsp } from 'node:fs';
import * as path from 'node:path';
import type Docker from 'dockerode';
import { OutsideTools, outsideAgentRefusal } from '../agent/outside';
import { agentBrief, type AgentBrief } from '../agent/prompt';
import { ExpBenchError } from '../errors';
import { judgeStep } from '../flows/judge';
import { SessionService, type SessionHandle } from '../flows/sessionService';
import { verifyStep } from '../flows/verify';
import { SessionLayout } from '../layout';
import type { LlmEndpoint } from '../llm/endpoint';
import type { PriceTable } from '../llm/ledger';
import { log } from '../log';
import { connectDocker, ensureImage } from '../sandbox';
import { DEFAULT_IMAGE } from '../sandbox/images';
import { ensureWorkContainer, removeWorkContainer } from '../sandbox/work';
import { readTaskSnapshot } from '../session/marker';
import type { OwnerRecord } from '../session/owner';
import type { Disposable } from '../util/emitter';
import { errorMessage } from '../util/errors';
import { readManifest } from '../workspace/manifest';

const logger = log('mcp');

/** The file of the HTTP server's token in a session: `private/mcp-token` (mode 0600; never in the workspace). */
export function tokenFile(layout: SessionLayout): string {
  return path.join(layout.private, 'mcp-token');
}

/** Options of {@link openMcpSession}. */
export interface McpSessionOptions {
  sessionDir: string;
  /** The host's session service (default a new one: the CLI). A window passes its own, so both share the session. */
  service?: SessionService;
  docker?: Docker;
  /** Network in the work container (default false, as `expbench.container.network`). */
  network?: boolean;
  /** Verify (clean run) after submit (default true). */
  verify?: boolean;
  /** Judge after submit (default true): `judgeEndpoint`, else the heuristic pre-judge. */
  judge?: boolean;
  judgeEndpoint?: LlmEndpoint;
  prices?: PriceTable;
  /** Open the session even when another live process owns it (it then loses it: newest opener wins). */
  takeOver?: boolean;
  shellTimeoutMs?: number;
}

/** A session opened for outside agents: its tools, its brief, and the end. */
export interface McpSession {
  layout: SessionLayout;
  handle: SessionHandle;
  brief: AgentBrief;
  tools: OutsideTools;
  /** Pauses the clock, releases the session, removes the work container when this process started it. Safe to call twice. */
  close(): Promise<void>;
}

/** True when a process with `pid` runs on this host (EPERM: it runs under another user). */
function alive(pid: number): boolean {
  if (!Number.isInteger(pid) || pid <= 0) return false;
  try { process.kill(pid, 0); return true; } catch (e: any) { return e?.code === 'EPERM'; }
}

/**
 * The session's owner when it is another live process on this host, else undefined (no
 * owner.json, this process, or a dead owner, e.g. a closed window or a finished command).
 */
export async function liveForeignOwner(layout: SessionLayout): Promise<OwnerRecord | undefined> {
  const text = await fsp.readFile(layout.owner, 'utf8').catch(() => undefined);
  if (!text) return undefined;
  let rec: OwnerRecord;
  try { rec = JSON.parse(text) as OwnerRecord; } catch { return undefined; }
  return rec.pid !== process.pid && alive(rec.pid) ? rec : undefined;
}

/**
 * Opens the session at `o.sessionDir` for outside agents (the MCP server; docs/outside-agents.md):
 * refused on a proctored human baseline and on a finished session; refused while another live
 * process owns the session (a window: its own tools serve it, see the doc) unless `takeOver`.
 * Opens it through the session service as client `mcp` with the clock as the agent's, and gives
 * the tools the work container (started on first use: workspace only, network off unless asked)
 * and a submit that runs submit → verify → judge as `expbench agent run` does.
 * @throws ExpBenchError `BAD_INPUT` (proctored, finished, no task snapshot), `SESSION_INVALID`
 *   (owned by another live process; a corrupt session), what readManifest throws
 */
export async function openMcpSession(o: McpSessionOptions): Promise<McpSession> {
  const layout = new SessionLayout(path.resolve(o.sessionDir));
  const refusal = await outsideAgentRefusal(layout);
  if (refusal) throw new ExpBenchError('BAD_INPUT', layout.root, `no outside agent works this session: ${refusal}`);
  const manifest = await readManifest(layout.root);
  const task = await readTaskSnapshot(layout.root);
  if (!task) throw new ExpBenchError('BAD_INPUT', layout.root, 'the session has no task snapshot (private/task.json): prepare it with `expbench prepare`');
  const service = o.service ?? new SessionService();
  const shared = service.clientsOf(layout.root).length > 0;
  const owner = shared ? undefined : await liveForeignOwner(layout);
  if (owner && !o.takeOver) {
    throw new ExpBenchError('SESSION_INVALID', layout.root,
      `the session is open in another process (${owner.client}, pid ${owner.pid}, since ${owner.openedAt}); only one process writes a session. `
      + 'Close it first, or attach the agent there (a VS Code window: its language-model tools, docs/outside-agents.md); --take-over takes it over (the other process then stops writing it).');
  }
  const handle = await service.open(layout.root, { client: 'mcp', taskId: task.id });
  if (handle.state.submitted || handle.state.gaveUp) {
    await handle.release();
    throw new ExpBenchError('BAD_INPUT', layout.root, `the session is finished (${handle.state.submitted ? 'submitted' : 'given up'})`);
  }
  if (!shared) await handle.setClockActor('agent');
  const docker = o.docker ?? connectDocker();
  const image = manifest.image || DEFAULT_IMAGE;
  const sessionId = path.basename(layout.root);
  let started: Promise<Docker.Container> | undefined;
  let created = false;
  const container = () => (started ??= (async () => {
    await ensureImage(docker, image);
    const c = await ensureWorkContainer(docker, { task: task.id, session: sessionId, workspaceDir: layout.workspace, image, limits: { network: o.network ?? false }, confined: 'the outside agent' });
    created = !c.reattached;
    return c.container;
  })().catch((e: unknown) => { started = undefined; throw e; }));
  const brief = agentBrief(task);
  const tools = new OutsideTools({
    session: handle, container, brief, shellTimeoutMs: o.shellTimeoutMs, unconfined: true,
    submit: async () => {
      const r = await handle.submit({ design: handle.state.design, conclusion: handle.state.conclusion }, {
        ...(o.verify === false ? {} : { verify: verifyStep({ docker }) }),
        ...(o.judge === false ? {} : { judge: judgeStep({ task, endpoint: o.judgeEndpoint, prices: o.prices }) }),
      });
      const step = (name: string, s?: { ok: boolean; summary?: string; error?: string }) => (s ? `; ${name}: ${s.ok ? 'ok' : 'FAILED'}${s.summary ? ` ${s.summary}` : ''}${s.error ? ` ${s.error}` : ''}` : '');
      return `submitted${step('verify', r.verify)}${step('judge', r.judge)}`;
    },
  });
  const beat: Disposable = handle.startHeartbeat(15_000);
  let closed = false;
  return {
    layout, handle, brief, tools,
    close: async () => {
      if (closed) return;
      closed = true;
      beat.dispose();
      try {
        if (!shared && !handle.state.submitted && !handle.state.gaveUp && handle.owned) {
          await handle.pauseClock('outside agent disconnected');
          await handle.setClockActor('human');
        }
      } catch (e) {
        logger.warn(`pausing the clock of ${layout.root}: ${errorMessage(e)}`);
      }
      await handle.release();
      if (created) await removeWorkContainer(docker, sessionId).catch((e: unknown) => logger.warn(`removing the work container of ${sessionId}: ${errorMessage(e)}`));
    },
  };
}
