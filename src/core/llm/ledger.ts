import { promises as fsp } from 'node:fs';
import { z } from 'zod';
import { ExpBenchError } from '../errors';
import { errorMessage } from '../util/errors';

/**
 * Price of one model, in USD per 1,000,000 tokens (the unit OpenAI's price pages use).
 * The table is a setting (`expbench.llm.prices` in VS Code, `--prices FILE` on the command line),
 * shared by every endpoint: the project ships no prices, so a model missing from the table is
 * recorded with `usd: null` and counted in `unpricedCalls`.
 */
export const ModelPrice = z.object({
  inputPerMTok: z.number().min(0),
  outputPerMTok: z.number().min(0),
  /** Cache reads and writes, when the model prices them apart (the trajectory viewer's cost per token kind); without them a call with cache tokens is unpriced there. */
  cacheReadPerMTok: z.number().min(0).optional(),
  cacheWritePerMTok: z.number().min(0).optional(),
}).strict();
export type ModelPrice = z.infer<typeof ModelPrice>;
/** Model name → {@link ModelPrice}. */
export const PriceTable = z.record(z.string(), ModelPrice);
export type PriceTable = z.infer<typeof PriceTable>;

/**
 * Checks a price table given as JSON (a setting's value, a file's content).
 * @param input the setting or file the value came from (named in the error)
 * @throws ExpBenchError BAD_INPUT naming `input` and the first wrong entries
 */
export function parsePriceTable(value: unknown, input: string): PriceTable {
  const r = PriceTable.safeParse(value);
  if (r.success) return r.data;
  const problems = r.error.issues.slice(0, 3).map((i) => `${i.path.join('.') || '(root)'}: ${i.message}`).join('; ');
  throw new ExpBenchError('BAD_INPUT', input, `not a price table {model: {inputPerMTok, outputPerMTok}} in USD per 1M tokens: ${problems}`);
}

/**
 * Reads a price table file (JSON, see {@link PriceTable}).
 * @throws ExpBenchError BAD_INPUT naming `file` when it cannot be read, is not JSON or not a price table
 */
export async function readPriceTable(file: string): Promise<PriceTable> {
  let json: unknown;
  try {
    json = JSON.parse(await fsp.readFile(file, 'utf8'));
  } catch (e) {
    throw new ExpBenchError('BAD_INPUT', file, `cannot read the price table: ${errorMessage(e)}`, { cause: e });
  }
  return parsePriceTable(json, file);
}

/** One model call (or cache hit) in a ledger. */
export const LedgerEntry = z.object({
  item: z.string(),
  model: z.string(),
  promptTokens: z.number().int(),
  completionTokens: z.number().int(),
  /** USD, from the price table; null when the model has no price. */
  usd: z.number().nullable(),
  ms: z.number(),
  cached: z.boolean(),
});
export type LedgerEntry = z.infer<typeof LedgerEntry>;

export const LedgerTotals = z.object({
  calls: z.number().int(), cachedCalls: z.number().int(),
  promptTokens: z.number().int(), completionTokens: z.number().int(), usd: z.number(),
  /** Calls whose model had no price in the table (their USD is not in `usd`). */
  unpricedCalls: z.number().int(),
});
export type LedgerTotals = z.infer<typeof LedgerTotals>;

/**
 * Cost ledger of one run (a judgement, an agent run): tokens and USD per call, totals, and a budget guard.
 *
 * The guard runs *before* a call: when the USD already spent plus the call's worst case
 * (estimated prompt tokens at the input price + `maxCompletionTokens` at the output price)
 * would exceed `budgetUsd`, {@link Ledger.guard} throws `ExpBenchError('BUDGET_EXCEEDED')`.
 */
export class Ledger {
  readonly calls: LedgerEntry[] = [];

  /**
   * @param prices price table (USD per 1M tokens) keyed by model name
   * @param budgetUsd total USD this ledger may spend; undefined = no limit
   * @param spentBeforeUsd USD already spent by earlier runs that share this budget
   */
  constructor(private readonly prices: PriceTable = {}, readonly budgetUsd?: number, private readonly spentBeforeUsd = 0) {}

  /** USD for the given tokens, or null when `model` has no price. */
  cost(model: string, promptTokens: number, completionTokens: number): number | null {
    const p = Object.hasOwn(this.prices, model) ? this.prices[model] : undefined;
    if (!p) return null;
    return (promptTokens * p.inputPerMTok + completionTokens * p.outputPerMTok) / 1e6;
  }

  /** USD spent so far (earlier runs + priced calls of this run). */
  spentUsd(): number {
    return this.spentBeforeUsd + this.calls.reduce((s, c) => s + (c.usd ?? 0), 0);
  }

  /**
   * Throws BUDGET_EXCEEDED when a call of `model` with about `promptChars` characters of prompt and
   * at most `maxCompletionTokens` output tokens could take the total over the budget.
   * Prompt tokens are estimated as ceil(chars / 4). A model without a price cannot be guarded: with
   * a budget set, such a call is refused too (an unknown cost could exceed any budget).
   */
  guard(item: string, model: string, promptChars: number, maxCompletionTokens: number): void {
    if (this.budgetUsd === undefined) return;
    const worst = this.cost(model, Math.ceil(promptChars / 4), maxCompletionTokens);
    if (worst === null) {
      throw new ExpBenchError('BUDGET_EXCEEDED', item, `model ${model} has no price in the price table, so a budget of ${this.budgetUsd} USD cannot be guarded`);
    }
    const spent = this.spentUsd();
    if (spent + worst > this.budgetUsd) {
      throw new ExpBenchError('BUDGET_EXCEEDED', item,
        `this call could cost up to ${worst.toFixed(6)} USD; ${spent.toFixed(6)} of the ${this.budgetUsd} USD budget is already spent`);
    }
  }

  /** Records one call (or one cache hit: `cached`, counted with 0 USD since nothing was paid). */
  record(item: string, model: string, promptTokens: number, completionTokens: number, ms: number, cached = false): LedgerEntry {
    const entry: LedgerEntry = {
      item, model, promptTokens, completionTokens, ms,
      usd: cached ? 0 : this.cost(model, promptTokens, completionTokens),
      cached,
    };
    this.calls.push(entry);
    return entry;
  }

  totals(): LedgerTotals {
    return totalsOf(this.calls);
  }
}

/** Totals of ledger entries: tokens and USD of paid calls (cache hits count as calls with 0 USD). */
export function totalsOf(calls: LedgerEntry[]): LedgerTotals {
  const t: LedgerTotals = { calls: 0, cachedCalls: 0, promptTokens: 0, completionTokens: 0, usd: 0, unpricedCalls: 0 };
  for (const c of calls) {
    if (c.cached) { t.cachedCalls++; continue; }
    t.calls++;
    t.promptTokens += c.promptTokens;
    t.completionTokens += c.completionTokens;
    if (c.usd === null) t.unpricedCalls++;
    else t.usd += c.usd;
  }
  return t;
}
