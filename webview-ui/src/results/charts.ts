import { BarController, BarElement, CategoryScale, Chart, Legend, LinearScale, Tooltip, type ChartConfiguration, type Plugin } from 'chart.js';
import { FAILURE_COLOURS, seriesColour } from '../../../src/core/figures/palette';
import type { BarDatum, BarFigure, StackDatum, StackFigure } from '../../../src/core/figures/model';
import { el } from '../dom';

// The Results view's charts (Chart.js, only the bar parts registered: no eval, no inline styles;
// canvas sizes are set through the CSSOM, which the webview's CSP allows). Colours: the theme's
// --vscode-* variables for text, grid and focus; the figures' Okabe–Ito palette for series.
Chart.register(BarController, BarElement, CategoryScale, LinearScale, Tooltip, Legend);

/** The theme's colours, read from VS Code's CSS variables (again when the theme changes). */
export interface Theme { fg: string; muted: string; grid: string; focus: string; font: string; bg: string }
export function theme(): Theme {
  const css = getComputedStyle(document.body);
  const v = (name: string, fallback: string) => css.getPropertyValue(name).trim() || fallback;
  return {
    fg: v('--vscode-foreground', '#333333'), muted: v('--vscode-descriptionForeground', '#717171'),
    grid: v('--vscode-editorWidget-border', v('--vscode-panel-border', '#80808059')), focus: v('--vscode-focusBorder', '#007fd4'),
    font: v('--vscode-font-family', 'sans-serif'), bg: v('--vscode-editor-background', '#ffffff'),
  };
}

/** One datum a chart can open: what it is (for the announcement and Triage's title) and its run keys. */
export interface Target { label: string; runs: string[]; describe: string }

const pct = (v: number | null) => (v === null ? '–' : `${(100 * v).toFixed(1)}%`);
export const describeBar = (d: BarDatum) => `${d.series} · ${d.x}: ${d.k}/${d.n}${d.value === null ? ' (not computable)' : ` = ${pct(d.value)}`}${d.low !== null && d.high !== null ? ` [95% ${pct(d.low)}–${pct(d.high)}]` : ''}`;
export const describeSegment = (d: StackDatum) => `${d.y} · ${d.category}: ${d.count} tasks (${pct(d.share)})${d.unconfined.length ? `, ${d.unconfined.length} unconfined` : ''}`;

/**
 * A chart in a focusable frame: click a bar (or focus the frame, move with the arrow keys and
 * press Enter) to open the runs behind it; the datum under focus is announced in `live`.
 */
export class ChartView {
  readonly frame: HTMLElement;
  private chart: Chart | undefined;
  private at = -1;
  private readonly order: { ds: number; i: number; target: Target }[] = [];

  constructor(private readonly name: string, private readonly live: HTMLElement, private readonly open: (t: Target) => void, height: number) {
    this.frame = el('div', { class: 'chart', tabindex: '0', role: 'group', 'aria-roledescription': 'chart', 'aria-label': `${name}: arrow keys move between bars, Enter opens the runs behind one` });
    this.frame.style.height = `${height}px`;
    this.frame.addEventListener('keydown', (e) => this.key(e));
    this.frame.addEventListener('focus', () => { if (this.at < 0 && this.order.length) this.move(0); });
  }

  /** Draws `config`; `targets[ds][i]` is what bar `i` of dataset `ds` opens (null: nothing). */
  draw(config: ChartConfiguration<'bar'>, targets: (Target | null)[][]): void {
    this.chart?.destroy();
    this.order.length = 0;
    targets.forEach((row, ds) => row.forEach((t, i) => { if (t) this.order.push({ ds, i, target: t }); }));
    const horizontal = config.options?.indexAxis === 'y';
    this.order.sort((a, b) => (a.i - b.i) || (a.ds - b.ds));
    if (horizontal) this.order.sort((a, b) => (a.i - b.i) || (a.ds - b.ds));
    const canvas = el('canvas', { 'aria-hidden': 'true' });
    this.frame.replaceChildren(canvas);
    config.options = {
      ...config.options,
      onClick: (_e, els) => { const h = els[0]; const t = h && targets[h.datasetIndex]?.[h.index]; if (t) this.open(t); },
      onHover: (e, els) => { (e.native?.target as HTMLElement | undefined)?.classList.toggle('pointer', els.length > 0); },
    };
    this.chart = new Chart(canvas, config);
    this.at = -1;
  }

  private key(e: KeyboardEvent): void {
    if (!this.order.length) return;
    if (e.key === 'ArrowRight' || e.key === 'ArrowDown') { e.preventDefault(); this.move(Math.min(this.order.length - 1, this.at + 1)); }
    else if (e.key === 'ArrowLeft' || e.key === 'ArrowUp') { e.preventDefault(); this.move(Math.max(0, this.at - 1)); }
    else if (e.key === 'Home') { e.preventDefault(); this.move(0); }
    else if (e.key === 'End') { e.preventDefault(); this.move(this.order.length - 1); }
    else if ((e.key === 'Enter' || e.key === ' ') && this.at >= 0) { e.preventDefault(); this.open(this.order[this.at].target); }
  }

  private move(at: number): void {
    this.at = at;
    const o = this.order[at];
    if (!this.chart || !o) return;
    const active = [{ datasetIndex: o.ds, index: o.i }];
    this.chart.setActiveElements(active);
    const bar = this.chart.getDatasetMeta(o.ds).data[o.i];
    this.chart.tooltip?.setActiveElements(active, { x: bar?.x ?? 0, y: bar?.y ?? 0 });
    this.chart.update();
    this.live.textContent = `${this.name}: ${o.target.describe}. Enter opens ${o.target.runs.length === 1 ? 'its run' : `its ${o.target.runs.length} runs`}.`;
  }

