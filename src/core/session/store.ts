import { promises as fsp } from 'node:fs';
import { isDeepStrictEqual } from 'node:util';
import { ExpBenchError } from '../errors';
import { log } from '../log';
import { Emitter, type Disposable, type Event } from '../util/emitter';
import { readRegularFile, writeJsonAtomic } from '../util/fs';
import { SerialChain } from '../util/serial';
import { type SessionOwnership, takenOver } from './owner';
import { initialState, isFinished, SessionState, SessionStateSchema, STATE_VERSION } from './state';
import { errorMessage } from '../util/errors';

const logger = log('session');

export type { Disposable } from '../util/emitter';

export interface SessionStoreOptions {
  /** Time source, ms since the epoch. Default `Date.now`. */
  now?: () => number;
  /**
   * Delay between the first unsaved change and its write, ms (default 250). A change is on disk
   * at most `delayMs` + two atomic writes after it was made, also while changes keep coming
   * (the write is throttled, not postponed by later changes).
   */
  delayMs?: number;
  /** Budget (ms) for a state created by this call; ignored when the file exists. */
  budgetMs?: number | null;
  /**
   * Single-writer token (see owner.ts): checked before every write; once another owner took the
   * session over, nothing more is written and {@link SessionStore.update} throws.
   */
  owner?: SessionOwnership;
}

/**
 * The session state on disk (`private/state.json`) and in memory. One process owns a session's
 * store at a time (the extension, or the CLI when the extension is not running it).
 *
 * - {@link SessionStore.open} restores the state exactly as last written, or creates it.
 * - {@link update} applies a change in memory at once and writes it atomically
 *   (util/fs `writeAtomic`: every byte to a temp file, fsync, rename, fsync of the folder) within
 *   {@link SessionStoreOptions.delayMs}; on a full disk the old file stays whole and the write is retried.
 * - A failed write keeps the change in memory and retries; {@link flush} reports the failure.
 * - A corrupt state.json is never reset: `open` copies it to `state.json.corrupt-<time>` and throws.
 */
export class SessionStore implements Disposable {
  private current: SessionState;
  private dirty = false;
  private timer: NodeJS.Timeout | undefined;
  private readonly serial = new SerialChain();
  private disposed = false;
  private readonly changed = new Emitter<SessionState>('session');
  readonly now: () => number;
  private readonly delayMs: number;
  private readonly owner: SessionOwnership | undefined;

  private constructor(readonly file: string, state: SessionState, opts: SessionStoreOptions) {
    this.current = deepFreeze(state);
    this.now = opts.now ?? Date.now;
    this.delayMs = opts.delayMs ?? 250;
    this.owner = opts.owner;
  }

  /** False once another owner took the session over (see {@link SessionStoreOptions.owner}). */
  get owned(): boolean { return this.owner?.owned ?? true; }

  /**
   * Loads `file` (a session's `private/state.json`), or creates it with {@link initialState}
   * when absent (written before this returns).
   * @throws ExpBenchError `SESSION_INVALID` naming `file` when it is not valid JSON, fails the
   *   schema or has another version; a copy is kept at `<file>.corrupt-<time>` and `file` is left as it was.
   */
  static async open(file: string, opts: SessionStoreOptions = {}): Promise<SessionStore> {
    let text: string | undefined;
    try {
      text = (await readRegularFile(file))?.toString('utf8');
    } catch (e: any) {
      throw new ExpBenchError('SESSION_INVALID', file, `cannot read the session state: ${errorMessage(e).replace(`${file}: `, '')}`, { cause: e });
    }
    if (text === undefined) {
      const store = new SessionStore(file, initialState((opts.now ?? Date.now)(), opts.budgetMs ?? null), opts);
      await writeJsonAtomic(file, store.current);
      return store;
    }
    return new SessionStore(file, await parseState(file, text, opts.now ?? Date.now), opts);
  }

  /** The current state (frozen: change it only through {@link update}). */
  get state(): SessionState { return this.current; }

  /**
   * Applies `mutator` to a copy of the state, validates the result, makes it current and
   * schedules the write. Returns the new state. Once the state is submitted or given up, what was
   * frozen with it ({@link FROZEN_FIELDS}: the answers, the notes, the outcome, the working time's
   * segments) can no longer change, whoever calls (the freeze lives here, in the store that writes
   * the file, not only in `Session`).
   * @throws ExpBenchError `SESSION_INVALID` when the result fails the schema or changes a frozen
   *   field (the state is unchanged), when the store was disposed, or when another owner took the
   *   session over.
   */
  update(mutator: (draft: SessionState) => void): SessionState {
    if (this.disposed) throw new ExpBenchError('SESSION_INVALID', this.file, 'the session store is closed');
    if (!this.owned) throw takenOver(this.file, this.owner);
    const draft = structuredClone(this.current) as SessionState;
    mutator(draft);
    draft.updatedAt = new Date(this.now()).toISOString();
    if (isFinished(this.current)) {
      const changed = FROZEN_FIELDS.filter((k) => !isDeepStrictEqual(frozenPart(this.current, k), frozenPart(draft, k)));
      if (changed.length) {
        const s = this.current;
        throw new ExpBenchError('SESSION_INVALID', this.file,
          `rejected change of ${changed.join(', ')}: the session was ${s.submitted ? 'submitted' : 'given up'} at ${(s.submitted ?? s.gaveUp)!.at}, and what was frozen with it does not change`);
      }
    }
    const checked = SessionStateSchema.safeParse(draft);
    if (!checked.success) throw new ExpBenchError('SESSION_INVALID', this.file, `rejected change: ${checked.error.message}`);
    this.current = deepFreeze(checked.data);
    this.schedule();
    this.changed.fire(this.current);
    return this.current;
  }

