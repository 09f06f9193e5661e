import type { MetricPolicy } from '../metrics/policies';
import { METRICS, type Metric, type TaskScores } from '../metrics/scores';
import { buildTable, label, type MetricsTable, type TableRow } from '../metrics/table';
import type { TaskOutcome } from '../metrics/types';
import { plural } from '../util/plural';
import type { RunFacts } from './facts';
import { failureCategory, FAILURE_APART, FAILURE_ORDER } from './failures';
import { INTERVAL_WORDS, wilson } from './intervals';
import type { BarDatum, BarFigure, Figure, FigureSet, HeatDatum, HeatFigure, StackDatum, StackFigure } from './model';

/** The dimensions of the per-phase figures, with the words their captions and axes use. */
export const DIMENSIONS = {
  actor: 'human vs agent',
  model: 'model',
  paper: 'paper',
  conference: 'conference',
  taskType: 'task type',
} as const;
export type Dimension = keyof typeof DIMENSIONS;

/** The funnel's stages (EXP-Bench, arXiv 2505.24785): all tasks, then each conjunction the metrics room computes. */
export const FUNNEL: { metric: Metric | null; label: string }[] = [
  { metric: null, label: 'M (tasks)' },
  { metric: 'D', label: 'D' },
  { metric: 'CD', label: 'D·C' },
  { metric: 'All', label: 'D·C·I (All✓)' },
  { metric: 'AllE', label: 'D·C·I·E (All·E✓)' },
];

/** The phases of the per-phase figures (the binary metrics of each phase). */
export const PHASES: Metric[] = ['D', 'I', 'E', 'C'];

const TASK_TYPE_WORDS = { 1: 'type 1 (masked source)', 2: 'type 2 (source only)', 3: 'type 3 (README only)' } as const;
/** Most series a figure colours (the palette's size); more groups go on the x axis instead. */
const MAX_SERIES = 8;

export interface BuildOptions { resamples?: number; seed?: number }

/**
 * Every figure of the results, computed only from the metrics room: each number is a cell of
 * `buildTable` (src/core/metrics/table.ts) over the same outcomes regrouped by the figure's
 * dimension, so each figure's k/n is the table's k/n for that grouping; intervals are Wilson
 * score intervals of those k/n (intervals.ts) or the table's own bootstrap by paper. Heuristic and
 * LLM verdicts stay in separate rows (`<group> (heuristic judge)`), as in the table.
 *
 * @param outcomes as the report groups them (by folder, or by actor): the table's rows
 * @param facts one per outcome, same order (facts.ts `runFacts`, on the outcomes before regrouping)
 * @throws Error when `facts` and `outcomes` differ in length
 */
export function buildFigures(outcomes: readonly TaskOutcome[], facts: readonly RunFacts[], policy: MetricPolicy, opts: BuildOptions = {}): FigureSet {
  if (facts.length !== outcomes.length) throw new Error(`buildFigures: ${facts.length} facts for ${outcomes.length} outcomes`);
  const table = buildTable([...outcomes], policy, opts);
  const main = new Grouped(outcomes, facts, table);
  const tableWilson: FigureSet['tableWilson'] = {};
  const tableRuns: FigureSet['tableRuns'] = {};
  for (const r of table.rows) {
    for (const m of METRICS) {
      const key = `${r.group}\u0000${r.kind}\u0000${m}`;
      tableWilson[key] = wilson(r.metrics[m].k, r.metrics[m].n);
      tableRuns[key] = main.cellRuns(r, m);
    }
  }
  const policyWords = `Policy ${policy.name}: ${policy.description}.`;
  const figures: Figure[] = [
    funnel(main, policyWords, policy.name),
    ...(Object.keys(DIMENSIONS) as Dimension[]).map((d) => phases(d, outcomes, facts, opts, policyWords, policy)),
    failures(main, policy, policyWords),
    heat(outcomes, facts, opts, policyWords, policy, main),
  ];
  const runs: FigureSet['runs'] = {};
  outcomes.forEach((o, i) => { runs[facts[i].run] = { open: facts[i].open, task: o.taskId, group: seriesName(o.group, o.kind), actor: facts[i].actor, unconfined: facts[i].unconfined }; });
  return {
    policy: { name: policy.name, description: policy.description }, table, tableWilson, tableRuns, figures, runs,
    unconfined: [...new Set(facts.filter((f) => f.unconfined).map((f) => f.run))],
  };
}

/** A group's label in figures: the group, and `(heuristic judge)` for the heuristic pre-judge's rows. */
export function seriesName(group: string, kind: TaskOutcome['kind']): string {
  return kind === 'heuristic' ? `${group} (heuristic judge)` : group;
}

