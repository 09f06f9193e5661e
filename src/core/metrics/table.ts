import { clusterBootstrap } from './bootstrap';
import type { MetricPolicy } from './policies';
import { METRICS, scoreTask, type Metric, type TaskScores } from './scores';
import type { TaskOutcome } from './types';

/** One cell: `k` of `n` tasks correct (rate = k / n), with a 95% bootstrap interval resampled by paper. */
export interface Cell { k: number; n: number; rate: number | null; ci: [number, number] | null; papers: number }
/** A mean score (D or I, 0..1) over `n` tasks, with its interval. */
export interface MeanCell { n: number; mean: number | null; ci: [number, number] | null }

export interface TableRow {
  group: string;
  kind: TaskOutcome['kind'];
  tasks: number;
  metrics: Record<Metric, Cell>;
  meanD: MeanCell;
  meanI: MeanCell;
}

export interface MetricsTable {
  policy: { name: string; description: string };
  bootstrap: { resamples: number; level: number; seed: number; unit: 'paper' };
  rows: TableRow[];
  /** Every task left out of a metric's denominator, with the metric and the reason. */
  exclusions: { group: string; kind: TaskOutcome['kind']; taskId: string; metrics: Metric[]; reason: string; source: string }[];
  tasks: TaskScores[];
}

/**
 * The aggregate table (like the paper's Table 1): one row per (group, kind), so heuristic and LLM
 * verdicts are never mixed in one number. Each metric's denominator counts the tasks where it is
 * computable; the others are listed in `exclusions` (invalid tasks, harness errors, not verified…).
 */
export function buildTable(outcomes: TaskOutcome[], policy: MetricPolicy, opts: { resamples?: number; seed?: number } = {}): MetricsTable {
  const resamples = opts.resamples ?? 2000;
  const seed = opts.seed ?? 1;
  const tasks = outcomes.map((o) => scoreTask(o, policy));
  const keys = [...new Set(tasks.map((t) => `${t.group}\u0000${t.kind}`))].sort();
  const rows: TableRow[] = keys.map((key) => {
    const [group, kind] = key.split('\u0000') as [string, TaskOutcome['kind']];
    const ts = tasks.filter((t) => t.group === group && t.kind === kind);
    const metrics = Object.fromEntries(METRICS.map((m) => [m, cell(ts, (t) => t.correct[m] === null ? null : t.correct[m] ? 1 : 0, resamples, seed)])) as Record<Metric, Cell>;
    const mean = (f: (t: TaskScores) => number | null): MeanCell => {
      const c = cell(ts, f, resamples, seed);
      return { n: c.n, mean: c.rate, ci: c.ci };
    };
    return { group, kind, tasks: ts.length, metrics, meanD: mean((t) => t.D), meanI: mean((t) => t.I) };
  });
  const exclusions: MetricsTable['exclusions'] = [];
  for (const t of tasks) {
    const byReason = new Map<string, Metric[]>();
    for (const [m, r] of Object.entries(t.excluded) as [Metric, string][]) byReason.set(r, [...(byReason.get(r) ?? []), m]);
    const src = outcomes.find((o) => o.taskId === t.taskId && o.group === t.group && o.kind === t.kind)?.source ?? '';
    for (const [reason, metrics] of byReason) exclusions.push({ group: t.group, kind: t.kind, taskId: t.taskId, metrics, reason, source: src });
  }
  return { policy: { name: policy.name, description: policy.description }, bootstrap: { resamples, level: 0.95, seed, unit: 'paper' }, rows, exclusions, tasks };
}

function cell(ts: TaskScores[], value: (t: TaskScores) => number | null, resamples: number, seed: number): Cell {
  const byPaper = new Map<string, number[]>();
  let k = 0;
  let n = 0;
  for (const t of ts) {
    const v = value(t);
    if (v === null) continue;
    n++;
    k += v;
    byPaper.set(t.paperId, [...(byPaper.get(t.paperId) ?? []), v]);
  }
  return { k, n, rate: n ? k / n : null, ci: clusterBootstrap([...byPaper.values()], { resamples, seed }), papers: byPaper.size };
}

/** The table as fixed-width text (rates in %, intervals in brackets, denominators shown). */
export function formatTable(t: MetricsTable): string {
  const pct = (x: number | null) => (x === null ? '-' : (100 * x).toFixed(1));
  const head = ['group', 'judge', 'n', 'D̄', 'Ī', ...METRICS.map(label)];
  const lines = [`policy ${t.policy.name}: ${t.policy.description}`,
    `95% bootstrap intervals, ${t.bootstrap.resamples} resamples of papers, seed ${t.bootstrap.seed}`, '', head.join('\t')];
  for (const r of t.rows) {
    lines.push([r.group, r.kind, String(r.tasks), `${pct(r.meanD.mean)} (n=${r.meanD.n})`, `${pct(r.meanI.mean)} (n=${r.meanI.n})`,
      ...METRICS.map((m) => {
        const c = r.metrics[m];
        return `${pct(c.rate)} [${pct(c.ci?.[0] ?? null)}, ${pct(c.ci?.[1] ?? null)}] ${c.k}/${c.n}`;
      })].join('\t'));
  }
  if (t.exclusions.length) {
    lines.push('', 'excluded:');
    for (const e of t.exclusions) lines.push(`  ${e.group} ${e.kind} ${e.taskId} [${e.metrics.map(label).join(', ')}]: ${e.reason}`);
  }
  return lines.join('\n');
}

/** The paper's column names. */
export function label(m: Metric): string {
  return ({ D: 'D', I: 'I', E: 'E', C: 'C', IE: 'I·E', CD: 'C·D', All: 'All✓', AllE: 'All·E✓' } as const)[m];
}
