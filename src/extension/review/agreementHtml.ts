import { formatEstimate, type AgreementReport } from '../../core/curation/agreement';
import type { Estimate } from '../../core/metrics/agreement';
import { plural } from '../../core/util/plural';

/**
 * The agreement view's page (no script): the table of docs/curation.md "Judge agreement" and an
 * inline SVG plot, one row per judge, phase and labeller (then the labellers' own rows, the
 * ceiling; the plot's row labels leave the labeller to the table): Cohen's κ (circle) and macro-F1 (square) with their bootstrap intervals on a −1…1 axis,
 * and PaperBench JudgeEval's best macro-F1 (≈ 0.83) as a dashed reference line (not like-for-like).
 */
export function agreementHtml(r: AgreementReport, o: { csp: string; cssUri: string; inputs: string[]; store: string }): string {
  const rows = [
    ...r.rows.map((x) => ({ label: `${x.judge} · ${x.phase} · ${x.labeller}`, short: `${x.judge} · ${x.phase}`, f: x.figures, ceiling: false })),
    ...r.curators.map((x) => ({ label: `${x.labellers[0]} vs ${x.labellers[1]} · ${x.phase} (ceiling)`, short: `${x.labellers[0]} vs ${x.labellers[1]} · ${x.phase}`, f: x.figures, ceiling: true })),
  ];
  const table = rows.length === 0 ? '<p class="muted">No labelled item matches a judged item: label items in the gap report (Accept / Flip…) or with the review store, then show this again.</p>'
    : `<table><thead><tr><th>judge · phase · labeller</th><th>items</th><th>runs</th><th>accuracy</th><th>Cohen's κ</th><th>macro-F1</th></tr></thead><tbody>${
      rows.map((x) => `<tr${x.ceiling ? ' class="ceiling"' : ''}><td>${esc(x.label)}</td><td>${x.f.items}</td><td>${x.f.clusters}</td><td>${formatEstimate(x.f.accuracy)}</td><td>${formatEstimate(x.f.kappa)}</td><td>${formatEstimate(x.f.macroF1)}</td></tr>`).join('')
    }</tbody></table>`;
  const notes = [...new Set([...rows.flatMap((x) => x.f.notes.map((n) => `${x.label}: ${n}`)), ...r.notes, ...r.skipped.map((s) => `${s.file}: ${s.reason}`)])];
  return `<!DOCTYPE html><html lang="en"><head><meta charset="utf-8"><meta http-equiv="Content-Security-Policy" content="${o.csp}">
<link rel="stylesheet" href="${o.cssUri}"><title>Judge agreement</title></head><body>
<h1>Judge agreement</h1>
<p class="muted">${esc(plural(r.labels, 'label'))} by ${esc(plural(r.labellers.length, 'labeller'))} (${esc(r.labellers.join(', ') || 'none')}); ${r.judgedItems} judged items read from ${esc(o.inputs.join(', '))}; labels from ${esc(o.store)}. Intervals: 95% percentile bootstrap over runs.</p>
${rows.length ? plot(rows) : ''}
${table}
${notes.length ? `<h2>Notes</h2><ul>${notes.map((n) => `<li>${esc(n)}</li>`).join('')}</ul>` : ''}
</body></html>`;
}

const W = 980;
const LEFT = 380;
const ROW = 34;
const TOP = 28;

/** x of a value on the −1…1 axis. */
function x(v: number): number {
  return LEFT + ((v + 1) / 2) * (W - LEFT - 20);
}

function plot(rows: { short: string; f: { kappa: Estimate; macroF1: Estimate }; ceiling: boolean }[]): string {
  const h = TOP + rows.length * ROW + 30;
  const grid = [-1, -0.5, 0, 0.5, 1].map((t) => `<line class="grid" x1="${x(t)}" x2="${x(t)}" y1="${TOP - 8}" y2="${h - 26}"/><text class="tick" x="${x(t)}" y="${h - 10}" text-anchor="middle">${t}</text>`).join('');
  const ref = `<line class="ref" x1="${x(0.83)}" x2="${x(0.83)}" y1="${TOP - 8}" y2="${h - 26}"/><text class="reflabel" x="${x(0.83) - 4}" y="${TOP - 12}" text-anchor="end">JudgeEval best macro-F1 ≈ 0.83 (reference)</text>`;
  const mark = (e: Estimate, y: number, kind: 'kappa' | 'f1') => {
    if (e.value === null) return `<text class="tick" x="${x(0)}" y="${y + 4}" text-anchor="middle">${kind === 'kappa' ? 'κ undefined' : ''}</text>`;
    const ci = e.interval ? `<line class="ci ${kind}" x1="${x(e.interval[0])}" x2="${x(e.interval[1])}" y1="${y}" y2="${y}"/>` : '';
    const dot = kind === 'kappa' ? `<circle class="${kind}" cx="${x(e.value)}" cy="${y}" r="5"><title>κ ${formatEstimate(e)}</title></circle>`
      : `<rect class="${kind}" x="${x(e.value) - 4.5}" y="${y - 4.5}" width="9" height="9"><title>macro-F1 ${formatEstimate(e)}</title></rect>`;
    return ci + dot;
  };
  const body = rows.map((r, i) => {
    const y = TOP + i * ROW + ROW / 2;
    return `<text class="rowlabel${r.ceiling ? ' ceiling' : ''}" x="${LEFT - 10}" y="${y + 4}" text-anchor="end">${esc(r.short.length > 56 ? `${r.short.slice(0, 55)}…` : r.short)}</text>${mark(r.f.kappa, y - 6, 'kappa')}${mark(r.f.macroF1, y + 6, 'f1')}`;
  }).join('');
  const legend = `<circle class="kappa" cx="12" cy="12" r="5"/><text class="tick" x="22" y="16">Cohen's κ</text><rect class="f1" x="102" y="7.5" width="9" height="9"/><text class="tick" x="118" y="16">macro-F1 (lines: 95% intervals)</text>`;
  return `<svg class="plot" role="img" aria-label="Cohen's kappa and macro-F1 with intervals per judge and phase" viewBox="0 0 ${W} ${h}" width="${W}" height="${h}">${legend}${grid}${ref}${body}</svg>`;
}

function esc(s: string): string {
  return s.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;').replace(/"/g, '&quot;');
}
