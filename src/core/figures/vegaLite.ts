import type { BarFigure, Figure, HeatFigure, StackFigure } from './model';
import { FAILURE_COLOURS, OKABE_ITO, seriesColour } from './palette';
import { wrap } from './svg';

/** The Vega-Lite schema the specs are written for (validated against vega-lite's build/vega-lite-schema.json in the tests). */
export const VEGA_LITE_SCHEMA = 'https://vega.github.io/schema/vega-lite/v6.json';

const CONFIG = {
  font: 'Helvetica, Arial, sans-serif',
  axis: { labelFontSize: 10, titleFontSize: 11, titleFontWeight: 'normal' },
  legend: { labelFontSize: 10, titleFontSize: 10, labelLimit: 260 },
  title: { fontSize: 12, subtitleFontSize: 9, subtitleColor: '#333333', anchor: 'start' },
  view: { stroke: null },
} as const;

/**
 * A Vega-Lite v6 spec of one figure, its data inline (`data.values`: every datum with its k, n,
 * interval and the run keys behind it), for restyling in the Vega editor or Altair. The caption
 * is the title's subtitle and the spec's description.
 */
export function vegaLiteSpec(f: Figure): Record<string, unknown> {
  const head = {
    $schema: VEGA_LITE_SCHEMA,
    description: `${f.title}. ${f.caption}`,
    title: { text: f.title, subtitle: wrap(f.caption, 620, 9) },
    config: CONFIG,
    usermeta: { expbench: { figure: f.id, policy: f.policy, interval: f.interval } },
  };
  switch (f.type) {
    case 'bars': return { ...head, ...bars(f) };
    case 'stack': return { ...head, ...stack(f) };
    case 'heat': return { ...head, ...heat(f) };
  }
}

const tipRate = [
  { field: 'label', type: 'nominal', title: 'k/n' },
  { field: 'value', type: 'quantitative', format: '.1%', title: 'rate' },
  { field: 'low', type: 'quantitative', format: '.1%', title: '95% low' },
  { field: 'high', type: 'quantitative', format: '.1%', title: '95% high' },
];

function bars(f: BarFigure): Record<string, unknown> {
  const values = f.data.map((d) => ({ ...d, label: d.n === 0 ? 'n=0' : `${d.k}/${d.n}`, top: Math.max(d.value ?? 0, d.high ?? 0) }));
  return {
    width: 560, height: 220,
    data: { values },
    encoding: {
      x: { field: 'x', type: 'nominal', sort: f.xOrder, title: f.xTitle, axis: { labelAngle: 0 } },
      xOffset: { field: 'series', type: 'nominal', sort: f.seriesOrder },
    },
    layer: [
      {
        mark: { type: 'bar' },
        encoding: {
          y: { field: 'value', type: 'quantitative', title: f.yTitle, scale: { domain: [0, 1] }, axis: { format: '.0%' } },
          color: { field: 'series', type: 'nominal', title: f.seriesTitle, sort: f.seriesOrder, scale: { domain: f.seriesOrder, range: f.seriesOrder.map((_, i) => seriesColour(i)) } },
          tooltip: [{ field: 'series', type: 'nominal' }, { field: 'x', type: 'nominal' }, ...tipRate],
        },
      },
      { mark: { type: 'rule', color: '#000000' }, encoding: { y: { field: 'low', type: 'quantitative' }, y2: { field: 'high' } } },
      { mark: { type: 'text', dy: -6, fontSize: 8.5, color: '#000000' }, encoding: { y: { field: 'top', type: 'quantitative' }, text: { field: 'label', type: 'nominal' } } },
    ],
  };
}

function stack(f: StackFigure): Record<string, unknown> {
  const values = f.data.map((d) => ({ ...d, order: f.categoryOrder.indexOf(d.category), apart: f.apart.includes(d.category) }));
  return {
    width: 520,
    height: { step: 22 },
    data: { values },
    encoding: {
      y: { field: 'y', type: 'nominal', sort: f.yOrder, title: null },
      x: { field: 'share', type: 'quantitative', stack: 'zero', title: `${f.xTitle} (share of the group's tasks)`, axis: { format: '.0%' }, scale: { domain: [0, 1] } },
      order: { field: 'order', type: 'quantitative' },
    },
    layer: [
      {
        mark: { type: 'bar', stroke: '#ffffff', strokeWidth: 0.8 },
        encoding: {
          color: { field: 'category', type: 'nominal', title: 'first stage not correct', sort: f.categoryOrder, scale: { domain: f.categoryOrder, range: f.categoryOrder.map((c) => FAILURE_COLOURS[c] ?? OKABE_ITO[6]) } },
          opacity: { condition: { test: 'datum.apart', value: 0.6 }, value: 1 },
          tooltip: [{ field: 'y', type: 'nominal', title: 'group' }, { field: 'category', type: 'nominal' }, { field: 'count', type: 'quantitative' }, { field: 'share', type: 'quantitative', format: '.1%' }],
        },
      },
      { mark: { type: 'text', fontSize: 9, color: '#000000' }, encoding: { x: { field: 'share', type: 'quantitative', stack: 'zero', bandPosition: 0.5 }, text: { field: 'count', type: 'quantitative' } } },
    ],
  };
}

function heat(f: HeatFigure): Record<string, unknown> {
  const values = f.data.map((d) => ({ ...d, label: d.n === 0 ? '' : `${d.k}/${d.n}` }));
  return {
    data: { values },
    facet: { column: { field: 'facet', type: 'nominal', sort: f.facetOrder, title: null } },
    spec: {
      width: { step: 40 }, height: { step: 18 },
      layer: [
        {
          mark: { type: 'rect', stroke: '#ffffff', strokeWidth: 0.6 },
          encoding: {
            x: { field: 'col', type: 'nominal', sort: f.colOrder, title: f.colTitle, axis: { orient: 'top', labelAngle: -45 } },
            y: { field: 'row', type: 'nominal', sort: f.rowOrder, title: f.rowTitle },
            color: { field: 'value', type: 'quantitative', title: 'tasks correct', scale: { scheme: 'blues', domain: [0, 1] }, legend: { format: '.0%' } },
            tooltip: [{ field: 'facet', type: 'nominal', title: 'group' }, { field: 'row', type: 'nominal', title: 'paper' }, { field: 'col', type: 'nominal', title: 'metric' }, ...tipRate],
          },
        },
        {
          mark: { type: 'text', fontSize: 8 },
          encoding: {
            x: { field: 'col', type: 'nominal', sort: f.colOrder },
            y: { field: 'row', type: 'nominal', sort: f.rowOrder },
            text: { field: 'label', type: 'nominal' },
            color: { condition: { test: 'datum.value > 0.55', value: '#ffffff' }, value: '#000000' },
          },
        },
      ],
    },
  };
}
