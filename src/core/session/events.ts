import { createReadStream, promises as fsp } from 'node:fs';
import * as path from 'node:path';
import { z } from 'zod';
import { ExpBenchError } from '../errors';
import { type SessionOwnership, takenOver } from './owner';
import { DesignDraftSchema, PhaseSchema } from './state';

/**
 * The session's trajectory: JSON Lines at `private/events.jsonl`, one event per line, append-only,
 * schema version {@link EVENTS_VERSION}. Documented in docs/events.md (keep the two in step).
 * Every event has `v` (schema version), `at` (ISO 8601 UTC time of recording) and `type`.
 */
export const EVENTS_VERSION = 1;

/** Longest `diff` kept in a `file.edited` event, characters; longer diffs are cut and flagged. */
export const MAX_DIFF_CHARS = 200_000;
/** Longest `outputExcerpt` of a `command.run` event, characters (head and tail kept). */
export const MAX_EXCERPT_CHARS = 4_000;

const Iso = z.string().refine((s) => !Number.isNaN(Date.parse(s)), 'expected an ISO 8601 timestamp');
const base = { v: z.literal(EVENTS_VERSION), at: Iso };
const ev = <T extends string, S extends z.ZodRawShape>(type: T, shape: S) =>
  z.object({ ...base, type: z.literal(type), ...shape });
const ms = z.number().nonnegative();
const exitCode = z.number().int().nullable();
/** Outcome of an injected step (verifier, judge): what it returned, summarised, or why it failed. */
const stepOutcome = { ok: z.boolean(), summary: z.string().optional(), record: z.string().optional(), error: z.string().optional() };

export const SessionEventSchema = z.discriminatedUnion('type', [
  ev('session.opened', { client: z.string(), restored: z.boolean(), taskId: z.string().optional() }),
  ev('phase.changed', { from: PhaseSchema, to: PhaseSchema }),
  ev('clock.started', { workingMs: ms }),
  ev('clock.paused', {
    workingMs: ms, reason: z.string().optional(),
    /** Set when the pause was not made by the user: the window died; time after `effectiveAt` is not counted. */
    interrupted: z.boolean().optional(), effectiveAt: Iso.optional(),
  }),
  ev('clock.resumed', { workingMs: ms, restored: z.boolean().optional() }),
  ev('budget.warning', { level: z.union([z.literal(80), z.literal(100)]), workingMs: ms, budgetMs: ms }),
  ev('file.edited', { path: z.string(), diff: z.string(), diffTruncated: z.boolean().optional() }),
  ev('file.created', { path: z.string() }),
  ev('file.deleted', { path: z.string() }),
  ev('command.run', { command: z.string(), exitCode, durationMs: ms, outputExcerpt: z.string(), cwd: z.string().optional() }),
  ev('script.run', { runId: z.string(), exitCode, durationMs: ms, log: z.string(), error: z.string().optional() }),
  ev('note.added', { text: z.string() }),
  ev('answers.saved', { design: DesignDraftSchema.optional(), conclusion: z.string().optional() }),
  ev('submitted', {
    workingMs: ms, answers: z.string(), design: z.string(), patch: z.string().nullable(),
    patchBytes: z.number().int().nonnegative(), script: z.string().nullable(),
  }),
  ev('gave_up', { workingMs: ms, reason: z.string().optional() }),
  ev('verify.finished', stepOutcome),
  ev('judge.finished', stepOutcome),
]);
export type SessionEvent = z.infer<typeof SessionEventSchema>;
export type SessionEventType = SessionEvent['type'];
type Distribute<E> = E extends unknown ? Omit<E, 'v' | 'at'> : never;
/** An event as given to {@link EventLog.append}: without `v` and `at`, which the log adds. */
export type NewSessionEvent = Distribute<SessionEvent>;

/** Where events go: an {@link EventLog}, or a session service's handle (`SessionHandle.events`). */
export interface EventSink {
  append(event: NewSessionEvent): Promise<SessionEvent>;
}

/**
 * Appends events to a session's events.jsonl: `O_APPEND`, one `write` per line, `fsync` after
 * each, appends serialised within the process. A torn last line left by a crash is isolated (the
 * next event starts on a new line), so it never spoils a good event. With an `owner` (see owner.ts),
 * each append first checks that this process still owns the session; a superseded owner appends nothing.
 */
export class EventLog implements EventSink {
  private chain: Promise<unknown> = Promise.resolve();
  private checkedTail = false;
  private readonly listeners = new Set<(e: SessionEvent) => void>();

  constructor(readonly file: string, private readonly now: () => number = Date.now, private readonly owner?: SessionOwnership) {}

