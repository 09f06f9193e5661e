import { CHANNEL_CLIENT } from '../flows/baselineChannel';
import { SessionLayout } from '../layout';
import { clockStatus, workingMs, type ClockStatus } from '../session/clock';
import { readState } from '../session/store';
import { parseLine } from '../steps/events';
import { readLines } from '../util/jsonl';

/**
 * What a campaign reads of one person's session, read only (the host's own `private/` files:
 * state.json and events.jsonl, written by the session service with the host's clock).
 */
export interface SessionFacts {
  /** Whether the session has been prepared (its state exists). */
  prepared: boolean;
  /** Whether the session was served to its person: a `session.opened` of the proctored window's host channel, or an attestation. */
  opened: boolean;
  phase?: string;
  clock: ClockStatus;
  /** Working time by the host's clock, ms (the clock's segments; nothing the window says). */
  workingMs: number;
  /** Start of the first clock segment and the submission or give-up time (ISO), by the host's clock. */
  start?: string;
  end?: string;
  /** Pauses: clock segments ended as `paused`. */
  pauses: number;
  submitted: boolean;
  gaveUp: boolean;
  /** The name or id the person attested under, with the rules (`baseliner.attested`). */
  attestedAs?: string;
  /** The last AI-settings read: `off` as the host read it, and whether AI was allowed. */
  aiOff?: boolean;
  aiAllowed?: boolean;
}

/** Largest events log a campaign's board reads, bytes (a longer log is read up to here; the clock comes from state.json regardless). */
const MAX_EVENTS_BYTES = 64 * 1024 * 1024;

/** {@link SessionFacts} of the session folder `dir` (not prepared: all zero). `now` bounds a running clock's segment. */
export async function readSessionFacts(dir: string, now: number = Date.now()): Promise<SessionFacts> {
  const layout = new SessionLayout(dir);
  const state = await readState(layout.state).catch(() => undefined);
  const f: SessionFacts = { prepared: state !== undefined, opened: false, clock: 'not-started', workingMs: 0, pauses: 0, submitted: false, gaveUp: false };
  if (!state) return f;
  f.phase = state.phase;
  f.clock = clockStatus(state);
  f.workingMs = Math.round(workingMs(state.clock, now));
  f.start = state.clock.segments[0]?.start;
  f.pauses = state.clock.segments.filter((s) => s.endReason === 'paused').length;
  f.submitted = Boolean(state.submitted);
  f.gaveUp = Boolean(state.gaveUp);
  f.end = state.submitted?.at ?? state.gaveUp?.at;
  let n = 0;
  let bytes = 0;
  for await (const l of readLines(layout.events)) {
    if (l.kind === 'torn') break;
    bytes += l.text.length + 1;
    if (bytes > MAX_EVENTS_BYTES) break;
    const e = parseLine(l.text, ++n, l.offset);
    if (e.kind !== 'event') continue;
    const ev = e.event;
    if (ev.type === 'session.opened' && ev.client === CHANNEL_CLIENT) f.opened = true;
    else if (ev.type === 'baseliner.attested') { f.attestedAs = ev.baseliner; f.opened = true; }
    else if (ev.type === 'ai.settings') { f.aiOff = ev.off; f.aiAllowed = ev.allowed; }
  }
  return f;
}
