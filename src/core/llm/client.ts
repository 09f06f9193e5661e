import OpenAI from 'openai';
import { z } from 'zod';
import { ExpBenchError, cancelled, isExpBenchError } from '../errors';
import { log, registerSecret } from '../log';
import { errorMessage } from '../util/errors';
import { AnswerCache } from './cache';
import { NO_API_KEY, type LlmEndpoint } from './endpoint';
import { withChildSignal } from './signal';
import type { Ledger } from './ledger';

const logger = log('llm');

export type ChatMessage = { role: 'system' | 'user' | 'assistant'; content: string };

export interface StructuredRequest<T> {
  /** Ledger / error label, e.g. `implementation:3`. */
  item: string;
  /** `json_schema.name` sent to the endpoint. */
  schemaName: string;
  schema: z.ZodType<T>;
  /** Checks the zod schema cannot express (ids that must exist, …); returns a problem or undefined. */
  check?: (value: T) => string | undefined;
  messages: ChatMessage[];
}

export type StructuredOutcome<T> = { ok: true; value: T; cached: boolean } | { ok: false; error: string };

export interface LlmClientOptions {
  /** Answers already obtained are taken from here, new valid ones stored. */
  cache?: AnswerCache;
  /**
   * What else decides an answer besides model, decoding, schema and messages (the judge: its
   * `{promptVersion}`), part of every cache key.
   */
  cacheScope?: Record<string, unknown>;
}

/**
 * A client of one model endpoint (the openai package) that asks for JSON Schema structured output
 * (`response_format: {type: 'json_schema'}`), validates the answer with zod (plus `check`), and on
 * an invalid answer sends ONE repair retry quoting the problems. If the answer is still invalid,
 * or the endpoint keeps failing after the openai client's own retries (`maxRetries`, for
 * 429/5xx/timeouts, each request limited to `timeoutMs`), the outcome is `{ok: false, error}`
 * (the judge records a harness error, never a score). Every call is recorded in the ledger, and
 * its budget guard runs before each one.
 *
 * `structured` throws only `BUDGET_EXCEEDED` (from the ledger's guard, before the call),
 * `CANCELLED`, and `LLM_FAILED` for an error that is not the endpoint's (a bug, not a reply).
 */
export class LlmClient {
  private readonly client: OpenAI;
  private temperature: number | null;
  private seed: number | null;
  private readonly configuredDecoding: { temperature: number | null; seed: number | null };
  /** Requests actually sent over HTTP by this client's own code (cache hits excluded, client retries excluded). */
  requestsSent = 0;

  constructor(readonly endpoint: LlmEndpoint, private readonly ledger: Ledger, private readonly options: LlmClientOptions = {}) {
    if (endpoint.apiKey !== NO_API_KEY) registerSecret(endpoint.apiKey);
    this.client = new OpenAI({
      apiKey: endpoint.apiKey,
      baseURL: endpoint.baseURL,
      organization: endpoint.organization,
      timeout: endpoint.timeoutMs ?? 120_000,
      maxRetries: endpoint.maxRetries ?? 2,
    });
    this.temperature = endpoint.temperature === undefined ? 0 : endpoint.temperature;
    this.seed = endpoint.seed === undefined ? 1234 : endpoint.seed;
    this.configuredDecoding = { temperature: this.temperature, seed: this.seed };
  }

  get model(): string { return this.endpoint.model; }

  /** The decoding parameters actually sent (a parameter the endpoint rejected is null). */
  decoding(): { temperature: number | null; seed: number | null } {
    return { temperature: this.temperature, seed: this.seed };
  }

  async structured<T>(req: StructuredRequest<T>, signal?: AbortSignal): Promise<StructuredOutcome<T>> {
    const { cache, cacheScope } = this.options;
    const jsonSchema = toStrictJsonSchema(req.schema);
    const key = AnswerCache.key({
      ...cacheScope, model: this.model, decoding: this.configuredDecoding,
      schemaName: req.schemaName, jsonSchema, messages: req.messages,
    });
    const hit = await cache?.get<T>(key);
    if (hit) {
      const parsed = req.schema.safeParse(hit.value);
      if (parsed.success && !req.check?.(parsed.data)) {
        this.ledger.record(req.item, hit.model, hit.promptTokens, hit.completionTokens, 0, true);
        return { ok: true, value: parsed.data, cached: true };
      }
    }
    const messages: ChatMessage[] = [...req.messages];
    let promptTokens = 0;
    let completionTokens = 0;
    let lastProblem = '';
    for (let attempt = 0; attempt < 2; attempt++) {
      const sent = await this.send(req.item, req.schemaName, messages, jsonSchema, signal);
      if (!sent.ok) return sent;
      promptTokens += sent.promptTokens;
      completionTokens += sent.completionTokens;
      const problem = validate(sent.content, req);
      if (problem.ok) {
        await cache?.put(key, { value: problem.value, model: this.model, promptTokens, completionTokens, storedAt: new Date().toISOString() });
        return { ok: true, value: problem.value, cached: false };
      }
      lastProblem = problem.error;
      logger.warn(`${this.name()} ${req.item}: invalid answer (attempt ${attempt + 1}): ${problem.error}`);
      messages.push({ role: 'assistant', content: sent.content });
      messages.push({
        role: 'user',
        content: `Your answer was not valid: ${problem.error}\nAnswer again with only a JSON object that matches the schema "${req.schemaName}" exactly.`,
      });
    }
    return { ok: false, error: `invalid answer after one repair retry: ${lastProblem}` };
  }

