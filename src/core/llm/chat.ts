import OpenAI from 'openai';
import { cancelled, isExpBenchError } from '../errors';
import { log, redact, registerSecret } from '../log';
import { errorMessage } from '../util/errors';
import { NO_API_KEY, type LlmEndpoint } from './endpoint';
import { withChildSignal } from './signal';
import type { Ledger } from './ledger';

const logger = log('llm');

/** A message of a tool-calling conversation (the chat completions API's shapes). */
export type ToolChatMessage = OpenAI.Chat.Completions.ChatCompletionMessageParam;
/** A tool offered to the model (`{type: 'function', function: {name, description, parameters}}`). */
export type ChatTool = OpenAI.Chat.Completions.ChatCompletionTool;

/** One tool call the model asked for; `arguments` is the model's JSON text, unparsed (it may be malformed). */
export interface RequestedToolCall { id: string; name: string; arguments: string }

/** One HTTP attempt of {@link ToolChatClient.chat}: what the caller records per request. */
export interface ChatAttempt {
  model: string;
  inputTokens: number;
  outputTokens: number;
  /** Prompt tokens the endpoint served from its cache (`usage.prompt_tokens_details.cached_tokens`), when it says. */
  cachedTokens?: number;
  /** USD from the ledger's price table; null when the model has no price. */
  costUsd: number | null;
  durationMs: number;
  finishReason: string | null;
  /** Set when this attempt failed: status and message (secrets redacted). */
  error?: string;
  /** True when a failed attempt is tried again. */
  retry?: boolean;
  /** A successful attempt's text and the names of the tools it asked for, in order (at most {@link MAX_RECORDED_TOOL_NAMES}). */
  text?: string;
  toolNames?: string[];
  /** How many tool calls the reply asked for, when more than the names recorded. */
  toolCallCount?: number;
}

/** The answer of a successful call. */
export interface ChatReply {
  content: string;
  toolCalls: RequestedToolCall[];
  /** The assistant message to append to the conversation as sent back. */
  message: ToolChatMessage;
  finishReason: string | null;
  /** The successful attempt (also passed to `onAttempt`). */
  attempt: ChatAttempt;
}

/** `timeUp`: the call stopped because the caller's working time ran out ({@link ChatCallOptions.timeLeftMs}), not by the endpoint's fault. */
export type ChatOutcome = { ok: true; reply: ChatReply } | { ok: false; error: string; status?: number; timeUp?: boolean };

/** Tool names of one reply recorded in its attempt (a reply may ask for many more: `toolCallCount` says how many). */
export const MAX_RECORDED_TOOL_NAMES = 32;

/** Options of {@link ToolChatClient.chat}. */
export interface ChatCallOptions {
  /** Ledger label, e.g. `agent:3`. */
  item: string;
  signal?: AbortSignal;
  /** Called after every HTTP attempt, failed ones included, before a retry waits. */
  onAttempt?: (a: ChatAttempt) => void | Promise<void>;
  /**
   * The caller's time left, ms (the agent's working-time limit): each attempt waits at most this
   * long (or the endpoint's timeout, if shorter), no attempt or retry wait starts once it is used
   * up, and the outcome then says `timeUp`. Default: no limit.
   */
  timeLeftMs?: () => number;
}

/**
 * Statuses retried (as the openai client retries them): timeouts, conflicts, rate limits, server
 * errors; `undefined`: no status at all (a connection error, a reply cut short).
 */
export function retryable(status: number | undefined): boolean {
  return status === undefined || status === 408 || status === 409 || status === 429 || status >= 500;
}

/**
 * A tool-calling chat client of one endpoint (the `openai` package's `chat.completions.create`
 * with `tools`), for the built-in agent. Retries like {@link LlmClient}: 408/409/429/5xx, timeouts
 * and connection errors, up to `endpoint.maxRetries` (default 2) times, each request limited to
 * `timeoutMs`. The retries are this class's own (the openai client is built with `maxRetries: 0`)
 * so that every attempt is reported to `onAttempt` (the agent records each as an event); the wait
 * follows the server's `retry-after-ms` / `retry-after` when given, else 0.5 s · 2^n (at most 8 s).
 * The API key is registered with the logger for redaction and never put in a message or an error.
 *
 * A connection cut while the reply is read, and a 200 reply that is no chat completion (no
 * `choices`), are failures of the endpoint too, retried the same way. With `timeLeftMs` no attempt
 * or wait outlasts the caller's time (the outcome says `timeUp`).
 *
 * `chat` throws only `BUDGET_EXCEEDED` (the ledger's guard, before a request), `CANCELLED`; every
 * failure of the endpoint is a `{ok: false}` outcome.
 */
export class ToolChatClient {
  private readonly client: OpenAI;
  private temperature: number | null;
  private seed: number | null;
  /** HTTP requests sent (retries included). */
  requestsSent = 0;

