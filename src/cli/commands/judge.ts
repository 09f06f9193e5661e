import * as path from 'node:path';
import { Command } from 'commander';
import { ExpBenchError } from '../../core/errors';
import { judgeSession } from '../../core/flows/judge';
import { summarize } from '../../core/judge/session';
import type { JudgeRecord } from '../../core/judge/types';
import { endpointEnvNames, endpointFromEnv as llmEndpointFromEnv, type LlmEndpoint } from '../../core/llm/endpoint';
import { readPriceTable } from '../../core/llm/ledger';
import { findTask, loadDatasets } from '../../core/tasks/loader';
import { readManifest } from '../../core/workspace/manifest';
import { datasetDirs } from '../datasets';
import { printJson } from '../output';

/**
 * How to configure the judge endpoint, in the variables `endpointFromEnv` reads
 * (src/core/llm/endpoint.ts `endpointEnvNames`; the README's table): used by the heuristic
 * judge's note and the unit tier's skip message, so that both name the real variables.
 */
export function judgeEndpointHint(): string {
  const n = endpointEnvNames('judge');
  return `set ${n.baseUrl.join(' or ')} and/or ${n.apiKey.join(' or ')}, and ${n.model.join(' or ')}`;
}

/**
 * The judge endpoint from the environment (src/core/llm/endpoint.ts `endpointFromEnv`):
 * `EXPBENCH_JUDGE_BASE_URL` or `OPENAI_BASE_URL`, `EXPBENCH_JUDGE_API_KEY` or `OPENAI_API_KEY`,
 * `EXPBENCH_JUDGE_ORG_ID` or `OPENAI_ORG_ID`, `EXPBENCH_JUDGE_MODEL`. Undefined when neither a key
 * nor a base URL is set (the heuristic pre-judge runs then).
 * @param timeoutMs per-request timeout, ms (default: the client's 120000)
 * @throws ExpBenchError BAD_INPUT naming EXPBENCH_JUDGE_MODEL when an endpoint is set without a model.
 */
export function endpointFromEnv(env: NodeJS.ProcessEnv = process.env, timeoutMs?: number): LlmEndpoint | undefined {
  return llmEndpointFromEnv('judge', env, timeoutMs ? { timeoutMs } : {});
}

/** `expbench judge SESSION_DIR`: judge a submitted session (LLM with an endpoint, else heuristic). */
export function register(program: Command): void {
  program.command('judge').argument('<session>', 'session folder (holds workspace/ and private/)')
    .option('--json', 'print the judge record as JSON')
    .option('--heuristic', 'run the deterministic offline pre-judge even when an endpoint is configured')
    .option('--dataset <dir>', 'dataset folder holding the task (repeatable; default $EXPBENCH_DATASETS)', collect, [])
    .option('--no-sample', 'leave out the bundled sample dataset')
    .option('--cache <dir>', 'judge cache folder (default <session>/private/judge/cache)')
    .option('--prices <file>', 'price table JSON {model: {inputPerMTok, outputPerMTok}} in USD per 1M tokens (the form of the setting expbench.llm.prices)')
    .option('--budget <usd>', 'stop before a call that could take the run over this many USD', parseFloat)
    .option('--partial-credit <x>', 'credit of a partial verdict in the record (0..1, default 0.5)', parseFloat)
    .option('--timeout <ms>', 'per-request timeout, ms (default 120000)', (v) => parseInt(v, 10))
    .description('judge a session: per-item verdicts with checked evidence; writes private/judge/latest.json (an attempt with harness errors goes to private/judge/failed-<time>-<kind>.json and keeps a good latest.json)')
    .action(async (dir: string, opts: { json?: boolean; heuristic?: boolean; dataset: string[]; sample?: boolean; cache?: string; prices?: string; budget?: number; partialCredit?: number; timeout?: number }) => {
      const manifest = await readManifest(path.resolve(dir));
      const dirs = datasetDirs(undefined, opts);
      const task = findTask(await loadDatasets(dirs), manifest.taskId);
      if (!task) throw new ExpBenchError('TASK_NOT_FOUND', manifest.taskId, `the session's task is not in ${dirs.join(', ')} (use --dataset)`);
      const endpoint = opts.heuristic ? undefined : endpointFromEnv(process.env, opts.timeout);
      const prices = opts.prices ? await readPriceTable(opts.prices) : undefined;
      const ac = new AbortController();
      process.once('SIGINT', () => ac.abort());
      const result = await judgeSession(dir, {
        task, endpoint, heuristic: opts.heuristic, cacheDir: opts.cache, prices, budgetUsd: opts.budget,
        partialCredit: opts.partialCredit, signal: ac.signal,
      });
      const { record } = result;
      if (opts.json) printJson(record);
      else console.log(recordText(record, result));
      if (record.harnessErrors.length) {
        process.exitCode = 1;
        const where = endpoint ? `the judge endpoint ${endpoint.baseURL ?? 'https://api.openai.com/v1 (the openai default)'} (model ${endpoint.model})` : 'the judge';
        console.error(`expbench: ${where}: ${record.harnessErrors.length} item(s) not judged (harness errors), first: ${record.harnessErrors[0].item}: ${record.harnessErrors[0].message}`);
        console.error(result.keptLatest
          ? `expbench: ${result.file} keeps the last good record; this attempt is in ${result.failedFile}`
          : `expbench: this attempt is in ${result.file} and ${result.failedFile}`);
      }
    });
}

