import { RunsHostMessageSchema, type RunsBoardMessage, type RunsWebviewMessage } from '../../../src/protocol/runs';
import { clock, flag, tokenCount, usd } from '../../../src/core/runs/format';
import { plural } from '../../../src/core/util/plural';
import { el } from '../dom';
import { CAMPAIGN_COLUMNS, campaignCounts, campaignFilter, campaignTable } from './campaign';

// The run-set board (src/extension/runs/boardPanel.ts): the run set's units by status, phase,
// elapsed against the limit, tokens, cost, E/D/I/C and what each waits for; a row (click, Enter)
// opens the unit's session in the trajectory viewer; Cancel and Resume act on the run set. The host
// posts the whole board each time the run set's state file grows.

interface VsCodeApi { postMessage(m: unknown): void; getState(): unknown; setState(s: unknown): void }
declare function acquireVsCodeApi(): VsCodeApi;
const api: VsCodeApi = typeof acquireVsCodeApi === 'function' ? acquireVsCodeApi()
  : (() => { let s: unknown; const sent: unknown[] = ((window as any).__expbenchSent = []); return { postMessage: (m: unknown) => sent.push(m), getState: () => s, setState: (x: unknown) => { s = x; } }; })();
const send = (m: RunsWebviewMessage) => api.postMessage(m);

type Row = RunsBoardMessage['rows'][number];
interface UiState { status: '' | Row['status']; text: string }
const ui: UiState = { status: '', text: '', ...(api.getState() as Partial<UiState> | undefined) };
let board: RunsBoardMessage | undefined;
let busy: 'cancel' | 'resume' | null = null;

const root = document.getElementById('root')!;
const title = el('h1', { id: 'runs-title' }, 'Run set');
const who = el('span', { class: 'muted', id: 'runs-orchestrator' });
const counts = el('div', { class: 'counts', id: 'runs-counts', role: 'status', 'aria-live': 'polite' });
const progress = el('div', { class: 'progress', role: 'progressbar', 'aria-valuemin': '0' }, el('div', { class: 'done' }), el('div', { class: 'failed' }), el('div', { class: 'running' }));
const cancelBtn = el('button', { type: 'button', id: 'runs-cancel', title: 'Stop every unit of the run set (Resume goes on with them)' }, 'Cancel');
const resumeBtn = el('button', { type: 'button', id: 'runs-resume', title: 'Finish what is not done (nothing done runs again)' }, 'Resume');
const filterBox = el('input', { type: 'search', placeholder: 'Filter: task, actor, detail', 'aria-label': 'Filter units', id: 'runs-filter' });
const statusSelect = el('select', { 'aria-label': 'Status', id: 'runs-status' }, ...['', 'pending', 'running', 'done', 'failed', 'cancelled'].map((s) => el('option', { value: s }, s || 'every status')));
const table = el('table', { class: 'units', id: 'runs-table' });
const message = el('p', { class: 'message', id: 'runs-message', role: 'alert' });
filterBox.value = ui.text;
statusSelect.value = ui.status;
root.replaceChildren(
  el('header', { class: 'bar' }, title, who, el('span', { class: 'grow' }), cancelBtn, resumeBtn),
  counts, progress, message,
  el('div', { class: 'bar' }, filterBox, statusSelect),
  table,
);
filterBox.addEventListener('input', () => { ui.text = filterBox.value; render(); });
statusSelect.addEventListener('change', () => { ui.status = statusSelect.value as UiState['status']; render(); });
cancelBtn.addEventListener('click', () => { message.textContent = ''; send({ type: 'cancel' }); });
resumeBtn.addEventListener('click', () => { message.textContent = ''; send({ type: 'resume' }); });

const COLUMNS = ['Task', 'Actor', 'Status', 'Try', 'Phase', 'Elapsed / limit', 'Tokens', 'USD', 'E', 'D', 'I', 'C', 'Detail'] as const;

function mark(v: boolean | null, what: string): HTMLElement {
  return el('span', { class: v === null ? 'muted' : v ? 'ok' : 'bad', title: `${what}: ${v === null ? 'not computable (not verified or not judged yet)' : v ? 'correct' : 'not correct'}` }, flag(v));
}