  /** Calls `listener` after every change (with the new state); a listener that throws is logged. */
  readonly onDidChange: Event<SessionState> = this.changed.event;

  /** Writes any pending change now. Rejects when the write fails (the change stays pending). */
  async flush(): Promise<void> {
    if (this.timer) { clearTimeout(this.timer); this.timer = undefined; }
    await this.write();
  }

  /** Flushes and closes; later updates throw. Safe to call twice. */
  async close(): Promise<void> {
    if (this.disposed) return;
    await this.flush();
    this.disposed = true;
    this.changed.dispose();
  }

  /** Like {@link close}, for `Disposable` owners; a failed final write is logged. */
  dispose(): void {
    void this.close().catch((e) => logger.error(`final write of ${this.file} failed: ${errorMessage(e)}`));
  }

  private schedule(): void {
    this.dirty = true;
    if (this.timer) return;
    this.timer = setTimeout(() => {
      this.timer = undefined;
      this.write().catch((e) => {
        logger.error(`writing ${this.file} failed, retrying: ${errorMessage(e)}`);
        if (!this.disposed) this.schedule();
      });
    }, this.delayMs);
  }

  /** Serialised writes: each writes the state current when it starts. */
  private write(): Promise<void> {
    const run = async () => {
      if (!this.dirty) return;
      if (this.owner && !(await this.owner.check())) {
        this.dirty = false;
        logger.warn(`${this.file}: not written: the session was taken over by another window; the change made here is refused`);
        return;
      }
      this.dirty = false;
      try {
        await writeJsonAtomic(this.file, this.current);
      } catch (e) {
        this.dirty = true;
        throw e;
      }
    };
    return this.serial.run(run);
  }
}

/** Parses the text of a state.json: the state, or why it is not one. */
export function validateState(text: string): { state: SessionState } | { problem: string } {
  let raw: unknown;
  try { raw = JSON.parse(text); } catch (e: any) { return { problem: `it is not valid JSON (${errorMessage(e)})` }; }
  if (raw && typeof raw === 'object' && 'version' in raw && (raw as { version: unknown }).version !== STATE_VERSION) {
    return { problem: `state version ${JSON.stringify((raw as { version: unknown }).version)} is not supported (expected ${STATE_VERSION})` };
  }
  const parsed = SessionStateSchema.safeParse(raw);
  if (parsed.success) return { state: parsed.data };
  return { problem: `it does not match the session state schema: ${parsed.error.issues.slice(0, 3).map((i) => `${i.path.join('.') || '(root)'}: ${i.message}`).join('; ')}` };
}

/**
 * Reads a state.json without taking the session over (no file is created or copied).
 * @returns undefined when the file does not exist
 * @throws ExpBenchError `SESSION_INVALID` naming `file` when it is not a valid state
 */
export async function readState(file: string): Promise<SessionState | undefined> {
  let buf: Buffer | undefined;
  try { buf = await readRegularFile(file); } catch (e: any) {
    throw new ExpBenchError('SESSION_INVALID', file, `cannot read the session state: ${errorMessage(e).replace(`${file}: `, '')}`, { cause: e });
  }
  if (buf === undefined) return undefined;
  const v = validateState(buf.toString('utf8'));
  if ('problem' in v) {
    throw new ExpBenchError('SESSION_INVALID', file,
      `not a valid session state: ${v.problem}; nothing was changed: repair the file, or move it away (\`mv '${file}' '${file}.bad'\`) to start a new state`);
  }
  return v.state;
}

async function parseState(file: string, text: string, now: () => number): Promise<SessionState> {
  const v = validateState(text);
  if ('state' in v) return v.state;
  const problem = v.problem;
  const backup = `${file}.corrupt-${new Date(now()).toISOString().replace(/[:.]/g, '-')}`;
  await fsp.copyFile(file, backup);
  throw new ExpBenchError('SESSION_INVALID', file,
    `cannot restore the session: ${problem}. The file was left as it is and a copy kept at ${backup}; repair it, or move it away to start a new state.`);
}

/**
 * What a submission or give-up freezes in the state: the design and conclusion, the notes, the
 * outcome itself, and the clock's segments (the working time recorded).
 */
export const FROZEN_FIELDS = ['design', 'conclusion', 'notes', 'submitted', 'gaveUp', 'clock.segments'] as const;

function frozenPart(s: SessionState, k: (typeof FROZEN_FIELDS)[number]): unknown {
  return k === 'clock.segments' ? s.clock.segments : s[k];
}

function deepFreeze<T>(o: T): T {
  if (o && typeof o === 'object' && !Object.isFrozen(o)) {
    Object.freeze(o);
    for (const v of Object.values(o)) deepFreeze(v);
  }
  return o;
}