  /**
   * Stamps `event` with `v` and `at`, validates it and appends it durably.
   * @throws ExpBenchError `BAD_INPUT` when the event fails the schema (nothing is written);
   *   `SESSION_INVALID` when another owner took the session over (nothing is written).
   */
  append(event: NewSessionEvent): Promise<SessionEvent> {
    if (this.owner && !this.owner.owned) return Promise.reject(takenOver(this.file, this.owner));
    const parsed = SessionEventSchema.safeParse({ v: EVENTS_VERSION, at: new Date(this.now()).toISOString(), ...event });
    if (!parsed.success) return Promise.reject(new ExpBenchError('BAD_INPUT', `${this.file} (${event.type})`, `invalid event: ${parsed.error.message}`));
    const line = JSON.stringify(parsed.data) + '\n';
    const run = this.chain.catch(() => undefined).then(() => this.write(line)).then(() => {
      for (const l of [...this.listeners]) l(parsed.data);
      return parsed.data;
    });
    this.chain = run;
    return run;
  }

  /** Called after each event is on disk. */
  onDidAppend(listener: (e: SessionEvent) => void): { dispose(): void } {
    this.listeners.add(listener);
    return { dispose: () => { this.listeners.delete(listener); } };
  }

  /** Resolves when every append made so far has finished (successfully or not). */
  async settled(): Promise<void> { await this.chain.catch(() => undefined); }

  private async write(line: string): Promise<void> {
    if (this.owner && !(await this.owner.check())) throw takenOver(this.file, this.owner);
    await fsp.mkdir(path.dirname(this.file), { recursive: true });
    const fh = await fsp.open(this.file, 'a+');
    try {
      let text = line;
      if (!this.checkedTail) {
        const { size } = await fh.stat();
        if (size > 0) {
          const last = Buffer.alloc(1);
          await fh.read(last, 0, 1, size - 1);
          if (last[0] !== 0x0a) text = '\n' + text;
        }
        this.checkedTail = true;
      }
      await fh.write(text);
      await fh.sync();
    } finally {
      await fh.close();
    }
  }
}

/** One line of events.jsonl as read: an event, an invalid line, or a torn (unterminated) last line. */
export type EventLine =
  | { kind: 'event'; line: number; offset: number; event: SessionEvent }
  | { kind: 'invalid'; line: number; offset: number; text: string; error: string }
  | { kind: 'torn'; line: number; offset: number; text: string };

/**
 * Streams the lines of an events file from byte `fromOffset` (default 0), without loading it whole.
 * `line` counts from 1 at `fromOffset`; `offset` is the line's first byte. A last line without
 * its newline is reported as `torn` (a writer died mid-line, or is writing it now) and not parsed:
 * a tailer resumes at its `offset`. A missing file yields nothing.
 */
export async function* streamEvents(file: string, fromOffset = 0): AsyncGenerator<EventLine> {
  let stream;
  try {
    await fsp.access(file);
    stream = createReadStream(file, { start: fromOffset });
  } catch (e: any) {
    if (e?.code === 'ENOENT') return;
    throw new ExpBenchError('SESSION_INVALID', file, `cannot read events: ${e?.message ?? e}`, { cause: e });
  }
  let pending: Buffer = Buffer.alloc(0);
  let offset = fromOffset;
  let line = 0;
  for await (const chunk of stream as AsyncIterable<Buffer>) {
    pending = pending.length ? Buffer.concat([pending, chunk]) : chunk;
    let nl: number;
    while ((nl = pending.indexOf(0x0a)) >= 0) {
      const text = pending.subarray(0, nl).toString('utf8');
      line++;
      if (text.trim() !== '') yield parseLine(text, line, offset);
      offset += nl + 1;
      pending = pending.subarray(nl + 1);
    }
  }
  if (pending.length) yield { kind: 'torn', line: line + 1, offset, text: pending.toString('utf8') };
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

function parseLine(text: string, line: number, offset: number): EventLine {
  let raw: unknown;
  try { raw = JSON.parse(text); } catch (e: any) {
    return { kind: 'invalid', line, offset, text, error: `not JSON: ${e?.message ?? e}` };
  }
  const parsed = SessionEventSchema.safeParse(raw);
  if (parsed.success) return { kind: 'event', line, offset, event: parsed.data };
  return { kind: 'invalid', line, offset, text, error: parsed.error.issues.slice(0, 3).map((i) => `${i.path.join('.') || '(root)'}: ${i.message}`).join('; ') };
}

/** `text` cut to `max` characters: the first quarter and the last three quarters, with a marker between. */
export function excerpt(text: string, max = MAX_EXCERPT_CHARS): string {
  if (text.length <= max) return text;
  const head = Math.floor(max / 4);
  const tail = max - head;
  return `${text.slice(0, head)}\n… [${text.length - max} characters omitted] …\n${text.slice(text.length - tail)}`;
}