  private name(): string {
    return this.endpoint.name ?? 'judge';
  }

  /** `the judge endpoint http://…/v1` (the openai client's default URL when none is configured). */
  private where(): string {
    return `the ${this.name()} endpoint ${this.client.baseURL}`;
  }

  private async send(item: string, schemaName: string, messages: ChatMessage[], jsonSchema: Record<string, unknown>, signal?: AbortSignal):
    Promise<{ ok: true; content: string; promptTokens: number; completionTokens: number } | { ok: false; error: string }> {
    const maxTokens = this.endpoint.maxCompletionTokens ?? 4096;
    for (let paramRetry = 0; paramRetry < 3; paramRetry++) {
      if (signal?.aborted) throw cancelled(item);
      this.ledger.guard(item, this.model, messages.reduce((n, m) => n + m.content.length, 0), maxTokens);
      const started = performance.now();
      try {
        this.requestsSent++;
        const body: Record<string, unknown> = {
          model: this.model,
          messages,
          max_completion_tokens: maxTokens,
          response_format: { type: 'json_schema', json_schema: { name: schemaName, schema: jsonSchema, strict: true } },
        };
        if (this.temperature !== null) body.temperature = this.temperature;
        if (this.seed !== null) body.seed = this.seed;
        const res = await withChildSignal(signal, (child) =>
          this.client.chat.completions.create(body as any, { signal: child }) as Promise<OpenAI.Chat.Completions.ChatCompletion>);
        const ms = performance.now() - started;
        const pt = res.usage?.prompt_tokens ?? 0;
        const ct = res.usage?.completion_tokens ?? 0;
        this.ledger.record(item, res.model || this.model, pt, ct, ms);
        const msg = res.choices?.[0]?.message;
        if (msg?.refusal) return { ok: false, error: `the model refused: ${msg.refusal}` };
        return { ok: true, content: msg?.content ?? '', promptTokens: pt, completionTokens: ct };
      } catch (e) {
        if (isExpBenchError(e)) throw e;
        if (signal?.aborted || e instanceof OpenAI.APIUserAbortError) throw cancelled(item);
        if (e instanceof OpenAI.BadRequestError && this.dropRejectedParam(String(e.message))) continue;
        if (e instanceof OpenAI.APIConnectionTimeoutError) return { ok: false, error: `${this.where()} timed out after ${this.endpoint.timeoutMs ?? 120_000} ms (${this.endpoint.maxRetries ?? 2} client retries)` };
        if (e instanceof OpenAI.APIConnectionError) {
          return { ok: false, error: `cannot connect to ${this.where()}: ${e.message}${causeOf(e)} (${this.endpoint.maxRetries ?? 2} client retries)`.replace(/\s+/g, ' ') };
        }
        if (e instanceof OpenAI.APIError) return { ok: false, error: `endpoint error ${e.status ?? ''}: ${e.message}`.replace(/\s+/g, ' ') };
        throw new ExpBenchError('LLM_FAILED', item, `unexpected error calling the ${this.name()} model: ${errorMessage(e)}`, { cause: e });
      }
    }
    return { ok: false, error: 'endpoint rejected the decoding parameters' };
  }

  /** Endpoints that reject `seed` or `temperature` get the request again without it. */
  private dropRejectedParam(message: string): boolean {
    if (this.seed !== null && /\bseed\b/i.test(message)) { this.seed = null; return true; }
    if (this.temperature !== null && /\btemperature\b/i.test(message)) { this.temperature = null; return true; }
    return false;
  }
}

/** ` (ECONNREFUSED 127.0.0.1:8123)`: the network error under the openai client's "Connection error.", when it says more. */
function causeOf(e: Error): string {
  let c: unknown = e.cause;
  let deepest = '';
  for (let i = 0; i < 4 && c instanceof Error; i++) {
    const x = c as NodeJS.ErrnoException & { address?: string; port?: number };
    if (x.code) return ` (${x.code}${x.address ? ` ${x.address}${x.port ? `:${x.port}` : ''}` : ''})`;
    if (x.message && x.message !== 'fetch failed') deepest = x.message;
    c = x.cause;
  }
  return deepest ? ` (${deepest})` : '';
}

function validate<T>(content: string, req: StructuredRequest<T>): { ok: true; value: T } | { ok: false; error: string } {
  let json: unknown;
  try {
    json = JSON.parse(content);
  } catch (e) {
    return { ok: false, error: `not JSON (${errorMessage(e)}); started with ${JSON.stringify(content.slice(0, 80))}` };
  }
  const parsed = req.schema.safeParse(json);
  if (!parsed.success) {
    return { ok: false, error: parsed.error.issues.slice(0, 8).map((i) => `${i.path.join('.') || '(root)'}: ${i.message}`).join('; ') };
  }
  const extra = req.check?.(parsed.data);
  return extra ? { ok: false, error: extra } : { ok: true, value: parsed.data };
}

const jsonSchemas = new WeakMap<z.ZodType, Record<string, unknown>>();

/**
 * JSON Schema for OpenAI strict structured output (no `$schema`; every object closed).
 * Converted once per schema object; callers must not modify the result.
 */
export function toStrictJsonSchema(schema: z.ZodType): Record<string, unknown> {
  let js = jsonSchemas.get(schema);
  if (!js) {
    js = z.toJSONSchema(schema, { target: 'draft-7' }) as Record<string, unknown>;
    delete js.$schema;
    jsonSchemas.set(schema, js);
  }
  return js;
}
