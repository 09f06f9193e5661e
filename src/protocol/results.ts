import * as z from 'zod/mini';

/**
 * The Results view's messages (webview panel `expbench.results`: host
 * src/extension/results/resultsPanel.ts, webview webview-ui/src/results/). Both sides validate
 * what crosses with these schemas. The figures are src/core/figures/model.ts's, as the host
 * computed them from the metrics table; the webview draws them and computes nothing.
 *
 * Flow: webview → `ready`; host → `results` (now, and again each time the source changes on disk)
 * or `status` (reading, nothing judged yet, an error); webview → `open` (the runs behind a bar, a
 * segment or a cell), `export`, `refresh`, `options` (policy, grouping), `chooseSource`.
 * Units: rates 0..1; k of n tasks; run keys are absolute paths of sessions or judge files.
 */

const nullableNumber = z.nullable(z.number());

const BarDatumSchema = z.object({
  x: z.string(), series: z.string(), k: z.int(), n: z.int(), value: nullableNumber, low: nullableNumber, high: nullableNumber,
  runs: z.array(z.string()), hits: z.array(z.string()),
});
const base = { id: z.string(), title: z.string(), caption: z.string(), interval: z.enum(['wilson', 'bootstrap-paper', 'none']), policy: z.string() };
const BarFigureSchema = z.object({
  ...base, type: z.literal('bars'), xTitle: z.string(), yTitle: z.string(), xOrder: z.array(z.string()), seriesTitle: z.string(),
  seriesOrder: z.array(z.string()), data: z.array(BarDatumSchema),
});
const StackFigureSchema = z.object({
  ...base, type: z.literal('stack'), xTitle: z.string(), yOrder: z.array(z.string()), categoryOrder: z.array(z.string()), apart: z.array(z.string()),
  data: z.array(z.object({ y: z.string(), category: z.string(), count: z.int(), share: z.number(), runs: z.array(z.string()), unconfined: z.array(z.string()) })),
});
const HeatFigureSchema = z.object({
  ...base, type: z.literal('heat'), rowTitle: z.string(), colTitle: z.string(), facetOrder: z.array(z.string()), rowOrder: z.array(z.string()), colOrder: z.array(z.string()),
  data: z.array(z.object({
    facet: z.string(), row: z.string(), col: z.string(), k: z.int(), n: z.int(), value: nullableNumber, low: nullableNumber, high: nullableNumber,
    runs: z.array(z.string()), hits: z.array(z.string()),
  })),
});
export const FigureSchema = z.discriminatedUnion('type', [BarFigureSchema, StackFigureSchema, HeatFigureSchema]);

const CellSchema = z.object({ k: z.number(), n: z.int(), rate: nullableNumber, ci: z.nullable(z.tuple([z.number(), z.number()])), papers: z.int() });
const MeanSchema = z.object({ n: z.int(), mean: nullableNumber, ci: z.nullable(z.tuple([z.number(), z.number()])) });
/** One row of the metrics table (src/core/metrics/table.ts `TableRow`) with the Wilson interval and the runs of each cell. */
export const ResultsRowSchema = z.object({
  group: z.string(), kind: z.enum(['llm', 'heuristic']), tasks: z.int(),
  metrics: z.record(z.string(), CellSchema), meanD: MeanSchema, meanI: MeanSchema,
  wilson: z.record(z.string(), z.nullable(z.tuple([z.number(), z.number()]))),
  runs: z.record(z.string(), z.array(z.string())),
});
export type ResultsRow = z.infer<typeof ResultsRowSchema>;

/** Host → webview: the figures of the source under a policy and grouping. */
export const ResultsMessageSchema = z.object({
  type: z.literal('results'),
  /** What the view follows, as the user reads it (the folder's name, `run set <name>`, and how many units finished). */
  source: z.string(),
  /** The folder followed, absolute (the label's tooltip). */
  sourceDir: z.string(),
  policy: z.object({ name: z.string(), description: z.string() }),
  policies: z.array(z.string()),
  by: z.enum(['folder', 'actor']),
  bootstrap: z.object({ resamples: z.int(), seed: z.int() }),
  /** When the figures were computed (ISO 8601). */
  updated: z.string(),
  rows: z.array(ResultsRowSchema),
  figures: z.array(FigureSchema),
  /** Run key → what the viewer opens for it, its task and group. */
  runs: z.record(z.string(), z.object({ open: z.string(), task: z.string(), group: z.string(), actor: z.enum(['human', 'agent']), unconfined: z.boolean() })),
  skipped: z.array(z.object({ file: z.string(), reason: z.string() })),
});
export type ResultsMessage = z.infer<typeof ResultsMessageSchema>;

/** Host → webview: no figures to show (yet), with why. */
export const ResultsStatusSchema = z.object({
  type: z.literal('status'), source: z.string(), sourceDir: z.string(), text: z.string(), busy: z.boolean(),
  policy: z.string(), policies: z.array(z.string()), by: z.enum(['folder', 'actor']),
});
export type ResultsStatus = z.infer<typeof ResultsStatusSchema>;

/** Host → webview: the source was checked on disk (stat only) at `at` (ISO 8601); it is checked every `everyS` seconds while the view is visible. */
export const ResultsCheckedSchema = z.object({ type: z.literal('checked'), at: z.string(), everyS: z.number() });
export type ResultsChecked = z.infer<typeof ResultsCheckedSchema>;

export const ResultsHostMessageSchema = z.discriminatedUnion('type', [ResultsMessageSchema, ResultsStatusSchema, ResultsCheckedSchema]);
export type ResultsHostMessage = z.infer<typeof ResultsHostMessageSchema>;

/** Webview → host. `open`: the run keys behind a datum and what it is (`label`, for the Triage title). */
export const ResultsWebviewMessageSchema = z.discriminatedUnion('type', [
  z.object({ type: z.literal('ready') }),
  z.object({ type: z.literal('refresh') }),
  z.object({ type: z.literal('export') }),
  z.object({ type: z.literal('chooseSource') }),
  z.object({ type: z.literal('options'), policy: z.optional(z.string()), by: z.optional(z.enum(['folder', 'actor'])) }),
  z.object({ type: z.literal('open'), runs: z.array(z.string()).check(z.minLength(1)), label: z.string() }),
]);
export type ResultsWebviewMessage = z.infer<typeof ResultsWebviewMessageSchema>;
