import { createHash } from 'node:crypto';
import { METRICS } from '../metrics/scores';
import { label } from '../metrics/table';
import type { FigureSet } from './model';
import { esc, figureSvg } from './svg';

// Fits a 1280 px window without horizontal scroll (test/e2e/reportWidth.e2e.test.ts): the page at
// most 1200 px wide, each metric cell on three short lines (rate and k/n, bootstrap, Wilson), names
// and paths broken where they must be.
const STYLE = `body{font-family:Helvetica,Arial,sans-serif;font-size:14px;color:#111;background:#fff;margin:24px auto;max-width:1200px;padding:0 16px;overflow-wrap:anywhere}
h1{font-size:20px}h2{font-size:16px;margin-top:28px}table{border-collapse:collapse;font-size:12px}th,td{border-bottom:1px solid #ddd;padding:3px 6px;text-align:right;vertical-align:top}
td.m,thead th{white-space:nowrap}.ci{color:#555;font-size:11px}
th:first-child,td:first-child,th:nth-child(2),td:nth-child(2){text-align:left}.muted{color:#555}figure{margin:16px 0}figure svg{max-width:100%;height:auto}
.files a{margin-right:10px}ul{font-size:12px}`;

/** The Content-Security-Policy of report.html: nothing may load; only its own stylesheet (by hash) applies; no script at all. */
export function reportCsp(): string {
  const hash = createHash('sha256').update(STYLE).digest('base64');
  return `default-src 'none'; style-src 'sha256-${hash}'; img-src 'none'; base-uri 'none'; form-action 'none'`;
}

const pct = (x: number | null | undefined) => (x === null || x === undefined ? '–' : `${(100 * x).toFixed(1)}`);

/**
 * report.html: one self-contained page (no script, no request: its CSP lets nothing load) with
 * the metrics table (rates in %, the bootstrap-by-paper interval in brackets, the Wilson interval
 * in braces, k/n), the exclusions, and every figure as inline SVG with its caption, each linked
 * to its SVG and Vega-Lite files in the same folder.
 */
export function reportHtml(set: FigureSet, opts: { inputs: string[]; unconfinedNote?: string } = { inputs: [] }): string {
  const t = set.table;
  const head = ['group', 'judge', 'n', 'D̄', 'Ī', ...METRICS.map(label)].map((h) => `<th scope="col">${esc(h)}</th>`).join('');
  const rows = t.rows.map((r) => {
    const cells = METRICS.map((m) => {
      const c = r.metrics[m];
      const w = set.tableWilson[`${r.group}\u0000${r.kind}\u0000${m}`];
      return `<td class="m" title="${esc(`${c.k}/${c.n}; bootstrap by paper [${pct(c.ci?.[0])}, ${pct(c.ci?.[1])}]; Wilson {${pct(w?.[0])}, ${pct(w?.[1])}}`)}">${pct(c.rate)} ${c.k}/${c.n}<br><span class="ci">[${pct(c.ci?.[0])}, ${pct(c.ci?.[1])}]</span><br><span class="ci">{${pct(w?.[0])}, ${pct(w?.[1])}}</span></td>`;
    }).join('');
    return `<tr><th scope="row">${esc(r.group)}</th><td>${esc(r.kind)}</td><td>${r.tasks}</td><td>${pct(r.meanD.mean)} (n=${r.meanD.n})</td><td>${pct(r.meanI.mean)} (n=${r.meanI.n})</td>${cells}</tr>`;
  }).join('\n');
  const excl = t.exclusions.length
    ? `<h2>Excluded from a denominator</h2><ul>${t.exclusions.map((e) => `<li>${esc(`${e.group} ${e.kind} ${e.taskId} [${e.metrics.map(label).join(', ')}]: ${e.reason}`)}</li>`).join('')}</ul>` : '';
  const figures = set.figures.map((f) => `<section id="${esc(f.id)}"><h2>${esc(f.title)}</h2><figure>${figureSvg(f).replace(/^<\?xml[^>]*>\s*/, '')}</figure>
<p class="files muted"><a href="${esc(f.id)}.svg">${esc(f.id)}.svg</a><a href="${esc(f.id)}.vl.json">${esc(f.id)}.vl.json</a> (Vega-Lite, data inline with the run keys)</p></section>`).join('\n');
  return `<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="UTF-8">
<meta http-equiv="Content-Security-Policy" content="${reportCsp()}">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>EXP-Bench results (${esc(t.policy.name)})</title>
<style>${STYLE}</style>
</head>
<body>
<h1>EXP-Bench results</h1>
<p>Policy <b>${esc(t.policy.name)}</b>: ${esc(t.policy.description)}.</p>
<p class="muted">Rates in %. [ ]: 95% bootstrap interval, ${t.bootstrap.resamples} resamples of whole papers, seed ${t.bootstrap.seed}. { }: 95% Wilson score interval of k/n (tasks as independent units). Inputs: ${esc(opts.inputs.join(', ') || '–')}.${opts.unconfinedNote ? ` ${esc(opts.unconfinedNote)}` : ''}</p>
<h2>Table</h2>
<table id="metrics-table"><thead><tr>${head}</tr></thead><tbody>
${rows}
</tbody></table>
<p class="files muted"><a href="table.csv">table.csv</a> (the same numbers at full precision, with the run keys of each cell)</p>
${excl}
${figures}
</body>
</html>
`;
}
