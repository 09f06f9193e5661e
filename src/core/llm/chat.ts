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
  /** A successful attempt's text and the names of the tools it asked for, in order. */
  text?: string;
  toolNames?: string[];
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

export type ChatOutcome = { ok: true; reply: ChatReply } | { ok: false; error: string; status?: number };

/** Options of {@link ToolChatClient.chat}. */
export interface ChatCallOptions {
  /** Ledger label, e.g. `agent:3`. */
  item: string;
  signal?: AbortSignal;
  /** Called after every HTTP attempt, failed ones included, before a retry waits. */
  onAttempt?: (a: ChatAttempt) => void | Promise<void>;
}

/** Statuses retried (as the openai client retries them): timeouts, conflicts, rate limits, server errors. */
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
    let failures = 0;
    for (let paramRetry = 0; ; ) {
      if (opts.signal?.aborted) throw cancelled(opts.item);
      this.ledger.guard(opts.item, this.model, promptChars(messages, tools), maxTokens);
      const body: Record<string, unknown> = { model: this.model, messages, tools, tool_choice: 'auto', max_completion_tokens: maxTokens };
      if (this.temperature !== null) body.temperature = this.temperature;
      if (this.seed !== null) body.seed = this.seed;
      const started = performance.now();
      try {
        this.requestsSent++;
        const res = await withChildSignal(opts.signal, (signal) =>
          this.client.chat.completions.create(body as any, { signal }) as Promise<OpenAI.Chat.Completions.ChatCompletion>);
        const durationMs = performance.now() - started;
        const inputTokens = res.usage?.prompt_tokens ?? 0;
        const outputTokens = res.usage?.completion_tokens ?? 0;
        const cachedTokens = res.usage?.prompt_tokens_details?.cached_tokens ?? undefined;
        const model = res.model || this.model;
        const entry = this.ledger.record(opts.item, model, inputTokens, outputTokens, durationMs);
        const choice = res.choices?.[0];
        const finishReason = choice?.finish_reason ?? null;
        const msg = choice?.message;
        const toolCalls: RequestedToolCall[] = (msg?.tool_calls ?? []).flatMap((c) => c.type === 'function'
          ? [{ id: c.id, name: c.function.name, arguments: c.function.arguments ?? '' }] : []);
        const content = msg?.content ?? (msg?.refusal ? `(refused) ${msg.refusal}` : '');
        const attempt: ChatAttempt = {
          model, inputTokens, outputTokens, ...(cachedTokens !== undefined ? { cachedTokens } : {}), costUsd: entry.usd, durationMs, finishReason,
          text: content, toolNames: toolCalls.map((c) => c.name),
        };
        await opts.onAttempt?.(attempt);
        const message: ToolChatMessage = {
          role: 'assistant', content: content || null,
          ...(toolCalls.length ? { tool_calls: toolCalls.map((c) => ({ id: c.id, type: 'function' as const, function: { name: c.name, arguments: c.arguments } })) } : {}),
        };
        return { ok: true, reply: { content, toolCalls, message, finishReason, attempt } };
      } catch (e) {
        if (isExpBenchError(e)) throw e;
        if (opts.signal?.aborted || e instanceof OpenAI.APIUserAbortError) throw cancelled(opts.item);
        const durationMs = performance.now() - started;
        if (e instanceof OpenAI.BadRequestError && paramRetry < 2 && this.dropRejectedParam(String(e.message))) { paramRetry++; continue; }
        const status = e instanceof OpenAI.APIError ? e.status : undefined;
        const known = e instanceof OpenAI.APIError;
        const error = redact(e instanceof OpenAI.APIConnectionTimeoutError
          ? `endpoint timed out after ${this.endpoint.timeoutMs ?? 120_000} ms`
          : known ? `endpoint error ${status ?? ''}: ${errorMessage(e)}`.replace(/\s+/g, ' ') : `request failed: ${errorMessage(e)}`);
        const retry = known && retryable(status) && failures < maxRetries;
        await opts.onAttempt?.({ model: this.model, inputTokens: 0, outputTokens: 0, costUsd: 0, durationMs, finishReason: null, error, retry });
        if (!retry) return { ok: false, error, ...(status !== undefined ? { status } : {}) };
        logger.warn(`${this.endpoint.name ?? 'agent'} ${opts.item}: ${error}; retrying`);
        await this.sleep(retryDelayMs(e as InstanceType<typeof OpenAI.APIError>, failures), opts.signal);
        failures++;
      }
    }
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

function retryDelayMs(e: InstanceType<typeof OpenAI.APIError>, failures: number): number {
  const h = e.headers as Record<string, string> | Headers | undefined;
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
