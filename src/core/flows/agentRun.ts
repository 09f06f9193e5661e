import * as path from 'node:path';
import type Docker from 'dockerode';
import type { AgentControl, ShellApproval } from '../agent/control';
import { conversationFromEvents, type ResumedConversation } from '../agent/history';
import { agentBrief } from '../agent/prompt';
import { runAgent, type AgentLimits, type AgentResult } from '../agent/loop';
import type { LlmEndpoint } from '../llm/endpoint';
import type { PriceTable } from '../llm/ledger';
import { ExpBenchError } from '../errors';
import { SessionLayout } from '../layout';
import { log } from '../log';
import { connectDocker, ensureImage } from '../sandbox';
import { ownerToken } from '../sandbox/processes';
import { ensureWorkContainer, removeOwnerlessWorkContainers, removeWorkContainer } from '../sandbox/work';
import { readEvents } from '../session/events';
import { writeSessionMarker } from '../session/marker';
import type { Task } from '../tasks/types';
import { errorMessage } from '../util/errors';
import { readManifest } from '../workspace/manifest';
import type { PrepareOptions } from '../workspace/prepare';
import { prepareTask } from './prepareTask';
import { judgeStep } from './judge';
import { SessionService } from './sessionService';
import type { SubmitFlowResult } from './submit';
import { verifyStep } from './verify';

const logger = log('agentRun');

/** Options of {@link runAgentTask}. */
export interface AgentRunOptions {
  task: Task;
  /**
   * The paper repository: a git URL, a local clone or a folder (src/core/workspace/prepare.ts);
   * default as for `prepare` (prepareTask.ts `resolveTaskPin`): the curation file's pinned
   * repository, else the task's `local_repo` / `code_url`.
   */
  source?: string;
  commit?: string;
  /** Session folder to create (must not exist or be empty). */
  outDir: string;
  /** Pristine clone cache (default ~/.cache/expbench/pristine). */
  cacheDir?: string;
  /** Sandbox image of the work container and the verifier; default expbench/sandbox:1. */
  image?: string;
  /** The agent's endpoint (`endpointFromEnv('agent', env)` with the model set). */
  endpoint: LlmEndpoint;
  /** The judge's endpoint; undefined: the heuristic pre-judge. */
  judgeEndpoint?: LlmEndpoint;
  /** Prices (USD per 1M tokens) for the agent's budget and the judge's ledger. */
  prices?: PriceTable;
  limits?: AgentLimits;
  /** Largest timeout of one shell command, ms. */
  shellTimeoutMs?: number;
  /** Network in the work container (default false, as the window's `expbench.container.network`). */
  network?: boolean;
  /** Run the verifier after submitting (default true). */
  verify?: boolean;
  /** Run the judge after submitting (default true). */
  judge?: boolean;
  /** Leave the work container running at the end (default: removed). */
  keepContainer?: boolean;
  docker?: Docker;
  /** The host's session service; default a new one (the CLI). */
  service?: SessionService;
  signal?: AbortSignal;
  onProgress?: PrepareOptions['onProgress'];
  /** What the user must be told: leftovers of an earlier run removed. */
  onNotice?: (message: string) => void;
  onStep?: Parameters<typeof runAgent>[0]['onStep'];
  /** Pause and resume by the researcher (src/core/agent/control.ts). */
  control?: AgentControl;
  /** When set, every shell command of the agent waits for this approval. */
  approveShell?: (command: string) => Promise<ShellApproval>;
  /** Waits between retries of failed model requests (tests). */
  sleep?: (ms: number, signal?: AbortSignal) => Promise<void>;
}

/** What {@link runAgentTask} did. */
export interface AgentRunResult {
  sessionDir: string;
  agent: AgentResult;
  /** Set when the agent submitted: the submission and its verify and judge steps. */
  submission?: SubmitFlowResult;
  /** Set when the session's last state could not be saved at the end (a full disk): the message. */
  saveError?: string;
}

/**
 * The agent's whole run on one task: prepare the session (pinned, masked workspace; marker and
 * task snapshot), open it through the session service as client `agent`, start (or reattach) the
 * work container (workspace only, network off unless asked), run the built-in agent
 * (src/core/agent/loop.ts), and when it submitted: submit → verify (clean) → judge, the same
 * flow as the window's (src/core/flows/submit.ts). A run stopped by a limit is not submitted: the
 * session keeps its drafts, runs and events (submit later with `expbench session submit`).
 * The work container is removed on every path (unless `keepContainer`), also when the session
 * cannot be saved at the end (a full disk: the result then says so in `saveError`, stop `error`).
 * @throws what prepareSession throws (nothing else is done then); the engine's and the image's
 *   ExpBenchError when the work container cannot start (the prepared session stays)
 */
export async function runAgentTask(o: AgentRunOptions): Promise<AgentRunResult> {
  const sessionDir = path.resolve(o.outDir);
  // The paper's curation file (pin, environment) applies as for every solver (flows/prepareTask.ts).
  const { manifest } = await prepareTask({ task: o.task, source: o.source, commit: o.commit, outDir: sessionDir, cacheDir: o.cacheDir, image: o.image, signal: o.signal, onProgress: o.onProgress });
  await writeSessionMarker(sessionDir, o.task);
  return workSession(sessionDir, manifest.image, o, undefined);
}