/** The value of `dim` for one run. */
export function dimensionValue(dim: Dimension, f: RunFacts): string {
  switch (dim) {
    case 'actor': return f.actor;
    case 'model': return f.model ?? (f.actor === 'human' ? 'human (no model)' : 'unknown model');
    case 'paper': return f.paper;
    case 'conference': return f.conference;
    case 'taskType': return f.taskType ? TASK_TYPE_WORDS[f.taskType] : 'type unknown (task not in the datasets)';
  }
}

/** A metrics table over the outcomes regrouped by a key, with the run keys behind each cell. */
class Grouped {
  readonly scores: TaskScores[];
  constructor(readonly outcomes: readonly TaskOutcome[], readonly facts: readonly RunFacts[], readonly table: MetricsTable) {
    // buildTable scores the outcomes in their order (src/core/metrics/table.ts): tasks[i] is outcomes[i]'s.
    this.scores = table.tasks;
  }

  static by(outcomes: readonly TaskOutcome[], facts: readonly RunFacts[], key: (i: number) => string, policy: MetricPolicy, opts: BuildOptions): Grouped {
    const regrouped = outcomes.map((o, i) => ({ ...o, group: key(i) }));
    return new Grouped(regrouped, facts, buildTable(regrouped, policy, opts));
  }

  private members(r: TableRow): number[] {
    const out: number[] = [];
    this.outcomes.forEach((o, i) => { if (o.group === r.group && o.kind === r.kind) out.push(i); });
    return out;
  }

  /** The runs behind one cell; checks that they are the cell's k and n. */
  cellRuns(r: TableRow, m: Metric): { runs: string[]; hits: string[] } {
    const idx = this.members(r).filter((i) => this.scores[i].correct[m] !== null);
    const hits = idx.filter((i) => this.scores[i].correct[m] === true);
    const c = r.metrics[m];
    if (idx.length !== c.n || hits.length !== c.k) throw new Error(`figures: the runs of ${r.group} ${m} (${hits.length}/${idx.length}) are not the table's ${c.k}/${c.n}`);
    return { runs: idx.map((i) => this.facts[i].run), hits: hits.map((i) => this.facts[i].run) };
  }

  allRuns(r: TableRow): string[] { return this.members(r).map((i) => this.facts[i].run); }
  memberIndices(r: TableRow): number[] { return this.members(r); }

  bar(r: TableRow, m: Metric, x: string, series: string): BarDatum {
    const c = r.metrics[m];
    const ci = wilson(c.k, c.n);
    return { x, series, k: c.k, n: c.n, value: c.rate, low: ci?.[0] ?? null, high: ci?.[1] ?? null, ...this.cellRuns(r, m) };
  }
}

const nList = (rows: TableRow[]) => rows.map((r) => `${seriesName(r.group, r.kind)} ${r.tasks}`).join(', ');
const heuristicNote = (rows: TableRow[]) => (rows.some((r) => r.kind === 'heuristic') ? ' Rows marked (heuristic judge) were scored by the labelled heuristic pre-judge and are never pooled with LLM verdicts.' : '');

function funnel(g: Grouped, policyWords: string, policy: string): BarFigure {
  const rows = g.table.rows;
  const series = rows.map((r) => seriesName(r.group, r.kind));
  const data: BarDatum[] = [];
  rows.forEach((r, i) => {
    for (const s of FUNNEL) {
      if (s.metric === null) {
        const all = g.allRuns(r);
        data.push({ x: s.label, series: series[i], k: r.tasks, n: r.tasks, value: r.tasks ? 1 : null, low: null, high: null, runs: all, hits: all });
      } else data.push(g.bar(r, s.metric, s.label, series[i]));
    }
  });
  return {
    type: 'bars', id: 'funnel', title: 'Where experiments fall short: the conjunctive funnel', policy, interval: 'wilson',
    caption: `Share of tasks whose design (D), then also conclusion (D·C), implementation (D·C·I = All✓) and execution (D·C·I·E = All·E✓) are correct, per group; M is every task (n: ${nList(rows)}). Each bar is k/n over the tasks where that conjunction is computable (a task not verified has no E); whiskers: ${INTERVAL_WORDS.wilson}. ${policyWords}${heuristicNote(rows)}`,
    xTitle: 'stage', yTitle: 'tasks correct (%)', xOrder: FUNNEL.map((s) => s.label), seriesTitle: 'group', seriesOrder: series, data,
  };
}

