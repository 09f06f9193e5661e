import { TriageFocusMessageSchema, TriageRowsMessageSchema, type TriageFocusMessage, type TriageRowsMessage, type TriageWebviewMessage } from '../../../src/protocol/triage';
import { filterRows, formatDuration, runLabel, sortRows, TRIAGE_COLUMNS, type TriageColumn, type TriageFilter, type TriageRow } from '../../../src/core/viewer/triageTable';
import { plural } from '../../../src/core/util/plural';
import { el } from '../dom';

// The triage table (src/extension/trajectory/triagePanel.ts): every run, sortable by a column
// header, filtered by the box (task, agent, model), an actor and "flagged only"; a row (click,
// Enter) opens the run at its first flagged step. Sort and filter are src/core/viewer/triageTable.ts.

interface VsCodeApi { postMessage(m: unknown): void; getState(): unknown; setState(s: unknown): void }
declare function acquireVsCodeApi(): VsCodeApi;
const api: VsCodeApi = typeof acquireVsCodeApi === 'function' ? acquireVsCodeApi()
  : (() => { let s: unknown; const sent: unknown[] = ((window as any).__expbenchSent = []); return { postMessage: (m: unknown) => sent.push(m), getState: () => s, setState: (x: unknown) => { s = x; } }; })();
const send = (m: TriageWebviewMessage) => api.postMessage(m);

interface UiState { column: TriageColumn; dir: 'asc' | 'desc'; text: string; actor: '' | 'human' | 'agent'; flaggedOnly: boolean }
const saved = api.getState() as Partial<UiState> | undefined;
const ui: UiState = { column: 'task', dir: 'asc', text: '', actor: '', flaggedOnly: false, ...saved };
let data: TriageRowsMessage | undefined;
// The runs the Results view asked for (a bar or cell), until "Show all".
let focus: TriageFocusMessage | undefined;
const focusBar = el('div', { class: 'focus', id: 'triage-focus', role: 'status' });

const HEAD: Record<TriageColumn, string> = {
  task: 'Task', id: 'Run', agent: 'Agent', model: 'Model', actor: 'Actor', D: 'D', I: 'I', E: 'E', C: 'C', AllE: 'All·E✓',
  monitorFlags: 'Flags', steps: 'Steps', tokens: 'Tokens', costUsd: 'Cost (USD)', durationMs: 'Duration',
};
const NUMERIC = new Set<TriageColumn>(['D', 'I', 'monitorFlags', 'steps', 'tokens', 'costUsd', 'durationMs']);

const root = document.getElementById('root')!;
const filterBox = el('input', { type: 'search', placeholder: 'Filter: task, agent, model', 'aria-label': 'Filter runs by task, agent or model', id: 'triage-filter' });
const actorSelect = el('select', { 'aria-label': 'Actor', id: 'triage-actor' }, el('option', { value: '' }, 'human and agent'), el('option', { value: 'human' }, 'human'), el('option', { value: 'agent' }, 'agent'));
const flagged = el('input', { type: 'checkbox', id: 'triage-flagged' });
const refresh = el('button', { class: 'secondary', type: 'button' }, 'Refresh');
const count = el('span', { class: 'muted', id: 'triage-count' });
const table = el('table', { class: 'runs', id: 'triage-table' });
const problems = el('div', { class: 'problems' });
filterBox.value = ui.text;
actorSelect.value = ui.actor;
flagged.checked = ui.flaggedOnly;
root.replaceChildren(
  el('header', { class: 'bar' }, el('h1', {}, 'Runs'), count, filterBox, actorSelect, el('label', { for: 'triage-flagged' }, flagged, ' flagged only'), refresh),
  focusBar, table, problems,
);

filterBox.addEventListener('input', () => { ui.text = filterBox.value; render(); });
actorSelect.addEventListener('change', () => { ui.actor = actorSelect.value as UiState['actor']; render(); });
flagged.addEventListener('change', () => { ui.flaggedOnly = flagged.checked; render(); });
refresh.addEventListener('click', () => send({ type: 'refresh' }));

const pct = (x: number | null) => (x === null ? '–' : `${Math.round(100 * x)}%`);
function mark(x: boolean | null): HTMLElement {
  return x === null ? el('span', { class: 'muted', title: 'not computable' }, '–') : el('span', { class: x ? 'ok' : 'bad' }, x ? '✓' : '✗');
}