function statusCell(r: Row): HTMLElement {
  const icon = r.status === 'done' ? (r.mark === '✓' ? '✓' : r.mark === '✖' ? '✖' : '·') : r.status === 'failed' ? '⚠' : r.status === 'running' ? '⟳' : r.status === 'cancelled' ? '⊘' : '○';
  const cls = r.status === 'failed' ? 'bad' : r.status === 'running' ? 'live' : r.status === 'done' ? (r.mark === '✓' ? 'ok' : r.mark === '✖' ? 'bad' : 'muted') : 'muted';
  const why = r.status !== 'done' ? r.status : r.mark === '✓' ? 'done: All·E✓ (every part right, clean run passed)' : r.mark === '✖' ? 'done: some part wrong, or not submitted'
    : 'done: every part known is right, but All·E✓ is not computable (a part is not judged or not verified)';
  return el('td', { class: `status ${cls}`, title: r.status === 'failed' ? 'failed: the unit could not be done (see its log)' : why }, `${icon} ${r.status}`);
}

/** A campaign's board: people as rows (webview-ui/src/runs/campaign.ts); a session row opens the session. */
function renderCampaign(b: RunsBoardMessage, c: NonNullable<RunsBoardMessage['campaign']>): void {
  title.textContent = b.name;
  who.textContent = 'campaign: people as rows; working time by the host\'s clock';
  who.classList.remove('live');
  cancelBtn.hidden = true; resumeBtn.hidden = true; statusSelect.hidden = true;
  filterBox.placeholder = 'Filter: person, task, status';
  counts.replaceChildren(...campaignCounts(c));
  const n = c.rows.length;
  const sub = c.rows.filter((r) => r.submitted).length;
  const bars = progress.children as HTMLCollectionOf<HTMLElement>;
  bars[0].style.width = `${n ? (100 * sub) / n : 0}%`; bars[1].style.width = '0%';
  bars[2].style.width = `${n ? (100 * c.rows.filter((r) => r.status === 'working').length) / n : 0}%`;
  progress.setAttribute('aria-valuemax', String(n));
  progress.setAttribute('aria-valuenow', String(sub));
  const rows = campaignFilter(c, ui.text);
  const focused = (document.activeElement as HTMLElement | null)?.dataset?.session;
  const body = campaignTable(c, rows, send);
  const unitOf = new Map(b.rows.map((r) => [r.name, r.unit]));
  for (const tr of body) {
    const s = tr.dataset.session;
    const unit = s ? unitOf.get(s) : undefined;
    if (!unit) continue;
    const open = () => send({ type: 'open', unit });
    tr.addEventListener('click', open);
    tr.addEventListener('keydown', (e) => { if (e.key === 'Enter') open(); });
  }
  table.classList.add('campaign');
  table.replaceChildren(
    el('thead', {}, el('tr', {}, ...CAMPAIGN_COLUMNS.map((h) => el('th', { scope: 'col' }, h)))),
    el('tbody', {}, ...(body.length ? body : [el('tr', {}, el('td', { colspan: String(CAMPAIGN_COLUMNS.length), class: 'muted' }, n ? 'No session matches the filter.' : 'The campaign has no assignment.'))])),
  );
  if (focused) (table.querySelector(`tr[data-session="${CSS.escape(focused)}"]`) as HTMLElement | null)?.focus();
}