  constructor(readonly endpoint: LlmEndpoint, private readonly ledger: Ledger,
    private readonly sleep: (ms: number, signal?: AbortSignal) => Promise<void> = abortableSleep) {
    if (endpoint.apiKey !== NO_API_KEY) registerSecret(endpoint.apiKey);
    this.client = new OpenAI({
      apiKey: endpoint.apiKey, baseURL: endpoint.baseURL, organization: endpoint.organization,
      timeout: endpoint.timeoutMs ?? 120_000, maxRetries: 0,
    });
    this.temperature = endpoint.temperature === undefined ? 0 : endpoint.temperature;
    this.seed = endpoint.seed === undefined ? 1234 : endpoint.seed;
  }

  get model(): string { return this.endpoint.model; }

  async chat(messages: ToolChatMessage[], tools: ChatTool[], opts: ChatCallOptions): Promise<ChatOutcome> {
    const maxTokens = this.endpoint.maxCompletionTokens ?? 4096;
    const maxRetries = this.endpoint.maxRetries ?? 2;
    const endpointTimeout = this.endpoint.timeoutMs ?? 120_000;
    const left = () => opts.timeLeftMs?.() ?? Infinity;
    const timeUp = async (durationMs: number, what: string): Promise<ChatOutcome> => {
      const error = `the working-time limit was reached ${what}`;
      await opts.onAttempt?.({ model: this.model, inputTokens: 0, outputTokens: 0, costUsd: 0, durationMs, finishReason: null, error, retry: false });
      return { ok: false, error, timeUp: true };
    };
    let failures = 0;
    for (let paramRetry = 0; ; ) {
      if (opts.signal?.aborted) throw cancelled(opts.item);
      const budget = left();
      if (budget <= 0) return { ok: false, error: 'the working-time limit was reached before the request', timeUp: true };
      this.ledger.guard(opts.item, this.model, promptChars(messages, tools), maxTokens);
      const body: Record<string, unknown> = { model: this.model, messages, tools, tool_choice: 'auto', max_completion_tokens: maxTokens };
      if (this.temperature !== null) body.temperature = this.temperature;
      if (this.seed !== null) body.seed = this.seed;
      // Each attempt waits at most the endpoint's timeout, and never past the working time left.
      const timeout = Math.max(1, Math.min(endpointTimeout, budget));
      const byLimit = budget < endpointTimeout;
      const started = performance.now();
      let res: OpenAI.Chat.Completions.ChatCompletion;
      try {
        this.requestsSent++;
        res = await withChildSignal(opts.signal, (signal) =>
          this.client.chat.completions.create(body as any, { signal, timeout }) as Promise<OpenAI.Chat.Completions.ChatCompletion>);
      } catch (e) {
        if (isExpBenchError(e)) throw e;
        if (opts.signal?.aborted || e instanceof OpenAI.APIUserAbortError) throw cancelled(opts.item);
        const durationMs = performance.now() - started;
        if (e instanceof OpenAI.BadRequestError && paramRetry < 2 && this.dropRejectedParam(String(e.message))) { paramRetry++; continue; }
        if (e instanceof OpenAI.APIConnectionTimeoutError && byLimit) return await timeUp(durationMs, `while waiting for the endpoint (${Math.round(timeout)} ms)`);
        const status = e instanceof OpenAI.APIError ? e.status : undefined;
        // Not an APIError: the exchange broke while the reply was read (a connection cut mid-reply,
        // `terminated`; a body cut short): a connection error, retried like the others.
        const error = redact(e instanceof OpenAI.APIConnectionTimeoutError
          ? `endpoint timed out after ${endpointTimeout} ms`
          : e instanceof OpenAI.APIError ? `endpoint error ${status ?? ''}: ${errorMessage(e)}${e instanceof OpenAI.APIConnectionError ? causeOf(e) : ''}`.replace(/\s+/g, ' ')
            : `the connection broke while the reply was read: ${errorMessage(e)}${e instanceof Error ? causeOf(e) : ''}`);
        const outcome = await this.failed(opts, { durationMs, error, status, retryable: retryable(status), failures, maxRetries, delayMs: retryDelayMs(e, failures), left });
        if (outcome) return outcome;
        failures++;
        continue;
      }
      const durationMs = performance.now() - started;
      const inputTokens = res.usage?.prompt_tokens ?? 0;
      const outputTokens = res.usage?.completion_tokens ?? 0;
      const cachedTokens = res.usage?.prompt_tokens_details?.cached_tokens ?? undefined;
      const model = res.model || this.model;
      const entry = this.ledger.record(opts.item, model, inputTokens, outputTokens, durationMs);
      const choice = Array.isArray(res.choices) ? res.choices[0] : undefined;
      if (!choice || typeof choice !== 'object') {
        // A 200 that is no chat completion (a proxy's error object, an empty reply): the endpoint's fault.
        const said = (res as { error?: { message?: unknown } }).error?.message;
        const error = redact(`the endpoint's reply is not a chat completion: no choices${typeof said === 'string' ? ` (its error: ${said})` : ''}; it began ${JSON.stringify(JSON.stringify(res).slice(0, 160))}`);
        const outcome = await this.failed(opts, { durationMs, error, status: undefined, retryable: true, failures, maxRetries, delayMs: Math.min(500 * 2 ** failures, 8000), left });
        if (outcome) return outcome;
        failures++;
        continue;
      }
      const finishReason = choice.finish_reason ?? null;
      const msg = choice.message;
      const toolCalls: RequestedToolCall[] = (Array.isArray(msg?.tool_calls) ? msg.tool_calls : []).flatMap((c) => c?.type === 'function'
        ? [{ id: c.id, name: c.function?.name, arguments: c.function?.arguments ?? '' }] : []);
      const content = msg?.content ?? (msg?.refusal ? `(refused) ${msg.refusal}` : '');
      const attempt: ChatAttempt = {
        model, inputTokens, outputTokens, ...(cachedTokens !== undefined ? { cachedTokens } : {}), costUsd: entry.usd, durationMs, finishReason,
        text: content, toolNames: toolCalls.slice(0, MAX_RECORDED_TOOL_NAMES).map((c) => c.name),
        ...(toolCalls.length > MAX_RECORDED_TOOL_NAMES ? { toolCallCount: toolCalls.length } : {}),
      };
      await opts.onAttempt?.(attempt);
      const message: ToolChatMessage = {
        role: 'assistant', content: content || null,
        ...(toolCalls.length ? { tool_calls: toolCalls.map((c) => ({ id: c.id, type: 'function' as const, function: { name: c.name, arguments: c.arguments } })) } : {}),
      };
      return { ok: true, reply: { content, toolCalls, message, finishReason, attempt } };
    }
  }

