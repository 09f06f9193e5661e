import { heatColour, heatText } from '../../../src/core/figures/palette';
import type { BarFigure, Figure, HeatFigure, StackFigure } from '../../../src/core/figures/model';
import { METRICS } from '../../../src/core/metrics/scores';
import { label } from '../../../src/core/metrics/table';
import { ResultsHostMessageSchema, type ResultsHostMessage, type ResultsMessage, type ResultsWebviewMessage } from '../../../src/protocol/results';
import { el } from '../dom';
import { barConfig, ChartView, describeBar, describeSegment, stackConfig, theme, type Target } from './charts';

// The Results view (src/extension/results/resultsPanel.ts): the figures the host computed from the
// metrics table, drawn with Chart.js (bars) and a table (heat map); a bar, segment or cell (click,
// or focus and Enter) opens the runs behind it: one in the viewer, several in Triage.

interface VsCodeApi { postMessage(m: unknown): void; getState(): unknown; setState(s: unknown): void }
declare function acquireVsCodeApi(): VsCodeApi;
const api: VsCodeApi = typeof acquireVsCodeApi === 'function' ? acquireVsCodeApi()
  : (() => { let s: unknown; const sent: unknown[] = ((window as any).__expbenchSent = []); return { postMessage: (m: unknown) => sent.push(m), getState: () => s, setState: (x: unknown) => { s = x; } }; })();
const send = (m: ResultsWebviewMessage) => api.postMessage(m);

const root = document.getElementById('root')!;
const live = el('p', { class: 'sr-only', 'aria-live': 'polite', id: 'results-live' });
const sourceText = el('span', { class: 'muted source', id: 'results-source' });
const policySelect = el('select', { id: 'results-policy', 'aria-label': 'Metric policy' });
const bySelect = el('select', { id: 'results-by', 'aria-label': 'Groups' }, el('option', { value: 'folder' }, 'groups: folder / agent·model'), el('option', { value: 'actor' }, 'groups: human vs agent'));
const button = (id: string, text: string, m: ResultsWebviewMessage, cls = 'secondary') => {
  const b = el('button', { id, type: 'button', class: cls }, text);
  b.addEventListener('click', () => send(m));
  return b;
};
const status = el('p', { class: 'status', id: 'results-status', role: 'status' });
const read = el('p', { class: 'muted read', id: 'results-read' });
const body = el('div', { id: 'results-body' });
root.replaceChildren(
  el('header', { class: 'bar' }, el('h1', {}, 'Results'), sourceText, policySelect, bySelect,
    button('results-follow', 'Follow Folder…', { type: 'chooseSource' }), button('results-refresh', 'Refresh', { type: 'refresh' }),
    button('results-export', 'Export Figures…', { type: 'export' }, 'primary')),
  status, read, live, body,
);
policySelect.addEventListener('change', () => send({ type: 'options', policy: policySelect.value }));
bySelect.addEventListener('change', () => send({ type: 'options', by: bySelect.value as 'folder' | 'actor' }));

let data: ResultsMessage | undefined;
const charts: ChartView[] = [];
const open = (t: Target) => send({ type: 'open', runs: t.runs, label: t.label });

function options(policy: string, policies: string[], by: 'folder' | 'actor'): void {
  policySelect.replaceChildren(...policies.map((p) => el('option', { value: p }, `policy: ${p}`)));
  policySelect.value = policy;
  bySelect.value = by;
}

const pct = (v: number | null | undefined) => (v === null || v === undefined ? '–' : `${(100 * v).toFixed(1)}`);

