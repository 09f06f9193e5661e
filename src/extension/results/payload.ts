import { METRICS } from '../../core/metrics/scores';
import type { FigureSet } from '../../core/figures/model';
import type { ResultsMessage } from '../../protocol/results';

/**
 * The Results view's message for a figure set: the figures as they are, the table's rows with
 * each cell's Wilson interval and run keys, the runs' open targets. Nothing is recomputed.
 */
export function resultsMessage(set: FigureSet, opts: { source: string; sourceDir?: string; policies: string[]; by: 'folder' | 'actor'; skipped: ResultsMessage['skipped']; updated?: Date }): ResultsMessage {
  const t = set.table;
  return {
    type: 'results', source: opts.source, sourceDir: opts.sourceDir ?? opts.source, policy: set.policy, policies: opts.policies, by: opts.by,
    bootstrap: { resamples: t.bootstrap.resamples, seed: t.bootstrap.seed },
    updated: (opts.updated ?? new Date()).toISOString(),
    rows: t.rows.map((r) => ({
      group: r.group, kind: r.kind, tasks: r.tasks, metrics: r.metrics, meanD: r.meanD, meanI: r.meanI,
      wilson: Object.fromEntries(METRICS.map((m) => [m, set.tableWilson[`${r.group}\u0000${r.kind}\u0000${m}`] ?? null])),
      runs: Object.fromEntries(METRICS.map((m) => [m, set.tableRuns[`${r.group}\u0000${r.kind}\u0000${m}`]?.runs ?? []])),
    })),
    figures: set.figures,
    runs: set.runs,
    skipped: opts.skipped,
  };
}
