import * as path from 'node:path';
import { SessionLayout } from '../layout';
import { log } from '../log';
import type { BudgetLevel, ClockActor, ClockStatus } from '../session/clock';
import type { EventSink, NewSessionEvent, SessionEvent } from '../session/events';
import type { OwnerRecord } from '../session/owner';
import { WorkspaceRecorder } from '../session/recorder';
import { runScript, type RunScriptOptions } from '../session/runs';
import { openedJob, Session, type OpenSessionOptions } from '../session/session';
import { giveUp, type SubmitAnswers } from '../session/submit';
import type { DesignDraft, Note, Outcome, Phase, RunRecord, SessionState } from '../session/state';
import type { Disposable } from '../util/emitter';
import { errorMessage } from '../util/errors';
import { submitAndScore, type SubmitFlowOptions, type SubmitFlowResult } from './submit';

const logger = log('sessionService');

export type { Disposable } from '../util/emitter';

/**
 * What every client of a session (the VS Code window, a proctored window's channel, the built-in
 * agent, an MCP server) may do with it. The host-side {@link SessionService} is the only writer of
 * the session's `private/` part and event log: clients ask it, and it stamps every event with the
 * host's clock. Nothing here exposes a path inside `private/` to a client except through
 * {@link SessionHandle.layout}, which host-side clients only use.
 */
export interface SessionHandle {
  /** The session folder (host side). */
  readonly layout: SessionLayout;
  /** Who holds this handle (`vscode`, `cli`, `agent`, `mcp:<client>`, …), recorded in `session.opened`. */
  readonly client: string;
  /** The current state (phase, drafts, notes, clock, outcome). Read-only snapshot of the shared store. */
  readonly state: SessionState;
  /** The clock's status. */
  readonly clockStatus: ClockStatus;
  /** Working time so far, ms. */
  workingMs(): number;
  /** False once another process took the session over (newest opener wins, see session/owner.ts). */
  readonly owned: boolean;

  setPhase(phase: Phase): Promise<void>;
  /** @throws ExpBenchError `SESSION_INVALID` once submitted or given up. */
  setDesign(design: DesignDraft): void;
  /** @throws ExpBenchError `SESSION_INVALID` once submitted or given up. */
  setConclusion(text: string): void;
  /** @throws ExpBenchError `SESSION_INVALID` once submitted or given up (notes are frozen with the answers). */
  addNote(text: string): Promise<Note>;
  /** Each clock call resolves true when it changed the clock (false: it was already so). */
  startClock(): Promise<boolean>;
  pauseClock(reason?: string): Promise<boolean>;
  resumeClock(): Promise<boolean>;
  /** Whose working time it is from now on (session/clock.ts `setActor`); resolves false when it already was. */
  setClockActor(actor: ClockActor): Promise<boolean>;
  /** Working time so far split by actor (human, agent), ms. */
  workingByActor(): Record<ClockActor, number>;
  /**
   * Moves a running clock's heartbeat every `everyMs` ms (see session/clock.ts); `onBudget` gets the
   * budget levels (80, 100) crossed. The returned disposable stops it.
   */
  startHeartbeat(everyMs: number, onBudget?: (levels: BudgetLevel[]) => void): Disposable;
  /**
   * Sets the clock's working-time budget (ms, or null for none); `hard`: a limit the clock never
   * passes (session/clock.ts `setBudget`; a campaign's per-person hours, campaigns/budget.ts), a
   * running clock already past it paused at once. Returns the budget levels that this reached.
   * @throws ExpBenchError BAD_INPUT for a budget that is not a positive whole number of ms
   */
  setBudget(budgetMs: number | null, opts?: { hard?: boolean }): Promise<BudgetLevel[]>;
  /** Work just happened (moves a running clock's heartbeat). */
  touch(): void;
  /** Appends an event, stamped with the host's clock. @throws ExpBenchError `BAD_INPUT` (schema), `SESSION_INVALID` (taken over). */
  record(event: NewSessionEvent): Promise<SessionEvent>;
  /** The same as {@link record}, as a sink for the verifier and the judge. */
  readonly events: EventSink;
  /** Runs reproduce_exp_bench.sh through `opts.exec` (the work container), recorded as `script.run` (src/core/session/runs.ts). */
  runScript(opts: RunScriptOptions): Promise<RunRecord>;
  /** A recorder of workspace changes (saves, creations, deletions, commands) into this session's event log. */
  workspaceRecorder(): WorkspaceRecorder;
  /** Submits, then runs the steps given (verify, judge): src/core/flows/submit.ts. */
  submit(answers: SubmitAnswers, opts?: SubmitFlowOptions): Promise<SubmitFlowResult>;
  /** Records an explicit give-up. */
  giveUp(reason?: string): Promise<Outcome>;
  /** Called after each change of the state (by any client of this session). */
  onDidChange(listener: () => void): Disposable;
  /** Called after each event is on disk (from any client of this session). */
  onDidRecord(listener: (e: SessionEvent) => void): Disposable;
  /** Called once when another process took the session over. */
  onDidLose(listener: (by: OwnerRecord) => void): Disposable;
  /** This client is done: the session closes when its last client releases it. Safe to call twice. */
  release(): Promise<void>;
}

/** Options of {@link SessionService.open}. */
export interface OpenHandleOptions extends Omit<OpenSessionOptions, 'client'> {
  client: string;
}

