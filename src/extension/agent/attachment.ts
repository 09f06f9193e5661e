import type Docker from 'dockerode';
import * as vscode from 'vscode';
import { AgentControl, type ShellApproval } from '../../core/agent/control';
import { runAgent, type AgentLimits, type AgentResult } from '../../core/agent/loop';
import { agentBrief } from '../../core/agent/prompt';
import type { SessionHandle } from '../../core/flows/sessionService';
import type { LlmEndpoint } from '../../core/llm/endpoint';
import type { PriceTable } from '../../core/llm/ledger';
import { log, redact } from '../../core/log';
import { formatWorking } from '../../core/session/clock';
import type { Task } from '../../core/tasks/types';
import { errorMessage } from '../../core/util/errors';
import { changesMessage, compareSnapshots, snapshotWorkspace, type WorkspaceSnapshot } from './workspaceDiff';

const logger = log('agent');

/** Where an attached agent is: working, asked to pause (it pauses before its next model call), paused, taken over by the person, or ended. */
export type AttachmentState = 'running' | 'pausing' | 'paused' | 'takenOver' | 'stopped';

/** One line of the agent's live display (also written to the "EXP-Bench Agent" output channel). */
export interface AgentStepLine {
  /** `model` and `tool`: the loop's steps; `note`: pause, resume, stop, clock. */
  kind: 'model' | 'tool' | 'note';
  /** The model call the line belongs to (1-based; 0 before the first). */
  step: number;
  text: string;
}

/** A pause point of the loop: tells when the run is waiting (its clock paused, src/core/agent/loop.ts `pausedTurn`). */
class GatedControl extends AgentControl {
  onGate: (() => void) | undefined;
  override gate(signal?: AbortSignal): Promise<{ waited: boolean; notes: string[] }> {
    if (this.paused) this.onGate?.();
    return super.gate(signal);
  }
}

/** What {@link AgentAttachment.start} needs. */
export interface AttachmentOptions {
  handle: SessionHandle;
  task: Task;
  container: Docker.Container;
  endpoint: LlmEndpoint;
  prices: PriceTable;
  limits: AgentLimits;
  approveShell?: (command: string) => Promise<ShellApproval>;
  channel: vscode.OutputChannel;
  /** Called when the agent called submit: submit, verify and judge as the window does. */
  onSubmit(handle: SessionHandle): Promise<string>;
}

/**
 * The built-in agent (src/core/agent/loop.ts) attached to one open session in this window, and the
 * researcher's steering of it: Pause (before the next model call), Take Over (paused, and the
 * clock runs as the person's working time while they edit), Resume (the agent is told what changed
 * in the workspace since the pause: the file lists and a unified diff, as a user message, with the
 * person's note), Stop. The session's clock says whose working time it is (`clock.actor`).
 */
export class AgentAttachment implements vscode.Disposable {
  readonly steps: AgentStepLine[] = [];
  private readonly stepEmitter = new vscode.EventEmitter<AgentStepLine>();
  /** Fires for each line as it lands. */
  readonly onDidStep = this.stepEmitter.event;
  private readonly control = new GatedControl();
  private readonly abort = new AbortController();
  private state_: AttachmentState = 'running';
  private atGate: Promise<void> | undefined;
  private snapshot: Promise<WorkspaceSnapshot> | undefined;
  private lastStep = 0;
  /** The run's result (after the submission, when it submitted). */
  readonly done: Promise<AgentResult>;

  private constructor(private readonly o: AttachmentOptions) {
    this.done = this.run();
  }

  /** Starts the agent on the session; the clock becomes the agent's. */
  static start(o: AttachmentOptions): AgentAttachment {
    return new AgentAttachment(o);
  }

  get state(): AttachmentState { return this.state_; }
  get sessionRoot(): string { return this.o.handle.layout.root; }

  private line(l: AgentStepLine): void {
    this.steps.push(l);
    this.o.channel.appendLine(`${l.kind === 'note' ? '  ' : `[${String(l.step).padStart(2)}] `}${l.kind === 'tool' ? '  tool ' : l.kind === 'model' ? 'model ' : '• '}${l.text}`);
    this.stepEmitter.fire(l);
  }

