import { spawn } from 'node:child_process';
import { closeSync, existsSync, openSync, promises as fsp } from 'node:fs';
import * as path from 'node:path';
import type * as vscode from 'vscode';
import { ExpBenchError } from '../../core/errors';
import { endpointEnvNames, type EndpointName } from '../../core/llm/endpoint';
import { projectCli } from '../../core/placement/cli';
import { RunSetLayout } from '../../core/runs/layout';
import { readRunSet } from '../../core/runs/state';
import { apiKeyOf, llmEndpoint } from '../judgeConfig';
import { setting } from '../settings';

/**
 * The environment a run set started from VS Code runs with: this window's environment, and the
 * agent's and the judge's endpoints from the settings (`expbench.agent.baseUrl`, `expbench.judge.*`)
 * with their API keys from SecretStorage, as the CLI's `EXPBENCH_AGENT_*` / `EXPBENCH_JUDGE_*`
 * variables. Keys travel in the child's environment only (never a command line or a file).
 */
export async function runSetEnv(secrets: vscode.SecretStorage): Promise<NodeJS.ProcessEnv> {
  const env: NodeJS.ProcessEnv = { ...process.env };
  const put = (name: EndpointName, k: 'baseUrl' | 'apiKey' | 'organization' | 'model', v: string | undefined) => { if (v) env[endpointEnvNames(name)[k][0]] = v; };
  put('agent', 'baseUrl', setting('agent.baseUrl'));
  put('agent', 'organization', setting('agent.organization'));
  put('agent', 'apiKey', await apiKeyOf(secrets, 'agent'));
  const judge = await llmEndpoint(secrets, 'judge');
  if (judge) {
    put('judge', 'baseUrl', judge.baseURL);
    put('judge', 'model', judge.model);
    put('judge', 'organization', judge.organization);
    put('judge', 'apiKey', judge.apiKey);
  }
  return env;
}

/**
 * Starts `expbench runs start SPEC --out DIR` or `runs resume DIR` as a process of its own
 * (detached: closing the window leaves the run going; `runs resume` or this window re-attach to
 * it through the state file), its output in `logDir/<id>.log`. Resolves once the run has taken the
 * run set (the state records `orchestrator.started` by its process); rejects when the process
 * ended without it (a refused spec, a run set held by another process: the log's tail is the
 * message).
 * @throws ExpBenchError BAD_INPUT with the log's last lines when the process ended without taking the run set
 */
export async function startInBackground(args: string[], dir: string, logDir: string, env: NodeJS.ProcessEnv): Promise<{ pid: number; log: string }> {
  await fsp.mkdir(logDir, { recursive: true });
  const log = path.join(logDir, `${path.basename(dir)}-${new Date().toISOString().replace(/[:.]/g, '-')}.log`);
  const cli = projectCli(env);
  const layout = new RunSetLayout(dir);
  // Only records appended after this start count (an earlier run's process may have had the same pid).
  const from = (await fsp.stat(layout.state).catch(() => undefined))?.size ?? 0;
  const fd = openSync(log, 'a', 0o600);
  let child;
  try {
    child = spawn(cli.exe, [...cli.args, ...args], { env: { ...env, ...cli.env }, detached: true, stdio: ['ignore', fd, fd] });
  } finally {
    closeSync(fd);
  }
  const pid = child.pid;
  if (pid === undefined) throw new ExpBenchError('BAD_INPUT', cli.exe, 'could not start the expbench CLI');
  let exited: number | null | undefined;
  child.once('exit', (code) => { exited = code; });
  child.unref();
  const mine = (owner: string) => owner.split('/')[1] === String(pid);
  for (;;) {
    const took = existsSync(layout.state) && (await readRunSet(layout.state, from).catch(() => undefined))?.records.some((r) => r.type === 'orchestrator.started' && mine(r.owner));
    if (took) return { pid, log };
    if (exited !== undefined) {
      const text = await fsp.readFile(log, 'utf8').catch(() => '');
      const tail = text.trim().split('\n').slice(-12).join('\n');
      throw new ExpBenchError('BAD_INPUT', dir, `\`expbench ${args.join(' ')}\` ended (exit ${exited}): ${tail || 'no output'} (log ${log})`);
    }
    await new Promise((r) => setTimeout(r, 100));
  }
}
