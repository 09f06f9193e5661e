import type { MetricsTable } from '../metrics/table';
import type { IntervalMethod } from './intervals';

/**
 * The figures of a results section, renderer-neutral: the SVG writer (svg.ts), the Vega-Lite
 * writer (vegaLite.ts), report.html and the VS Code Results view all draw these, so every number
 * drawn is one of these data. Rates are 0..1; `k` of `n` tasks; `runs` are run keys
 * (src/core/figures/facts.ts `RunFacts.run`).
 */
export type Figure = BarFigure | StackFigure | HeatFigure;

interface FigureBase {
  /** File name stem: `<id>.svg`, `<id>.vl.json`. */
  id: string;
  title: string;
  /** The caption: what is shown, n, the policy, the interval method (sentences). */
  caption: string;
  interval: IntervalMethod;
  policy: string;
}

/** One bar: `k` of `n` tasks (rate `value`), its interval, the runs in its denominator and the runs counted in `k`. */
export interface BarDatum {
  x: string;
  series: string;
  k: number;
  n: number;
  value: number | null;
  low: number | null;
  high: number | null;
  /** Runs in the denominator (the metric computable). */
  runs: string[];
  /** Runs counted as correct. */
  hits: string[];
}

/** Grouped bars of rates with whiskers: x categories, one bar per series inside each. */
export interface BarFigure extends FigureBase {
  type: 'bars';
  xTitle: string;
  yTitle: string;
  xOrder: string[];
  seriesTitle: string;
  seriesOrder: string[];
  data: BarDatum[];
}

/** One segment of a stacked bar: `count` tasks of group `y` in category `category`. */
export interface StackDatum {
  y: string;
  category: string;
  count: number;
  /** Share of the group's tasks (0..1). */
  share: number;
  runs: string[];
  /** Of `runs`, those an outside agent worked with its own shell on the host. */
  unconfined: string[];
}

/** Horizontal stacked counts per group; categories in `apart` are drawn after a gap, hatched, never as scores. */
export interface StackFigure extends FigureBase {
  type: 'stack';
  xTitle: string;
  yOrder: string[];
  categoryOrder: string[];
  apart: string[];
  data: StackDatum[];
}

/** One heat-map cell: `k` of `n` tasks of `row` (a paper) in column `col` (a metric), panel `facet` (a group). */
export interface HeatDatum {
  facet: string;
  row: string;
  col: string;
  k: number;
  n: number;
  value: number | null;
  low: number | null;
  high: number | null;
  runs: string[];
  hits: string[];
}

export interface HeatFigure extends FigureBase {
  type: 'heat';
  rowTitle: string;
  colTitle: string;
  facetOrder: string[];
  rowOrder: string[];
  colOrder: string[];
  data: HeatDatum[];
}

/** Everything `report --figures` writes and the Results view shows. */
export interface FigureSet {
  policy: { name: string; description: string };
  /** The metrics table exactly as `report --json` prints it (rows by the report's grouping). */
  table: MetricsTable;
  /** Wilson intervals of each table cell, `${group}\u0000${kind}\u0000${metric}` → [low, high] (null when n = 0). */
  tableWilson: Record<string, [number, number] | null>;
  /** Run keys of each table cell: the runs in its denominator and those counted correct. */
  tableRuns: Record<string, { runs: string[]; hits: string[] }>;
  figures: Figure[];
  /** Per run key: what the viewer opens, the task and who ran it (for click-through). */
  runs: Record<string, { open: string; task: string; group: string; actor: 'human' | 'agent'; unconfined: boolean }>;
  /** Run keys of unconfined sessions (an outside agent's own shell on the host). */
  unconfined: string[];
}