function render(): void {
  api.setState(ui);
  if (!board) return;
  const b = board;
  if (b.campaign) { renderCampaign(b, b.campaign); return; }
  title.textContent = b.name;
  const o = b.orchestrator;
  const live = o?.alive === true;
  who.textContent = o ? (live ? `running: process ${o.pid} (runs ${o.command}) since ${o.since.slice(0, 19).replace('T', ' ')}` : `not running (the last run, process ${o.pid}, is gone)`) : 'not running';
  who.classList.toggle('live', live);
  const c = b.counts;
  const n = b.rows.length;
  counts.replaceChildren(...(['done', 'running', 'pending', 'failed', 'cancelled'] as const).map((k) => el('span', { class: `pill ${k}`, 'data-count': k }, `${c[k] ?? 0} ${k}`)),
    el('span', { class: 'muted' }, ` of ${plural(n, 'unit')}${b.cancelled ? ' · cancelled' : ''}${b.invalidLines ? ` · ${plural(b.invalidLines, 'line')} of the state unreadable` : ''}`));
  const share = (k: string) => `${n ? (100 * (c[k] ?? 0)) / n : 0}%`;
  const bars = progress.children as HTMLCollectionOf<HTMLElement>;
  bars[0].style.width = share('done'); bars[1].style.width = share('failed'); bars[2].style.width = share('running');
  progress.setAttribute('aria-valuemax', String(n));
  progress.setAttribute('aria-valuenow', String(c.done ?? 0));
  cancelBtn.disabled = busy !== null || !(live || (c.running ?? 0) > 0);
  resumeBtn.disabled = busy !== null || live || (c.done ?? 0) === n;
  cancelBtn.textContent = busy === 'cancel' ? 'Cancelling…' : 'Cancel';
  resumeBtn.textContent = busy === 'resume' ? 'Resuming…' : 'Resume';
  const text = ui.text.trim().toLowerCase();
  const rows = b.rows.filter((r) => (!ui.status || r.status === ui.status) && (!text || `${r.task} ${r.actor} ${r.detail}`.toLowerCase().includes(text)));
  const focused = (document.activeElement as HTMLElement | null)?.dataset?.unit;
  const body = rows.map((r) => {
    const tr = el('tr', { tabindex: '0', 'data-unit': r.unit, 'data-status': r.status, title: `${r.name}\nkey ${r.unit}\n${r.session}${r.log ? `\nlog ${r.log}` : ''}\nopens the unit's session in the trajectory viewer` },
      el('td', {}, r.task), el('td', {}, `${r.actor} a${r.attempt}`), statusCell(r), el('td', { class: 'num' }, String(r.try)),
      el('td', {}, r.phase ?? '–'),
      el('td', { class: `num${r.elapsedMs !== null && r.elapsedMs > r.limitMs ? ' bad' : ''}` }, `${clock(r.elapsedMs)} / ${clock(r.limitMs)}`),
      el('td', { class: 'num' }, tokenCount(r.tokens)), el('td', { class: 'num' }, usd(r.costUsd)),
      el('td', { class: 'flag' }, mark(r.E, 'E (clean run)')), el('td', { class: 'flag' }, mark(r.D, 'D')), el('td', { class: 'flag' }, mark(r.I, 'I')), el('td', { class: 'flag' }, mark(r.C, 'C')),
      el('td', { class: 'detail' }, r.engine ?? r.detail));
    const open = () => send({ type: 'open', unit: r.unit });
    tr.addEventListener('click', open);
    tr.addEventListener('keydown', (e) => { if (e.key === 'Enter') open(); });
    return tr;
  });
  table.replaceChildren(
    el('thead', {}, el('tr', {}, ...COLUMNS.map((h) => el('th', { scope: 'col' }, h)))),
    el('tbody', {}, ...(body.length ? body : [el('tr', {}, el('td', { colspan: String(COLUMNS.length), class: 'muted' }, n ? 'No unit matches the filter.' : 'The run set has no unit.'))])),
  );
  if (focused) (table.querySelector(`tr[data-unit="${CSS.escape(focused)}"]`) as HTMLElement | null)?.focus();
}

window.addEventListener('message', (e: MessageEvent) => {
  const m = RunsHostMessageSchema.safeParse(e.data);
  if (!m.success) return;
  if (m.data.type === 'board') board = m.data;
  else if (m.data.type === 'busy') busy = m.data.what;
  else if (m.data.type === 'done') { message.classList.add('info'); message.textContent = m.data.message; }
  else { message.classList.remove('info'); message.textContent = m.data.message; }
  render();
});
send({ type: 'ready' });
