import { constants as fsc, promises as fsp } from 'node:fs';
import * as path from 'node:path';
import { ExpBenchError } from '../errors';
import { errorMessage } from './errors';
import { fileError, kindOf, notAFile, openRegular } from './fs';
import { SerialChain } from './serial';

/**
 * JSON Lines (one JSON value per line, `\n`-terminated), read and written in one way for the
 * whole core: the session's events.jsonl, the LLM answer cache's journal, paper lists, Docker's
 * event stream.
 *
 * Reading: lines are split on the byte `\n` (safe in UTF-8) and decoded one by one, so a file is
 * never loaded whole. `line` is 1-based and counts every line from the start position, blank ones
 * included; `offset` is the byte at which the line starts. Blank lines (only whitespace) keep
 * their number and are not yielded. Bytes after the last `\n` are a torn line: a writer died in
 * the middle of it, or is writing it now. It is reported (`kind: 'torn'`) and not parsed, so a
 * tailer can resume at its `offset`; files written by hand, which often end without a newline,
 * pass `parseTorn`.
 */

/** A line as split: a complete line, or the torn (unterminated) last line. */
export interface RawLine {
  kind: 'line' | 'torn';
  /** 1-based line number, counted from the start position. */
  line: number;
  /** Byte offset of the line's first byte in the file or stream. */
  offset: number;
  /** The line decoded as UTF-8, without its `\n`. */
  text: string;
}

/** A line as parsed: a JSON value, a line that is not JSON (with the parser's message), or the torn last line. */
export type JsonLine<T = unknown> =
  | { kind: 'value'; line: number; offset: number; text: string; value: T }
  | { kind: 'invalid'; line: number; offset: number; text: string; error: string }
  | { kind: 'torn'; line: number; offset: number; text: string };

/** Where splitting starts: the byte offset of the first byte given, and the number of lines before it. */
export interface LineStart {
  /** Byte offset of the first byte (default 0). */
  offset?: number;
  /** Lines already counted before it (default 0): the first line yielded is at least `line + 1`. */
  line?: number;
}

const NOT_BLANK = /\S/;

/** Splits bytes into lines across chunk boundaries; holds the unterminated tail until the next chunk. */
class LineSplitter {
  private tail: Buffer[] = [];
  private tailBytes = 0;
  private offset: number;
  private line: number;

  constructor(start: LineStart = {}) {
    this.offset = start.offset ?? 0;
    this.line = start.line ?? 0;
  }

  /** The complete lines that `chunk` ends, in order (blank ones counted, not returned). */
  push(chunk: Buffer): RawLine[] {
    const out: RawLine[] = [];
    let from = 0;
    let nl: number;
    while ((nl = chunk.indexOf(0x0a, from)) >= 0) {
      let bytes = chunk.subarray(from, nl);
      if (this.tailBytes > 0) {
        bytes = Buffer.concat([...this.tail, bytes]);
        this.tail = [];
        this.tailBytes = 0;
      }
      this.line++;
      const text = bytes.toString('utf8');
      if (NOT_BLANK.test(text)) out.push({ kind: 'line', line: this.line, offset: this.offset, text });
      this.offset += bytes.length + 1;
      from = nl + 1;
    }
    if (from < chunk.length) {
      this.tail.push(chunk.subarray(from));
      this.tailBytes += chunk.length - from;
    }
    return out;
  }

  /** The torn last line, when bytes follow the last `\n`. */
  end(): RawLine | undefined {
    if (this.tailBytes === 0) return undefined;
    return { kind: 'torn', line: this.line + 1, offset: this.offset, text: Buffer.concat(this.tail).toString('utf8') };
  }
}

const toBuffer = (c: Uint8Array | string): Buffer => (typeof c === 'string' ? Buffer.from(c, 'utf8') : Buffer.isBuffer(c) ? c : Buffer.from(c.buffer, c.byteOffset, c.byteLength));

/** The lines of text already in memory (offsets in UTF-8 bytes), the torn last line included. */
export function splitLines(data: string | Uint8Array, start?: LineStart): RawLine[] {
  const s = new LineSplitter(start);
  const out = s.push(toBuffer(data));
  const torn = s.end();
  if (torn) out.push(torn);
  return out;
}