/** Options of {@link resumeAgentTask}: those of a run, on the session folder a run left. */
export type AgentResumeOptions = Omit<AgentRunOptions, 'source' | 'commit' | 'cacheDir' | 'image' | 'onProgress'>;

/**
 * Goes on with an interrupted agent run on its own session folder (`outDir`, prepared by
 * {@link runAgentTask}): opens it through the session service as client `agent`, starts (or
 * reattaches) the work container from the manifest's image, rebuilds the agent's conversation from
 * the session's event log (src/core/agent/history.ts; the steps, tokens and spending so far count
 * against the limits) and runs the loop on from there, then submits, verifies and judges as a run
 * does. Nothing of the session is deleted or reset: a log without any model call of the agent
 * simply starts from the brief.
 * @throws ExpBenchError SESSION_INVALID when the folder holds no complete preparation or is already submitted; the engine's and the image's errors
 */
export async function resumeAgentTask(o: AgentResumeOptions): Promise<AgentRunResult> {
  const sessionDir = path.resolve(o.outDir);
  const manifest = await readManifest(sessionDir);
  if (manifest.taskId !== o.task.id) throw new ExpBenchError('SESSION_INVALID', sessionDir, `the session is task ${manifest.taskId}, not ${o.task.id}`);
  const { events } = await readEvents(new SessionLayout(sessionDir).events);
  const resume = conversationFromEvents(events, agentBrief(o.task));
  return workSession(sessionDir, manifest.image, o, resume);
}

async function workSession(sessionDir: string, image: string, o: AgentResumeOptions, resume: ResumedConversation | undefined): Promise<AgentRunResult> {
  const docker = o.docker ?? connectDocker();
  await ensureImage(docker, image);
  const service = o.service ?? new SessionService();
  const handle = await service.open(sessionDir, { client: 'agent', taskId: o.task.id });
  const sessionId = path.basename(sessionDir);
  let result: AgentRunResult | undefined;
  let finished = false;
  try {
    if (handle.state.submitted || handle.state.gaveUp) throw new ExpBenchError('SESSION_INVALID', sessionDir, 'the session is already finished (submitted or given up): there is no run to go on with');
    // What a killed run left: its work container (its clock is closed by the next opener of its session).
    const swept = await removeOwnerlessWorkContainers(docker).catch((e: unknown) => { logger.warn(`sweeping work containers failed: ${errorMessage(e)}`); return []; });
    if (swept.length) o.onNotice?.(`removed the work container${swept.length === 1 ? '' : 's'} of ${swept.join(', ')}, left running by an agent run that was killed`);
    const { container } = await ensureWorkContainer(docker, {
      task: o.task.id, session: sessionId, workspaceDir: handle.layout.workspace, image, limits: { network: o.network ?? false }, confined: 'the agent',
      // removed by this run at its end; if it is killed, by the next one (never when kept)
      ...(o.keepContainer ? {} : { owner: ownerToken() }),
    });
    // the run's working time is the agent's (`clock.actor`; `byActor` in `expbench session show --json`)
    await handle.setClockActor('agent');
    const agent = await runAgent({
      session: handle, container, brief: agentBrief(o.task), endpoint: { ...o.endpoint, name: 'agent' }, prices: o.prices,
      limits: o.limits, shellTimeoutMs: o.shellTimeoutMs, signal: o.signal, onStep: o.onStep, sleep: o.sleep,
      control: o.control, approveShell: o.approveShell, resume,
    });
    result = { sessionDir, agent };
    if (agent.submitRequested) {
      result.submission = await handle.submit({ design: handle.state.design, conclusion: handle.state.conclusion }, {
        ...(o.verify === false ? {} : { verify: verifyStep({ docker }) }),
        ...(o.judge === false ? {} : { judge: judgeStep({ task: o.task, endpoint: o.judgeEndpoint, prices: o.prices }) }),
        signal: o.signal,
      });
    }
    finished = true;
    return result;
  } finally {
    // Each step of the cleanup runs whatever the one before did: a session that cannot be saved
    // (a full disk) never leaves the work container running.
    let saveError: unknown;
    await handle.release().catch((e: unknown) => { saveError = e; });
    if (!o.keepContainer) {
      await removeWorkContainer(docker, sessionId).catch((e) => logger.warn(`removing the work container of ${sessionId} failed: ${errorMessage(e)}`));
    }
    if (saveError !== undefined && (!finished || !result)) logger.warn(`saving the session ${sessionId} at the end failed: ${errorMessage(saveError)}`);
    else if (saveError !== undefined && result) {
      // The run's result stands, said with the failure: the session's last state could not be saved
      // (its events are on disk; the next opener closes the clock at its last heartbeat).
      const why = `the session could not be saved at the end: ${errorMessage(saveError)}`;
      result.agent = result.agent.stop === 'submitted' ? { ...result.agent, message: `${result.agent.message}; ${why}` }
        : { ...result.agent, stop: 'error', message: result.agent.stop === 'error' ? `${result.agent.message}; ${why}` : `${result.agent.stop}: ${result.agent.message}; ${why}` };
      result.saveError = errorMessage(saveError);
    }
  }
}