function tableSection(m: ResultsMessage): HTMLElement {
  const head = el('tr', {}, ...['group', 'judge', 'n', 'D̄', 'Ī', ...METRICS.map(label)].map((h) => el('th', { scope: 'col' }, h)));
  const rows = m.rows.map((r) => el('tr', {},
    el('th', { scope: 'row' }, r.group), el('td', {}, r.kind), el('td', { class: 'num' }, String(r.tasks)),
    el('td', { class: 'num' }, `${pct(r.meanD.mean)} (n=${r.meanD.n})`), el('td', { class: 'num' }, `${pct(r.meanI.mean)} (n=${r.meanI.n})`),
    ...METRICS.map((k) => {
      const c = r.metrics[k];
      const w = r.wilson[k];
      const runs = r.runs[k] ?? [];
      const text = `${pct(c.rate)} [${pct(c.ci?.[0])}, ${pct(c.ci?.[1])}] ${c.k}/${c.n}`;
      const td = el('td', { class: 'num', title: `bootstrap by paper [${pct(c.ci?.[0])}, ${pct(c.ci?.[1])}] · Wilson [${pct(w?.[0])}, ${pct(w?.[1])}]` });
      if (!runs.length) { td.append(text); return td; }
      const b = el('button', { type: 'button', class: 'link', 'data-cell': `${r.group}|${k}` }, text);
      b.addEventListener('click', () => open({ label: `${r.group} · ${label(k)}: ${c.k}/${c.n}`, runs, describe: '' }));
      td.append(b);
      return td;
    })));
  return el('section', { id: 'table' }, el('h2', {}, 'Table'),
    el('p', { class: 'muted' }, `Policy ${m.policy.name}: ${m.policy.description}. Rates in %; [ ]: 95% bootstrap interval, ${m.bootstrap.resamples} resamples of whole papers (seed ${m.bootstrap.seed}); hover a cell for its Wilson interval; a cell opens its runs.`),
    el('div', { class: 'scroll' }, el('table', { class: 'metrics', id: 'results-table' }, el('thead', {}, head), el('tbody', {}, ...rows))));
}

function dataTable(f: BarFigure | StackFigure): HTMLElement {
  const rows = f.type === 'bars'
    ? f.data.map((d) => ({ text: describeBar(d), runs: d.runs }))
    : f.data.map((d) => ({ text: describeSegment(d), runs: d.runs }));
  return el('details', { class: 'data' }, el('summary', {}, 'Data (k/n, interval, runs)'),
    el('ul', {}, ...rows.map((r) => {
      const li = el('li', {}, r.text, ' ');
      if (r.runs.length) {
        const b = el('button', { type: 'button', class: 'link' }, `open ${r.runs.length === 1 ? 'the run' : `${r.runs.length} runs`}`);
        b.addEventListener('click', () => open({ label: r.text, runs: r.runs, describe: r.text }));
        li.append(b);
      }
      return li;
    })));
}

function chartSection(f: BarFigure | StackFigure): HTMLElement {
  const height = f.type === 'stack' ? Math.max(140, 70 + 34 * f.yOrder.length) : 300;
  const view = new ChartView(f.title, live, open, height);
  charts.push(view);
  const section = el('section', { id: `figure-${f.id}`, class: 'figure' }, el('h2', {}, f.title), view.frame, el('p', { class: 'caption' }, f.caption), dataTable(f));
  queueMicrotask(() => {
    const t = theme();
    const { config, targets } = f.type === 'bars' ? barConfig(f, t) : stackConfig(f, t);
    view.draw(config, targets);
  });
  return section;
}