  destroy(): void { this.chart?.destroy(); }
}

/** Whiskers (the datum's interval) and k/n over each bar of a grouped-bar chart. */
function whiskers(datums: (BarDatum | null)[][], t: Theme): Plugin<'bar'> {
  return {
    id: 'whiskers',
    afterDatasetsDraw(chart) {
      const ctx = chart.ctx;
      const y = chart.scales.y;
      ctx.save();
      ctx.strokeStyle = t.fg;
      ctx.fillStyle = t.fg;
      ctx.lineWidth = 1;
      ctx.font = `10px ${t.font}`;
      ctx.textAlign = 'center';
      datums.forEach((row, ds) => {
        const meta = chart.getDatasetMeta(ds);
        if (meta.hidden) return;
        row.forEach((d, i) => {
          const bar = meta.data[i] as unknown as { x: number; width: number } | undefined;
          if (!d || !bar) return;
          const cap = Math.min(bar.width * 0.25, 5);
          if (d.low !== null && d.high !== null) {
            const lo = y.getPixelForValue(d.low);
            const hi = y.getPixelForValue(d.high);
            ctx.beginPath();
            ctx.moveTo(bar.x, lo); ctx.lineTo(bar.x, hi);
            ctx.moveTo(bar.x - cap, lo); ctx.lineTo(bar.x + cap, lo);
            ctx.moveTo(bar.x - cap, hi); ctx.lineTo(bar.x + cap, hi);
            ctx.stroke();
          }
          const top = y.getPixelForValue(Math.max(d.value ?? 0, d.high ?? 0));
          if (bar.width >= 18) ctx.fillText(d.n === 0 ? 'n=0' : `${d.k}/${d.n}`, bar.x, top - 4);
        });
      });
      ctx.restore();
    },
  };
}

/** The chart of a grouped-bar figure (funnel, per-phase). */
export function barConfig(f: BarFigure, t: Theme): { config: ChartConfiguration<'bar'>; targets: (Target | null)[][] } {
  const datums = f.seriesOrder.map((s) => f.xOrder.map((x) => f.data.find((d) => d.x === x && d.series === s) ?? null));
  const targets = datums.map((row) => row.map((d) => (d && d.runs.length ? { label: describeBar(d), runs: d.runs, describe: describeBar(d) } : null)));
  return {
    targets,
    config: {
      type: 'bar',
      data: { labels: f.xOrder, datasets: f.seriesOrder.map((s, i) => ({ label: s, data: datums[i].map((d) => d?.value ?? null), backgroundColor: seriesColour(i), borderWidth: 0 })) },
      options: {
        animation: false, responsive: true, maintainAspectRatio: false,
        layout: { padding: { top: 18 } },
        scales: {
          y: { min: 0, max: 1, title: { display: true, text: f.yTitle, color: t.fg }, ticks: { color: t.fg, callback: (v) => `${Math.round(Number(v) * 100)}%` }, grid: { color: t.grid } },
          x: { title: { display: true, text: f.xTitle, color: t.fg }, ticks: { color: t.fg }, grid: { display: false } },
        },
        plugins: {
          legend: { labels: { color: t.fg, boxWidth: 12 } },
          tooltip: { callbacks: { label: (c) => { const d = datums[c.datasetIndex]?.[c.dataIndex]; return d ? describeBar(d) : ''; } } },
        },
      },
      plugins: [whiskers(datums, t)],
    },
  };
}

/** The chart of the failure breakdown: horizontal bars stacked to 100% of each group's tasks. */
export function stackConfig(f: StackFigure, t: Theme): { config: ChartConfiguration<'bar'>; targets: (Target | null)[][] } {
  const present = f.categoryOrder.filter((c) => f.data.some((d) => d.category === c));
  const datums = present.map((c) => f.yOrder.map((y) => f.data.find((d) => d.y === y && d.category === c) ?? null));
  const targets = datums.map((row) => row.map((d) => (d ? { label: describeSegment(d), runs: d.runs, describe: describeSegment(d) } : null)));
  return {
    targets,
    config: {
      type: 'bar',
      data: {
        labels: f.yOrder.map((y) => { const un = f.data.filter((d) => d.y === y).reduce((s, d) => s + d.unconfined.length, 0); return un ? `${y} † ${un}` : y; }),
        datasets: present.map((c, i) => ({
          label: f.apart.includes(c) ? `${c} (apart)` : c, data: datums[i].map((d) => d?.share ?? null),
          backgroundColor: FAILURE_COLOURS[c] ?? '#999999', borderColor: f.apart.includes(c) ? t.fg : t.bg, borderWidth: 1,
        })),
      },
      options: {
        indexAxis: 'y', animation: false, responsive: true, maintainAspectRatio: false,
        scales: {
          x: { stacked: true, min: 0, max: 1, title: { display: true, text: `${f.xTitle} (share of the group's tasks)`, color: t.fg }, ticks: { color: t.fg, callback: (v) => `${Math.round(Number(v) * 100)}%` }, grid: { color: t.grid } },
          y: { stacked: true, ticks: { color: t.fg }, grid: { display: false } },
        },
        plugins: {
          legend: { position: 'bottom', labels: { color: t.fg, boxWidth: 12 } },
          tooltip: { callbacks: { label: (c) => { const d = datums[c.datasetIndex]?.[c.dataIndex]; return d ? describeSegment(d) : ''; } } },
        },
      },
    },
  };
}
