import {
  DeskHostMessageSchema, type DeskFilterView, type DeskRowView, type DeskWebviewMessage, type PageMessage, type QueueMessage,
} from '../../../src/protocol/curation';
import { el } from '../dom';

// The curator's desk (src/extension/curation/deskPanel.ts): the queue (rows filtered here by
// paper, rule, state and curator; counts per state; a row opens the task page) and a task page
// (ground truth with its edits, lint findings, validation runs, judged sessions it affects, the
// judgement history, and the curator's buttons). Text is set with textContent only.

interface VsCodeApi { postMessage(m: unknown): void; getState(): unknown; setState(s: unknown): void }
declare function acquireVsCodeApi(): VsCodeApi;
const api: VsCodeApi = typeof acquireVsCodeApi === 'function' ? acquireVsCodeApi()
  : (() => { let s: unknown; const sent: unknown[] = ((window as any).__expbenchSent = []); return { postMessage: (m: unknown) => sent.push(m), getState: () => s, setState: (x: unknown) => { s = x; } }; })();
const send = (m: DeskWebviewMessage) => api.postMessage(m);

const root = document.getElementById('root')!;
const noticeBox = el('div', { class: 'notice', id: 'desk-notice', role: 'status' });
let queue: QueueMessage | undefined;
let filter: DeskFilterView = (api.getState() as { filter?: DeskFilterView } | undefined)?.filter ?? {};

