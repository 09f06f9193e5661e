import * as path from 'node:path';
import * as vscode from 'vscode';
import { plural } from '../../core/util/plural';
import type { Comparison, StepBrief } from '../../core/viewer/compare';
import { formatDuration, type TriageRow } from '../../core/viewer/triageTable';
import { briefCsp } from '../brief/csp';
import { makeNonce } from '../brief/nonce';
import { openTarget } from './runStore';

/** `viewType` of the comparison panels. */
export const COMPARE_VIEW_TYPE = 'expbench.compareRuns';

/** Steps shown per phase and side before "… n more" (the viewer shows them all). */
const MAX_STEPS = 60;

/**
 * Two runs of one task side by side (command `expbench.trajectory.compareRuns` {left, right}): a
 * webview without script (strict CSP) in two columns: the scores, working time per phase, the
 * steps of each phase side by side, and the judge's verdict on each item (reasons cut at 160 characters). A step opens in the trajectory viewer
 * through a command link (`expbench.trajectory.open` {uri, step}, the only command it may run).
 */
export function showComparison(extensionUri: vscode.Uri, c: Comparison): vscode.WebviewPanel {
  const panel = vscode.window.createWebviewPanel(COMPARE_VIEW_TYPE, `Compare: ${c.task ?? 'runs'}`, vscode.ViewColumn.Active, {
    enableScripts: false, enableCommandUris: ['expbench.trajectory.open'],
    localResourceRoots: [vscode.Uri.joinPath(extensionUri, 'dist', 'webview')],
  });
  const css = panel.webview.asWebviewUri(vscode.Uri.joinPath(extensionUri, 'dist', 'webview', 'triage.css'));
  panel.webview.html = comparisonHtml(c, { csp: briefCsp(panel.webview.cspSource, makeNonce()), css: css.toString() });
  return panel;
}

const esc = (s: string) => s.replace(/[&<>"']/g, (ch) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' }[ch] as string));
const pct = (x: number | null) => (x === null ? '–' : `${Math.round(100 * x)}%`);
const mark = (x: boolean | null) => (x === null ? '<span class="muted">–</span>' : x ? '<span class="ok">✓</span>' : '<span class="bad">✗</span>');
const minutes = (ms: number | null) => (ms === null ? '–' : formatDuration(ms));

function openLink(row: TriageRow, step: number, text: string): string {
  const args = encodeURIComponent(JSON.stringify([{ uri: openTarget(row), step }]));
  return `<a href="command:expbench.trajectory.open?${args}" title="open step ${step} in the viewer">${text}</a>`;
}

function runHead(r: TriageRow): string {
  return `<th scope="col"><div>${esc(r.agent)}${r.model ? ` · ${esc(r.model)}` : ''} <span class="muted">(${r.actor})</span></div><div class="muted small">${esc(path.basename(r.run))}</div></th>`;
}

function steps(row: TriageRow, list: StepBrief[]): string {
  if (list.length === 0) return '<p class="muted">no step</p>';
  const shown = list.slice(0, MAX_STEPS).map((s) => `<li class="kind-${esc(s.kind)}">${openLink(row, s.index, `#${s.index}`)} <span class="muted">${esc(s.kind)}</span> ${esc(s.label)}</li>`).join('');
  return `<ol class="steps">${shown}</ol>${list.length > MAX_STEPS ? `<p class="muted">… ${list.length - MAX_STEPS} more (open the run)</p>` : ''}`;
}

/** The comparison page (no script; `opts.csp` its Content-Security-Policy, `opts.css` the stylesheet's URI). */
export function comparisonHtml(c: Comparison, opts: { csp: string; css: string }): string {
  const { left: l, right: r } = c;
  const scoreRows = [
    ['D', pct(l.D), pct(r.D)], ['I', pct(l.I), pct(r.I)], ['E', mark(l.E), mark(r.E)], ['C', mark(l.C), mark(r.C)], ['All·E✓', mark(l.AllE), mark(r.AllE)],
    ['monitor flags', String(l.monitorFlags), String(r.monitorFlags)], ['steps', String(l.steps), String(r.steps)], ['tokens', String(l.tokens), String(r.tokens)],
    ['cost (USD)', l.costUsd === null ? '–' : l.costUsd.toFixed(4), r.costUsd === null ? '–' : r.costUsd.toFixed(4)],
    ['working time', minutes(l.durationMs), minutes(r.durationMs)], ['judge', l.judge ?? 'not judged', r.judge ?? 'not judged'],
  ].map(([k, a, b]) => `<tr><th scope="row">${k}</th><td>${a}</td><td>${b}</td></tr>`).join('');
  const phaseRows = c.phases.map((p) => `<tr><th scope="row">${p.phase}</th><td>${minutes(p.leftMs)} <span class="muted">(${plural(p.left.length, 'step')})</span></td><td>${minutes(p.rightMs)} <span class="muted">(${plural(p.right.length, 'step')})</span></td></tr>`).join('');
  const blocks = c.phases.map((p) => `<tr class="phase"><th colspan="2">${p.phase} <span class="muted">${minutes(p.leftMs)} · ${minutes(p.rightMs)}</span></th></tr><tr><td>${steps(l, p.left)}</td><td>${steps(r, p.right)}</td></tr>`).join('');
  const verdict = (v: { verdict: string | null; reason: string } | null) => (v ? `<span class="verdict v-${esc(v.verdict ?? 'none')}">${esc(v.verdict ?? '–')}</span> <span class="muted small">${esc(v.reason.length > 160 ? `${v.reason.slice(0, 159)}…` : v.reason)}</span>` : '<span class="muted">–</span>');
  const verdicts = c.verdicts.length
    ? c.verdicts.map((v) => `<tr><th scope="row">${esc(v.label)}</th><td>${verdict(v.left)}</td><td>${verdict(v.right)}</td></tr>`).join('')
    : '<tr><td colspan="3" class="muted">neither run has a judge record</td></tr>';
  return `<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="UTF-8">
<meta http-equiv="Content-Security-Policy" content="${opts.csp}">
<link rel="stylesheet" href="${opts.css}">
<title>Compare</title>
</head>
<body class="compare">
<header class="bar"><h1>Compare: ${esc(c.task ?? 'runs')}</h1><span class="muted">policy ${esc(c.policy)}</span></header>
<table class="runs two"><thead><tr><th></th>${runHead(l)}${runHead(r)}</tr></thead><tbody>${scoreRows}</tbody></table>
<h2>Time per phase</h2>
<table class="runs two"><tbody>${phaseRows}</tbody></table>
<h2>Steps by phase</h2>
<table class="runs blocks"><thead><tr>${runHead(l)}${runHead(r)}</tr></thead><tbody>${blocks}</tbody></table>
<h2>Verdicts</h2>
<table class="runs two verdicts"><tbody>${verdicts}</tbody></table>
</body>
</html>`;
}