interface Entry { session: Promise<Session>; clients: Set<Handle> }

/**
 * The host-side session service: one per host process. Clients in this process that open the same
 * session folder share one opened {@link Session} (one state store, one event log, one clock), so
 * a window, an agent and an MCP server acting on one session never overwrite each other. Across
 * processes the rule stays the newest opener's (`private/owner.json`): a reloaded window takes its
 * session back from the dead one.
 */
export class SessionService {
  private readonly open_ = new Map<string, Entry>();

  /**
   * Opens `sessionDir` for `opts.client`; the first client opens the session (see Session.open),
   * later ones join it.
   * @throws what Session.open throws (SESSION_INVALID for a corrupt state.json, file system errors)
   */
  async open(sessionDir: string, opts: OpenHandleOptions): Promise<SessionHandle> {
    const root = path.resolve(sessionDir);
    let entry = this.open_.get(root);
    if (!entry) {
      const session = Session.open(new SessionLayout(root), opts);
      entry = { session, clients: new Set() };
      this.open_.set(root, entry);
      session.catch(() => { if (this.open_.get(root) === entry) this.open_.delete(root); });
      const handle = new Handle(await session, opts.client, (h) => this.release(root, h));
      entry.clients.add(handle);
      return handle;
    }
    const session = await entry.session;
    const handle = new Handle(session, opts.client, (h) => this.release(root, h));
    entry.clients.add(handle);
    await session.events.append({ type: 'session.opened', client: opts.client, restored: true, ...(opts.taskId ? { taskId: opts.taskId } : {}), ...openedJob(opts) });
    return handle;
  }

  /** Clients holding `sessionDir` now, in the order they opened it. */
  clientsOf(sessionDir: string): string[] {
    return [...(this.open_.get(path.resolve(sessionDir))?.clients ?? [])].map((h) => h.client);
  }

  /** Releases every handle (host shutting down). */
  async dispose(): Promise<void> {
    for (const e of [...this.open_.values()]) for (const h of [...e.clients]) await h.release();
  }

  private async release(root: string, h: Handle): Promise<void> {
    const entry = this.open_.get(root);
    if (!entry || !entry.clients.delete(h)) return;
    if (entry.clients.size > 0) return;
    this.open_.delete(root);
    await (await entry.session).close();
  }
}

class Handle implements SessionHandle {
  private released = false;
  private readonly subscriptions: Disposable[] = [];

  constructor(private readonly session: Session, readonly client: string, private readonly onRelease: (h: Handle) => Promise<void>) {}

  get layout(): SessionLayout { return this.session.layout; }
  get state(): SessionState { return this.session.state; }
  get clockStatus(): ClockStatus { return this.session.clock.status; }
  get owned(): boolean { return this.session.owned; }
  workingMs(): number { return this.session.clock.workingMs(); }

  setPhase(phase: Phase): Promise<void> { return this.session.setPhase(phase); }
  setDesign(design: DesignDraft): void { this.session.setDesign(design); }
  setConclusion(text: string): void { this.session.setConclusion(text); }
  addNote(text: string): Promise<Note> { return this.session.addNote(text); }
  startClock(): Promise<boolean> { return this.session.clock.start(); }
  pauseClock(reason?: string): Promise<boolean> { return this.session.clock.pause(reason); }
  resumeClock(): Promise<boolean> { return this.session.clock.resume(); }
  setClockActor(actor: ClockActor): Promise<boolean> { return this.session.clock.setActor(actor); }
  workingByActor(): Record<ClockActor, number> { return this.session.clock.workingByActor(); }
  startHeartbeat(everyMs: number, onBudget?: (levels: BudgetLevel[]) => void): Disposable {
    return this.keep(this.session.clock.startHeartbeat(everyMs, onBudget));
  }
  setBudget(budgetMs: number | null, opts?: { hard?: boolean }): Promise<BudgetLevel[]> {
    this.session.clock.setBudget(budgetMs, opts);
    return this.session.clock.checkBudget();
  }
  touch(): void { this.session.touch(); }
  record(event: NewSessionEvent): Promise<SessionEvent> { return this.session.events.append(event); }
  readonly events: EventSink = { append: (e) => this.record(e) };
  runScript(opts: RunScriptOptions): Promise<RunRecord> { return runScript(this.session, opts); }
  workspaceRecorder(): WorkspaceRecorder { return new WorkspaceRecorder(this.session); }
  submit(answers: SubmitAnswers, opts?: SubmitFlowOptions): Promise<SubmitFlowResult> { return submitAndScore(this.session, answers, opts); }
  giveUp(reason?: string): Promise<Outcome> { return giveUp(this.session, reason); }
  onDidChange(listener: () => void): Disposable { return this.keep(this.session.store.onDidChange(listener)); }
  onDidRecord(listener: (e: SessionEvent) => void): Disposable { return this.keep(this.session.events.onDidAppend(listener)); }
  onDidLose(listener: (by: OwnerRecord) => void): Disposable { return this.keep(this.session.ownership.onDidLose(listener)); }

  async release(): Promise<void> {
    if (this.released) return;
    this.released = true;
    for (const d of this.subscriptions.splice(0)) {
      try { d.dispose(); } catch (e) { logger.error(`disposing a listener failed: ${errorMessage(e)}`); }
    }
    await this.onRelease(this);
  }

  private keep(d: Disposable): Disposable {
    this.subscriptions.push(d);
    return d;
  }
}