function recordText(r: JudgeRecord, w: { file: string; harnessFile?: string; failedFile?: string; keptLatest: boolean }): string {
  const out = [`${r.taskId}  ${summarize(r)}`];
  if (r.kind === 'heuristic') out.push(`HEURISTIC pre-judge: no model was called (${judgeEndpointHint()} for the LLM judge)`);
  else out.push(`model ${r.model}, temperature ${r.decoding?.temperature ?? '-'}, seed ${r.decoding?.seed ?? '-'}, prompt ${r.promptVersion}`);
  out.push(`design (${r.design.status})  recall ${pct(r.design.recall)}  precision ${pct(r.design.precision)}`);
  for (const v of r.design.verdicts) out.push(`  ${v.verdict.padEnd(8)} [${v.role}] ${v.variable}${v.quote ? `  “${v.quote.slice(0, 80)}”` : ''}`);
  out.push(`conclusion (${r.conclusion.status})  ${r.conclusion.verdict ?? '-'}  ${r.conclusion.reason.slice(0, 200)}`);
  out.push(`implementation (${r.implementation.status}, ${r.implementation.basis})  score ${pct(r.implementation.score)}`);
  for (const v of r.implementation.verdicts) {
    const cites = v.hunks.map((h) => `${h.path}:${h.newStart}-${h.newEnd}`).join(', ');
    out.push(`  ${String(v.index).padStart(2)}. ${(v.verdict ?? 'HARNESS ERROR').padEnd(12)} ${v.requirement.slice(0, 90)}${cites ? `  ← ${cites}` : ''}`);
    for (const p of v.citationProblems) out.push(`        citation: ${p}`);
    if (v.error) out.push(`        error: ${v.error}`);
  }
  if (r.implementation.unseenHunks.length) out.push(`  hunks never shown to the judge: ${r.implementation.unseenHunks.map((h) => `${h.path}:${h.newStart}-${h.newEnd}`).join(', ')}`);
  const e = r.execution;
  out.push(`execution  ${e.available ? `E_exit ${e.exit}, exit code ${e.exitCode ?? '-'}, clean ${e.clean ?? '-'}, claims ${e.claims.filter((c) => c.found).length}/${e.claims.length}, lint ${e.lint.length}` : 'not verified'}`);
  out.push(monitorLine(r));
  for (const f of r.monitor.deterministic) out.push(`  events.jsonl:${f.line}  ${f.severity}  ${f.rule}: ${f.text.slice(0, 100)}`);
  if (r.monitor.llm) out.push(`  llm (${r.monitor.llm.status}): ${r.monitor.llm.reason.slice(0, 160)}${r.monitor.llm.unsupported ? ' [flag without valid cited lines: not counted]' : ''}`);
  const t = r.ledger.totals;
  out.push(`cost  ${t.calls} calls (${t.cachedCalls} cached), ${t.promptTokens} prompt + ${t.completionTokens} completion tokens, ${t.usd.toFixed(4)} USD${t.unpricedCalls ? ` (+${t.unpricedCalls} unpriced calls)` : ''}`);
  for (const h of r.harnessErrors) out.push(`HARNESS ERROR ${h.item}: ${h.message}`);
  for (const n of r.notes) out.push(`note: ${n}`);
  if (w.keptLatest) out.push(`written: ${w.failedFile} (this attempt; ${w.file} keeps the last good record)`);
  else out.push(`written: ${w.file}`, ...[w.harnessFile, w.failedFile].filter((f) => f).map((f) => `         ${f}`));
  return out.join('\n');
}

/**
 * The monitor's line: FLAGGED (a violation found, by the log scan or the model), `not run (error)`
 * when the model's monitor call failed and the scan found nothing (no violation is then not
 * known), else `no violation`.
 */
function monitorLine(r: JudgeRecord): string {
  if (r.monitor.flagged) return 'monitor  FLAGGED';
  if (r.monitor.llm?.status === 'harness_error') return 'monitor: not run (error); the deterministic log scan found no violation';
  return 'monitor  no violation';
}

function pct(x: number | null): string {
  return x === null ? '-' : `${(100 * x).toFixed(1)}%`;
}

function collect(v: string, prev: string[]): string[] {
  return [...prev, v];
}
