import { ExpBenchError } from '../errors';
import { log } from '../log';
import type { EventLog } from './events';
import type { ClockState, SessionState } from './state';
import type { Disposable, SessionStore } from './store';
import { errorMessage } from '../util/errors';

/**
 * The fair clock of a human-baseline session. Working time is computed from the segments recorded
 * in state.json, never from a running counter, so it is the same after a reload or a restart.
 *
 * The rule (also in docs/events.md):
 * - The clock starts paused. `start` opens the first segment; `pause` closes the open one;
 *   `resume` opens a new one. Working time = Σ (end − start) over the segments, pauses excluded.
 * - While a segment is open its `lastBeat` is refreshed every {@link HEARTBEAT_MS}, on every
 *   action of the baseliner (draft edits, phase changes, notes, saves: see session.ts) and on every
 *   clock action. The process that owns the session counts the open segment up to now; any other
 *   reader (the CLI) counts it up to `lastBeat`, the last moment work is known to have happened.
 * - When the owner closes cleanly, the segment is closed at that moment (`endReason: interrupted`).
 *   When it is killed, the segment stays open; on the next open {@link SessionClock.restore}
 *   closes it at its `lastBeat`: at most one heartbeat interval of work is not counted, and the
 *   time the window was gone is never counted. Then, if the clock was running, it resumes.
 * - Submit and give-up close the clock for good.
 */
export const HEARTBEAT_MS = 5_000;

const logger = log('session');

export type ClockStatus = 'not-started' | 'running' | 'paused' | 'stopped';
export type BudgetLevel = 80 | 100;
/** The pause reason of a clock a hard budget stopped. */
export const BUDGET_USED_UP = 'time budget used up';

/**
 * Working time in ms: closed segments in full, the open one up to `upTo` (ms since the epoch) or,
 * when `upTo` is omitted, up to its last heartbeat.
 */
export function workingMs(clock: ClockState, upTo?: number): number {
  let closed = 0;
  let open = 0;
  for (const s of clock.segments) {
    const start = Date.parse(s.start);
    if (s.end !== undefined) closed += Math.max(0, Date.parse(s.end) - start);
    else open += Math.max(0, (upTo ?? Date.parse(s.lastBeat)) - start);
  }
  // A hard budget is a limit: an open segment counts at most up to it (the clock stops there);
  // closed segments are worked time and always count in full.
  if (clock.budgetHard && clock.budgetMs) open = Math.min(open, Math.max(0, clock.budgetMs - closed));
  return closed + open;
}

/**
 * The moment (ms since the epoch) a running clock's open segment reaches its hard budget, or
 * undefined when there is none (no hard budget, or no open segment): the segment's start plus what
 * is left of the budget after the closed segments.
 */
export function budgetEndsAt(clock: ClockState): number | undefined {
  const open = clock.segments.at(-1);
  if (!clock.budgetHard || !clock.budgetMs || !open || open.end !== undefined) return undefined;
  const closed = workingMs({ ...clock, budgetHard: false, segments: clock.segments.slice(0, -1) });
  return Date.parse(open.start) + Math.max(0, clock.budgetMs - closed);
}

/** Whose working time a clock segment is (segments without an actor are the person's). */
export type ClockActor = 'human' | 'agent';

/**
 * Working time in ms split by actor (segment `actor`, absent = human), counted as {@link workingMs}
 * counts it: closed segments in full, the open one up to `upTo` or its last heartbeat.
 */
export function workingByActor(clock: ClockState, upTo?: number): Record<ClockActor, number> {
  const by: Record<ClockActor, number> = { human: 0, agent: 0 };
  for (const s of clock.segments) {
    const end = s.end !== undefined ? Date.parse(s.end) : (upTo ?? Date.parse(s.lastBeat));
    by[s.actor ?? 'human'] += Math.max(0, end - Date.parse(s.start));
  }
  return by;
}

