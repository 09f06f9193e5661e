import * as http from 'node:http';
import type { AddressInfo, Socket } from 'node:net';

/**
 * A real HTTP server on 127.0.0.1 speaking the OpenAI chat completions API
 * (`POST /v1/chat/completions`), scriptable per test. The judge's tests drive the real `openai`
 * client against it. Each request is recorded; each reply comes from the queue (`enqueue`) or,
 * when the queue is empty, from `handler`.
 */
export interface RecordedRequest {
  path: string;
  method: string;
  headers: http.IncomingHttpHeaders;
  body: any;
  /** `response_format.json_schema.name` of the request, when present. */
  schemaName?: string;
  /** Text of the last user message. */
  lastUser: string;
  /** This server's own time on the request, ms: from the body read to the reply written (unset for `hang`). */
  serverMs?: number;
}

export type Reply =
  /** A completion whose message content is `JSON.stringify(json)`. */
  | { json: unknown; usage?: Usage; model?: string }
  /** A completion with this exact content (malformed JSON, prose, …). */
  | { content: string; usage?: Usage; model?: string }
  /** An HTTP error status with an OpenAI-style error body (`retryAfterMs` sets `retry-after-ms`). */
  | { status: number; message?: string; retryAfterMs?: number }
  /** Never answer (the socket stays open until the client gives up or the server closes). */
  | { hang: true }
  /** A 200 (or `status`) whose body is exactly `body` (JSON that is no chat completion, an error object, …). */
  | { raw: string; status?: number }
  /**
   * The headers and the first `bytes` bytes (default: half) of a valid completion whose message
   * is `content`, then the connection is cut (a proxy or the server dying mid-reply).
   */
  | { cut: true; bytes?: number; content?: string }
  /**
   * An assistant message asking for tool calls (finish_reason `tool_calls`): each call's
   * `arguments` is sent as given when a string (malformed JSON on purpose), else JSON.stringify'd;
   * `id` defaults to `call_<request>_<index>`.
   */
  | { toolCalls: ToolCallReply[]; content?: string; usage?: Usage; model?: string };

export interface ToolCallReply { name: string; arguments: unknown; id?: string }

export interface Usage { prompt_tokens: number; completion_tokens: number }

export class FakeOpenAIServer {
  readonly requests: RecordedRequest[] = [];
  private readonly queue: Reply[] = [];
  private readonly sockets = new Set<Socket>();
  private server?: http.Server;
  /** Default reply when the queue is empty. */
  handler: (req: RecordedRequest, n: number) => Reply | Promise<Reply> = () => ({ status: 500, message: 'no reply scripted' });
  /** Usage reported when a reply does not set one. */
  defaultUsage: Usage = { prompt_tokens: 100, completion_tokens: 20 };

  /** Starts listening on 127.0.0.1 (a free port). */
  async start(): Promise<this> {
    this.server = http.createServer((req, res) => void this.serve(req, res));
    this.server.on('connection', (s) => { this.sockets.add(s); s.on('close', () => this.sockets.delete(s)); });
    await new Promise<void>((resolve) => this.server!.listen(0, '127.0.0.1', resolve));
    return this;
  }

  /** `http://127.0.0.1:<port>/v1`, the `baseURL` for the openai client. */
  get baseURL(): string {
    return `http://127.0.0.1:${(this.server!.address() as AddressInfo).port}/v1`;
  }

  enqueue(...replies: Reply[]): this {
    this.queue.push(...replies);
    return this;
  }

  /** Completion requests received so far (retries included: each HTTP request counts). */
  get count(): number { return this.requests.length; }

  async close(): Promise<void> {
    for (const s of this.sockets) s.destroy();
    await new Promise<void>((resolve) => this.server ? this.server.close(() => resolve()) : resolve());
  }

  private async serve(req: http.IncomingMessage, res: http.ServerResponse): Promise<void> {
    const chunks: Buffer[] = [];
    for await (const c of req) chunks.push(c as Buffer);
    const t0 = performance.now();
    let body: any;
    try { body = JSON.parse(Buffer.concat(chunks).toString('utf8') || 'null'); } catch { body = null; }
    if (req.method !== 'POST' || !req.url?.endsWith('/chat/completions')) {
      return send(res, 404, { error: { message: `no route ${req.method} ${req.url}`, type: 'invalid_request_error' } });
    }
    const msgs: any[] = Array.isArray(body?.messages) ? body.messages : [];
    const rec: RecordedRequest = {
      path: req.url, method: req.method, headers: req.headers, body,
      schemaName: body?.response_format?.json_schema?.name,
      lastUser: [...msgs].reverse().find((m) => m.role === 'user')?.content ?? '',
    };
    this.requests.push(rec);
    const reply = this.queue.length ? this.queue.shift()! : await this.handler(rec, this.requests.length);
    if ('hang' in reply) return; // keep the socket open
    if ('raw' in reply) {
      res.writeHead(reply.status ?? 200, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(reply.raw) });
      res.end(reply.raw);
      rec.serverMs = performance.now() - t0;
      return;
    }
    if ('cut' in reply) {
      const text = JSON.stringify({
        id: `chatcmpl-${this.requests.length}`, object: 'chat.completion', created: Math.floor(Date.now() / 1000), model: body?.model ?? 'fake-model',
        choices: [{ index: 0, finish_reason: 'stop', message: { role: 'assistant', content: reply.content ?? 'a reply that never arrives whole', refusal: null } }],
        usage: { ...this.defaultUsage, total_tokens: this.defaultUsage.prompt_tokens + this.defaultUsage.completion_tokens },
      });
      const buf = Buffer.from(text, 'utf8');
      res.writeHead(200, { 'content-type': 'application/json', 'content-length': buf.length });
      res.write(buf.subarray(0, reply.bytes ?? Math.floor(buf.length / 2)), () => res.socket?.destroy());
      return;
    }
    if ('status' in reply) {
      const headers: Record<string, string> = {};
      if (reply.retryAfterMs !== undefined) headers['retry-after-ms'] = String(reply.retryAfterMs);
      send(res, reply.status, { error: { message: reply.message ?? `status ${reply.status}`, type: 'server_error' } }, headers);
      rec.serverMs = performance.now() - t0;
      return;
    }
    const usage = reply.usage ?? this.defaultUsage;
    const n = this.requests.length;
    const message = 'toolCalls' in reply
      ? {
        role: 'assistant', content: reply.content ?? null, refusal: null,
        tool_calls: reply.toolCalls.map((c, i) => ({
          id: c.id ?? `call_${n}_${i}`, type: 'function',
          function: { name: c.name, arguments: typeof c.arguments === 'string' ? c.arguments : JSON.stringify(c.arguments) },
        })),
      }
      : { role: 'assistant', content: 'json' in reply ? JSON.stringify(reply.json) : reply.content, refusal: null };
    send(res, 200, {
      id: `chatcmpl-${n}`, object: 'chat.completion', created: Math.floor(Date.now() / 1000),
      model: reply.model ?? body?.model ?? 'fake-model',
      choices: [{ index: 0, finish_reason: 'toolCalls' in reply ? 'tool_calls' : 'stop', message }],
      usage: { ...usage, total_tokens: usage.prompt_tokens + usage.completion_tokens },
    });
    rec.serverMs = performance.now() - t0;
  }
}

function send(res: http.ServerResponse, status: number, json: unknown, headers: Record<string, string> = {}): void {
  const text = JSON.stringify(json);
  res.writeHead(status, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(text), ...headers });
  res.end(text);
}
