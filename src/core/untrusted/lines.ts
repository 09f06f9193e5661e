/**
 * Splits a stream of protocol text (the proctored window's channel, MCP over stdio) into lines,
 * holding at most `max` units of one line: a longer line is reported once ({@link LineHandlers.onTooLong},
 * with its first {@link HEAD_UNITS} units, where a request's id is) and dropped up to its newline,
 * after which reading goes on with the next line. Memory stays bounded whatever the peer sends,
 * and no line is searched twice (each chunk is scanned once for the newline).
 */
export interface LineHandlers<T> {
  /** A complete line, without its `\n` (and without a `\r` before it). */
  onLine(line: T): void;
  /** A line passed the limit; `head` is its beginning. Its rest is dropped. */
  onTooLong(head: T): void;
}

/** How much of an over-long line {@link LineHandlers.onTooLong} gets. */
export const HEAD_UNITS = 4096;

interface Ops<T> {
  empty: T;
  length(x: T): number;
  indexOfNewline(x: T): number;
  slice(x: T, start: number, end?: number): T;
  concat(parts: T[]): T;
}

class Splitter<T> {
  private parts: T[] = [];
  private size = 0;
  private dropping = false;

  constructor(private readonly max: number, private readonly h: LineHandlers<T>, private readonly ops: Ops<T>) {}

  push(chunk: T): void {
    let rest = chunk;
    for (;;) {
      const nl = this.ops.indexOfNewline(rest);
      if (nl < 0) {
        if (this.dropping) return;
        this.parts.push(rest);
        this.size += this.ops.length(rest);
        if (this.size > this.max) this.tooLong();
        return;
      }
      const piece = this.ops.slice(rest, 0, nl);
      rest = this.ops.slice(rest, nl + 1);
      if (this.dropping) {
        this.dropping = false;
        continue;
      }
      if (this.size + this.ops.length(piece) > this.max) {
        this.parts.push(piece);
        this.tooLong();
        this.dropping = false; // the newline of the long line was in this chunk
        continue;
      }
      this.parts.push(piece);
      let line = this.parts.length === 1 ? this.parts[0] : this.ops.concat(this.parts);
      this.parts = [];
      this.size = 0;
      const n = this.ops.length(line);
      if (n > 0 && this.lastIsCr(line)) line = this.ops.slice(line, 0, n - 1);
      this.h.onLine(line);
    }
  }

  /** The unterminated rest (empty when none, or when it was an over-long line being dropped). */
  rest(): T {
    const r = this.dropping ? this.ops.empty : this.ops.concat(this.parts);
    this.parts = [];
    this.size = 0;
    return r;
  }

  private tooLong(): void {
    const joined = this.ops.concat(this.parts);
    this.parts = [];
    this.size = 0;
    this.dropping = true;
    this.h.onTooLong(this.ops.slice(joined, 0, HEAD_UNITS));
  }

  private lastIsCr(line: T): boolean {
    const n = this.ops.length(line);
    const last = this.ops.slice(line, n - 1);
    return typeof last === 'string' ? last === '\r' : (last as unknown as Buffer)[0] === 0x0d;
  }
}

/** Lines of text, at most `maxChars` characters each. */
export class TextLines {
  private readonly s: Splitter<string>;
  constructor(maxChars: number, handlers: LineHandlers<string>) {
    this.s = new Splitter(maxChars, handlers, {
      empty: '', length: (x) => x.length, indexOfNewline: (x) => x.indexOf('\n'),
      slice: (x, a, b) => x.slice(a, b), concat: (p) => p.join(''),
    });
  }
  push(chunk: string): void { this.s.push(chunk); }
  rest(): string { return this.s.rest(); }
}

/** Lines of bytes, at most `maxBytes` each (decode each complete line as a whole: no character is split). */
export class ByteLines {
  private readonly s: Splitter<Buffer>;
  constructor(maxBytes: number, handlers: LineHandlers<Buffer>) {
    this.s = new Splitter(maxBytes, handlers, {
      empty: Buffer.alloc(0), length: (x) => x.length, indexOfNewline: (x) => x.indexOf(0x0a),
      slice: (x, a, b) => x.subarray(a, b), concat: (p) => Buffer.concat(p),
    });
  }
  push(chunk: Buffer): void { this.s.push(chunk); }
  rest(): Buffer { return this.s.rest(); }
}