/** The lines of a stream of chunks (a file, a Docker response), as they complete; the torn last line at the end. */
export async function* streamLines(source: AsyncIterable<Uint8Array | string>, start?: LineStart): AsyncGenerator<RawLine> {
  const s = new LineSplitter(start);
  for await (const chunk of source) yield* s.push(toBuffer(chunk));
  const torn = s.end();
  if (torn) yield torn;
}

/** Options of {@link readLines} and {@link readJsonLines}. */
export interface ReadLinesOptions {
  /** Byte to start at (default 0): line numbers count from there. Resume a tail at a torn line's `offset`. */
  fromOffset?: number;
  /** A missing file: `'empty'` (default) yields nothing, `'throw'` throws ExpBenchError `BAD_INPUT` naming it. */
  missing?: 'empty' | 'throw';
}

const READ_CHUNK = 64 * 1024;

/**
 * Streams the lines of `file` from `fromOffset`, reading 64 KiB at a time.
 * @throws ExpBenchError `BAD_INPUT` naming `file` when it is not a regular file (a FIFO is never
 *   waited on) or cannot be opened; the file system's error when a read fails
 */
export async function* readLines(file: string, opts: ReadLinesOptions = {}): AsyncGenerator<RawLine> {
  const fh = await openRegular(file);
  if (!fh) {
    if (opts.missing === 'throw') throw new ExpBenchError('BAD_INPUT', file, 'cannot read: no such file (ENOENT)');
    return;
  }
  try {
    const start = opts.fromOffset ?? 0;
    const s = new LineSplitter({ offset: start });
    let position = start;
    for (;;) {
      const buf = Buffer.allocUnsafe(READ_CHUNK); // not reused: the splitter may keep a slice of it
      const { bytesRead } = await fh.read(buf, 0, READ_CHUNK, position);
      if (bytesRead === 0) break;
      position += bytesRead;
      yield* s.push(buf.subarray(0, bytesRead));
    }
    const torn = s.end();
    if (torn) yield torn;
  } finally {
    await fh.close().catch(() => undefined);
  }
}

/**
 * Parses one line as JSON. A torn line is returned as it is (not parsed) unless `parseTorn`.
 * `error` of an invalid line is the parser's message (for example `Unexpected token …`).
 */
export function parseJsonLine<T = unknown>(l: RawLine, parseTorn = false): JsonLine<T> {
  if (l.kind === 'torn' && !parseTorn) return { kind: 'torn', line: l.line, offset: l.offset, text: l.text };
  try {
    return { kind: 'value', line: l.line, offset: l.offset, text: l.text, value: JSON.parse(l.text) as T };
  } catch (e) {
    return { kind: 'invalid', line: l.line, offset: l.offset, text: l.text, error: errorMessage(e) };
  }
}

/**
 * Streams the lines of `file` parsed as JSON (see {@link parseJsonLine}). With `parseTorn`, an
 * unterminated last line is parsed like the others (a blank one is skipped).
 * @throws the file system's error when the file cannot be opened or read (see {@link ReadLinesOptions.missing})
 */
export async function* readJsonLines<T = unknown>(file: string, opts: ReadLinesOptions & { parseTorn?: boolean } = {}): AsyncGenerator<JsonLine<T>> {
  for await (const l of readLines(file, opts)) {
    if (l.kind === 'torn' && opts.parseTorn && !NOT_BLANK.test(l.text)) continue;
    yield parseJsonLine<T>(l, opts.parseTorn);
  }
}

/** Options of {@link JsonLinesWriter}. */
export interface JsonLinesWriterOptions {
  /** fsync after each append (default true): the lines survive a crash of the machine once `append` resolved. */
  fsync?: boolean;
}

/**
 * Appends JSON values to `file` as lines (parent folders created, `O_APPEND`). Appends of one
 * writer run one after another. Before its first append, and again after a failed one, the writer
 * reads the file's last byte: when the file ends inside a torn line, the new lines start on a new
 * line, so a good line is never glued onto a torn one (the torn line stays a line of its own, which
 * a reader reports as invalid). A write the OS takes only in part is continued until every byte
 * is written; when the OS then refuses (disk full, file too large), `append` rejects and the bytes
 * of the failed append are cut off again, so the file is as it was before it (said otherwise in the
 * error when they cannot be: then the next append starts on a new line).
 */
export class JsonLinesWriter {
  private readonly serial = new SerialChain();
  /** The file is known to end with `\n` (or be empty): checked, then only written to by this writer. */
  private endsClean = false;

