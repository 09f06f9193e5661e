import { ExpBenchError } from '../errors';
import { log } from '../log';
import { SessionClock } from './clock';
import { EventLog, readEvents } from './events';
import { missingOutcome } from './outcome';
import type { SessionLayout } from '../layout';
import { DesignDraft, DesignDraftSchema, isFinished, Note, Phase, PhaseSchema, type SessionState } from './state';
import { SessionOwnership } from './owner';
import { SessionStore } from './store';
import { errorMessage } from '../util/errors';
import { schedulerJobOf, type SchedulerJob } from '../placement/slurm/env';
import { assertTextWithin, jsonLength, LIMITS } from '../untrusted';

const logger = log('session');

export interface OpenSessionOptions {
  /** Who opens it, recorded in `session.opened` (`vscode`, `cli`, …). */
  client: string;
  /** Task id `<conference>/<paperId>/<index>`, recorded in `session.opened` when given. */
  taskId?: string;
  /** Time source, ms since the epoch (tests); default `Date.now`. */
  now?: () => number;
  /** Autosave delay, ms (see SessionStoreOptions.delayMs). */
  delayMs?: number;
  /** Budget (ms) for a new session; ignored when the state exists. */
  budgetMs?: number | null;
  /** Quiet time after the last draft change before `answers.saved` is recorded, ms (default 2000). */
  draftQuietMs?: number;
  /** Resume a clock that was running when the previous owner went away (default true). */
  resumeClock?: boolean;
  /** The scheduler's job this process runs in, recorded in `session.opened`; default the environment's ({@link schedulerJobOf}); null: none. */
  job?: SchedulerJob | null;
}

/** The `job` field of `session.opened` for `opts`: the given one, else the environment's (a Slurm job), else none. */
export function openedJob(opts: Pick<OpenSessionOptions, 'job'>): { job?: SchedulerJob } {
  const job = opts.job === undefined ? schedulerJobOf() : opts.job;
  return job ? { job } : {};
}

/**
 * A session opened by the process that owns it (the extension, or the CLI when it submits):
 * the state store, the event log and the clock, plus the edits the phase editors make.
 * `open` takes the session over (private/owner.json, see owner.ts: the newest opener wins and an
 * older owner, e.g. a killed window's extension host that still runs, stops writing), restores the
 * state, settles the clock after a crash (see clock.ts) and records `session.opened`.
 */
export class Session {
  readonly clock: SessionClock;
  private draftTimer: NodeJS.Timeout | undefined;
  private draftDirty: { design?: true; conclusion?: true } = {};
  private readonly draftQuietMs: number;

  private constructor(readonly layout: SessionLayout, readonly store: SessionStore, readonly events: EventLog,
    readonly ownership: SessionOwnership, opts: OpenSessionOptions) {
    this.clock = new SessionClock(store, events);
    this.draftQuietMs = opts.draftQuietMs ?? 2000;
  }

  /**
   * @throws ExpBenchError `SESSION_INVALID` when state.json is corrupt (see SessionStore.open);
   *   the file system error when private/owner.json cannot be written.
   */
  static async open(layout: SessionLayout, opts: OpenSessionOptions): Promise<Session> {
    const now = opts.now ?? Date.now;
    // Claim first, then read: a stale owner's write that lands after this claim is refused by its own check.
    const owner = await SessionOwnership.claim(layout.owner, { client: opts.client, now });
    const store = await SessionStore.open(layout.state, { now, delayMs: opts.delayMs, budgetMs: opts.budgetMs, owner });
    const events = new EventLog(layout.events, now, owner);
    const session = new Session(layout, store, events, owner, opts);
    const restored = store.state.clock.segments.length > 0 || store.state.notes.length > 0 || store.state.phase !== 'design';
    await events.append({ type: 'session.opened', client: opts.client, restored, ...(opts.taskId ? { taskId: opts.taskId } : {}), ...openedJob(opts) });
    // A submission or give-up whose process stopped between state.json and its event is completed here.
    if (isFinished(store.state)) {
      const missing = await missingOutcome(layout, store.state, (await readEvents(layout.events)).events);
      if (missing) {
        logger.warn(`${layout.root}: the ${String(missing.type)} event was missing (its process stopped midway); recorded now`);
        await events.append(missing as Parameters<EventLog['append']>[0]);
      }
    }
    await session.clock.restore({ resume: opts.resumeClock ?? true });
    return session;
  }

  /** Whether a finished `state` lacks its `submitted`/`gave_up` event in the session's log (see {@link missingOutcome}). */
  static async missingOutcomeEvent(layout: SessionLayout, state: SessionState): Promise<boolean> {
    if (!isFinished(state)) return false;
    const { events } = await readEvents(layout.events).catch(() => ({ events: [] }));
    return (await missingOutcome(layout, state, events)) !== undefined;
  }

  get state() { return this.store.state; }

  /** False once another process or window took the session over: its changes are then refused. */
  get owned(): boolean { return this.ownership.owned; }

