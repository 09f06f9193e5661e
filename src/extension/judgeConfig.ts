import * as vscode from 'vscode';
import { endpointFrom, type EndpointName, type LlmEndpoint } from '../core/llm/endpoint';
import type { PriceTable } from '../core/llm/ledger';
import { registerSecret } from '../core/log';
import type { CommandSpec } from './commands';
import { setting } from './settings';

/** SecretStorage keys of this extension (the only place an API key is kept): one per model endpoint. */
export type SecretKey = `expbench.llm.${EndpointName}.apiKey`;

/** The SecretStorage key of endpoint `name`'s API key, e.g. `expbench.llm.judge.apiKey`. */
export function secretKeyOf(name: EndpointName): SecretKey {
  return `expbench.llm.${name}.apiKey`;
}

/** Where a key was kept before endpoints were named: still read (and moved to {@link secretKeyOf}) so a stored key keeps working. */
const LEGACY_SECRET_KEYS: Partial<Record<EndpointName, string>> = { judge: 'expbench.judge.apiKey' };

/** Settings of each endpoint (`expbench.<name>.baseUrl`, `.model`, `.organization`). */
const ENDPOINT_SETTINGS = {
  judge: { baseUrl: 'judge.baseUrl', model: 'judge.model', organization: 'judge.organization' },
  agent: { baseUrl: 'agent.baseUrl', model: 'agent.model', organization: 'agent.organization' },
} as const satisfies Record<EndpointName, object>;

const LABEL: Record<EndpointName, string> = { judge: 'Judge', agent: 'Agent' };

/**
 * The API key of endpoint `name` from SecretStorage; a judge key stored under the former name
 * `expbench.judge.apiKey` is moved to `expbench.llm.judge.apiKey` on the first read.
 */
export async function apiKeyOf(secrets: vscode.SecretStorage, name: EndpointName): Promise<string | undefined> {
  const key = await secrets.get(secretKeyOf(name));
  if (key) return key;
  const legacy = LEGACY_SECRET_KEYS[name];
  const old = legacy ? await secrets.get(legacy) : undefined;
  if (!old || !legacy) return undefined;
  await secrets.store(secretKeyOf(name), old);
  await secrets.delete(legacy);
  return old;
}

/**
 * Endpoint `name` from its settings and its API key in SecretStorage. Undefined when its model
 * setting is empty, or neither a base URL nor a key is set (for the judge: the deterministic
 * heuristic pre-judge runs then, labelled "heuristic"). A base URL without a key (a local server)
 * gets a placeholder key.
 */
export async function llmEndpoint(secrets: vscode.SecretStorage, name: EndpointName): Promise<LlmEndpoint | undefined> {
  const s = ENDPOINT_SETTINGS[name];
  const model = setting(s.model);
  if (!model) return undefined;
  const apiKey = await apiKeyOf(secrets, name);
  registerSecret(apiKey);
  return endpointFrom(name, { baseUrl: setting(s.baseUrl), model, organization: setting(s.organization), apiKey }, `expbench.${s.model}`);
}

/** What a judgement needs from the settings: the endpoint (undefined → heuristic), prices, USD budget. */
export interface JudgeConfig {
  endpoint?: LlmEndpoint;
  /** `expbench.llm.prices`, USD per 1M tokens by model. */
  prices: PriceTable;
  /** `expbench.judge.budgetUsd` when above 0 (0 = no limit). */
  budgetUsd?: number;
}

/** The judge's endpoint, prices and budget from settings and SecretStorage. */
export async function judgeConfig(secrets: vscode.SecretStorage): Promise<JudgeConfig> {
  const budget = setting('judge.budgetUsd');
  return { endpoint: await llmEndpoint(secrets, 'judge'), prices: setting('llm.prices'), budgetUsd: budget > 0 ? budget : undefined };
}

/**
 * Commands "Set Judge API Key…", "Clear Judge API Key", "Set Agent API Key…" and "Clear Agent
 * API Key" (`expbench.set<Name>ApiKey`, `expbench.clear<Name>ApiKey`): SecretStorage only, never
 * settings or files.
 */
export function secretCommands(secrets: vscode.SecretStorage): CommandSpec[] {
  return (Object.keys(LABEL) as EndpointName[]).flatMap((name): CommandSpec[] => [
    {
      id: `expbench.set${LABEL[name]}ApiKey`,
      async execute(args?: { key?: string }) {
        const key = args?.key ?? await vscode.window.showInputBox({
          prompt: `API key of the OpenAI-compatible ${name} endpoint (kept in VS Code SecretStorage)`, password: true, ignoreFocusOut: true,
        });
        if (!key) return;
        await secrets.store(secretKeyOf(name), key);
        const legacy = LEGACY_SECRET_KEYS[name];
        if (legacy) await secrets.delete(legacy);
        void vscode.window.showInformationMessage(`EXP-Bench: ${name} API key stored in SecretStorage.`);
      },
    },
    {
      id: `expbench.clear${LABEL[name]}ApiKey`,
      async execute() {
        await secrets.delete(secretKeyOf(name));
        const legacy = LEGACY_SECRET_KEYS[name];
        if (legacy) await secrets.delete(legacy);
        void vscode.window.showInformationMessage(`EXP-Bench: ${name} API key removed.`);
      },
    },
  ]);
}