  constructor(readonly file: string, private readonly opts: JsonLinesWriterOptions = {}) {}

  /**
   * Appends each of `values` as one line (`JSON.stringify`), all in one write where the OS allows.
   * Resolves when every byte is written (and fsynced, unless `fsync: false`).
   * @throws ExpBenchError `BAD_INPUT` naming `file` when a value has no JSON form (`undefined`, a
   *   function) or cannot be serialised (a cycle, a BigInt): nothing is written
   * @throws ExpBenchError `BAD_INPUT` naming `file` (see `fileError`: disk full, permission denied,
   *   …) when the file cannot be opened, written in full or fsynced; the file is then cut back to
   *   what it held before (the error says so when that could not be done)
   */
  append(values: readonly unknown[]): Promise<void> {
    let text: string;
    try {
      text = values.map((v, i) => {
        const s = JSON.stringify(v);
        if (s === undefined) throw new Error(`value ${i} has no JSON form (${typeof v})`);
        return s + '\n';
      }).join('');
    } catch (e) {
      return Promise.reject(new ExpBenchError('BAD_INPUT', this.file, `nothing written: ${errorMessage(e)}`, { cause: e }));
    }
    return this.serial.run(() => this.write(text));
  }

  /** Resolves when every append started so far has finished (successfully or not). */
  settled(): Promise<void> { return this.serial.settled(); }

  private async write(text: string): Promise<void> {
    if (text === '') return;
    let fh: fsp.FileHandle | undefined;
    let sizeBefore: number | undefined;
    let written = 0;
    try {
      await fsp.mkdir(path.dirname(this.file), { recursive: true });
      // Non-blocking, and refused unless a regular file: a FIFO or device in place of the log
      // would take the lines (or block) and report them saved.
      fh = await fsp.open(this.file, fsc.O_RDWR | fsc.O_APPEND | fsc.O_CREAT | fsc.O_NONBLOCK, 0o666);
      const st = await fh.stat();
      if (!st.isFile()) throw notAFile(this.file, kindOf(st));
      let data = Buffer.from(text, 'utf8');
      if (!this.endsClean) {
        const { size } = st;
        if (size > 0) {
          const last = Buffer.alloc(1);
          await fh.read(last, 0, 1, size - 1);
          if (last[0] !== 0x0a) data = Buffer.concat([Buffer.from('\n'), data]);
        }
      }
      this.endsClean = false;
      sizeBefore = st.size;
      while (written < data.length) {
        const { bytesWritten } = await fh.write(data, written, data.length - written, null);
        if (bytesWritten <= 0) throw Object.assign(new Error(`write() wrote nothing (${data.length - written} bytes left)`), { code: 'EIO' });
        written += bytesWritten;
      }
      if (this.opts.fsync !== false) await fh.sync();
      this.endsClean = true;
    } catch (e) {
      throw await this.undo(fh, sizeBefore, written, e);
    } finally {
      await fh?.close().catch(() => undefined);
    }
  }

  /**
   * After a failed write: cuts the file back to its size before it (when only this write added
   * bytes since: the size is exactly before + written), so that a failed append leaves the file as
   * it was, as the error says; otherwise (another writer appended meanwhile, or the cut failed)
   * the error says that a torn line may end the file (readers report it, the next append starts
   * on a new line).
   */
  private async undo(fh: fsp.FileHandle | undefined, sizeBefore: number | undefined, written: number, e: unknown): Promise<ExpBenchError> {
    const err = fileError(this.file, 'write', e);
    if (!fh || sizeBefore === undefined || written === 0) return err;
    try {
      const { size } = await fh.stat();
      if (size !== sizeBefore + written) throw new Error(`the file is ${size} bytes, not ${sizeBefore} + ${written}: another writer appended`);
      await fh.truncate(sizeBefore);
      await fh.sync().catch(() => undefined);
      this.endsClean = false; // checked again before the next append
      return err;
    } catch (cut) {
      const code = (e as NodeJS.ErrnoException)?.code;
      return new ExpBenchError('BAD_INPUT', this.file,
        `cannot write${code === 'ENOSPC' || code === 'EDQUOT' ? `: the disk is full (${code})` : `: ${errorMessage(e)}`}; ${written} bytes of the new line are at the end of the file (a torn line, which readers skip) and could not be cut off (${errorMessage(cut)}); the lines before it are unchanged: free some space and run the command again`, { cause: e });
    }
  }
}
