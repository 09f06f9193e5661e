import * as path from 'node:path';
import { Command } from 'commander';
import { ExpBenchError } from '../../core/errors';
import { DEFAULT_MAX_TOOL_CALLS, MAX_TOOL_CALLS_PER_REPLY } from '../../core/agent/loop';
import { runAgentTask, type AgentRunResult } from '../../core/flows/agentRun';
import { resolveTaskPin } from '../../core/flows/prepareTask';
import { endpointFromEnv } from '../../core/llm/endpoint';
import { readPriceTable } from '../../core/llm/ledger';
import { findTask, loadDatasets } from '../../core/tasks/loader';
import { datasetDirs } from '../datasets';
import { printJson } from '../output';
import { cancelOnStopSignals } from '../signals';
import { registerMcp } from './agentMcp';
import { endpointFromEnv as judgeEndpointFromEnv } from './judge';

const collect = (v: string, acc: string[]) => [...acc, v];
const positiveInt = (name: string) => (v: string) => {
  const n = Number(v);
  if (!Number.isInteger(n) || n <= 0) throw new ExpBenchError('BAD_INPUT', `${name} ${v}`, 'expected a positive whole number');
  return n;
};
const positive = (name: string) => (v: string) => {
  const n = Number(v);
  if (!Number.isFinite(n) || n <= 0) throw new ExpBenchError('BAD_INPUT', `${name} ${v}`, 'expected a positive number');
  return n;
};

interface AgentRunCliOptions {
  model: string; source?: string; commit?: string; out: string; dataset: string[]; sample?: boolean; cache?: string; image?: string;
  maxSteps?: number; maxToolCalls?: number; maxTokens?: number; budgetUsd?: number; maxMinutes?: number; prices?: string; network?: boolean;
  verify: boolean; judge: boolean; keepContainer?: boolean; json?: boolean;
}

/**
 * `expbench agent run ID --model M [--source …] [--max-steps N] [--max-tokens N] [--budget-usd X]
 * [--max-minutes N] --out DIR [--json]`: prepares the task, runs the built-in agent in the work
 * container, then submits, verifies and judges (src/core/flows/agentRun.ts). The agent's endpoint
 * comes from the environment (`EXPBENCH_AGENT_BASE_URL` or `OPENAI_BASE_URL`,
 * `EXPBENCH_AGENT_API_KEY` or `OPENAI_API_KEY`); the judge's as for `expbench judge`.
 * Exit code 0 when the agent submitted and E_clean is true, 1 otherwise; one summary line
 * (or the whole result with `--json`) on stdout, the steps on stderr.
 */
