import type { Transport } from '@modelcontextprotocol/sdk/shared/transport.js';
import { JSONRPCMessageSchema, type JSONRPCMessage } from '@modelcontextprotocol/sdk/types.js';
import { log } from '../log';
import { errorMessage } from '../util/errors';
import { ByteLines, LIMITS } from '../untrusted';

const logger = log('mcp');

/** JSON-RPC's "Invalid Request" code, answered for a line the server will not read. */
const INVALID_REQUEST = -32600;
/** JSON-RPC's "Parse error" code. */
const PARSE_ERROR = -32700;

/** The id of a request from the beginning of its line (before its `params`), for answering a line too long to parse; null when none is seen there. */
export function requestIdOfHead(head: string): string | number | null {
  const before = head.split('"params"')[0];
  const m = /"id"\s*:\s*(-?\d{1,15}|"[^"\\]{0,200}")/.exec(before);
  if (!m) return null;
  return m[1].startsWith('"') ? m[1].slice(1, -1) : Number(m[1]);
}

/**
 * MCP over stdio (one JSON-RPC message per line, as the SDK's StdioServerTransport), with every
 * line bounded by LIMITS.mcpMessageBytes (the HTTP transport's body limit): a longer line is never
 * held whole; it is answered with a JSON-RPC error (`-32600`, its id when one is seen at its
 * beginning, else null) saying the limit, and reading goes on with the next line. The SDK's own
 * transport closed the connection on its 10 MB buffer limit, so the server ended with status 0
 * and said nothing. A line that is not JSON-RPC is answered with `-32700` the same way.
 */
export class BoundedStdioTransport implements Transport {
  onclose?: () => void;
  onerror?: (error: Error) => void;
  onmessage?: <T extends JSONRPCMessage>(message: T) => void;
  private readonly lines: ByteLines;
  private started = false;
  private closed = false;

  constructor(private readonly stdin: NodeJS.ReadableStream = process.stdin, private readonly stdout: NodeJS.WritableStream = process.stdout,
    private readonly maxBytes = LIMITS.mcpMessageBytes) {
    this.lines = new ByteLines(maxBytes, {
      onLine: (b) => this.receive(b.toString('utf8')),
      onTooLong: (head) => {
        const id = requestIdOfHead(head.toString('utf8'));
        const message = `the message is over ${this.maxBytes.toLocaleString('en-US')} bytes, the limit of one MCP message: it was not read; send less (for example a shorter text or a file written in the container)`;
        logger.warn(`stdio: a line over ${this.maxBytes} bytes${id !== null ? ` (request ${id})` : ''}: answered with an error, not read`);
        void this.send({ jsonrpc: '2.0', id: id as never, error: { code: INVALID_REQUEST, message } } as JSONRPCMessage);
      },
    });
  }

  private readonly onData = (chunk: Buffer | string) => this.lines.push(typeof chunk === 'string' ? Buffer.from(chunk) : chunk);
  private readonly onError = (e: Error) => this.onerror?.(e);
  private readonly onEnd = () => void this.close();

  async start(): Promise<void> {
    if (this.started) throw new Error('BoundedStdioTransport already started');
    this.started = true;
    this.stdin.on('data', this.onData);
    this.stdin.on('error', this.onError);
    this.stdin.on('end', this.onEnd);
  }

  private receive(line: string): void {
    const text = line.endsWith('\r') ? line.slice(0, -1) : line;
    if (!text.trim()) return;
    let message: JSONRPCMessage;
    try {
      message = JSONRPCMessageSchema.parse(JSON.parse(text));
    } catch (e) {
      const id = requestIdOfHead(text.slice(0, 4096));
      void this.send({ jsonrpc: '2.0', id: id as never, error: { code: PARSE_ERROR, message: `not a JSON-RPC message: ${errorMessage(e).slice(0, 200)}` } } as JSONRPCMessage);
      return;
    }
    this.onmessage?.(message);
  }

  send(message: JSONRPCMessage): Promise<void> {
    return new Promise((resolve) => {
      if (this.stdout.write(`${JSON.stringify(message)}\n`)) resolve();
      else this.stdout.once('drain', () => resolve());
    });
  }

  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    this.stdin.off('data', this.onData);
    this.stdin.off('error', this.onError);
    this.stdin.off('end', this.onEnd);
    this.onclose?.();
  }
}
