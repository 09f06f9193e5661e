import type { Socket } from 'node:net';
import { MAX_LINE_CHARS } from './protocol';

/**
 * Calls `onLine` with each `\n`-terminated line read from `socket` (UTF-8, without the newline).
 * A line longer than {@link MAX_LINE_CHARS} calls `onTooLong` and ends the socket (the peer is
 * misbehaving: nothing after it can be framed safely).
 */
export function readLinesFrom(socket: Socket, onLine: (line: string) => void, onTooLong: () => void): void {
  let buffer = '';
  socket.setEncoding('utf8');
  socket.on('data', (chunk: string) => {
    buffer += chunk;
    let nl: number;
    while ((nl = buffer.indexOf('\n')) >= 0) {
      const line = buffer.slice(0, nl);
      buffer = buffer.slice(nl + 1);
      if (line.trim()) onLine(line);
    }
    if (buffer.length > MAX_LINE_CHARS) {
      buffer = '';
      onTooLong();
      socket.destroy();
    }
  });
}

/** Writes `value` as one JSON line; false when the socket is already closed. */
export function writeLine(socket: Socket, value: unknown): boolean {
  if (socket.destroyed || !socket.writable) return false;
  socket.write(`${JSON.stringify(value)}\n`);
  return true;
}