/** The clock's status from the recorded segments and the session outcome. */
export function clockStatus(s: Pick<SessionState, 'clock' | 'submitted' | 'gaveUp'>): ClockStatus {
  if (s.submitted || s.gaveUp) return 'stopped';
  const last = s.clock.segments.at(-1);
  if (!last) return 'not-started';
  return last.end === undefined ? 'running' : 'paused';
}

/** `m:ss` below an hour, `h:mm:ss` from an hour (working time is never negative). */
export function formatWorking(ms: number): string {
  const total = Math.max(0, Math.floor(ms / 1000));
  const h = Math.floor(total / 3600);
  const m = Math.floor((total % 3600) / 60);
  const sec = String(total % 60).padStart(2, '0');
  return h > 0 ? `${h}:${String(m).padStart(2, '0')}:${sec}` : `${m}:${sec}`;
}

/** Share of the budget used, 0..∞, or undefined without a budget. */
export function budgetShare(clock: ClockState, working: number): number | undefined {
  return clock.budgetMs ? working / clock.budgetMs : undefined;
}

/**
 * The clock of the session whose store this process owns. Uses the store's time source
 * (`store.now`), so tests inject time; records every change in the state and as an event.
 */
export class SessionClock {
  private actor_: ClockActor = 'human';

  constructor(private readonly store: SessionStore, private readonly events: EventLog) {}

  /** Whose working time the segments opened from now on are (default the person's; not kept across a reopen). */
  get actor(): ClockActor { return this.actor_; }

  /**
   * Makes the working time from now on `actor`'s: a running clock's open segment is closed now
   * (`endReason: handed_over`) and a new one opened for `actor`, with
   * no time lost between them; a paused clock's next segment is `actor`'s. Records `clock.actor`.
   * Returns false when `actor` already had the clock.
   */
  async setActor(actor: ClockActor): Promise<boolean> {
    if (actor === this.actor_) return false;
    this.actor_ = actor;
    if (this.status === 'running') {
      const at = this.iso();
      const end = this.iso(this.closeMoment());
      this.store.update((s) => {
        const seg = s.clock.segments[s.clock.segments.length - 1];
        seg.end = end; seg.lastBeat = end; seg.endReason = 'handed_over';
        s.clock.segments.push({ start: at, lastBeat: at, ...(actor === 'agent' ? { actor } : {}) });
      });
    }
    await this.events.append({ type: 'clock.actor', actor, workingMs: this.workingMs() });
    return true;
  }

  /** Working time in ms up to now split by actor (see {@link workingByActor}). */
  workingByActor(): Record<ClockActor, number> { return workingByActor(this.store.state.clock, this.now); }

  private get now(): number { return this.store.now(); }
  private iso(ms = this.now): string { return new Date(ms).toISOString(); }

  /** Working time in ms up to now (live: the open segment counts to now). */
  workingMs(): number { return workingMs(this.store.state.clock, this.now); }
  get status(): ClockStatus { return clockStatus(this.store.state); }

  /** Opens the first segment; on a started clock, the same as {@link resume}. Returns false when already running. */
  async start(): Promise<boolean> {
    if (this.store.state.clock.segments.length > 0) return this.resume();
    this.assertOpen('start');
    this.assertBudgetLeft('start');
    this.openSegment();
    await this.events.append({ type: 'clock.started', workingMs: this.workingMs() });
    return true;
  }

  /** Closes the open segment. Returns false when the clock was not running. */
  async pause(reason?: string): Promise<boolean> {
    if (this.status !== 'running') return false;
    const at = this.iso(this.closeMoment());
    this.store.update((s) => {
      const seg = s.clock.segments[s.clock.segments.length - 1];
      seg.end = at; seg.lastBeat = at; seg.endReason = 'paused';
      if (reason?.trim()) seg.pauseReason = reason.trim();
    });
    await this.events.append({ type: 'clock.paused', workingMs: this.workingMs(), ...(reason?.trim() ? { reason: reason.trim() } : {}) });
    return true;
  }

