import type { Socket } from 'node:net';
import { ExpBenchError } from '../errors';
import { TextLines } from '../untrusted/lines';
import { MAX_LINE_CHARS } from './protocol';

/**
 * Calls `onLine` with each `\n`-terminated line read from `socket` (UTF-8, without the newline).
 * A line longer than {@link MAX_LINE_CHARS} is never held whole: `onTooLong` gets its beginning
 * (where the request's id is) and the rest of it is dropped up to its newline; the lines after it
 * are read as usual (src/core/untrusted/lines.ts).
 */
export function readLinesFrom(socket: Socket, onLine: (line: string) => void, onTooLong: (head: string) => void): void {
  const lines = new TextLines(MAX_LINE_CHARS, { onLine: (l) => { if (l.trim()) onLine(l); }, onTooLong });
  socket.setEncoding('utf8');
  socket.on('data', (chunk: string) => lines.push(chunk));
}

/** The id of a request from the beginning of its line (`{"id":"…"`, the order the client writes), for answering a line too long to parse. */
export function idOfHead(head: string): string | undefined {
  return /^\s*\{\s*"id"\s*:\s*"([^"\\]{1,100})"/.exec(head)?.[1];
}

/**
 * Writes `value` as one JSON line; false when the socket is already closed.
 * @throws ExpBenchError `BAD_INPUT` when the line would be over {@link MAX_LINE_CHARS} (nothing is written: the peer would drop it)
 */
export function writeLine(socket: Socket, value: unknown): boolean {
  const line = JSON.stringify(value);
  if (line.length > MAX_LINE_CHARS) {
    throw new ExpBenchError('BAD_INPUT', 'channel line', `is ${line.length.toLocaleString('en-US')} characters, over the channel's limit of ${MAX_LINE_CHARS.toLocaleString('en-US')}: nothing was sent`);
  }
  if (socket.destroyed || !socket.writable) return false;
  socket.write(`${line}\n`);
  return true;
}
