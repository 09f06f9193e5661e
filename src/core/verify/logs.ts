import { promises as fsp } from 'node:fs';
import { StringDecoder } from 'node:string_decoder';
import { SerialChain } from '../util/serial';

/** One line of the run's output. */
export interface LogLine {
  stream: 'stdout' | 'stderr';
  /** ISO 8601 time the line was received (or the engine's time when collected after a reload). */
  time: string;
  text: string;
}

/** Default cap on each stored log, bytes (per stream, and for the combined log). */
export const DEFAULT_LOG_CAP_BYTES = 8 * 1024 * 1024;
/** Smallest cap accepted, bytes (room for a head, the cut marker and a tail). */
export const MIN_LOG_CAP_BYTES = 1024;

/** Lines reach the disk at most this long after they arrive, ms (so a reloaded window finds them). */
export const FLUSH_MS = 200;

/** Marker written where a stored log was cut; `lines` and `bytes` count what was left out. */
export function cutMarker(lines: number, bytes: number, capBytes: number): string {
  return `[expbench: ${lines} lines (${bytes} bytes) cut here: stored-log cap of ${capBytes} bytes; the end of the output follows]`;
}

/**
 * One stored log file with a cap: lines `<ISO time> <text>`. The first ¾ of the cap is kept from
 * the start (the head); after that, lines go to a tail buffer of ¼ of the cap that keeps the LAST
 * lines. {@link close} appends the cut marker and the tail. The file never exceeds
 * `capBytes` + the marker line. A failed write (a full disk) never rejects a caller: it is kept
 * in {@link writeError}, and nothing more is written to the file.
 */
class CappedFile {
  private headBytes = 0;
  private readonly headCap: number;
  private readonly tailCap: number;
  private tail: string[] = [];
  private tailBytes = 0;
  private cutLines = 0;
  private cutBytes = 0;
  private pending: string[] = [];
  private readonly writes = new SerialChain();
  private timer: NodeJS.Timeout | undefined;
  /** The first write that failed, if one did. */
  writeError: Error | undefined;

  constructor(readonly file: string, readonly capBytes: number) {
    this.headCap = capBytes - Math.floor(capBytes / 4);
    this.tailCap = Math.floor(capBytes / 4);
  }

  /** Opens for appending; after a reload the head already on disk counts against the cap. */
  async open(): Promise<void> {
    try {
      this.headBytes = (await fsp.stat(this.file)).size;
    } catch {
      await fsp.writeFile(this.file, '');
    }
  }

  get truncated(): boolean { return this.cutLines > 0; }

  add(entry: string): void {
    const n = Buffer.byteLength(entry) + 1;
    if (this.tail.length === 0 && this.headBytes + n <= this.headCap) {
      this.headBytes += n;
      this.pending.push(entry);
      if (this.pending.length >= 256) void this.flush();
      else this.timer ??= setTimeout(() => { this.timer = undefined; void this.flush(); }, FLUSH_MS);
      return;
    }
    this.tail.push(entry);
    this.tailBytes += n;
    while (this.tailBytes > this.tailCap && this.tail.length > 0) {
      const dropped = this.tail.shift() as string;
      const d = Buffer.byteLength(dropped) + 1;
      this.tailBytes -= d;
      this.cutLines += 1;
      this.cutBytes += d;
    }
  }

  /** Writes pending head lines. */
  flush(): Promise<void> {
    if (this.timer) { clearTimeout(this.timer); this.timer = undefined; }
    if (this.pending.length > 0) {
      const chunk = this.pending.join('\n') + '\n';
      this.pending = [];
      void this.writes.run(() => this.append(chunk));
    }
    return this.writes.settled();
  }

  private async append(text: string): Promise<void> {
    if (this.writeError) return;
    try {
      await fsp.appendFile(this.file, text);
    } catch (e) {
      this.writeError = e instanceof Error ? e : new Error(String(e));
    }
  }

  /** Writes the head, then (when cut) the marker and the tail. */
  async close(): Promise<void> {
    await this.flush();
    if (this.tail.length === 0 && this.cutLines === 0) return;
    const marker = this.cutLines > 0 ? [cutMarker(this.cutLines, this.cutBytes, this.capBytes)] : [];
    await this.append([...marker, ...this.tail].join('\n') + '\n');
    this.tail = [];
  }
}

/**
 * The three stored logs of a run (stdout, stderr, combined), each capped, each line prefixed with
 * its ISO time; the combined log tags stderr lines with `[stderr]`.
 */
export class RunLogs {
  private readonly files: Record<'stdout' | 'stderr' | 'combined', CappedFile>;
  /** ISO time of the last line stored (used to resume after a reload). */
  lastTime: string | undefined;

  constructor(paths: { stdout: string; stderr: string; combined: string }, capBytes: number, private readonly onLine?: (l: LogLine) => void) {
    this.files = {
      stdout: new CappedFile(paths.stdout, capBytes),
      stderr: new CappedFile(paths.stderr, capBytes),
      combined: new CappedFile(paths.combined, capBytes),
    };
  }

  async open(): Promise<void> {
    for (const f of Object.values(this.files)) await f.open();
  }

  get truncated(): boolean { return Object.values(this.files).some((f) => f.truncated); }

  /** The first failed write of any of the three files (a full disk), with the file in `path`. */
  get writeError(): (Error & { path?: string }) | undefined {
    const f = Object.values(this.files).find((x) => x.writeError);
    return f ? Object.assign(f.writeError as Error, { path: f.file }) : undefined;
  }

  add(line: LogLine): void {
    this.lastTime = line.time;
    this.files[line.stream].add(`${line.time} ${line.text}`);
    this.files.combined.add(`${line.time} ${line.stream === 'stderr' ? '[stderr] ' : ''}${line.text}`);
    this.onLine?.(line);
  }

  async close(): Promise<void> {
    for (const f of Object.values(this.files)) await f.close();
  }
}

/** A line longer than this (characters) is emitted in pieces, so memory stays bounded. */
export const MAX_LINE_CHARS = 64 * 1024;

/**
 * Splits a byte stream into lines (`\n`, a trailing `\r` dropped), UTF-8 safe across chunks.
 * Call {@link end} for the last line without a newline.
 */
export class LineSplitter {
  private buf = '';
  private readonly decoder = new StringDecoder('utf8');
  constructor(private readonly emit: (text: string) => void) {}
  write(chunk: Buffer): void {
    this.buf += this.decoder.write(chunk);
    let start = 0;
    let nl = this.buf.indexOf('\n');
    while (nl >= 0) {
      this.emit(this.buf.slice(start, nl).replace(/\r$/, ''));
      start = nl + 1;
      nl = this.buf.indexOf('\n', start);
    }
    this.buf = this.buf.slice(start);
    while (this.buf.length > MAX_LINE_CHARS) {
      this.emit(this.buf.slice(0, MAX_LINE_CHARS));
      this.buf = this.buf.slice(MAX_LINE_CHARS);
    }
  }
  end(): void {
    this.buf += this.decoder.end();
    if (this.buf !== '') this.emit(this.buf.replace(/\r$/, ''));
    this.buf = '';
  }
}

/**
 * Text of a stored log without the time prefixes, line for line (line N of the result is line N
 * of the file, so claim locations point into the stored file).
 */
export async function readLogText(file: string): Promise<string> {
  let raw: string;
  try { raw = await fsp.readFile(file, 'utf8'); } catch { return ''; }
  return raw.split('\n').map((l) => l.replace(/^\d{4}-\d\d-\d\dT[\d:.]+Z /, '')).join('\n');
}