const STATE_LABEL: Record<string, string> = {
  attention: 'needs a curator', 'lint-error': 'lint error', 'open-dispute': 'open dispute', disagreement: 'curators disagree',
  'failed-validation': 'failed validation', 'no-verdict': 'no verdict yet', valid: 'valid', invalid: 'invalid', 'needs-fix': 'needs fix', all: 'all tasks',
};
const ORDER: string[] = ['lint-error', 'open-dispute', 'disagreement', 'failed-validation', 'no-verdict'];
const VERDICT_LABEL: Record<string, string> = { valid: 'valid', invalid: 'invalid', 'needs-fix': 'needs fix' };
const when = (iso: string) => iso.slice(0, 16).replace('T', ' ');
/** A host path as a person reads it on the page: from its dataset's `tasks/` on, else its last segment (the whole path on hover). */
const short = (p: string) => (/^[a-z]+:\/\//i.test(p) ? p : p.includes('/tasks/') ? p.slice(p.lastIndexOf('/tasks/') + 1) : p.split(/[\\/]/).filter(Boolean).pop() ?? p);
const show = (v: unknown) => (v === undefined ? '' : typeof v === 'string' ? v : JSON.stringify(v));

window.addEventListener('message', (ev: MessageEvent) => {
  const r = DeskHostMessageSchema.safeParse(ev.data);
  if (!r.success) {
    noticeBox.className = 'notice error';
    noticeBox.textContent = `the host sent a message this page cannot read: ${r.error.issues.slice(0, 3).map((i) => `${i.path.join('.')}: ${i.message}`).join('; ')}`;
    if (!root.contains(noticeBox)) root.prepend(noticeBox);
    return;
  }
  const m = r.data;
  if (m.type === 'queue') { queue = m; filter = m.filter; renderQueue(); }
  else if (m.type === 'page') renderPage(m);
  else { noticeBox.className = `notice ${m.level}`; noticeBox.textContent = m.text; }
});
send({ type: 'ready' });

// ---- the queue ----

function select(id: string, label: string, value: string | undefined, options: [string, string][], onChange: (v: string) => void): HTMLElement {
  const s = el('select', { id, 'aria-label': label });
  for (const [v, text] of options) s.append(el('option', { value: v }, text));
  s.value = value ?? '';
  s.addEventListener('change', () => onChange(s.value));
  return el('label', { class: 'filter' }, `${label} `, s);
}

function setFilter(f: DeskFilterView): void {
  filter = Object.fromEntries(Object.entries(f).filter(([, v]) => v)) as DeskFilterView;
  api.setState({ filter });
  send({ type: 'filter', filter });
}

function matches(r: DeskRowView, f: DeskFilterView): boolean {
  const state = f.state || 'attention';
  return (!f.paper || r.paper === f.paper) && (!f.rule || r.lint.rules.includes(f.rule)) && (!f.curator || r.curators.some((c) => c.by === f.curator))
    && (state === 'all' || (state === 'attention' ? r.states.length > 0 : r.states.includes(state as never) || r.verdict === state));
}

function renderQueue(): void {
  const q = queue!;
  // the most pressing first: by the first reason (lint error, open dispute, disagreement, failed validation, no verdict), then by id
  const rank = (r: DeskRowView) => (r.states.length ? ORDER.indexOf(r.states[0]) : ORDER.length);
  const rows = q.rows.filter((r) => matches(r, filter)).sort((a, b) => rank(a) - rank(b) || (a.task < b.task ? -1 : a.task > b.task ? 1 : 0));
  const chips = el('div', { class: 'chips', id: 'desk-counts' });
  for (const k of ['attention', 'lint-error', 'open-dispute', 'disagreement', 'failed-validation', 'no-verdict', 'needs-fix', 'invalid', 'valid', 'all']) {
    const n = k === 'all' ? q.counts.total : q.counts[k] ?? 0;
    const b = el('button', { type: 'button', class: `chip${(filter.state || 'attention') === k ? ' on' : ''}`, 'data-state': k }, `${STATE_LABEL[k]} `, el('b', {}, String(n)));
    b.addEventListener('click', () => setFilter({ ...filter, state: k }));
    chips.append(b);
  }
  const filters = el('div', { class: 'bar' },
    select('desk-paper', 'Paper', filter.paper, [['', 'every paper'], ...q.papers.map((p): [string, string] => [p, p])], (v) => setFilter({ ...filter, paper: v })),
    select('desk-rule', 'Rule', filter.rule, [['', 'any rule'], ...q.rules.map((r): [string, string] => [r, r])], (v) => setFilter({ ...filter, rule: v })),
    select('desk-state', 'State', filter.state, [['', STATE_LABEL.attention], ...Object.keys(STATE_LABEL).filter((k) => k !== 'attention').map((k): [string, string] => [k, STATE_LABEL[k]])], (v) => setFilter({ ...filter, state: v })),
    select('desk-curator', 'Curator', filter.curator, [['', 'anyone'], ...q.curators.map((c): [string, string] => [c, c])], (v) => setFilter({ ...filter, curator: v })),
  );
  const refresh = el('button', { type: 'button', class: 'secondary' }, 'Refresh (lint again)');
  refresh.addEventListener('click', () => send({ type: 'refresh' }));
  const agreement = el('button', { type: 'button', class: 'secondary' }, 'Judge agreement…');
  agreement.addEventListener('click', () => send({ type: 'showAgreement' }));
  const table = el('table', { class: 'queue', id: 'desk-queue' });
  table.append(el('thead', {}, el('tr', {}, ...['Task', 'Why', 'Verdict', 'Curators', 'Lint', 'Disputes', 'Edits', 'Validation', 'Question'].map((h) => el('th', {}, h)))));
  const body = el('tbody');
  for (const r of rows) {
    const tr = el('tr', { tabindex: '0', 'data-task': r.task });
    tr.append(
      el('td', { class: 'id' }, r.task),
      el('td', {}, ...r.states.map((s) => el('span', { class: `tag s-${s}` }, STATE_LABEL[s]))),
      el('td', { class: r.verdict ? `v-${r.verdict}` : 'muted' }, r.verdict ? VERDICT_LABEL[r.verdict] : '—'),
      el('td', {}, r.curators.map((c) => `${c.by}: ${VERDICT_LABEL[c.verdict]}`).join('; ') || '—'),
      el('td', { class: 'lint', title: r.lint.rules.join(', ') }, `${r.lint.errors} E · ${r.lint.warnings} W · ${r.lint.info} I`),
      el('td', { class: 'num' }, String(r.openDisputes)),
      el('td', { class: 'num' }, String(r.edits)),
      el('td', {}, r.lastValidation ? `${r.lastValidation.ok ? '✓' : '✗'} exit ${r.lastValidation.exitCode ?? '—'}, ${when(r.lastValidation.at)}` : '—'),
      el('td', { class: 'q' }, r.question),
    );
    const open = () => send({ type: 'openTask', task: r.task });
    tr.addEventListener('click', open);
    tr.addEventListener('keydown', (e) => { if (e.key === 'Enter') open(); });
    body.append(tr);
  }
  table.append(body);
  const pairs = el('section', { id: 'desk-curators' }, el('h2', {}, 'Curators'));
  if (q.pairs.length === 0) pairs.append(el('p', { class: 'muted' }, q.curators.length < 2 ? `${q.curators.length === 1 ? `only ${q.curators[0]} has` : 'no one has'} given task verdicts: no pair to compare.` : 'no task has verdicts of two curators yet.'));
  for (const p of q.pairs) {
    pairs.append(el('p', { class: 'pair' }, `${p.a} and ${p.b}: ${p.agree} of ${p.tasks} tasks agree, Cohen's κ ${p.kappa === null ? '— (undefined: one class only)' : p.kappa.toFixed(2)}${p.differ.length ? `; they differ on ${p.differ.join(', ')}` : ''}`));
  }
  root.replaceChildren(
    el('header', { class: 'bar' }, el('h1', {}, 'Curation queue'), el('span', { class: 'muted', id: 'desk-shown' }, `${rows.length} of ${q.counts.total} tasks shown`), refresh, agreement),
    noticeBox, chips, filters, table,
    rows.length === 0 ? el('p', { class: 'muted' }, 'No task matches these filters.') : el('span'),
    pairs,
    el('p', { class: 'muted small' }, `${q.lintScope}. Review store: ${q.store}.`),
    ...(q.problems.length ? [el('div', { class: 'problems' }, el('h2', {}, 'Not read'), ...q.problems.map((p) => el('div', {}, p)))] : []),
  );
}

// ---- the task page ----

function section(title: string, id: string, ...children: Array<Node | string>): HTMLElement {
  return el('section', { id }, el('h2', {}, title), ...children);
}

function reasonBox(id: string, placeholder: string): HTMLTextAreaElement {
  return el('textarea', { id, rows: '2', placeholder, 'aria-label': placeholder });
}

function button(text: string, attrs: Record<string, string>, onClick: () => void): HTMLButtonElement {
  const b = el('button', { type: 'button', ...attrs }, text);
  b.addEventListener('click', onClick);
  return b;
}

function renderPage(p: PageMessage): void {
  const reason = reasonBox('desk-reason', 'Reason (asked for when empty)');
  const verdictButtons = el('div', { class: 'bar' }, ...(['valid', 'invalid', 'needs-fix'] as const).map((v) => button(`Verdict: ${VERDICT_LABEL[v]}`, { 'data-verdict': v, class: `v-${v}` }, () => send({ type: 'recordVerdict', verdict: v, reason: reason.value }))));
  const actions = el('div', { class: 'bar' },
    button('Edit task as JSON…', { id: 'desk-edit' }, () => send({ type: 'editTask' })),
    button('Validate by running…', { id: 'desk-validate', class: 'secondary' }, () => send({ type: 'validate' })),
    button(`Re-judge affected sessions (${p.judge})`, { id: 'desk-rejudge', class: 'secondary' }, () => send({ type: 'rejudge' })),
  );
  const head = el('header', { class: 'page-head' },
    el('h1', {}, p.task), el('span', { class: 'muted' }, `type ${p.taskType}${p.paperTitle ? ` · ${p.paperTitle}` : ''}`),
    el('div', {}, ...p.states.map((s) => el('span', { class: `tag s-${s}` }, STATE_LABEL[s]))),
    el('p', { id: 'desk-verdict' }, p.verdict ? el('span', { class: `v-${p.verdict}` }, `Verdict: ${VERDICT_LABEL[p.verdict]}`) : el('span', { class: 'muted' }, p.disagreement ? 'Curators disagree' : 'No verdict yet'),
      p.decidedBy ? ` — ${p.decidedBy}${p.reason ? `: ${p.reason}` : ''}` : ''),
  );
  // whose judgement is whose: one column per curator
  const curators = section('Curators', 'desk-curators');
  if (p.curators.length === 0) curators.append(el('p', { class: 'muted' }, 'No curator has judged this task.'));
  else {
    const t = el('table', { class: 'two' }, el('thead', {}, el('tr', {}, el('th', {}, 'Curator'), el('th', {}, 'Verdict'), el('th', {}, 'When'), el('th', {}, 'Why'))));
    const b = el('tbody');
    for (const c of p.curators) b.append(el('tr', { class: p.disagreement ? 'disagree' : '', 'data-curator': c.by }, el('td', {}, c.by === p.me ? `${c.by} (you)` : c.by), el('td', { class: `v-${c.verdict}` }, VERDICT_LABEL[c.verdict]), el('td', {}, when(c.at)), el('td', {}, c.reason ?? '')));
    t.append(b);
    curators.append(t);
  }
  if (p.disagreement) {
    const r = reasonBox('desk-resolve-reason', 'Why this decision');
    curators.append(el('div', { class: 'disagreement', id: 'desk-disagreement' }, el('p', {}, `The curators' latest verdicts differ (${p.curators.map((c) => `${c.by}: ${VERDICT_LABEL[c.verdict]}`).join(', ')}). Resolve:`), r,
      el('div', { class: 'bar' }, ...(['valid', 'invalid', 'needs-fix'] as const).map((v) => button(`Resolve as ${VERDICT_LABEL[v]}`, { 'data-resolve': v }, () => send({ type: 'resolve', verdict: v, reason: r.value }))))));
  }
  const disputes = section(`Open disputes (${p.openDisputes.length})`, 'desk-disputes');
  for (const d of p.openDisputes) {
    const r = reasonBox(`desk-dispute-${d.id}`, 'Answer: what was checked, whether the ground truth changes');
    disputes.append(el('div', { class: 'dispute', 'data-dispute': d.id },
      el('p', {}, el('b', {}, d.about), ` — ${d.by}, ${when(d.at)}: ${d.reason ?? ''}`),
      ...d.evidence.map((e) => el('p', { class: 'muted small' }, `evidence: ${Object.entries(e).map(([k, v]) => `${k} ${v}`).join(', ')}`)),
      r, el('div', { class: 'bar' },
        button('Answer: the ground truth stands (valid)', {}, () => send({ type: 'answerDispute', dispute: d.id, verdict: 'valid', reason: r.value })),
        button('Answer: needs fix', {}, () => send({ type: 'answerDispute', dispute: d.id, verdict: 'needs-fix', reason: r.value })),
        button('Answer without a verdict', { class: 'secondary' }, () => send({ type: 'answerDispute', dispute: d.id, reason: r.value })))));
  }
  if (p.openDisputes.length === 0) disputes.append(el('p', { class: 'muted' }, 'None.'));
  const gt = section(`Ground truth${p.edits.length ? ` (with ${p.edits.length} edit${p.edits.length > 1 ? 's' : ''}, applied on export)` : ''}`, 'desk-ground-truth',
    el('p', { class: 'muted small', title: `${p.file}${p.pin ? `\n${p.pin.url}` : ''}` }, `${short(p.file)}${p.pin ? ` · pinned ${p.pin.commit.slice(0, 12)} of ${short(p.pin.url)}` : ' · no pin (no curation file)'}`),
    el('h3', {}, 'Question'), el('p', {}, p.question),
    el('h3', {}, 'Method'), el('p', { class: 'pre' }, p.method),
    el('h3', {}, 'Expected outcome'), el('p', { class: 'pre', id: 'desk-expected' }, p.expectedOutcome),
    el('h3', {}, 'Design'), el('ul', {}, ...p.design.map((v) => el('li', {}, el('b', {}, `${v.name}`), ` (${v.kind}) ${v.description}`))),
    el('h3', {}, 'Requirements'), el('ol', { id: 'desk-requirements' }, ...p.requirements.map((r) => el('li', {}, r))),
    el('h3', {}, 'Masked / source'), el('p', { class: 'small' }, `masked_source: ${p.maskedSource.join(', ') || '—'} · source: ${p.source.join(', ') || '—'}`),
  );
  const lint = section(`Lint findings (${p.lint.length})`, 'desk-lint');
  for (const f of p.lint) {
    const row = el('div', { class: `finding ${f.severity}`, 'data-rule': f.rule }, el('b', {}, `${f.severity} ${f.rule}`), ` ${f.pointer} — ${f.message}`);
    row.addEventListener('click', () => send({ type: 'openFinding', pointer: f.pointer }));
    lint.append(row);
  }
  if (p.lint.length === 0) lint.append(el('p', { class: 'muted' }, 'No findings.'));
  const vals = section(`Validation runs (${p.validations.length})`, 'desk-validations');
  for (const v of p.validations) {
    const end = v.timedOut ? 'time limit' : v.setupFailed ? `setup failed (exit ${v.exitCode})` : `exit ${v.exitCode ?? '—'}`;
    const row = el('div', { class: `run ${v.ok ? 'ok' : 'bad'}` }, `${v.ok ? '✓' : '✗'} ${when(v.startedAt)} · ${end} after ${(v.durationMs / 1000).toFixed(1)} s${v.diskFull ? ' · scratch full' : ''} · claims ${v.claims.found} found, ${v.claims.derived} derived, ${v.claims.notFound} not found · ${v.commit.slice(0, 12)} in ${v.image}${v.placement ? ` · ${v.placement}` : ''} `,
      button('Open record', { class: 'link' }, () => send({ type: 'openRecord', dir: v.dir })));
    vals.append(row);
  }
  if (p.validations.length === 0) vals.append(el('p', { class: 'muted' }, 'Not validated by running yet.'));
  const sessions = section(`Judged sessions (${p.sessions.filter((s) => s.judged).length}; ${p.sessions.filter((s) => s.affected.length > 0).length} affected by the edits)`, 'desk-sessions');
  for (const s of p.sessions) {
    const j = s.judge;
    sessions.append(el('div', { class: `session${s.affected.length ? ' affected' : ''}`, 'data-session': s.session, title: s.session },
      el('b', {}, s.affected.length ? 'affected' : s.judged ? 'judged' : 'not judged'), ` session ${short(s.session)}`,
      j ? ` · ${j.kind} judge ${when(j.at)} · D ${j.D === null ? '—' : j.D.toFixed(2)} · I ${j.I === null ? '—' : j.I.toFixed(2)} · C ${j.C === null ? '—' : j.C ? '✓' : '✗'}` : '',
      s.affected.length ? ` · judged with other ${s.affected.join(', ')}` : '',
      s.curatedEdits ? ` · re-judged against ${s.curatedEdits.length} edit(s)` : ''));
  }
  if (p.sessions.length === 0) sessions.append(el('p', { class: 'muted' }, 'No session of this task in the sessions folder.'));
  const edits = section(`Edits (${p.edits.length})`, 'desk-edits');
  for (const e of p.edits) {
    edits.append(el('div', { class: 'edit', 'data-edit': e.id }, el('p', {}, el('b', {}, e.by), ` ${when(e.at)}: ${e.reason ?? ''} `, button('Diff', { class: 'link' }, () => send({ type: 'showEdit', edit: e.id }))),
      el('ul', { class: 'ops' }, ...e.operations.map((o) => el('li', {}, o)))));
  }
  if (p.failedEdit) edits.append(el('p', { class: 'bad' }, `edit ${p.failedEdit.id} does not apply: ${p.failedEdit.message}`));
  if (p.edits.length === 0) edits.append(el('p', { class: 'muted' }, 'No edits.'));
  const history = section(`History (${p.history.length})`, 'desk-history');
  const ht = el('table', { class: 'history' }, el('thead', {}, el('tr', {}, ...['When', 'Who', 'What', 'Value', 'Before', 'Why'].map((h) => el('th', {}, h)))));
  const hb = el('tbody');
  for (const h of p.history.slice().reverse()) {
    const value = h.kind === 'task-edit' ? `${((h.value as { patch?: unknown[] }).patch ?? []).length} operation(s)` : h.kind === 'dispute' ? `about ${(h.value as { about?: string }).about}` : show(h.value);
    hb.append(el('tr', { 'data-kind': h.kind }, el('td', {}, when(h.at)), el('td', {}, h.by), el('td', {}, h.kind), el('td', {}, value), el('td', { class: 'muted' }, show(h.before)), el('td', {}, h.reason ?? '')));
  }
  ht.append(hb);
  history.append(p.history.length ? ht : el('p', { class: 'muted' }, 'No judgements yet.'));
  root.replaceChildren(head, noticeBox, el('section', { id: 'desk-actions' }, reason, verdictButtons, actions), curators, disputes, lint, sessions, edits, vals, gt, history);
}