function cell(r: TriageRow, c: TriageColumn): HTMLElement {
  const why = r.excluded[c as keyof typeof r.excluded];
  const td = el('td', { 'data-column': c, ...(NUMERIC.has(c) ? { class: 'num' } : {}) });
  if (why) td.title = why;
  switch (c) {
    case 'task': td.append(r.task ?? '(unknown)'); break;
    case 'id': td.append(runLabel(r)); td.classList.add('run'); td.title = runLabel(r); break;
    case 'model': td.append(r.model ?? '–'); if (r.model && !why) td.title = r.model; break;
    case 'D': case 'I': td.append(pct(r[c])); break;
    case 'E': case 'C': case 'AllE': td.append(mark(r[c])); break;
    case 'monitorFlags': td.append(r.monitorFlags ? el('span', { class: 'warn', title: `first flagged step: ${r.firstFlaggedStep}` }, `⚑ ${r.monitorFlags}`) : '0'); break;
    case 'costUsd': td.append(r.costUsd === null ? '–' : r.costUsd.toFixed(4)); break;
    case 'durationMs': td.append(r.durationMs === null ? '–' : formatDuration(r.durationMs)); break;
    default: td.append(String(r[c]));
  }
  return td;
}

function render(): void {
  api.setState(ui);
  if (!data) return;
  const f: TriageFilter = { text: ui.text.trim() || undefined, actor: ui.actor || undefined, flaggedOnly: ui.flaggedOnly };
  const wanted = focus && new Set(focus.runs);
  const inFocus = (r: TriageRow) => !wanted || wanted.has(r.run) || wanted.has(r.run.replace(/#[^#]*$/, ''));
  const rows = sortRows(filterRows(data.rows, f).filter(inFocus), ui.column, ui.dir);
  if (focus) {
    const all = el('button', { class: 'secondary', type: 'button', id: 'triage-show-all' }, 'Show all runs');
    all.addEventListener('click', () => { focus = undefined; render(); });
    const found = data.rows.filter(inFocus).length;
    focusBar.replaceChildren(`From Results: ${focus.label} · ${found} of ${plural(focus.runs.length, 'run')} listed here${found < focus.runs.length ? ' (a judge file without a trajectory has no row)' : ''} `, all);
  } else focusBar.replaceChildren();
  count.textContent = `${rows.length} of ${plural(data.rows.length, 'run')} · policy ${data.policy}`;
  const head = el('tr', {}, ...TRIAGE_COLUMNS.map((c) => {
    const th = el('th', { scope: 'col', tabindex: '0', 'data-column': c, 'aria-sort': c === ui.column ? (ui.dir === 'asc' ? 'ascending' : 'descending') : 'none' }, HEAD[c], c === ui.column ? (ui.dir === 'asc' ? ' ▲' : ' ▼') : '');
    const sortBy = () => { ui.dir = ui.column === c && ui.dir === 'asc' ? 'desc' : 'asc'; ui.column = c; render(); };
    th.addEventListener('click', sortBy);
    th.addEventListener('keydown', (e) => { if (e.key === 'Enter' || e.key === ' ') { e.preventDefault(); sortBy(); } });
    return th;
  }));
  const body = rows.map((r) => {
    const tr = el('tr', { tabindex: '0', 'data-run': r.run, title: `${r.run}\nopens ${r.firstFlaggedStep !== null ? `at step ${r.firstFlaggedStep} (first flagged)` : 'at the start'}` }, ...TRIAGE_COLUMNS.map((c) => cell(r, c)));
    if (r.monitorFlags) tr.classList.add('flagged');
    const open = () => send({ type: 'open', run: r.run, ...(r.firstFlaggedStep !== null ? { step: r.firstFlaggedStep } : {}) });
    tr.addEventListener('click', open);
    tr.addEventListener('keydown', (e) => { if (e.key === 'Enter') open(); });
    return tr;
  });
  table.replaceChildren(el('thead', {}, head), el('tbody', {}, ...(body.length ? body : [el('tr', {}, el('td', { colspan: String(TRIAGE_COLUMNS.length), class: 'muted' }, data.rows.length ? 'No run matches the filter.' : 'No runs yet: sessions under expbench.sessionsDir and trajectory files you open are listed here.'))])));
  problems.replaceChildren(...data.problems.map((p) => el('p', {}, `${p.file}: ${p.reason}`)));
}

window.addEventListener('message', (e: MessageEvent) => {
  const fm = TriageFocusMessageSchema.safeParse(e.data);
  if (fm.success) { focus = fm.data; render(); return; }
  const m = TriageRowsMessageSchema.safeParse(e.data);
  if (!m.success) return;
  data = m.data;
  render();
});
send({ type: 'ready' });