  /** Opens a new segment after a pause. Returns false when already running or never started. @throws ExpBenchError SESSION_INVALID when a hard budget is used up */
  async resume(): Promise<boolean> {
    if (this.status !== 'paused') {
      if (this.status === 'stopped') this.assertOpen('resume');
      return false;
    }
    this.assertBudgetLeft('resume');
    this.openSegment();
    await this.events.append({ type: 'clock.resumed', workingMs: this.workingMs() });
    return true;
  }

  /** Records a heartbeat on the open segment (no-op when not running); a hard budget's end bounds it. */
  heartbeat(): void {
    if (this.status !== 'running' || !this.store.owned) return;
    const at = this.iso(this.closeMoment());
    this.store.update((s) => { s.clock.segments[s.clock.segments.length - 1].lastBeat = at; });
  }

  /**
   * Call once when this process takes the session over. An open segment (the previous owner was
   * killed) is closed at its last heartbeat; a segment closed by a clean shutdown is left as is.
   * In both cases the clock resumes when it was running and `resume` is true.
   * @returns whether the clock was running when the previous owner went away
   */
  async restore(opts: { resume?: boolean } = {}): Promise<boolean> {
    const last = this.store.state.clock.segments.at(-1);
    if (!last || this.status === 'stopped') return false;
    if (last.end === undefined) {
      this.store.update((s) => {
        const seg = s.clock.segments[s.clock.segments.length - 1];
        seg.end = seg.lastBeat; seg.endReason = 'interrupted';
      });
      await this.events.append({ type: 'clock.paused', workingMs: this.workingMs(), interrupted: true, effectiveAt: last.lastBeat, reason: 'window closed without shutdown' });
    } else if (last.endReason !== 'interrupted') {
      return false;
    }
    if ((opts.resume ?? true) && !this.budgetUsedUp()) {
      this.openSegment();
      await this.events.append({ type: 'clock.resumed', workingMs: this.workingMs(), restored: true });
    }
    return true;
  }

  /** Clean shutdown of the owner: closes a running segment now as `interrupted` (see {@link restore}). */
  async suspend(): Promise<void> {
    if (this.status !== 'running') return;
    const at = this.iso(this.closeMoment());
    this.store.update((s) => {
      const seg = s.clock.segments[s.clock.segments.length - 1];
      seg.end = at; seg.lastBeat = at; seg.endReason = 'interrupted';
    });
    await this.events.append({ type: 'clock.paused', workingMs: this.workingMs(), interrupted: true, effectiveAt: at, reason: 'window closed' });
  }

  /** Closes the clock for good (submit / give up); returns the final working time in ms. */
  stop(reason: 'submitted' | 'gave_up'): number {
    if (this.status === 'running') {
      const at = this.iso(this.closeMoment());
      this.store.update((s) => {
        const seg = s.clock.segments[s.clock.segments.length - 1];
        seg.end = at; seg.lastBeat = at; seg.endReason = reason;
      });
    }
    return this.workingMs();
  }

  /**
   * Sets the budget (ms, or null for none); the warnings are re-armed. `hard`: the budget is a
   * limit (see `budgetHard` in state.ts): call {@link checkBudget} after it, which pauses a clock
   * already past it. A hard budget can be changed (a campaign's gate moves it as the person's
   * other sessions use their hours) but the time already worked stays counted.
   */
  setBudget(budgetMs: number | null, opts: { hard?: boolean } = {}): void {
    if (budgetMs !== null && !(Number.isInteger(budgetMs) && budgetMs > 0)) {
      throw new ExpBenchError('BAD_INPUT', `budget ${budgetMs}`, 'a time budget is a positive whole number of ms, or null');
    }
    const same = this.store.state.clock.budgetMs === budgetMs;
    this.store.update((s) => {
      s.clock.budgetMs = budgetMs;
      if (opts.hard && budgetMs !== null) s.clock.budgetHard = true; else delete s.clock.budgetHard;
      if (!same) s.clock.warned = {};
    });
  }

