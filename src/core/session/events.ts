import { ExpBenchError } from '../errors';
import { errorMessage } from '../util/errors';
import { Emitter, type Event } from '../util/emitter';
import { JsonLinesWriter, readLines } from '../util/jsonl';
import { SerialChain } from '../util/serial';
import { EVENTS_VERSION, parseLine, SessionEventSchema, type EventLine, type NewSessionEvent, type SessionEvent } from '../steps/events';
import { type SessionOwnership, takenOver } from './owner';

export { EVENTS_VERSION, MAX_DIFF_CHARS, MAX_EXCERPT_CHARS, SessionEventSchema, excerpt } from '../steps/events';
export type { EventLine, NewSessionEvent, SessionEvent, SessionEventType } from '../steps/events';
/** Where events go: an {@link EventLog}, or a session service's handle (`SessionHandle.events`). */
export interface EventSink {
  append(event: NewSessionEvent): Promise<SessionEvent>;
}

/**
 * Appends events to a session's events.jsonl ({@link JsonLinesWriter}: `O_APPEND`, every byte of
 * the line written, `fsync` after each), appends serialised within the process. A torn last line left by a crash is isolated (the
 * next event starts on a new line), so it never spoils a good event. With an `owner` (see owner.ts),
 * each append first checks that this process still owns the session; a superseded owner appends nothing.
 */
export class EventLog implements EventSink {
  private readonly serial = new SerialChain();
  private readonly writer: JsonLinesWriter;
  private readonly appended = new Emitter<SessionEvent>('session');

  constructor(readonly file: string, private readonly now: () => number = Date.now, private readonly owner?: SessionOwnership) {
    this.writer = new JsonLinesWriter(file);
  }

  /**
   * Stamps `event` with `v` and `at`, validates it and appends it durably.
   * @throws ExpBenchError `BAD_INPUT` when the event fails the schema (nothing is written);
   *   `SESSION_INVALID` when another owner took the session over (nothing is written).
   */
  append(event: NewSessionEvent): Promise<SessionEvent> {
    if (this.owner && !this.owner.owned) return Promise.reject(takenOver(this.file, this.owner));
    const parsed = SessionEventSchema.safeParse({ v: EVENTS_VERSION, at: new Date(this.now()).toISOString(), ...event });
    if (!parsed.success) return Promise.reject(new ExpBenchError('BAD_INPUT', `${this.file} (${event.type})`, `invalid event: ${parsed.error.message}`));
    return this.serial.run(async () => {
      if (this.owner && !(await this.owner.check())) throw takenOver(this.file, this.owner);
      await this.writer.append([parsed.data]);
      this.appended.fire(parsed.data);
      return parsed.data;
    });
  }

  /** Called after each event is on disk (a listener that throws is logged; the append still succeeds). */
  readonly onDidAppend: Event<SessionEvent> = this.appended.event;

  /** Resolves when every append made so far has finished (successfully or not). */
  settled(): Promise<void> { return this.serial.settled(); }
}

/**
 * Streams the lines of an events file from byte `fromOffset` (default 0), without loading it whole.
 * `line` counts from 1 at `fromOffset`; `offset` is the line's first byte. A last line without
 * its newline is reported as `torn` (a writer died mid-line, or is writing it now) and not parsed:
 * a tailer resumes at its `offset`. A missing file yields nothing.
 */
export async function* streamEvents(file: string, fromOffset = 0): AsyncGenerator<EventLine> {
  try {
    for await (const l of readLines(file, { fromOffset })) {
      yield l.kind === 'torn' ? { kind: 'torn', line: l.line, offset: l.offset, text: l.text } : parseLine(l.text, l.line, l.offset);
    }
  } catch (e) {
    throw new ExpBenchError('SESSION_INVALID', file, `cannot read events: ${errorMessage(e)}`, { cause: e });
  }
}

/** Reads a whole events file: the events, the invalid lines, the torn last line if any. */
export async function readEvents(file: string): Promise<{ events: SessionEvent[]; invalid: Extract<EventLine, { kind: 'invalid' }>[]; torn?: Extract<EventLine, { kind: 'torn' }> }> {
  const out: Awaited<ReturnType<typeof readEvents>> = { events: [], invalid: [] };
  for await (const l of streamEvents(file)) {
    if (l.kind === 'event') out.events.push(l.event);
    else if (l.kind === 'invalid') out.invalid.push(l);
    else out.torn = l;
  }
  return out;
}

