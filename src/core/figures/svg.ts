import type { BarFigure, Figure, HeatFigure, StackFigure } from './model';
import { FAILURE_COLOURS, HEAT_STOPS, heatColour, heatText, seriesColour } from './palette';

/**
 * Figures as standalone SVG 1.1 documents, sized for a paper: 640 user units wide (6.67 in at
 * 96 dpi; vector, so it scales to a column), Helvetica/Arial, 10 px ticks, 11 px axis titles, the
 * caption (n, policy, interval method) under the plot. Colours are presentation attributes, never
 * `style` attributes, so the SVG draws under a CSP without inline styles (report.html).
 * Each bar or cell has a `<title>` with its label, k/n, rate and interval.
 */
export function figureSvg(f: Figure): string {
  switch (f.type) {
    case 'bars': return barsSvg(f);
    case 'stack': return stackSvg(f);
    case 'heat': return heatSvg(f);
  }
}

const WIDTH = 640;
const FONT = 'Helvetica, Arial, sans-serif';
const pct = (v: number) => `${(100 * v).toFixed(1)}%`;
const rangeText = (low: number | null, high: number | null) => (low === null || high === null ? '' : ` [95% CI ${pct(low)}–${pct(high)}]`);

/** XML text and attribute escaping. */
export function esc(s: string): string {
  return s.replace(/[&<>"']/g, (c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' })[c]!);
}

/** Estimated width of `s` at font size `size` (Helvetica's mean advance ≈ 0.55 em). */
export function textWidth(s: string, size: number): number {
  return [...s].length * size * 0.55;
}

/** Greedy word wrap of `s` to lines at most `width` wide at `size`. */
export function wrap(s: string, width: number, size: number): string[] {
  const max = Math.max(10, Math.floor(width / (size * 0.55)));
  const lines: string[] = [];
  let line = '';
  for (const word of s.split(/\s+/).filter(Boolean)) {
    if (line && [...`${line} ${word}`].length > max) { lines.push(line); line = word; } else line = line ? `${line} ${word}` : word;
  }
  if (line) lines.push(line);
  return lines;
}

const n2 = (x: number) => (Math.round(x * 100) / 100).toString();

function text(x: number, y: number, s: string, opts: { size?: number; anchor?: 'start' | 'middle' | 'end'; weight?: 'bold'; fill?: string; rotate?: number; baseline?: 'middle' } = {}): string {
  const attrs = [`x="${n2(x)}"`, `y="${n2(y)}"`, `font-size="${opts.size ?? 10}"`];
  if (opts.anchor && opts.anchor !== 'start') attrs.push(`text-anchor="${opts.anchor}"`);
  if (opts.weight) attrs.push(`font-weight="${opts.weight}"`);
  if (opts.fill) attrs.push(`fill="${opts.fill}"`);
  if (opts.baseline) attrs.push(`dominant-baseline="${opts.baseline}"`);
  if (opts.rotate) attrs.push(`transform="rotate(${opts.rotate} ${n2(x)} ${n2(y)})"`);
  return `<text ${attrs.join(' ')}>${esc(s)}</text>`;
}

function rect(x: number, y: number, w: number, h: number, fill: string, extra = ''): string {
  return `<rect x="${n2(x)}" y="${n2(y)}" width="${n2(Math.max(0, w))}" height="${n2(Math.max(0, h))}" fill="${fill}"${extra ? ` ${extra}` : ''}/>`;
}

function line(x1: number, y1: number, x2: number, y2: number, stroke = '#000000', width = 1): string {
  return `<line x1="${n2(x1)}" y1="${n2(y1)}" x2="${n2(x2)}" y2="${n2(y2)}" stroke="${stroke}" stroke-width="${width}"/>`;
}

/** The document around a figure's body: title and caption as `<title>`/`<desc>` and drawn under the plot. */
function documentOf(f: Figure, body: string[], height: number, defs = ''): string {
  const capSize = 9.5;
  const caption = wrap(`${f.title}. ${f.caption}`, WIDTH - 24, capSize);
  const capTop = height + 8;
  const total = capTop + caption.length * (capSize * 1.3) + 8;
  const capLines = caption.map((l, i) => text(12, capTop + (i + 1) * capSize * 1.3, l, { size: capSize, fill: '#333333' }));
  return [
    '<?xml version="1.0" encoding="UTF-8"?>',
    `<svg xmlns="http://www.w3.org/2000/svg" version="1.1" width="${WIDTH}" height="${Math.ceil(total)}" viewBox="0 0 ${WIDTH} ${Math.ceil(total)}" font-family="${FONT}" role="img" aria-labelledby="${f.id}-title ${f.id}-desc" data-figure="${esc(f.id)}">`,
    `<title id="${f.id}-title">${esc(f.title)}</title>`,
    `<desc id="${f.id}-desc">${esc(f.caption)}</desc>`,
    defs ? `<defs>${defs}</defs>` : '',
    rect(0, 0, WIDTH, Math.ceil(total), '#ffffff'),
    ...body,
    `<g class="caption">${capLines.join('')}</g>`,
    '</svg>',
  ].filter(Boolean).join('\n');
}

/** Legend items in rows from `x0`, returns the markup and the height used. */
function legend(items: { label: string; fill: string; pattern?: string }[], x0: number, y0: number, maxWidth: number): { svg: string[]; height: number } {
  const out: string[] = [];
  let x = x0;
  let y = y0;
  for (const it of items) {
    const w = 14 + textWidth(it.label, 10) + 14;
    if (x + w > x0 + maxWidth && x > x0) { x = x0; y += 16; }
    out.push(rect(x, y - 9, 10, 10, it.fill, 'stroke="#333333" stroke-width="0.5"'));
    if (it.pattern) out.push(rect(x, y - 9, 10, 10, `url(#${it.pattern})`));
    out.push(text(x + 14, y, it.label, { size: 10 }));
    x += w;
  }
  return { svg: out, height: y - y0 + 16 };
}

function barsSvg(f: BarFigure): string {
  const left = 52;
  const right = 12;
  const plotW = WIDTH - left - right;
  const body: string[] = [];
  const lg = legend(f.seriesOrder.map((s, i) => ({ label: s, fill: seriesColour(i) })), left, 16, plotW);
  body.push(...lg.svg);
  const band = plotW / Math.max(1, f.xOrder.length);
  const inner = band * 0.78;
  const sub = inner / Math.max(1, f.seriesOrder.length);
  const vertical = sub < 24;
  const top = 16 + lg.height + (vertical ? 34 : 16);
  const plotH = 220;
  const y = (v: number) => top + plotH * (1 - v);
  for (let t = 0; t <= 4; t++) {
    const v = t / 4;
    body.push(line(left, y(v), left + plotW, y(v), t === 0 ? '#000000' : '#dddddd', t === 0 ? 1 : 0.6));
    body.push(text(left - 5, y(v) + 3.5, `${v * 100}%`, { size: 10, anchor: 'end' }));
  }
  body.push(line(left, top, left, y(0)));
  body.push(text(14, top + plotH / 2, f.yTitle, { size: 11, anchor: 'middle', rotate: -90 }));
  f.xOrder.forEach((x, xi) => {
    const bx = left + xi * band + (band - inner) / 2;
    f.seriesOrder.forEach((s, si) => {
      const d = f.data.find((e) => e.x === x && e.series === s);
      if (!d) return;
      const x0 = bx + si * sub + sub * 0.08;
      const w = sub * 0.84;
      const cx = x0 + w / 2;
      const tip = `${s} · ${x}: ${d.k}/${d.n}${d.value === null ? ' (not computable)' : ` = ${pct(d.value)}`}${rangeText(d.low, d.high)}`;
      const parts = [`<title>${esc(tip)}</title>`];
      if (d.value !== null) parts.push(rect(x0, y(d.value), w, y(0) - y(d.value), seriesColour(si)));
      if (d.low !== null && d.high !== null) {
        const cap = Math.min(w * 0.4, 8) / 2;
        parts.push(line(cx, y(d.low), cx, y(d.high), '#000000', 1), line(cx - cap, y(d.low), cx + cap, y(d.low)), line(cx - cap, y(d.high), cx + cap, y(d.high)));
      }
      const lab = d.n === 0 ? 'n=0' : `${d.k}/${d.n}`;
      const ly = y(Math.max(d.value ?? 0, d.high ?? 0)) - 3;
      parts.push(vertical ? text(cx + 3, ly, lab, { size: 8.5, rotate: -90 }) : text(cx, ly, lab, { size: 8.5, anchor: 'middle' }));
      body.push(`<g class="bar">${parts.join('')}</g>`);
    });
  });
  const maxLabel = Math.max(...f.xOrder.map((x) => textWidth(x, 10)));
  const rotate = maxLabel > band - 4;
  const axisY = y(0) + 13;
  f.xOrder.forEach((x, xi) => {
    const cx = left + xi * band + band / 2;
    body.push(rotate ? text(cx, axisY, x, { size: 10, anchor: 'end', rotate: -30 }) : text(cx, axisY, x, { size: 10, anchor: 'middle' }));
  });
  const labelsH = rotate ? Math.min(160, maxLabel * 0.5 + 10) : 12;
  body.push(text(left + plotW / 2, axisY + labelsH + 12, f.xTitle, { size: 11, anchor: 'middle' }));
  return documentOf(f, body, axisY + labelsH + 16);
}

const hatchDefs = (id: string) => `<pattern id="${id}-hatch" width="6" height="6" patternUnits="userSpaceOnUse" patternTransform="rotate(45)"><rect width="6" height="6" fill="none"/><line x1="0" y1="0" x2="0" y2="6" stroke="#ffffff" stroke-width="2"/></pattern>`;

function stackSvg(f: StackFigure): string {
  const labelW = Math.min(200, Math.max(...f.yOrder.map((s) => textWidth(s, 10)), 40) + 8);
  const left = 12 + labelW;
  const right = 40;
  const gap = f.data.some((d) => f.apart.includes(d.category)) ? 10 : 0;
  const plotW = WIDTH - left - right - gap;
  const rowH = 22;
  const top = 14;
  const body: string[] = [];
  const hatch = `${f.id}-hatch`;
  f.yOrder.forEach((g, gi) => {
    const yy = top + gi * rowH;
    const label = textWidth(g, 10) > labelW - 8 ? `${[...g].slice(0, Math.floor((labelW - 8) / 5.5) - 1).join('')}…` : g;
    body.push(text(left - 6, yy + rowH / 2 + 3.5, label, { size: 10, anchor: 'end' }));
    let x = left;
    let crossed = false;
    let un = 0;
    for (const c of f.categoryOrder) {
      const d = f.data.find((e) => e.y === g && e.category === c);
      if (!d) continue;
      if (f.apart.includes(c) && !crossed) { x += gap; crossed = true; }
      const w = d.share * plotW;
      const parts = [`<title>${esc(`${g} · ${c}: ${d.count} (${pct(d.share)})${d.unconfined.length ? `, ${d.unconfined.length} unconfined` : ''}`)}</title>`,
        rect(x, yy + 3, w, rowH - 6, FAILURE_COLOURS[c] ?? '#999999', 'stroke="#ffffff" stroke-width="0.8"')];
      if (f.apart.includes(c)) parts.push(rect(x, yy + 3, w, rowH - 6, `url(#${hatch})`));
      if (w >= 16) parts.push(text(x + w / 2, yy + rowH / 2 + 3.5, String(d.count), { size: 9, anchor: 'middle', fill: ['failed first at I', 'all correct (All·E✓)', 'not computable', 'failed first at E', 'failed first at C'].includes(c) ? '#000000' : '#ffffff' }));
      body.push(`<g class="segment">${parts.join('')}</g>`);
      x += w;
      un += d.unconfined.length;
    }
    if (un) body.push(text(x + 4, yy + rowH / 2 + 3.5, `† ${un}`, { size: 9 }));
  });
  const axisY = top + f.yOrder.length * rowH + 2;
  body.push(line(left, axisY, left + plotW, axisY));
  for (let t = 0; t <= 4; t++) {
    const xx = left + (plotW * t) / 4;
    body.push(line(xx, axisY, xx, axisY + 3), text(xx, axisY + 13, `${t * 25}%`, { size: 10, anchor: 'middle' }));
  }
  body.push(text(left + plotW / 2, axisY + 28, `${f.xTitle} (share of the group's tasks; counts on the segments)`, { size: 11, anchor: 'middle' }));
  const present = f.categoryOrder.filter((c) => f.data.some((d) => d.category === c));
  const lg = legend(present.map((c) => ({ label: f.apart.includes(c) ? `${c} (apart)` : c, fill: FAILURE_COLOURS[c] ?? '#999999', ...(f.apart.includes(c) ? { pattern: hatch } : {}) })), 12, axisY + 48, WIDTH - 24);
  body.push(...lg.svg);
  return documentOf(f, body, axisY + 48 + lg.height, hatchDefs(f.id));
}

function heatSvg(f: HeatFigure): string {
  const rowLabelW = Math.min(150, Math.max(...f.rowOrder.map((s) => textWidth(s, 9)), 30) + 8);
  const left = 12 + rowLabelW;
  const cols = f.colOrder.length;
  const facetGap = 12;
  const avail = WIDTH - left - 12 - facetGap * (f.facetOrder.length - 1);
  const cellW = Math.max(14, Math.min(48, avail / Math.max(1, f.facetOrder.length * cols)));
  const cellH = 18;
  const top = 62;
  const body: string[] = [];
  f.rowOrder.forEach((r, ri) => body.push(text(left - 6, top + ri * cellH + cellH / 2 + 3, r, { size: 9, anchor: 'end' })));
  f.facetOrder.forEach((facet, fi) => {
    const fx = left + fi * (cols * cellW + facetGap);
    body.push(text(fx + (cols * cellW) / 2, 14, facet, { size: 10, anchor: 'middle', weight: 'bold' }));
    f.colOrder.forEach((c, ci) => body.push(text(fx + ci * cellW + cellW / 2, top - 6, c, { size: 9, anchor: cellW < 34 ? 'start' : 'middle', ...(cellW < 34 ? { rotate: -45 } : {}) })));
    f.rowOrder.forEach((r, ri) => {
      f.colOrder.forEach((c, ci) => {
        const e = f.data.find((x) => x.facet === facet && x.row === r && x.col === c);
        const x0 = fx + ci * cellW;
        const y0 = top + ri * cellH;
        if (!e || e.value === null) {
          // no task of this paper in the group (blank), or none with the metric computable (a dash)
          const dash = e ? text(x0 + cellW / 2, y0 + cellH / 2 + 3, '–', { size: 8, anchor: 'middle', fill: '#999999' }) : '';
          body.push(`<g class="cell">${e ? `<title>${esc(`${facet} · ${r} · ${c}: n=0 (not computable)`)}</title>` : ''}${rect(x0, y0, cellW, cellH, '#ffffff', 'stroke="#dddddd" stroke-width="0.6"')}${dash}</g>`);
          return;
        }
        const tip = `${facet} · ${r} · ${c}: ${e.k}/${e.n} = ${pct(e.value)}${rangeText(e.low, e.high)}`;
        body.push(`<g class="cell"><title>${esc(tip)}</title>${rect(x0, y0, cellW, cellH, heatColour(e.value), 'stroke="#ffffff" stroke-width="0.6"')}${cellW >= 26 ? text(x0 + cellW / 2, y0 + cellH / 2 + 3, `${e.k}/${e.n}`, { size: 8, anchor: 'middle', fill: heatText(e.value) }) : ''}</g>`);
      });
    });
  });
  const gy = top + f.rowOrder.length * cellH + 14;
  const stops = HEAT_STOPS.map((c, i) => `<stop offset="${n2(i / (HEAT_STOPS.length - 1))}" stop-color="${c}"/>`).join('');
  const defs = `<linearGradient id="${f.id}-ramp" x1="0" y1="0" x2="1" y2="0">${stops}</linearGradient>`;
  body.push(text(left, gy + 9, 'tasks correct:', { size: 9, anchor: 'end' }), rect(left + 6, gy, 160, 10, `url(#${f.id}-ramp)`, 'stroke="#999999" stroke-width="0.5"'),
    text(left + 6, gy + 22, '0%', { size: 9 }), text(left + 166, gy + 22, '100%', { size: 9, anchor: 'end' }));
  return documentOf(f, body, gy + 26, defs);
}