function phases(dim: Dimension, outcomes: readonly TaskOutcome[], facts: readonly RunFacts[], opts: BuildOptions, policyWords: string, policy: MetricPolicy): BarFigure {
  const g = Grouped.by(outcomes, facts, (i) => dimensionValue(dim, facts[i]), policy, opts);
  const rows = g.table.rows;
  const groups = rows.map((r) => seriesName(r.group, r.kind));
  const byPhase = groups.length <= MAX_SERIES;
  const data = rows.flatMap((r, i) => PHASES.map((m) => (byPhase ? g.bar(r, m, label(m), groups[i]) : g.bar(r, m, groups[i], label(m)))));
  const words = DIMENSIONS[dim];
  return {
    type: 'bars', id: `phases-${dim === 'taskType' ? 'task-type' : dim}`, title: `Per-phase correctness by ${words}`, policy: policy.name, interval: 'wilson',
    caption: `Share of tasks with a correct design (D), implementation (I), execution (E) and conclusion (C), by ${words} (n tasks: ${nList(rows)}). Each bar is k/n over the tasks where that phase is computable; whiskers: ${INTERVAL_WORDS.wilson}. ${policyWords}${heuristicNote(rows)}`,
    xTitle: byPhase ? 'phase' : words, yTitle: 'tasks correct (%)',
    xOrder: byPhase ? PHASES.map(label) : groups, seriesTitle: byPhase ? words : 'phase', seriesOrder: byPhase ? groups : PHASES.map(label), data,
  };
}

function failures(g: Grouped, policy: MetricPolicy, policyWords: string): StackFigure {
  const rows = g.table.rows;
  const data: StackDatum[] = [];
  let unconfined = 0;
  for (const r of rows) {
    const idx = g.memberIndices(r);
    const y = seriesName(r.group, r.kind);
    for (const category of [...FAILURE_ORDER, ...FAILURE_APART]) {
      const mine = idx.filter((i) => failureCategory(g.scores[i], g.outcomes[i], policy) === category);
      if (!mine.length) continue;
      const un = mine.filter((i) => g.facts[i].unconfined).map((i) => g.facts[i].run);
      unconfined += un.length;
      data.push({ y, category, count: mine.length, share: mine.length / idx.length, runs: mine.map((i) => g.facts[i].run), unconfined: un });
    }
  }
  return {
    type: 'stack', id: 'failures', title: 'Which phase failed first', policy: policy.name, interval: 'none',
    caption: `Tasks per group by the first stage of the funnel (D, then C, I, E) that is not correct (n: ${nList(rows)}); a monitor flag under this policy zeroes D, I and C and is counted apart from D. Harness errors (a judgement the judge could not give), tasks not computable (not verified, not judged) and invalid tasks are shown apart, hatched, and are never counted as failures or scores.${unconfined ? ` † marks ${plural(unconfined, 'task')} from sessions where an outside agent kept its own shell on the host (not confined).` : ''} Counts, no interval. ${policyWords}${heuristicNote(rows)}`,
    xTitle: 'tasks', yOrder: rows.map((r) => seriesName(r.group, r.kind)), categoryOrder: [...FAILURE_ORDER, ...FAILURE_APART], apart: [...FAILURE_APART], data,
  };
}

function heat(outcomes: readonly TaskOutcome[], facts: readonly RunFacts[], opts: BuildOptions, policyWords: string, policy: MetricPolicy, main: Grouped): HeatFigure {
  const g = Grouped.by(outcomes, facts, (i) => JSON.stringify([outcomes[i].group, facts[i].paper]), policy, opts);
  const data: HeatDatum[] = [];
  for (const r of g.table.rows) {
    const [group, paper] = JSON.parse(r.group) as [string, string];
    for (const m of METRICS) {
      const b = g.bar(r, m, label(m), paper);
      data.push({ facet: seriesName(group, r.kind), row: paper, col: label(m), k: b.k, n: b.n, value: b.value, low: b.low, high: b.high, runs: b.runs, hits: b.hits });
    }
  }
  const facetOrder = main.table.rows.map((r) => seriesName(r.group, r.kind));
  const rowOrder = [...new Set(data.map((d) => d.row))].sort();
  const papers = rowOrder.length;
  return {
    type: 'heat', id: 'heatmap-paper', title: 'Per-paper results', policy: policy.name, interval: 'wilson',
    caption: `Share of tasks correct per paper (${plural(papers, 'paper')}) and metric, one panel per group (n tasks: ${nList(main.table.rows)}); each cell shows k/n; a dash: no task of that paper has the metric computable; blank: the group has no task of that paper. Darker is higher; the cell's ${INTERVAL_WORDS.wilson} are in the data. ${policyWords}${heuristicNote(main.table.rows)}`,
    rowTitle: 'paper', colTitle: 'metric', facetOrder, rowOrder, colOrder: METRICS.map(label), data,
  };
}