  private async run(): Promise<AgentResult> {
    const { handle, task, endpoint } = this.o;
    this.o.channel.appendLine(`Agent ${endpoint.model} attached to ${task.id} (${handle.layout.root})`);
    try {
      await handle.setClockActor('agent');
      const r = await runAgent({
        session: handle, container: this.o.container, brief: agentBrief(task), endpoint: { ...endpoint, name: 'agent' }, prices: this.o.prices,
        limits: this.o.limits, signal: this.abort.signal, control: this.control, approveShell: this.o.approveShell,
        onStep: (s) => { this.lastStep = s.step; this.line(s); },
      });
      this.line({ kind: 'note', step: this.lastStep, text: `stopped: ${r.stop}: ${r.message} (${r.steps} steps, ${r.toolCalls} tool calls, ${r.ledger.promptTokens + r.ledger.completionTokens} tokens, ${r.ledger.usd.toFixed(4)} USD)` });
      if (r.submitRequested) this.line({ kind: 'note', step: this.lastStep, text: await this.o.onSubmit(handle).catch((e: unknown) => `submit failed: ${errorMessage(e)}`) });
      return r;
    } finally {
      this.state_ = 'stopped';
      this.control.onGate?.();
      if (!handle.state.submitted && !handle.state.gaveUp) await handle.setClockActor('human').catch((e: unknown) => logger.warn(`clock actor: ${errorMessage(e)}`));
      const by = handle.workingByActor();
      this.line({ kind: 'note', step: this.lastStep, text: `working time: agent ${formatWorking(by.agent)}, human ${formatWorking(by.human)}` });
    }
  }

  /**
   * Asks the agent to pause before its next model call (a tool under way finishes) and resolves
   * once it waits (its clock paused) or the run ended; the workspace is snapshotted then, for the
   * "what changed" message on {@link resume}.
   */
  async pause(): Promise<void> {
    if (this.state_ === 'stopped' || this.state_ === 'paused' || this.state_ === 'takenOver') return;
    if (!this.atGate) {
      this.state_ = 'pausing';
      this.atGate = new Promise<void>((resolve) => { this.control.onGate = resolve; });
      this.control.pause();
    }
    await Promise.race([this.atGate, this.done.then(() => undefined, () => undefined)]);
    if (this.state_ !== 'pausing') return;
    this.state_ = 'paused';
    this.snapshot = snapshotWorkspace(this.o.handle.layout.workspace);
    await this.snapshot;
    this.line({ kind: 'note', step: this.lastStep, text: 'paused by the researcher' });
  }

  /** Pauses the agent (see {@link pause}) and gives the clock to the person, running: their edits are their working time. */
  async takeOver(): Promise<void> {
    await this.pause();
    if (this.state_ !== 'paused') return;
    await this.o.handle.setClockActor('human');
    if (this.o.handle.clockStatus === 'paused') await this.o.handle.resumeClock();
    this.state_ = 'takenOver';
    this.line({ kind: 'note', step: this.lastStep, text: 'taken over by the researcher (the clock is the human\'s)' });
  }

  /**
   * Lets a paused or taken-over agent go on: the clock becomes the agent's again, and the model is
   * told what changed in the workspace since the pause ({@link changesMessage}) and `note`.
   * @returns the message told to the model (undefined when the agent was not paused)
   */
  async resume(note?: string): Promise<string | undefined> {
    if ((this.state_ !== 'paused' && this.state_ !== 'takenOver') || !this.snapshot) return undefined;
    const before = await this.snapshot;
    // the person's text goes to the model: a registered secret (an API key pasted into a file) is masked
    const message = redact([changesMessage(compareSnapshots(before, await snapshotWorkspace(this.o.handle.layout.workspace))), ...(note?.trim() ? [note.trim()] : [])].join('\n'));
    await this.o.handle.setClockActor('agent');
    this.atGate = undefined;
    this.snapshot = undefined;
    this.state_ = 'running';
    this.line({ kind: 'note', step: this.lastStep, text: `resumed: ${message.split('\n')[0]}` });
    this.control.resume(message);
    return message;
  }

  /** Stops the run (also while paused) and resolves with its result (`cancelled`). */
  async stop(): Promise<AgentResult> {
    this.abort.abort();
    return this.done;
  }

  dispose(): void {
    this.abort.abort();
    this.stepEmitter.dispose();
  }
}
