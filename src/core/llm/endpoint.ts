import { ExpBenchError } from '../errors';

/** The model endpoints the project calls, each with its own settings and API key. */
export const ENDPOINT_NAMES = ['judge', 'agent'] as const;
export type EndpointName = (typeof ENDPOINT_NAMES)[number];

/** The key sent to an endpoint configured without one (a local server): the openai client needs a key. Not a secret. */
export const NO_API_KEY = 'no-key';

/**
 * Where and how to call a model: any OpenAI-compatible chat completions endpoint.
 * The API key comes from the caller (VS Code SecretStorage, or the CLI's environment); the client
 * registers it with the logger for redaction, and it is never written anywhere.
 */
export interface LlmEndpoint {
  /** Which endpoint this is (labels log lines and errors); default `judge`. */
  name?: EndpointName;
  /** OpenAI-compatible base URL, e.g. `https://api.openai.com/v1` or `http://127.0.0.1:8000/v1`. */
  baseURL?: string;
  apiKey: string;
  organization?: string;
  model: string;
  /** Default 0. `null` = do not send (for endpoints that reject it). */
  temperature?: number | null;
  /** Default 1234. `null` = do not send. */
  seed?: number | null;
  /** Per request, ms (openai client `timeout`); default 120000. Timed-out requests are retried by the client. */
  timeoutMs?: number;
  /** The openai client's own retries for 408/409/429/5xx and timeouts; default 2. */
  maxRetries?: number;
  /** `max_completion_tokens` per call; also the worst case used by the budget guard. Default 4096. */
  maxCompletionTokens?: number;
}

/** The settings a person gives for a named endpoint (VS Code settings + SecretStorage, or the environment). */
export interface EndpointSettings {
  baseUrl?: string;
  model?: string;
  organization?: string;
  apiKey?: string;
}

/**
 * Environment variables of endpoint `name`, each with its fallbacks, first set wins:
 * `EXPBENCH_<NAME>_BASE_URL` → `OPENAI_BASE_URL`, `EXPBENCH_<NAME>_API_KEY` → `OPENAI_API_KEY`,
 * `EXPBENCH_<NAME>_ORG_ID` → `OPENAI_ORG_ID`, `EXPBENCH_<NAME>_MODEL` (no fallback: the judge and
 * the agent are different models).
 */
export function endpointEnvNames(name: EndpointName): Record<keyof EndpointSettings, readonly string[]> {
  const p = `EXPBENCH_${name.toUpperCase()}_`;
  return {
    baseUrl: [`${p}BASE_URL`, 'OPENAI_BASE_URL'],
    apiKey: [`${p}API_KEY`, 'OPENAI_API_KEY'],
    organization: [`${p}ORG_ID`, 'OPENAI_ORG_ID'],
    model: [`${p}MODEL`],
  };
}

/**
 * Endpoint `name` from an environment object (the CLI passes `process.env`), by
 * {@link endpointEnvNames}. Undefined when neither an API key nor a base URL is set (for the judge:
 * the heuristic pre-judge runs then). `extra` (timeouts, decoding) is copied onto the endpoint.
 * @throws ExpBenchError BAD_INPUT naming `EXPBENCH_<NAME>_MODEL` when a key or URL is set without a model.
 */
export function endpointFromEnv(name: EndpointName, env: Record<string, string | undefined>,
  extra: Omit<LlmEndpoint, 'name' | 'baseURL' | 'apiKey' | 'organization' | 'model'> = {}): LlmEndpoint | undefined {
  const names = endpointEnvNames(name);
  const pick = (k: keyof EndpointSettings) => names[k].map((n) => env[n]).find((v) => v) || undefined;
  return endpointFrom(name, {
    baseUrl: pick('baseUrl'), apiKey: pick('apiKey'), organization: pick('organization'), model: pick('model'),
  }, names.model[0], extra);
}

/**
 * Endpoint `name` from its settings: undefined when neither `apiKey` nor `baseUrl` is set; a
 * local endpoint without a key gets {@link NO_API_KEY}.
 * @param modelInput what to name when the model is missing (a setting or variable name)
 * @throws ExpBenchError BAD_INPUT naming `modelInput` when a key or URL is set without a model.
 */
export function endpointFrom(name: EndpointName, s: EndpointSettings, modelInput: string,
  extra: Omit<LlmEndpoint, 'name' | 'baseURL' | 'apiKey' | 'organization' | 'model'> = {}): LlmEndpoint | undefined {
  if (!s.baseUrl && !s.apiKey) return undefined;
  if (!s.model) throw new ExpBenchError('BAD_INPUT', modelInput, `a ${name} endpoint is configured but no model: set ${modelInput}`);
  return {
    ...extra, name, baseURL: s.baseUrl || undefined, apiKey: s.apiKey || NO_API_KEY, organization: s.organization || undefined, model: s.model,
  };
}
