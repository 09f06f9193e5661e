import * as vscode from 'vscode';
import type { JudgeEndpoint } from '../core/judge/provider';
import { registerSecret } from '../core/log';
import type { CommandSpec } from './commands';

/** SecretStorage keys of this extension (the only place an API key is kept). */
export type SecretKey = 'expbench.judge.apiKey';
const API_KEY: SecretKey = 'expbench.judge.apiKey';

/**
 * The judge endpoint from settings (`expbench.judge.baseUrl`, `.model`, `.organization`) and the
 * API key from VS Code SecretStorage. Undefined when no model endpoint is configured: the
 * deterministic heuristic pre-judge runs then, labelled "heuristic".
 */
export async function judgeEndpoint(secrets: vscode.SecretStorage): Promise<JudgeEndpoint | undefined> {
  const c = vscode.workspace.getConfiguration('expbench.judge');
  const baseURL = c.get<string>('baseUrl', '') || undefined;
  const model = c.get<string>('model', '');
  const apiKey = await secrets.get(API_KEY);
  if (!model || (!apiKey && !baseURL)) return undefined;
  registerSecret(apiKey);
  return { baseURL, model, apiKey: apiKey ?? 'none', organization: c.get<string>('organization', '') || undefined };
}

/** Commands "Set Judge API Key…" and "Clear Judge API Key" (SecretStorage only; never settings or files). */
export function secretCommands(secrets: vscode.SecretStorage): CommandSpec[] {
  return [
    {
      id: 'expbench.setJudgeApiKey',
      async execute() {
        const key = await vscode.window.showInputBox({ prompt: 'API key of the OpenAI-compatible judge endpoint (kept in VS Code SecretStorage)', password: true, ignoreFocusOut: true });
        if (!key) return;
        await secrets.store(API_KEY, key);
        void vscode.window.showInformationMessage('EXP-Bench: judge API key stored in SecretStorage.');
      },
    },
    {
      id: 'expbench.clearJudgeApiKey',
      async execute() {
        await secrets.delete(API_KEY);
        void vscode.window.showInformationMessage('EXP-Bench: judge API key removed.');
      },
    },
  ];
}