  /**
   * A failed attempt: reported to `onAttempt`; the outcome when it is not retried (its retries
   * used, not retryable, or no working time left for the wait), else undefined after the wait.
   */
  private async failed(opts: ChatCallOptions, f: {
    durationMs: number; error: string; status: number | undefined; retryable: boolean; failures: number; maxRetries: number; delayMs: number; left: () => number;
  }): Promise<ChatOutcome | undefined> {
    const retry = f.retryable && f.failures < f.maxRetries;
    const timeLeft = f.left();
    const noTime = retry && f.delayMs >= timeLeft;
    await opts.onAttempt?.({ model: this.model, inputTokens: 0, outputTokens: 0, costUsd: 0, durationMs: f.durationMs, finishReason: null, error: f.error, retry: retry && !noTime });
    if (noTime) return { ok: false, error: `${f.error}; the working-time limit leaves no time to retry`, timeUp: true };
    if (!retry) return { ok: false, error: f.error, ...(f.status !== undefined ? { status: f.status } : {}) };
    logger.warn(`${this.endpoint.name ?? 'agent'} ${opts.item}: ${f.error}; retrying`);
    await this.sleep(f.delayMs, opts.signal);
    return undefined;
  }

  /** Endpoints that reject `seed` or `temperature` get the request again without it. */
  private dropRejectedParam(message: string): boolean {
    if (this.seed !== null && /\bseed\b/i.test(message)) { this.seed = null; return true; }
    if (this.temperature !== null && /\btemperature\b/i.test(message)) { this.temperature = null; return true; }
    return false;
  }
}

/** Characters of the prompt (messages and tool schemas), for the budget guard's estimate. */
function promptChars(messages: ToolChatMessage[], tools: ChatTool[]): number {
  return JSON.stringify(messages).length + JSON.stringify(tools).length;
}

function retryDelayMs(e: unknown, failures: number): number {
  const h = (e instanceof OpenAI.APIError ? e.headers : undefined) as Record<string, string> | Headers | undefined;
  const get = (k: string): string | null | undefined => (h && typeof (h as Headers).get === 'function' ? (h as Headers).get(k) : (h as Record<string, string> | undefined)?.[k]);
  const ms = Number(get('retry-after-ms'));
  if (Number.isFinite(ms) && ms >= 0 && get('retry-after-ms') != null) return Math.min(ms, 60_000);
  const s = Number(get('retry-after'));
  if (Number.isFinite(s) && s >= 0 && get('retry-after') != null) return Math.min(s * 1000, 60_000);
  return Math.min(500 * 2 ** failures, 8000);
}

function abortableSleep(ms: number, signal?: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    const t = setTimeout(done, ms);
    function done() { clearTimeout(t); signal?.removeEventListener('abort', done); resolve(); }
    signal?.addEventListener('abort', done, { once: true });
  });
}

/** ` (ECONNRESET)`, ` (other side closed)`: the network error under a connection failure, when it says more. */
function causeOf(e: Error): string {
  let c: unknown = e.cause;
  for (let i = 0; i < 4 && c instanceof Error; i++) {
    const x = c as NodeJS.ErrnoException;
    if (x.code && x.code !== 'UND_ERR_SOCKET') return ` (${x.code})`;
    if (x.message && x.message !== 'fetch failed') return ` (${x.message})`;
    c = x.cause;
  }
  return '';
}
