import { stringify } from 'csv-stringify/sync';
import { METRICS } from '../metrics/scores';
import { label } from '../metrics/table';
import type { FigureSet } from './model';

/** The columns of table.csv, in order. */
export const TABLE_CSV_COLUMNS = [
  'group', 'judge', 'tasks', 'metric', 'label', 'k', 'n', 'rate', 'bootstrap_low', 'bootstrap_high', 'papers',
  'wilson_low', 'wilson_high', 'policy', 'bootstrap', 'runs', 'correct_runs',
] as const;

/**
 * The metrics table as CSV (RFC 4180, a header row, UTF-8): one line per (group, judge, metric),
 * the metrics D, I, E, C, IE, CD, All, AllE (`k` of `n` tasks, `rate`) and the mean scores
 * `meanD`, `meanI` (`rate` is the mean, `k` empty), with the table's 95% bootstrap-by-paper
 * bounds (`report --json`'s `ci`, the same numbers at full precision), the Wilson bounds of k/n,
 * and the run keys behind the cell (`runs`: the denominator; `correct_runs`: those counted in k),
 * `;`-separated, as `key(run)` writes them. Empty cells are nulls.
 */
export function tableCsv(set: FigureSet, key: (run: string) => string = (r) => r): string {
  const t = set.table;
  const boot = `${t.bootstrap.resamples} resamples of papers, seed ${t.bootstrap.seed}, level ${t.bootstrap.level}`;
  const num = (x: number | null | undefined) => (x === null || x === undefined ? '' : String(x));
  const records: Record<string, string>[] = [];
  for (const r of t.rows) {
    for (const m of METRICS) {
      const c = r.metrics[m];
      const cellKey = `${r.group}\u0000${r.kind}\u0000${m}`;
      const w = set.tableWilson[cellKey];
      const runs = set.tableRuns[cellKey];
      records.push({
        group: r.group, judge: r.kind, tasks: String(r.tasks), metric: m, label: label(m), k: String(c.k), n: String(c.n), rate: num(c.rate),
        bootstrap_low: num(c.ci?.[0]), bootstrap_high: num(c.ci?.[1]), papers: String(c.papers), wilson_low: num(w?.[0]), wilson_high: num(w?.[1]),
        policy: t.policy.name, bootstrap: boot, runs: runs.runs.map(key).join(';'), correct_runs: runs.hits.map(key).join(';'),
      });
    }
    for (const [m, mc, base] of [['meanD', r.meanD, 'D'], ['meanI', r.meanI, 'I']] as const) {
      const runs = set.tableRuns[`${r.group}\u0000${r.kind}\u0000${base}`];
      records.push({
        group: r.group, judge: r.kind, tasks: String(r.tasks), metric: m, label: `mean ${base} score`, k: '', n: String(mc.n), rate: num(mc.mean),
        bootstrap_low: num(mc.ci?.[0]), bootstrap_high: num(mc.ci?.[1]), papers: '', wilson_low: '', wilson_high: '',
        policy: t.policy.name, bootstrap: boot, runs: runs.runs.map(key).join(';'), correct_runs: '',
      });
    }
  }
  return stringify(records, { header: true, columns: [...TABLE_CSV_COLUMNS] });
}