export function register(program: Command): void {
  const agent = program.command('agent').description('run the built-in agent on a task, or serve a session to an outside agent (mcp)');
  registerMcp(agent);
  agent.command('run').argument('<id>', 'task id <conference>/<paperId>/<index>')
    .requiredOption('--model <name>', 'the agent\'s model (on the endpoint of EXPBENCH_AGENT_BASE_URL / OPENAI_BASE_URL)')
    .requiredOption('--out <dir>', 'session folder to create (must not exist or be empty)')
    .option('--source <url|path>', 'the paper repository (default: the curation file\'s repository, else the task\'s code_url)')
    .option('--commit <sha>', 'commit to pin (default: the curation file\'s commit, else the source\'s HEAD)')
    .option('--dataset <dir>', 'dataset folder (repeatable; default: $EXPBENCH_DATASETS, plus the bundled sample)', collect, [])
    .option('--no-sample', 'leave out the bundled sample task')
    .option('--cache <dir>', 'pristine clone cache (default: ~/.cache/expbench/pristine)')
    .option('--image <tag>', 'sandbox image (default: expbench/sandbox:1)')
    .option('--max-steps <n>', 'most model calls (default 50)', positiveInt('--max-steps'))
    .option('--max-tool-calls <n>', `most tool calls in all (default ${DEFAULT_MAX_TOOL_CALLS}; at most ${MAX_TOOL_CALLS_PER_REPLY} of one reply are run)`, positiveInt('--max-tool-calls'))
    .option('--max-tokens <n>', 'most input + output tokens in all', positiveInt('--max-tokens'))
    .option('--budget-usd <x>', 'most USD (needs the model in --prices)', positive('--budget-usd'))
    .option('--max-minutes <n>', 'most working time, minutes', positive('--max-minutes'))
    .option('--prices <file>', 'price table JSON {model: {inputPerMTok, outputPerMTok}} in USD per 1M tokens')
    .option('--network', 'give the work container network access (default: none)')
    .option('--no-verify', 'do not run the verifier after submitting')
    .option('--no-judge', 'do not run the judge after submitting')
    .option('--keep-container', 'leave the work container running at the end')
    .option('--json', 'print the result as JSON')
    .description('prepare a task, let the agent work it in the container, then submit, verify and judge')
    .action(async (id: string, opts: AgentRunCliOptions) => {
      const dirs = datasetDirs(undefined, opts);
      const task = findTask(await loadDatasets(dirs), id);
      if (!task) throw new ExpBenchError('TASK_NOT_FOUND', id, `no such task in ${dirs.join(', ')}`);
      // The source as for `prepare` (flows/prepareTask.ts resolveTaskPin): --source, else the curation
      // file's pinned repository, else the paper list's local_repo / code_url; none is said there.
      await resolveTaskPin(task, { source: opts.source, commit: opts.commit, image: opts.image });
      const endpoint = endpointFromEnv('agent', { ...process.env, EXPBENCH_AGENT_MODEL: opts.model });
      if (!endpoint) throw new ExpBenchError('BAD_INPUT', 'EXPBENCH_AGENT_BASE_URL', 'no agent endpoint: set EXPBENCH_AGENT_BASE_URL (or OPENAI_BASE_URL) and/or EXPBENCH_AGENT_API_KEY (or OPENAI_API_KEY)');
      const prices = opts.prices ? await readPriceTable(opts.prices) : undefined;
      if (opts.budgetUsd !== undefined && !(prices && Object.hasOwn(prices, opts.model))) {
        throw new ExpBenchError('BAD_INPUT', opts.prices ?? '--prices', `--budget-usd needs the price of ${opts.model} (USD per 1M tokens) in a --prices table`);
      }
      // Ctrl-C, SIGTERM and SIGHUP stop the agent cleanly (reason `cancelled`: clock paused, container removed).
      const ac = cancelOnStopSignals((sig) => `${sig}: stopping the agent (the session is saved, the work container removed)…`);
      try {
        const r = await runAgentTask({
          task, source: opts.source, commit: opts.commit, outDir: path.resolve(opts.out), cacheDir: opts.cache, image: opts.image,
          endpoint, judgeEndpoint: opts.judge ? judgeEndpointFromEnv() : undefined, prices,
          limits: {
            maxSteps: opts.maxSteps, maxToolCalls: opts.maxToolCalls, maxTokens: opts.maxTokens, budgetUsd: opts.budgetUsd,
            maxWorkingMs: opts.maxMinutes === undefined ? undefined : opts.maxMinutes * 60_000,
          },
          network: opts.network, verify: opts.verify, judge: opts.judge, keepContainer: opts.keepContainer, signal: ac.signal,
          onProgress: (p) => process.stderr.write(`${p.step}: ${p.message}\n`),
          onNotice: (m) => process.stderr.write(`expbench: ${m}\n`),
          onStep: (s) => process.stderr.write(`[${s.step}] ${s.kind === 'model' ? 'model' : 'tool '} ${s.text}\n`),
        });
        if (opts.json) printJson(r);
        else console.log(summaryLine(id, r));
        if (!succeeded(r)) process.exitCode = 1;
      } finally {
        ac.dispose();
      }
    });
}

function succeeded(r: AgentRunResult): boolean {
  return r.agent.stop === 'submitted' && !r.saveError && (r.submission?.verify === undefined || r.submission.verify.ok) && !r.submission?.judge?.error;
}

/** `sample/toycal/0: submitted after 4 steps (9 tool calls, 3100 tokens, 0.0000 USD); verify: E = true (…); judge: …; session DIR`. */
export function summaryLine(id: string, r: AgentRunResult): string {
  const a = r.agent;
  const cost = `${a.ledger.promptTokens + a.ledger.completionTokens} tokens, ${a.ledger.usd.toFixed(4)} USD${a.ledger.unpricedCalls ? ` + ${a.ledger.unpricedCalls} unpriced calls` : ''}`;
  const parts = [`${id}: ${a.stop === 'submitted' ? 'submitted' : `stopped (${a.stop}: ${a.message})`} after ${a.steps} steps (${a.toolCalls} tool calls, ${cost})`];
  const step = (name: string, s?: { ok: boolean; summary?: string; error?: string }) => {
    if (s) parts.push(`${name}: ${s.ok ? '' : 'FAILED '}${s.summary ?? ''}${s.error ? ` ${s.error}` : ''}`.trim());
  };
  step('verify', r.submission?.verify);
  step('judge', r.submission?.judge);
  parts.push(`session ${r.sessionDir}`);
  return parts.join('; ');
}
