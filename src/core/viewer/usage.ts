import type { ModelPrice, PriceTable } from '../llm/ledger';
import { callTokens, type ModelCall } from '../steps/step';
import type { SourceUsage, Trajectory } from '../trajectory/types';

/**
 * A trajectory's token usage and cost as the viewer and `traj show --json` state them (room
 * `viewer`, pure). Tokens per kind as {@link ModelCall} counts them (input at the full rate, cache
 * reads and writes apart, reasoning inside output). The total is the log's own when it states one
 * (Inspect `model_usage`, OpenHands `metrics`, SWE-agent `model_stats`, ATIF `final_metrics`),
 * else the sum of the steps; the steps' sum is kept beside it, so a difference shows.
 *
 * Cost: a call's cost as its source states it; else from the price table (USD per 1M tokens per
 * kind: input, output, cache read, cache write — `expbench.llm.prices`); a call whose model, or
 * one of whose token kinds, has no price is **unpriced** (counted, never guessed). The
 * trajectory's cost is the log's own when it states one, else the sum of the priced calls.
 */
export interface UsageTotals {
  inputTokens: number;
  outputTokens: number;
  cacheReadTokens: number;
  cacheWriteTokens: number;
  reasoningTokens: number;
  /** The trajectory's total: the log's own when it states one, else {@link stepTokens}. */
  totalTokens: number;
  /** The sum of the steps' model calls ({@link callTokens}). */
  stepTokens: number;
  /** Where `totalTokens` and the kinds come from: the log's field, or `the steps`. */
  from: string;
  /** Model calls with a count (steps), or the log's own call count when it states one. */
  calls: number;
  /** USD: the log's own, else the sum of the priced calls; null when nothing is priced. */
  costUsd: number | null;
  /** `the log` (its own cost), `the steps` (costs the calls state), `the price table`, or both of the last (`the steps and the price table`). */
  costFrom: string | null;
  /** Calls with tokens but no cost from the source and no price in the table. */
  unpricedCalls: number;
  /** `inputTokens` hold the cached ones: the log counts only prompt tokens (SWE-agent `tokens_sent`). */
  inputIncludesCache?: boolean;
  /** The log's own totals, when it states them. */
  source?: SourceUsage;
  /** The whole file's totals, when it states them (Inspect's header `stats.model_usage`). */
  file?: SourceUsage;
}

/** The cost of one call: as the source states it, else from `prices`; `unpriced` when neither can say. */
export function callCost(m: ModelCall | undefined, prices: PriceTable = {}): { usd?: number; from?: 'source' | 'table'; unpriced?: true } {
  if (!m) return {};
  if (m.costUsd !== undefined) return { usd: m.costUsd, from: 'source' };
  if (callTokens(m) === undefined) return {};
  const p: ModelPrice | undefined = m.model && Object.hasOwn(prices, m.model) ? prices[m.model] : undefined;
  if (!p) return { unpriced: true };
  if ((m.cacheReadTokens ?? 0) > 0 && p.cacheReadPerMTok === undefined) return { unpriced: true };
  if ((m.cacheWriteTokens ?? 0) > 0 && p.cacheWritePerMTok === undefined) return { unpriced: true };
  const usd = ((m.inputTokens ?? 0) * p.inputPerMTok + (m.outputTokens ?? 0) * p.outputPerMTok
    + (m.cacheReadTokens ?? 0) * (p.cacheReadPerMTok ?? 0) + (m.cacheWriteTokens ?? 0) * (p.cacheWritePerMTok ?? 0)) / 1e6;
  return { usd, from: 'table' };
}

/** The usage totals of `t` (see {@link UsageTotals}). */
export function usageTotals(t: Trajectory, prices: PriceTable = {}): UsageTotals {
  let input = 0; let output = 0; let cacheRead = 0; let cacheWrite = 0; let reasoning = 0; let steps = 0; let calls = 0;
  let cost = 0; let priced = 0; let unpriced = 0; const costFrom = new Set<string>();
  for (const s of t.steps) {
    const m = s.model;
    const n = callTokens(m);
    if (n === undefined) continue;
    calls++; steps += n;
    input += m!.inputTokens ?? 0; output += m!.outputTokens ?? 0; cacheRead += m!.cacheReadTokens ?? 0; cacheWrite += m!.cacheWriteTokens ?? 0; reasoning += m!.reasoningTokens ?? 0;
    const c = callCost(m, prices);
    if (c.usd !== undefined) { cost += c.usd; priced++; costFrom.add(c.from === 'source' ? 'the steps' : 'the price table'); } else if (c.unpriced) unpriced++;
  }
  const src = t.sourceUsage;
  const own = src?.totalTokens !== undefined;
  const promptOnly = own && src!.inputTokens === undefined && src!.promptTokens !== undefined;
  const out: UsageTotals = {
    inputTokens: own ? src!.inputTokens ?? src!.promptTokens ?? input : input,
    outputTokens: own ? src!.outputTokens ?? output : output,
    cacheReadTokens: own ? src!.cacheReadTokens ?? cacheRead : cacheRead,
    cacheWriteTokens: own ? src!.cacheWriteTokens ?? cacheWrite : cacheWrite,
    reasoningTokens: own ? src!.reasoningTokens ?? reasoning : reasoning,
    totalTokens: own ? src!.totalTokens! : steps,
    stepTokens: steps,
    from: own ? src!.from : 'the steps',
    calls: src?.calls ?? calls,
    costUsd: src?.costUsd !== undefined ? src.costUsd : priced ? cost : null,
    costFrom: src?.costUsd !== undefined ? 'the log' : priced ? [...costFrom].sort().join(' and ') : null,
    unpricedCalls: src?.costUsd !== undefined ? 0 : unpriced,
    ...(promptOnly ? { inputIncludesCache: true } : {}),
    ...(src ? { source: src } : {}),
    ...(t.fileUsage ? { file: t.fileUsage } : {}),
  };
  return out;
}

/** The file's own totals (`fileUsage`), else the sum of its trajectories' totals, labelled so. */
export function fileTotals(list: readonly Trajectory[], prices: PriceTable = {}): { totalTokens: number; costUsd: number | null; from: string; byKind: Omit<SourceUsage, 'from' | 'byModel'> } {
  const declared = list.find((t) => t.fileUsage)?.fileUsage;
  if (declared?.totalTokens !== undefined) {
    const { from, byModel: _byModel, ...byKind } = declared;
    return { totalTokens: declared.totalTokens, costUsd: declared.costUsd ?? null, from, byKind };
  }
  const parts = list.map((t) => usageTotals(t, prices));
  const sum = (k: keyof Pick<UsageTotals, 'inputTokens' | 'outputTokens' | 'cacheReadTokens' | 'cacheWriteTokens' | 'reasoningTokens' | 'totalTokens'>) => parts.reduce((n, p) => n + p[k], 0);
  const costs = parts.map((p) => p.costUsd).filter((c): c is number => c !== null);
  return {
    totalTokens: sum('totalTokens'), costUsd: costs.length ? costs.reduce((a, b) => a + b, 0) : null,
    from: list.length === 1 ? parts[0]?.from ?? 'the steps' : `the sum of its ${list.length} trajectories`,
    byKind: { inputTokens: sum('inputTokens'), outputTokens: sum('outputTokens'), cacheReadTokens: sum('cacheReadTokens'), cacheWriteTokens: sum('cacheWriteTokens'), reasoningTokens: sum('reasoningTokens'), totalTokens: sum('totalTokens') },
  };
}