  /**
   * A hard budget reached while the clock runs: closes the open segment at the budget's moment
   * (never later: the time after it is not working time) as a pause with the reason
   * `time budget used up`, and records `clock.paused`. Returns whether it paused the clock.
   */
  async stopAtBudget(): Promise<boolean> {
    const ends = budgetEndsAt(this.store.state.clock);
    if (ends === undefined || this.now < ends || !this.store.owned) return false;
    const at = this.iso(ends);
    this.store.update((s) => {
      const seg = s.clock.segments[s.clock.segments.length - 1];
      seg.end = at; seg.lastBeat = at; seg.endReason = 'paused'; seg.pauseReason = BUDGET_USED_UP;
    });
    await this.events.append({ type: 'clock.paused', workingMs: this.workingMs(), reason: BUDGET_USED_UP });
    return true;
  }

  /**
   * Emits `budget.warning` at 80% and at 100% of the budget, each once per budget (recorded in
   * the state, so a reload does not repeat them). Returns the levels emitted by this call.
   */
  async checkBudget(): Promise<BudgetLevel[]> {
    const { budgetMs, warned } = this.store.state.clock;
    if (!budgetMs || !this.store.owned) return [];
    await this.stopAtBudget();
    const working = this.workingMs();
    const due: BudgetLevel[] = [];
    if (working >= 0.8 * budgetMs && !warned.at80) due.push(80);
    if (working >= budgetMs && !warned.at100) due.push(100);
    if (!due.length) return [];
    const at = this.iso();
    this.store.update((s) => { for (const l of due) s.clock.warned[l === 80 ? 'at80' : 'at100'] = at; });
    for (const level of due) await this.events.append({ type: 'budget.warning', level, workingMs: working, budgetMs });
    return due;
  }

  /**
   * Real-timer heartbeat: every `intervalMs` (default {@link HEARTBEAT_MS}) a heartbeat and a
   * budget check; `onWarning` gets the levels reached. Dispose to stop.
   */
  startHeartbeat(intervalMs = HEARTBEAT_MS, onWarning?: (levels: BudgetLevel[]) => void): Disposable {
    const tick = () => {
      try { this.heartbeat(); } catch (e) { logger.error(`heartbeat failed: ${errorMessage(e)}`); }
      this.checkBudget().then((l) => { if (l.length) onWarning?.(l); }, (e) => logger.error(`budget check failed: ${errorMessage(e)}`));
    };
    const timer = setInterval(tick, intervalMs);
    return { dispose: () => clearInterval(timer) };
  }

  /** Where an open segment closed now ends: now, or a hard budget's moment when that came first. */
  private closeMoment(): number {
    const ends = budgetEndsAt(this.store.state.clock);
    return ends === undefined ? this.now : Math.min(this.now, ends);
  }

  private openSegment(): void {
    const at = this.iso();
    const actor = this.actor_;
    this.store.update((s) => { s.clock.segments.push({ start: at, lastBeat: at, ...(actor === 'agent' ? { actor } : {}) }); });
  }

  /** Whether a hard budget is set and the working time has reached it. */
  budgetUsedUp(): boolean {
    const c = this.store.state.clock;
    return Boolean(c.budgetHard && c.budgetMs && this.workingMs() >= c.budgetMs);
  }

  private assertBudgetLeft(action: string): void {
    const c = this.store.state.clock;
    if (this.budgetUsedUp() && c.budgetMs) {
      throw new ExpBenchError('SESSION_INVALID', this.store.file, `cannot ${action} the clock: the time budget of ${formatWorking(c.budgetMs)} is used up`);
    }
  }

  private assertOpen(action: string): void {
    const s = this.store.state;
    if (s.submitted || s.gaveUp) {
      throw new ExpBenchError('SESSION_INVALID', this.store.file, `cannot ${action} the clock: the session was ${s.submitted ? 'submitted' : 'given up'}`);
    }
  }
}
