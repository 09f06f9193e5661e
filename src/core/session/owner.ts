import { randomUUID } from 'node:crypto';
import { ExpBenchError } from '../errors';
import { log } from '../log';
import { Emitter, type Event } from '../util/emitter';
import { readRegularFile, writeJsonAtomic } from '../util/fs';

const logger = log('session');

/** Contents of a session's `private/owner.json`: who may write the session's private files now. */
export interface OwnerRecord {
  /** Random id of the owning {@link SessionOwnership} (one per opened Session). */
  ownerId: string;
  /** Process id of the owner (diagnostics only; a pid is not unique across machines). */
  pid: number;
  /** Who opened it (`vscode`, `cli`, …). */
  client: string;
  /** When the owner took the session over, ISO 8601 UTC. */
  openedAt: string;
}

/**
 * Single-writer token of a session. Opening a session writes `private/owner.json` atomically with a
 * fresh `ownerId`: the newest opener wins. Before each write of state.json or events.jsonl the
 * writer calls {@link check}, which reads the small file (about 150 bytes) and compares the id.
 * Once another owner has taken over, this ownership is lost for good (`check` stays false) and
 * the listeners of {@link onDidLose} are called once. A missing or unreadable owner.json is not a
 * takeover (the writer keeps its session; a warning is logged once).
 */
export class SessionOwnership {
  private lostTo: OwnerRecord | undefined;
  private warnedMissing = false;
  private readonly lost = new Emitter<OwnerRecord>('session');

  private constructor(readonly file: string, readonly record: OwnerRecord) {}

  /**
   * Takes the session over: writes `file` (a session's `private/owner.json`) atomically.
   * @throws the file system error when the file cannot be written
   */
  static async claim(file: string, opts: { client: string; now?: () => number }): Promise<SessionOwnership> {
    const record: OwnerRecord = { ownerId: randomUUID(), pid: process.pid, client: opts.client, openedAt: new Date((opts.now ?? Date.now)()).toISOString() };
    await writeJsonAtomic(file, record);
    return new SessionOwnership(file, record);
  }

  /** True until another owner took the session over (known from the last {@link check}). */
  get owned(): boolean { return this.lostTo === undefined; }

  /** The owner that took over, once lost. */
  get supersededBy(): OwnerRecord | undefined { return this.lostTo; }

  /** Reads owner.json: true while this is still the owner. Never throws. */
  async check(): Promise<boolean> {
    if (this.lostTo) return false;
    let current: Partial<OwnerRecord> | undefined;
    try {
      const buf = await readRegularFile(this.file);
      if (buf === undefined) throw Object.assign(new Error('no such file'), { code: 'ENOENT' });
      current = JSON.parse(buf.toString('utf8')) as Partial<OwnerRecord>;
    } catch (e: any) {
      if (!this.warnedMissing) {
        this.warnedMissing = true;
        logger.warn(`${this.file}: cannot read the session owner (${e?.code ?? e?.message ?? e}); this window keeps writing the session`);
      }
      return true;
    }
    if (!current || typeof current.ownerId !== 'string' || current.ownerId === this.record.ownerId) return true;
    this.lostTo = { ownerId: current.ownerId, pid: Number(current.pid ?? 0), client: String(current.client ?? '?'), openedAt: String(current.openedAt ?? '?') };
    logger.warn(`${this.file}: the session was taken over by ${this.lostTo.client} (pid ${this.lostTo.pid}, opened ${this.lostTo.openedAt}); `
      + `this owner (pid ${this.record.pid}, opened ${this.record.openedAt}) stops writing it, and its later changes are refused`);
    this.lost.fire(this.lostTo);
    return false;
  }

  /** Called once when the ownership is found lost (with the new owner); a listener that throws is logged. */
  readonly onDidLose: Event<OwnerRecord> = this.lost.event;
}

/** The error for a change made by an owner that was superseded. */
export function takenOver(file: string, owner: SessionOwnership | undefined): ExpBenchError {
  const by = owner?.supersededBy;
  return new ExpBenchError('SESSION_INVALID', file,
    `change refused: another window or command${by ? ` (${by.client}, pid ${by.pid}, opened ${by.openedAt})` : ''} took this session over; only the newest opener writes it, and nothing more was written here. `
    + 'Reload this window or close it; from the command line, run the command again once the other has finished.');
}
