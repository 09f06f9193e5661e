import { randomBytes } from 'node:crypto';
import { readFile } from 'node:fs/promises';
import * as net from 'node:net';
import { ExpBenchError } from '../errors';
import { log } from '../log';
import { Emitter } from '../util/emitter';
import { errorMessage } from '../util/errors';
import { writeAtomic } from '../util/fs';
import { readLinesFrom, writeLine } from './lines';
import {
  MAX_LINE_CHARS, METHODS, QUEUEABLE, RequestSchema, ResponseSchema, type ChannelMethod, type ChannelParams, type ChannelRequest, type ChannelResult,
} from './protocol';

const logger = log('channel');

/** Options of {@link ChannelClient}. */
export interface ChannelClientOptions {
  /** The host's socket (`/expbench/channel/session.sock` in the work container). */
  socketPath: string;
  /** Where queued requests are kept across reloads (`/expbench/channel/solver-queue.jsonl`). */
  queueFile: string;
  /** Wait between connection attempts, ms (default 1000). */
  retryMs?: number;
}

/** The connection as the solver window shows it. */
export interface ChannelStatus {
  connected: boolean;
  /** Requests waiting for the host, oldest first. */
  queued: number;
  /** Why the last attempt failed (ENOENT: the host is not serving; ECONNREFUSED: it stopped). */
  lastError?: string;
}

/** What a call gave: the host's result, or `queued` when the host was away and the request waits. */
export type CallOutcome<M extends ChannelMethod> = { queued: false; result: ChannelResult<M> } | { queued: true };

interface Pending { req: ChannelRequest; resolve: (r: unknown) => void; reject: (e: Error) => void }

/**
 * The solver window's side of the host channel (protocol.ts). Connects, and reconnects every
 * `retryMs` while the host is not running. Requests of {@link QUEUEABLE} methods made while
 * disconnected (or while older ones wait) are queued in memory and in `queueFile` (rewritten
 * atomically on each change, so a reload of the window loses nothing); on (re)connect the queue
 * is flushed in order, one request at a time, before anything newer is sent. Consecutive queued
 * drafts of the same kind (setDesign, setConclusion) keep only the latest. A request in flight
 * when the connection drops goes back to the queue; the host answers a repeated id once, so
 * nothing is done twice. A queued request the host refuses is dropped and reported by
 * {@link onDidDrop}. Other methods (hello, state, submit) fail at once without the host.
 */
export class ChannelClient {
  private socket: net.Socket | undefined;
  private connected = false;
  private flushing = false;
  private closed = false;
  private timer: NodeJS.Timeout | undefined;
  private queue: ChannelRequest[] = [];
  private readonly inflight = new Map<string, Pending>();
  private readonly prefix = randomBytes(6).toString('hex');
  private counter = 0;
  private lastError: string | undefined;
  private readonly statusChanged = new Emitter<ChannelStatus>('channel');
  private readonly dropped = new Emitter<{ method: ChannelMethod; message: string }>('channel');
  private readonly connectedEv = new Emitter<void>('channel');
  /** Fires on every change of {@link status}. */
  readonly onDidChangeStatus = this.statusChanged.event;
  /** Fires when the host refused a queued request (it is dropped, never retried). */
  readonly onDidDrop = this.dropped.event;
  /** Fires after each (re)connection, once the queue is flushed. */
  readonly onDidConnect = this.connectedEv.event;

  constructor(private readonly opts: ChannelClientOptions) {}

  get status(): ChannelStatus {
    return { connected: this.connected, queued: this.queue.length, ...(this.lastError ? { lastError: this.lastError } : {}) };
  }

  /** Loads the queue a previous window left and starts connecting. */
  async start(): Promise<void> {
    this.queue = await loadQueue(this.opts.queueFile);
    this.fireStatus();
    this.connect();
  }

  /**
   * Sends `method` with `params`.
   * @throws ExpBenchError `SESSION_INVALID` naming the socket when the host is not reachable and the
   *   method cannot be queued; `BAD_INPUT` for params that fail the schema; the host's error (code and message).
   */
  async call<M extends ChannelMethod>(method: M, params: ChannelParams<M>): Promise<CallOutcome<M>> {
    const checked = METHODS[method].params.safeParse(params);
    if (!checked.success) throw new ExpBenchError('BAD_INPUT', `${method} params`, checked.error.issues.map((i) => i.message).join('; '));
    const req: ChannelRequest = { id: `${this.prefix}-${++this.counter}`, method, params: checked.data };
    const mustWait = !this.connected || this.flushing || this.queue.length > 0;
    if (mustWait && QUEUEABLE.has(method)) {
      await this.enqueue(req);
      return { queued: true };
    }
    if (!this.connected) {
      throw new ExpBenchError('SESSION_INVALID', this.opts.socketPath, `the host side is not running (${this.lastError ?? 'not connected'}): ${method} needs it; try again when it is back`);
    }
    if (this.flushing) await new Promise<void>((resolve) => { const d = this.connectedEv.event(() => { d.dispose(); resolve(); }); });
    let result: unknown;
    try {
      result = await this.send(req);
    } catch (e) {
      // Lost with the connection: a queueable request is back in the queue (requeueInflight).
      if (!(e as { fromHost?: boolean }).fromHost && QUEUEABLE.has(method)) {
        if (!this.queue.includes(req)) await this.enqueue(req);
        return { queued: true };
      }
      throw e;
    }
    return { queued: false, result: METHODS[method].result.parse(result) as ChannelResult<M> };
  }

