import { promises as fsp } from 'node:fs';
import { isoToNs } from './container-io';
import type { LogLine } from './logs';

/**
 * How far before the last stored line the engine's log is read again after a reload, ms. A line's
 * stored time is when the watcher received it (host clock, ms precision); the engine's own time for
 * it is a little earlier, so the two cannot be compared line by line: lines in this window are
 * matched by their text instead ({@link ReplayFilter}).
 */
export const REPLAY_WINDOW_MS = 1000;

type Stream = LogLine['stream'];

/**
 * Drops, from the engine's log read again from {@link REPLAY_WINDOW_MS} before the last stored
 * line, the lines the dead watcher had already stored. Per stream, the stored lines form a prefix
 * of the stream and the last one lies inside the window, so the already-stored lines are the
 * longest prefix of the replayed window that equals a suffix of the stored lines (stored lines
 * from twice the window, so that a stored line whose engine time is just inside the window is
 * still among them). Lines are held back until that prefix is decided.
 */
export class ReplayFilter {
  private readonly pending: Record<Stream, LogLine[]> = { stdout: [], stderr: [] };
  private decided: Record<Stream, boolean> = { stdout: false, stderr: false };

  /**
   * @param stored per stream, the texts of the stored lines received within 2 × the window before the last one
   * @param emit receives the lines to keep, in order
   */
  constructor(private readonly stored: Record<Stream, string[]>, private readonly emit: (l: LogLine) => void) {}

  /** One replayed line (in the engine's order). */
  add(line: LogLine): void {
    if (this.decided[line.stream]) { this.emit(line); return; }
    const p = this.pending[line.stream];
    p.push(line);
    // Still a possible prefix of the overlap: wait (the overlap cannot be longer than the stored tail).
    if (p.length <= this.stored[line.stream].length) return;
    this.decide(line.stream);
  }

  /** The replay ended: decides what is still held back. */
  end(): void {
    this.decide('stdout');
    this.decide('stderr');
  }

  private decide(stream: Stream): void {
    if (this.decided[stream]) return;
    this.decided[stream] = true;
    const p = this.pending[stream];
    const s = this.stored[stream];
    let skip = 0;
    for (let j = Math.min(p.length, s.length); j > 0; j--) {
      let same = true;
      for (let i = 0; i < j && same; i++) same = p[i].text === s[s.length - j + i];
      if (same) { skip = j; break; }
    }
    for (const l of p.slice(skip)) this.emit(l);
    this.pending[stream] = [];
  }
}

/**
 * From a run's stored logs (`<ISO time> <text>` lines; see RunLogs): the time of the last stored
 * line (ns since the epoch) and, per stream, the texts of the lines stored within
 * 2 × {@link REPLAY_WINDOW_MS} before it. Undefined when nothing is stored yet.
 */
export async function storedTail(files: Record<Stream, string>): Promise<{ lastNs: bigint; stored: Record<Stream, string[]> } | undefined> {
  const parsed: Record<Stream, Array<{ ns: bigint; text: string }>> = { stdout: [], stderr: [] };
  for (const stream of ['stdout', 'stderr'] as const) {
    const text = await fsp.readFile(files[stream], 'utf8').catch(() => '');
    for (const line of text.split('\n')) {
      const m = /^(\d{4}-\d\d-\d\dT\S+Z) (.*)$/s.exec(line);
      if (m) parsed[stream].push({ ns: isoToNs(m[1]), text: m[2] });
    }
  }
  const all = [...parsed.stdout, ...parsed.stderr];
  if (all.length === 0) return undefined;
  const lastNs = all.reduce((a, l) => (l.ns > a ? l.ns : a), all[0].ns);
  const from = lastNs - BigInt(2 * REPLAY_WINDOW_MS) * 1_000_000n;
  return {
    lastNs,
    stored: {
      stdout: parsed.stdout.filter((l) => l.ns >= from).map((l) => l.text),
      stderr: parsed.stderr.filter((l) => l.ns >= from).map((l) => l.text),
    },
  };
}
