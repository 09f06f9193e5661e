import type { HostMessage, Reply, RequestId, SectionRequest, WebviewMessage } from './messages';
import type { SectionAction, SectionName } from './sections';
import { errorMessage } from '../core/util/errors';

/**
 * Both ends of the request protocol (messages.ts), free of VS Code and of the DOM: the webview's
 * {@link RequestClient} numbers requests and settles them with their replies; the host's
 * {@link RequestRunner} runs each request once with an AbortSignal and answers it exactly once.
 */

/** Why a request failed, as the host replied it (`code` `CANCELLED` when it was cancelled). */
export class RequestError extends Error {
  constructor(message: string, readonly code?: string) {
    super(message);
    this.name = 'RequestError';
  }
}

/** The code of a cancelled request's error (the core's ErrorCode of the same meaning). */
export const CANCELLED = 'CANCELLED';

interface Pending { resolve(): void; reject(e: RequestError): void; done(): void }

/** The webview's end: sends `request`s and `cancel`s through `post`, settles them with {@link receive}. */
export class RequestClient {
  private next = 1;
  private readonly pending = new Map<RequestId, Pending>();

  constructor(private readonly post: (m: WebviewMessage) => void) {}

  /**
   * Asks the host to run `call` of `section`.
   * @param opts.signal aborting it sends `cancel` and rejects at once (the host's reply is then ignored)
   * @returns resolves on an ok reply
   * @throws RequestError with the host's message and code; code `CANCELLED` when cancelled
   */
  request<K extends SectionName>(section: K, call: SectionAction<K>, opts: { signal?: AbortSignal } = {}): Promise<void> {
    const id = this.next++;
    const { signal } = opts;
    if (signal?.aborted) return Promise.reject(new RequestError('cancelled before it was sent', CANCELLED));
    return new Promise<void>((resolve, reject) => {
      const onAbort = () => {
        this.pending.get(id)?.done();
        this.post({ type: 'cancel', id });
        reject(new RequestError('cancelled', CANCELLED));
      };
      this.pending.set(id, {
        resolve, reject,
        done: () => { this.pending.delete(id); signal?.removeEventListener('abort', onAbort); },
      });
      signal?.addEventListener('abort', onAbort, { once: true });
      try {
        this.post({ type: 'request', id, section, call } as SectionRequest);
      } catch (e) {
        this.pending.get(id)?.done();
        reject(new RequestError(`not sent: ${errorMessage(e)}`));
      }
    });
  }

  /** Requests sent and not yet settled. */
  get inFlight(): number {
    return this.pending.size;
  }

  /** Settles the request `reply` answers. @returns false when no pending request has its id (late or unknown). */
  receive(reply: Reply): boolean {
    const p = this.pending.get(reply.id);
    if (!p) return false;
    p.done();
    if (reply.ok) p.resolve();
    else p.reject(new RequestError(reply.error.message, reply.error.code));
    return true;
  }
}

/** How a host handler's failure is told: a message for a person and, when known, a code. */
export type DescribeError = (e: unknown) => { message: string; code?: string };

/** The host's end (one per webview): runs requests, aborts them on `cancel`, replies once to each. */
export class RequestRunner {
  private readonly running = new Map<RequestId, AbortController>();

  constructor(private readonly post: (m: HostMessage) => void, private readonly describe: DescribeError) {}

  /**
   * Runs `handle` for request `id` and replies: ok when it resolves, an error when it throws, and
   * `CANCELLED` when its signal was aborted (by {@link cancel} or {@link cancelAll}) before it settled,
   * whatever it did after. A second request with an id still running is refused with an error reply.
   */
  async run(id: RequestId, handle: (signal: AbortSignal) => void | Promise<void>): Promise<Reply> {
    if (this.running.has(id)) return this.reply({ type: 'reply', id, ok: false, error: { message: `request ${id} is already running` } });
    const ac = new AbortController();
    this.running.set(id, ac);
    let reply: Reply;
    try {
      await handle(ac.signal);
      reply = ac.signal.aborted ? cancelledReply(id) : { type: 'reply', id, ok: true };
    } catch (e) {
      reply = ac.signal.aborted ? cancelledReply(id) : { type: 'reply', id, ok: false, error: this.describe(e) };
    } finally {
      this.running.delete(id);
    }
    return this.reply(reply);
  }

  /** Aborts request `id`'s signal. @returns false when it is not running. */
  cancel(id: RequestId): boolean {
    const ac = this.running.get(id);
    ac?.abort();
    return !!ac;
  }

  /** Aborts every running request (the webview is gone). */
  cancelAll(): void {
    for (const ac of this.running.values()) ac.abort();
  }

  /** Requests running now. */
  get inFlight(): number {
    return this.running.size;
  }

  private reply(r: Reply): Reply {
    this.post(r);
    return r;
  }
}

function cancelledReply(id: RequestId): Reply {
  return { type: 'reply', id, ok: false, error: { message: 'cancelled', code: CANCELLED } };
}