function heatSection(f: HeatFigure): HTMLElement {
  const head1 = el('tr', {}, el('th', {}, ''), ...f.facetOrder.map((facet) => el('th', { colspan: String(f.colOrder.length), scope: 'colgroup', class: 'facet' }, facet)));
  const head2 = el('tr', {}, el('th', { scope: 'col' }, f.rowTitle), ...f.facetOrder.flatMap(() => f.colOrder.map((c) => el('th', { scope: 'col' }, c))));
  const cells: HTMLElement[][] = [];
  const rows = f.rowOrder.map((r, ri) => {
    cells[ri] = [];
    const tds = f.facetOrder.flatMap((facet) => f.colOrder.map((c) => {
      const d = f.data.find((x) => x.facet === facet && x.row === r && x.col === c);
      const td = el('td', { class: 'cell' });
      if (d && d.value !== null) {
        td.textContent = `${d.k}/${d.n}`;
        td.style.backgroundColor = heatColour(d.value);
        td.style.color = heatText(d.value);
        const text = `${facet} · ${r} · ${c}: ${d.k}/${d.n} = ${pct(d.value)}%${d.low !== null ? ` [95% ${pct(d.low)}–${pct(d.high)}%]` : ''}`;
        td.title = text;
        td.tabIndex = 0;
        td.setAttribute('aria-label', `${text}; Enter opens the runs`);
        const go = () => open({ label: text, runs: d.runs, describe: text });
        td.addEventListener('click', go);
        td.addEventListener('keydown', (e) => { if (e.key === 'Enter' || e.key === ' ') { e.preventDefault(); go(); } });
      } else td.textContent = d ? '–' : '';
      cells[ri].push(td);
      return td;
    }));
    return el('tr', {}, el('th', { scope: 'row' }, r), ...tds);
  });
  const table = el('table', { class: 'heat', id: 'results-heat' }, el('thead', {}, head1, head2), el('tbody', {}, ...rows));
  // arrow keys move between the cells that hold a number
  table.addEventListener('keydown', (e) => {
    const at = cells.flatMap((row, ri) => row.map((c, ci) => ({ c, ri, ci }))).find((x) => x.c === document.activeElement);
    if (!at) return;
    const step = ({ ArrowRight: [0, 1], ArrowLeft: [0, -1], ArrowDown: [1, 0], ArrowUp: [-1, 0] } as Record<string, [number, number]>)[e.key];
    if (!step) return;
    e.preventDefault();
    for (let ri = at.ri + step[0], ci = at.ci + step[1]; ri >= 0 && ri < cells.length && ci >= 0 && ci < (cells[ri]?.length ?? 0); ri += step[0], ci += step[1]) {
      if (cells[ri][ci].tabIndex === 0) { cells[ri][ci].focus(); return; }
    }
  });
  return el('section', { id: `figure-${f.id}`, class: 'figure' }, el('h2', {}, f.title), el('div', { class: 'scroll' }, table), el('p', { class: 'caption' }, f.caption));
}

function render(m: Exclude<ResultsHostMessage, { type: 'checked' }>): void {
  for (const c of charts) c.destroy();
  charts.length = 0;
  sourceText.textContent = m.source;
  sourceText.title = m.sourceDir;
  if (m.type === 'status') {
    options(m.policy, m.policies, m.by);
    status.textContent = m.text;
    status.classList.toggle('busy', m.busy);
    if (!m.busy) { data = undefined; body.replaceChildren(); }
    return;
  }
  data = m;
  options(m.policy.name, m.policies, m.by);
  const runs = Object.keys(m.runs).length;
  status.textContent = `${runs} judged runs · policy ${m.policy.name} · updated ${new Date(m.updated).toLocaleTimeString()}${m.skipped.length ? ` · ${m.skipped.length} inputs skipped (see the table's notes)` : ''}`;
  status.classList.remove('busy');
  const sections: HTMLElement[] = m.figures.map((f: Figure) => (f.type === 'heat' ? heatSection(f) : chartSection(f)));
  const skipped = m.skipped.length ? el('details', { class: 'skipped' }, el('summary', {}, `${m.skipped.length} inputs skipped`), el('ul', {}, ...m.skipped.map((s) => el('li', {}, `${s.file}: ${s.reason}`)))) : '';
  const nav = el('nav', { class: 'toc', 'aria-label': 'Figures' }, ...m.figures.map((f) => el('a', { href: `#figure-${f.id}` }, f.title)), el('a', { href: '#table' }, 'Table'));
  body.replaceChildren(nav, ...sections, tableSection(m), skipped);
}

window.addEventListener('message', (e: MessageEvent) => {
  const m = ResultsHostMessageSchema.safeParse(e.data);
  if (!m.success) return;
  // the host checked the folder on disk (stat only): said apart from the status line, which a screen reader announces
  if (m.data.type === 'checked') { read.textContent = `Folder checked ${new Date(m.data.at).toLocaleTimeString()} (every ${m.data.everyS} s while this view is visible; a change is read at once)`; return; }
  render(m.data);
});
// the theme changed (VS Code sets the body's class): draw the charts again in its colours
new MutationObserver(() => { const d = data; if (d) render(d); }).observe(document.body, { attributes: true, attributeFilter: ['class'] });
send({ type: 'ready' });