  /** Stops reconnecting and closes the connection (the queue file stays). */
  dispose(): void {
    this.closed = true;
    if (this.timer) clearTimeout(this.timer);
    this.socket?.destroy();
    this.statusChanged.dispose();
    this.dropped.dispose();
    this.connectedEv.dispose();
  }

  private connect(): void {
    if (this.closed) return;
    const socket = net.createConnection(this.opts.socketPath);
    this.socket = socket;
    socket.on('connect', () => {
      this.connected = true;
      this.lastError = undefined;
      this.fireStatus();
      void this.flush();
    });
    readLinesFrom(socket, (line) => this.receive(line), () => {
      this.lastError = `the host sent a line over ${MAX_LINE_CHARS} characters`;
      logger.warn(this.lastError);
      this.fireStatus();
    });
    socket.on('error', (e: NodeJS.ErrnoException) => { this.lastError = e.code ?? errorMessage(e); });
    socket.on('close', () => {
      if (this.socket !== socket) return;
      this.socket = undefined;
      const was = this.connected;
      this.connected = false;
      this.flushing = false;
      void this.requeueInflight().then(() => this.fireStatus());
      if (was) logger.warn(`channel closed (${this.lastError ?? 'host went away'}); retrying`);
      if (!this.closed) this.timer = setTimeout(() => this.connect(), this.opts.retryMs ?? 1000);
    });
  }

  private receive(line: string): void {
    let parsed;
    try { parsed = ResponseSchema.safeParse(JSON.parse(line)); } catch { return; }
    if (!parsed.success) return;
    const r = parsed.data;
    const p = this.inflight.get(r.id);
    if (!p) return;
    this.inflight.delete(r.id);
    if ('error' in r) p.reject(Object.assign(new Error(r.error.message), { code: r.error.code, fromHost: true }));
    else p.resolve(r.result);
  }

  private send(req: ChannelRequest): Promise<unknown> {
    return new Promise((resolve, reject) => {
      let sent: boolean;
      try {
        sent = !!this.socket && writeLine(this.socket, req);
      } catch (e) {
        reject(Object.assign(e as Error, { fromHost: true })); // over the line limit: refused here, never queued again
        return;
      }
      if (!sent) {
        reject(new ExpBenchError('SESSION_INVALID', this.opts.socketPath, 'the host side is not running'));
        return;
      }
      this.inflight.set(req.id, { req, resolve, reject });
    });
  }

  /** Sends the queue in order; stops (keeping the rest) when the connection drops. */
  private async flush(): Promise<void> {
    if (this.flushing) return;
    this.flushing = true;
    try {
      while (this.connected && this.queue.length > 0) {
        const req = this.queue[0];
        try {
          await this.send(req);
        } catch (e) {
          if (!(e as { fromHost?: boolean }).fromHost) return; // connection lost: the request stays first
          this.dropped.fire({ method: req.method, message: errorMessage(e) });
        }
        if (this.queue[0] === req) this.queue.shift();
        await this.saveQueue();
        this.fireStatus();
      }
    } finally {
      this.flushing = false;
    }
    if (this.connected) this.connectedEv.fire();
  }

  private async enqueue(req: ChannelRequest): Promise<void> {
    const last = this.queue[this.queue.length - 1];
    const coalesce = last && !this.flushing && last.method === req.method && (req.method === 'setDesign' || req.method === 'setConclusion');
    if (coalesce) this.queue[this.queue.length - 1] = req;
    else this.queue.push(req);
    await this.saveQueue();
    this.fireStatus();
  }

  /** Requests in flight when the connection dropped: queueable ones go back to the front, others fail. */
  private async requeueInflight(): Promise<void> {
    const back: ChannelRequest[] = [];
    for (const [id, p] of this.inflight) {
      this.inflight.delete(id);
      if (QUEUEABLE.has(p.req.method) && !this.queue.includes(p.req)) back.push(p.req);
      p.reject(new ExpBenchError('SESSION_INVALID', this.opts.socketPath, 'the host side went away during the request'));
    }
    if (back.length) {
      this.queue = [...back, ...this.queue.filter((q) => !back.includes(q))];
      await this.saveQueue();
    }
  }

  private async saveQueue(): Promise<void> {
    try {
      await writeAtomic(this.opts.queueFile, this.queue.map((q) => JSON.stringify(q)).join('\n') + (this.queue.length ? '\n' : ''), { fsync: true });
    } catch (e) {
      logger.error(`could not write the queue ${this.opts.queueFile}: ${errorMessage(e)} (it is still in memory)`);
    }
  }

  private fireStatus(): void { this.statusChanged.fire(this.status); }
}

/** Queued requests from `file` (absent → none); lines that are not requests are dropped with a log line. */
export async function loadQueue(file: string): Promise<ChannelRequest[]> {
  let text: string;
  try { text = await readFile(file, 'utf8'); } catch (e) {
    if ((e as NodeJS.ErrnoException).code === 'ENOENT') return [];
    throw new ExpBenchError('BAD_INPUT', file, `cannot read the queue: ${errorMessage(e)}`);
  }
  const out: ChannelRequest[] = [];
  text.split('\n').forEach((line, i) => {
    if (!line.trim()) return;
    try {
      const r = RequestSchema.safeParse(JSON.parse(line));
      if (r.success && QUEUEABLE.has(r.data.method)) out.push(r.data);
      else logger.warn(`${file}:${i + 1}: not a queued request, dropped`);
    } catch {
      logger.warn(`${file}:${i + 1}: not JSON, dropped`);
    }
  });
  return out;
}