  /**
   * Moves to `phase` (free movement between phases); records `phase.changed`.
   * @throws ExpBenchError `SESSION_INVALID` once submitted or given up (a `phase.changed` after
   *   Submit would change the per-phase record of a submitted result)
   */
  async setPhase(phase: Phase): Promise<void> {
    const to = PhaseSchema.parse(phase);
    this.assertEditable('phase');
    const from = this.store.state.phase;
    if (from === to) return;
    this.store.update((s) => { s.phase = to; });
    this.touch();
    await this.recordDrafts();
    await this.events.append({ type: 'phase.changed', from, to });
  }

  /**
   * Adds a timestamped note (any time until the session is submitted or given up: the notes are
   * frozen with the answers, so that what a view shows never drifts from state.json).
   * @throws ExpBenchError `BAD_INPUT` for an empty note, one over LIMITS.noteChars, or one that would
   *   take the notes together over LIMITS.notesTotalChars (src/core/untrusted);
   *   `SESSION_INVALID` once submitted or given up.
   */
  async addNote(text: string): Promise<Note> {
    if (!text.trim()) throw new ExpBenchError('BAD_INPUT', 'note', 'a note needs some text');
    assertTextWithin('note', 'the note', text, LIMITS.noteChars);
    this.assertEditable('notes');
    const note = { at: new Date(this.store.now()).toISOString(), text };
    const total = jsonLength(this.store.state.notes) + 1 + jsonLength(note);
    if (total > LIMITS.notesTotalChars) {
      throw new ExpBenchError('BAD_INPUT', 'note',
        `the notes together would be ${total.toLocaleString('en-US')} characters (as JSON), over the limit of ${LIMITS.notesTotalChars.toLocaleString('en-US')} for all the notes of a session; this note was not added (the ${this.store.state.notes.length.toLocaleString('en-US')} notes so far are kept): put long text in a file of the workspace instead`);
    }
    this.store.update((s) => { s.notes.push(note); });
    this.touch();
    await this.events.append({ type: 'note.added', text });
    return note;
  }

  /**
   * Replaces the design draft.
   * @throws ExpBenchError `BAD_INPUT` over LIMITS.designChars (src/core/untrusted); `SESSION_INVALID` once submitted or given up.
   */
  setDesign(design: DesignDraft): void {
    const d = DesignDraftSchema.parse(design);
    assertTextWithin('design', 'the design draft', d, LIMITS.designChars);
    this.assertEditable('design');
    this.store.update((s) => { s.design = d; });
    this.touch();
    this.draftChanged('design');
  }

  /**
   * Replaces the conclusion draft.
   * @throws ExpBenchError `BAD_INPUT` over LIMITS.conclusionChars (src/core/untrusted); `SESSION_INVALID` once submitted or given up.
   */
  setConclusion(text: string): void {
    assertTextWithin('conclusion', 'the conclusion', text, LIMITS.conclusionChars);
    this.assertEditable('conclusion');
    this.store.update((s) => { s.conclusion = text; });
    this.touch();
    this.draftChanged('conclusion');
  }

  /** Records `answers.saved` for drafts changed since the last one (normally after a quiet time). */
  async recordDrafts(): Promise<void> {
    if (this.draftTimer) { clearTimeout(this.draftTimer); this.draftTimer = undefined; }
    const dirty = this.draftDirty;
    this.draftDirty = {};
    if (!dirty.design && !dirty.conclusion) return;
    const s = this.store.state;
    await this.events.append({
      type: 'answers.saved',
      ...(dirty.design ? { design: s.design } : {}),
      ...(dirty.conclusion ? { conclusion: s.conclusion } : {}),
    });
  }

  /** Records pending drafts, suspends a running clock and writes the state. Safe to call twice. */
  async close(): Promise<void> {
    if (this.draftTimer) { clearTimeout(this.draftTimer); this.draftTimer = undefined; }
    try {
      if (this.ownership.owned) {
        await this.recordDrafts();
        await this.clock.suspend();
      }
    } finally {
      await this.events.settled();
      await this.store.close();
    }
  }

  /**
   * Work just happened: a running clock's heartbeat moves to now, so that a window killed right
   * after it loses no counted time (see clock.ts). Written with the change that caused it.
   */
  touch(): void {
    try { this.clock.heartbeat(); } catch (e) { logger.error(`heartbeat failed: ${errorMessage(e)}`); }
  }

  private draftChanged(which: 'design' | 'conclusion'): void {
    this.draftDirty[which] = true;
    if (this.draftTimer) clearTimeout(this.draftTimer);
    this.draftTimer = setTimeout(() => {
      this.draftTimer = undefined;
      this.recordDrafts().catch((e) => logger.error(`recording answers.saved failed: ${errorMessage(e)}`));
    }, this.draftQuietMs);
  }

  private assertEditable(what: string): void {
    if (isFinished(this.store.state)) {
      throw new ExpBenchError('SESSION_INVALID', this.layout.root, `cannot change the ${what}: the session was ${this.store.state.submitted ? 'submitted' : 'given up'}`);
    }
  }
}
