import { TrajHostMessageSchema, type TrajDetail, type TrajFilter, type TrajHeader, type TrajHostMessage } from '../../../src/protocol/trajectory';
import { plural } from '../../../src/core/util/plural';
import { el } from '../dom';
import { loadUiState, saveUiState, send } from './api';
import { DetailCache, PREFETCH_AROUND } from './cache';
import { baseName, renderDetail, showRaw, type DetailHost } from './detail';
import { cost, duration, tokens } from './format';
import { TimelineList } from './list';

/**
 * The trajectory viewer's webview (custom editor `expbench.trajectory`): header (file, sample
 * picker, live, totals, problems), filters and search, the virtual timeline and the detail pane.
 * Keyboard: j/k or ↑/↓ step, Enter detail, / search, n/N next/previous hit, g go to step, Escape
 * back to the list.
 */
const root = document.getElementById('root') as HTMLElement;
const ui = loadUiState();

let header: TrajHeader | undefined;
let seq = 0;
let total = 0;
let hits: number[] = [];
let hitIndex = -1;
let occurrences = 0;
let search = ui.search ?? '';
let filter: TrajFilter = {};
let pendingStep: number | undefined = ui.step;
let detailStep: number | undefined;
let detail: TrajDetail | undefined;
let rendered = { rows: 0, first: undefined as number | undefined };
let renderTimer = 0;
/** Details drawn without a round trip (neighbours of the selection, prefetched). */
const cache = new DetailCache();
/** The step whose full text ("show all") was asked: its answer is not cached. */
let fullStep: number | undefined;
/** When the key press that moved the selection happened (performance.now), until its detail is drawn. */
let moveStart: number | undefined;
/** Key press → next animation frame after the detail was drawn, ms, the last 50 moves. */
const moves: number[] = [];
let cacheHits = 0;
let cacheMisses = 0;
/** What a `reveal` answers: Go to Step (clears hiding filters), or keeping the selection across a new view. */
let locating: 'goto' | 'keep' = 'goto';
/**
 * A new view (a search, a filter, the import's last page) has no selection until the host says where
 * the step shown before is in it ('reveal'): step moves pressed meanwhile are kept here and applied
 * from that step then, instead of moving from nothing (a j pressed then was lost: it picked row 0).
 */
let relocating = false;
let queuedMove = 0;

const headEl = el('header', { class: 'head' });
/** The header's open panel: the task, the scoring view, the sample list. */
const panelEl = el('div', { class: 'panel' });
const banner = el('div', { class: 'banner', role: 'status' });
const bar = el('div', { class: 'bar' });
const body = el('div', { class: 'body' });
const listBox = el('div', { class: 'listbox' });
const detailEl = el('aside', { class: 'detail', tabindex: '-1', 'aria-label': 'Step detail' }, el('p', { class: 'muted' }, 'Select a step (j/k, ↑/↓ or a click).'));
const notice = el('div', { class: 'notice', role: 'status' });
body.append(listBox, detailEl);
root.replaceChildren(headEl, panelEl, banner, bar, body, notice);

const list = new TimelineList(listBox, {
  requestRows: (start, count) => send({ type: 'rows', seq, start, count }),
  onPick: (p) => { pick(p); list.scroller.focus(); },
  onRendered: (rows, first) => { rendered = { rows, first }; reportRendered(); },
});

/** Tells the host what is shown (tests' hook, Go to Step's default). */
function reportRendered(): void {
  if (renderTimer) return;
  renderTimer = window.setTimeout(() => {
    renderTimer = 0;
    const sel = list.selected >= 0 ? list.row(list.selected)?.step : undefined;
    send({ type: 'rendered', rows: rendered.rows, total, ...(rendered.first !== undefined ? { first: list.row(rendered.first)?.step ?? rendered.first } : {}),
      ...(sel !== undefined ? { selected: sel } : {}), ...(search ? { hits: hitText() } : {}), ...(detail ? { detail: detail.step } : {}), ...(moves.length ? { moves: [...moves] } : {}) });
  }, 50);
}

function hitText(): string {
  return hits.length ? `${hitIndex >= 0 ? hitIndex + 1 : 0} of ${hits.length}` : 'no match';
}

function pick(position: number): void {
  if (position < 0 || position >= total) return;
  list.select(position);
  const r = list.row(position);
  if (r) askDetail(r.step); // else once its page arrives (see 'rows')
  const h = hits.indexOf(position);
  if (h >= 0) { hitIndex = h; counter.textContent = hitText(); }
  reportRendered();
}

function askDetail(step: number): void {
  detailStep = step;
  fullStep = undefined;
  saveUiState({ step, search, panel: openPanel });
  const c = cache.get(step, search);
  root.dataset.cache = `${(cacheHits += c ? 1 : 0)} hits, ${(cacheMisses += c ? 0 : 1)} misses`;
  if (c) showDetail(c); else send({ type: 'detail', step, search });
  prefetch();
}

/** Asks the host for the details of the steps around the selection (and the next/previous hits) not cached yet. */
function prefetch(): void {
  const want = new Set<number>();
  const at = list.selected;
  for (let d = 1; d <= PREFETCH_AROUND; d++) for (const p of [at + d, at - d]) {
    const r = p >= 0 && p < total ? list.row(p) : undefined;
    if (r && !cache.has(r.step, search)) want.add(r.step);
  }
  if (hits.length) for (const i of [hitIndex + 1, hitIndex - 1, hitIndex + 2]) {
    const r = i >= 0 && i < hits.length ? list.row(hits[i]) : undefined;
    if (r && !cache.has(r.step, search)) want.add(r.step);
  }
  if (want.size) send({ type: 'prefetch', steps: [...want].slice(0, 64), search });
}

/**
 * Detail panes built ahead, in idle time, for the cached neighbours of the selection (by step, with
 * the detail they were built from): a step move then only swaps a node in (one frame, issue 30).
 * Emptied with the cache.
 */
const built = new Map<number, { d: TrajDetail; node: HTMLElement }>();
let building = 0;
const idle: (cb: (deadline: { timeRemaining(): number }) => void) => number = (window as unknown as { requestIdleCallback?: typeof idle }).requestIdleCallback?.bind(window)
  ?? ((cb) => window.setTimeout(() => cb({ timeRemaining: () => 8 }), 1));

function nodeOf(d: TrajDetail): HTMLElement {
  const b = built.get(d.step);
  if (b && b.d === d) return b.node;
  const node = renderDetail(d, header!, detailHost);
  built.set(d.step, { d, node });
  return node;
}

/** Builds the detail panes of the cached neighbours of the selection while the page is idle. */
function buildAhead(): void {
  if (building || !header) return;
  building = idle((deadline) => {
    building = 0;
    const at = list.selected;
    for (let k = 1; k <= PREFETCH_AROUND && deadline.timeRemaining() > 2; k++) {
      for (const p of [at + k, at - k]) {
        const r = p >= 0 && p < total ? list.row(p) : undefined;
        const d = r ? cache.get(r.step, search) : undefined;
        if (d && built.get(d.step)?.d !== d) nodeOf(d);
      }
    }
    // keep the panes near the selection only
    if (built.size > 3 * PREFETCH_AROUND) for (const k of [...built.keys()].slice(0, built.size - 3 * PREFETCH_AROUND)) built.delete(k);
  });
}

function showDetail(d: TrajDetail): void {
  detail = d;
  if (header) detailEl.replaceChildren(nodeOf(d));
  detailEl.querySelector('mark')?.scrollIntoView({ block: 'center' });
  buildAhead();
  const t0 = moveStart;
  moveStart = undefined;
  if (t0 !== undefined) requestAnimationFrame(() => {
    moves.push(performance.now() - t0);
    if (moves.length > 50) moves.shift();
    root.dataset.moves = moves.map((x) => x.toFixed(1)).join(' ');
    reportRendered();
  });
  reportRendered();
}

// ── the header ────────────────────────────────────────────────────────────────────────────────
/** Which of the header's panels is open: the task, the scores, the samples (kept across samples). */
let openPanel: 'task' | 'scores' | 'samples' | undefined = ui.panel as typeof openPanel;

function num(n: number): string { return Math.round(n).toLocaleString('en'); }

/** The usage line: the total as the log counts it (cache included), its kinds, calls and cost. */
function usageText(h: TrajHeader): string {
  const u = h.usage;
  if (!u.totalTokens && !u.calls && u.costUsd === null) return 'no token counts in the log';
  const kinds = u.inputIncludesCache ? [`input with its cache ${num(u.inputTokens)} (the log does not split the cache)`, `output ${num(u.outputTokens)}`]
    : [`input ${num(u.inputTokens)}`, `output ${num(u.outputTokens)}`, `cache read ${num(u.cacheReadTokens)}`, `cache write ${num(u.cacheWriteTokens)}`, `reasoning ${num(u.reasoningTokens)}`];
  const costText = u.costUsd !== null ? `${cost(u.costUsd)} (${u.costFrom})${u.unpricedCalls ? `, ${plural(u.unpricedCalls, 'call')} unpriced` : ''}` : 'cost unpriced';
  const perStep = u.perStep ? (u.stepTokens !== u.totalTokens ? ` · the steps count ${num(u.stepTokens)}` : '') : ' · no per-step counts in the log';
  return `${tokens(u.totalTokens)} tokens (${u.from}): ${kinds.join(' · ')} · ${plural(u.calls, 'call')} · ${costText}${perStep}`;
}

function renderHeader(h: TrajHeader): void {
  const title = el('div', { class: 'title' }, el('strong', {}, h.name), el('span', { class: 'muted' }, ` ${h.format} · ${h.id}${h.task ? ` · task ${h.task}` : ''}`));
  if (h.loading) title.append(el('span', { class: 'live loading', title: 'the rest of the file is being imported; rows, filters and search cover what is loaded so far' }, `loading… ${plural(h.samples.length, 'sample')}, ${plural(h.totals.steps, 'step')} so far`));
  if (h.live) title.append(el('span', { class: 'live', title: h.updatedAt ? `updated ${h.updatedAt}` : '' }, '● live'));
  const who = el('div', { class: 'who' }, `${h.agent ? `agent ${h.agent}` : 'agent not named'} · ${h.model ? `model ${h.model}` : 'model not named'}`);
  const parts: Node[] = [title, who];
  if (h.samples.length > 1) {
    const sel = el('select', { 'aria-label': 'sample', class: 'samples' });
    for (const s of sortedSamples(h)) {
      const o = el('option', { value: s.key }, `${s.id}${s.epoch && s.epoch > 1 ? ` (epoch ${s.epoch})` : ''} (${plural(s.steps, 'step')})`);
      if (s.key === h.key) o.selected = true;
      sel.append(o);
    }
    sel.addEventListener('change', () => pickSample(sel.value));
    parts.push(el('label', { class: 'picker' }, `${plural(h.samples.length, 'sample')}: `, sel));
  }
  const t = h.totals;
  parts.push(el('div', { class: 'usage', title: 'tokens as the log counts them (cache reads and writes included); cost from the log, else from the price table (expbench.llm.prices)' }, usageText(h)
    + (h.fileUsage && h.samples.length > 1 ? ` · file ${tokens(h.fileUsage.totalTokens)} tokens (${h.fileUsage.from})${h.fileUsage.costUsd !== null ? ` ${cost(h.fileUsage.costUsd)}` : ''}` : '')));
  parts.push(el('div', { class: 'totals' }, `${plural(t.steps, 'step')}${t.timed < t.steps ? ` · ${t.timed} timed` : ''}`
    + ` · ${h.sourceEvents} source event${h.sourceEvents === 1 ? '' : 's'}: ${h.mappedEvents} shown`
    + `${h.skippedEvents ? `, ${h.skippedEvents} carry no row by design` : ''}`
    + `${h.sourceEvents - h.mappedEvents - h.skippedEvents > 0 ? `, ${h.sourceEvents - h.mappedEvents - h.skippedEvents} not shown (a kind the importer does not know)` : ''}`));
  const tabs = el('div', { class: 'tabs', role: 'tablist' });
  const tab = (id: 'task' | 'scores' | 'samples', label: string, enabled: boolean) => {
    const b = el('button', { class: `tab${openPanel === id ? ' on' : ''}`, role: 'tab', 'aria-selected': String(openPanel === id), 'data-panel': id }, label);
    if (!enabled) b.setAttribute('disabled', '');
    b.addEventListener('click', () => { openPanel = openPanel === id ? undefined : id; saveUiState({ step: detailStep, search, panel: openPanel }); renderHeader(h); });
    tabs.append(b);
  };
  tab('task', h.taskText ? 'Task' : 'Task (not in the log)', !!h.taskText);
  tab('scores', `Scores (${h.scores.length})`, h.scores.length > 0);
  tab('samples', `Samples (${h.samples.length})`, h.samples.length > 0);
  parts.push(tabs);
  headEl.replaceChildren(...parts);
  renderPanel(h);
  // the timeline's columns fit this trajectory
  root.style.setProperty('--c-tool', `${h.columns.tool}ch`);
  root.style.setProperty('--c-total', `${h.columns.total + 2}ch`);
  // the step number's column fits the last step's number (5 digits at 10,000 steps)
  root.style.setProperty('--c-num', `${Math.max(4, String(Math.max(0, h.totals.steps - 1)).length + 1)}ch`);
  root.style.setProperty('--c-tok', `${h.columns.tok}ch`);
  root.style.setProperty('--c-lane', `${h.columns.lane + 1}ch`);
  // problems are never silent: counts, and the first ones by name
  const p = h.problems;
  banner.replaceChildren();
  banner.className = 'banner';
  if (p.errors + p.warnings + p.infos > 0 || t.steps === 0) {
    banner.classList.add(p.errors ? 'bad' : 'warn');
    const sum = [p.errors ? plural(p.errors, 'error') : '', p.warnings ? plural(p.warnings, 'warning') : '', p.infos ? plural(p.infos, 'note') : ''].filter(Boolean).join(', ');
    const det = el('details', {}, el('summary', {}, t.steps === 0 ? `No steps in ${h.name}${sum ? `: ${sum} from the importer` : ''}` : `The importer reported ${sum}`));
    det.append(el('ul', {}, ...p.items.map((x) => el('li', { title: x.where }, el('strong', {}, x.severity), ` ${baseName(x.where)}: ${x.message}`))));
    if (p.items.length < p.errors + p.warnings + p.infos) det.append(el('p', { class: 'muted' }, `the first ${p.items.length} are listed`));
    if (t.steps === 0) det.open = true;
    banner.append(det);
  }
  renderBar(h);
}

/** Samples in (id, epoch) order, numeric ids by value (as Inspect's sample list sorts them). */
function sortedSamples(h: TrajHeader): TrajHeader['samples'] {
  return [...h.samples].sort((a, b) => a.id.localeCompare(b.id, 'en', { numeric: true }) || (a.epoch ?? 1) - (b.epoch ?? 1));
}

function pickSample(key: string): void {
  pendingStep = undefined;
  send({ type: 'sample', key });
}

/** The open panel under the header: the task text (and target), the scoring view, or the sample list. */
function renderPanel(h: TrajHeader): void {
  panelEl.replaceChildren();
  panelEl.className = `panel${openPanel ? ' open' : ''}`;
  if (openPanel === 'task' && h.taskText) {
    panelEl.append(el('h3', {}, 'Task, as the run was given it'), el('pre', { class: 'task-text' }, h.taskText.text + (h.taskText.text.length < h.taskText.total ? `\n… (${num(h.taskText.total - h.taskText.text.length)} more characters: the task step holds it all)` : '')));
    if (h.target) panelEl.append(el('h3', {}, 'Target'), el('pre', { class: 'task-text' }, h.target.text));
  } else if (openPanel === 'scores') {
    const table = el('table', { class: 'scores' }, el('thead', {}, el('tr', {}, el('th', {}, 'scorer'), el('th', {}, 'value'), el('th', {}, 'answer'), el('th', {}, 'explanation'))));
    const body = el('tbody');
    for (const x of h.scores) {
      body.append(el('tr', {}, el('td', { class: 'mono' }, x.name), el('td', { class: 'value' }, x.value), el('td', {}, el('pre', {}, x.answer?.text ?? '')), el('td', {}, el('pre', {}, x.explanation?.text ?? ''))));
    }
    table.append(body);
    panelEl.append(table);
    if (h.target) panelEl.append(el('p', { class: 'muted' }, 'Target: '), el('pre', { class: 'task-text' }, h.target.text));
  } else if (openPanel === 'samples') {
    const table = el('table', { class: 'samples-list' }, el('thead', {}, el('tr', {}, ...['id', 'epoch', 'status', 'scores', 'tokens', 'time', 'model', 'steps'].map((c) => el('th', {}, c)))));
    const body = el('tbody');
    for (const x of sortedSamples(h)) {
      const tr = el('tr', { class: x.key === h.key ? 'on' : '', 'data-key': x.key, tabindex: '0' },
        el('td', { class: 'mono' }, x.id), el('td', {}, x.epoch !== undefined ? String(x.epoch) : ''), el('td', { class: `status ${/error|fail|limit/i.test(x.status ?? '') ? 'bad' : ''}` }, x.status ?? ''),
        el('td', {}, x.scores ?? ''), el('td', { class: 'n' }, tokens(x.tokens)), el('td', { class: 'n' }, x.timeMs !== undefined ? duration(x.timeMs) : ''), el('td', {}, x.model ?? ''), el('td', { class: 'n' }, String(x.steps)));
      tr.addEventListener('click', () => pickSample(x.key));
      tr.addEventListener('keydown', (e) => { if (e.key === 'Enter') pickSample(x.key); });
      body.append(tr);
    }
    table.append(body);
    panelEl.append(table);
  }
}

// ── filters and search ────────────────────────────────────────────────────────────────────────
const searchBox = el('input', { type: 'search', placeholder: 'Search text, actions, observations  (/)', 'aria-label': 'search', class: 'search' });
const counter = el('span', { class: 'count', 'aria-live': 'polite' });
const prev = el('button', { title: 'previous match (N)' }, '↑');
const next = el('button', { title: 'next match (n)' }, '↓');
searchBox.value = search;
let searchTimer = 0;
searchBox.addEventListener('input', () => { window.clearTimeout(searchTimer); searchTimer = window.setTimeout(() => { search = searchBox.value; query(); }, 150); });
searchBox.addEventListener('keydown', (e) => {
  if (e.key === 'Enter') { e.preventDefault(); window.clearTimeout(searchTimer); if (search !== searchBox.value) { search = searchBox.value; query(true); } else step(e.shiftKey ? -1 : 1); }
  // back to the list, the query kept: a search box's own Escape would blank it without an input event, the hits still counted
  if (e.key === 'Escape') { e.preventDefault(); list.scroller.focus(); }
});
prev.addEventListener('click', () => step(-1));
next.addEventListener('click', () => step(1));

function chipGroup(name: keyof Omit<TrajFilter, 'pinned'>, label: string, counts: Record<string, number>): HTMLElement {
  const g = el('div', { class: 'chips', role: 'group', 'aria-label': label }, el('span', { class: 'muted' }, label));
  for (const [value, n] of Object.entries(counts).sort((a, b) => b[1] - a[1])) {
    const on = filter[name]?.includes(value) ?? false;
    const c = el('button', { class: `chip${on ? ' on' : ''}`, 'aria-pressed': String(on), 'data-filter': name, 'data-value': value }, `${value || (name === 'stages' ? 'agent' : '(none)')} ${n}`);
    c.addEventListener('click', () => {
      const cur = new Set(filter[name] ?? []);
      if (cur.has(value)) cur.delete(value); else cur.add(value);
      filter = { ...filter, [name]: [...cur] };
      renderBar(header!);
      query();
    });
    g.append(c);
  }
  return g;
}

function toolSelect(counts: Record<string, number>): HTMLElement {
  const sel = el('select', { 'aria-label': 'tool', class: 'tools' }, el('option', { value: '' }, 'all tools'));
  for (const [value, n] of Object.entries(counts).sort((a, b) => b[1] - a[1])) {
    const o = el('option', { value: value || '\u0000' }, `${value || '(no tool)'} (${n})`);
    if (filter.tools?.length === 1 && filter.tools[0] === value) o.selected = true;
    sel.append(o);
  }
  sel.addEventListener('change', () => {
    filter = { ...filter, tools: sel.value === '' ? [] : [sel.value === '\u0000' ? '' : sel.value] };
    query();
  });
  return el('label', { class: 'chips' }, el('span', { class: 'muted' }, 'tool'), sel);
}

function renderBar(h: TrajHeader): void {
  const f = h.facets;
  const groups: Node[] = [chipGroup('kinds', 'kind', f.kinds), chipGroup('actors', 'actor', f.actors), chipGroup('phases', 'phase', f.phases)];
  // the harness's work apart from the agent's ('' = the agent's own steps)
  if (Object.keys(f.stages).some((k) => k !== '')) groups.push(chipGroup('stages', 'work', Object.fromEntries(Object.entries(f.stages).map(([k, v]) => [k, v]))));
  groups.push(toolSelect(f.tools));
  const pinned = el('button', { class: `chip${filter.pinned ? ' on' : ''}`, 'aria-pressed': String(!!filter.pinned), disabled: h.pinned ? '' : 'disabled', title: h.can.pins ? '' : 'no verdicts or flags are pinned to this run' }, `pinned ${h.pinned}`);
  if (!h.pinned) pinned.setAttribute('disabled', '');
  pinned.addEventListener('click', () => { filter = { ...filter, pinned: !filter.pinned }; renderBar(h); query(); });
  groups.push(pinned);
  const any = Object.values(filter).some((v) => (Array.isArray(v) ? v.length : v));
  if (any) {
    const clear = el('button', { class: 'link' }, 'clear filters');
    clear.addEventListener('click', () => { filter = {}; renderBar(h); query(); });
    groups.push(clear);
  }
  bar.replaceChildren(el('div', { class: 'filters' }, ...groups), el('div', { class: 'find' }, searchBox, counter, prev, next));
}

/** Sends the filters and search; the `view` reply resets the list. `jump`: select the first hit. */
let jumpToHit = false;
function query(jump = false): void {
  seq++;
  jumpToHit = jump || !!search;
  send({ type: 'query', seq, filter, search });
}

function step(dir: 1 | -1): void {
  if (!hits.length) return;
  const sel = list.selected;
  let i: number;
  if (dir > 0) { i = hits.findIndex((p) => p > sel); if (i < 0) i = 0; } else { i = -1; for (let k = hits.length - 1; k >= 0; k--) if (hits[k] < sel) { i = k; break; } if (i < 0) i = hits.length - 1; }
  hitIndex = i;
  pick(hits[i]);
  counter.textContent = hitText();
}

// ── the host's messages ───────────────────────────────────────────────────────────────────────
const detailHost: DetailHost = {
  showAll: (s) => { fullStep = s; send({ type: 'detail', step: s, full: true, search }); },
  goTo: (s) => { pendingStep = s; locating = 'goto'; send({ type: 'locate', seq, step: s }); },
  raw: (s) => send({ type: 'raw', step: s }),
  run: (command, s, item) => send({ type: 'run', command, step: s, ...(item ? { item } : {}) }),
  review: (s, kind, value, reason) => send({ type: 'review', step: s, kind, value, ...(reason ? { reason } : {}) }),
};

function onMessage(m: TrajHostMessage): void {
  switch (m.type) {
    case 'loaded':
      if (header && header.key !== m.header.key) { list.selected = -1; detail = undefined; detailStep = undefined; detailEl.replaceChildren(); }
      header = m.header;
      cache.clear();
      built.clear();
      if (m.select !== undefined) pendingStep = m.select;
      renderHeader(m.header);
      query();
      break;
    case 'view': {
      if (m.seq !== seq) return;
      // the step selected before, to find again in the new view
      const keep = list.selected >= 0 ? (list.row(list.selected)?.step ?? detailStep) : undefined;
      total = m.total;
      hits = m.hits; occurrences = m.occurrences;
      hitIndex = -1;
      list.query = search;
      list.selected = -1;
      list.reset(m.total, m.bands.map((b) => b.from), m.hits);
      counter.textContent = search ? `${hitText()}${hits.length ? ` · ${plural(occurrences, 'match', 'matches')}` : ''} · ${m.searchMs.toFixed(0)} ms${header?.loading ? ' · in the steps loaded so far' : ''}` : '';
      relocating = pendingStep !== undefined || (!(jumpToHit && hits.length) && keep !== undefined);
      queuedMove = 0;
      if (pendingStep !== undefined) { locating = 'goto'; send({ type: 'locate', seq, step: pendingStep }); }
      else if (jumpToHit && hits.length) { hitIndex = 0; pick(hits[0]); counter.textContent = `${hitText()} · ${plural(occurrences, 'match', 'matches')}`; }
      else if (keep !== undefined) { locating = 'keep'; send({ type: 'locate', seq, step: keep }); }
      else if (total) pick(0);
      jumpToHit = false;
      reportRendered();
      break;
    }
    case 'rows':
      if (m.seq !== seq) return;
      list.add(m.start, m.rows);
      { const r = list.row(list.selected); if (r && r.step !== detailStep) askDetail(r.step); else if (r) prefetch(); }
      break;
    case 'reveal':
      if (m.seq !== seq) return;
      relocating = false;
      if (locating === 'keep') { locating = 'goto'; pick(m.position >= 0 ? m.position : 0); }
      else if (m.position >= 0) { pendingStep = undefined; pick(m.position); }
      else if (Object.keys(filter).length || search) {
        flash(`Step ${m.step} is hidden by the filters or search: they are cleared.`);
        filter = {}; search = ''; searchBox.value = '';
        if (header) renderBar(header);
        query();
      } else { pendingStep = undefined; flash(`There is no step ${m.step} here.`); }
      if (queuedMove && list.selected >= 0) pick(Math.max(0, Math.min(total - 1, list.selected + queuedMove)));
      queuedMove = 0;
      break;
    case 'select':
      pendingStep = m.step;
      locating = 'goto';
      send({ type: 'locate', seq, step: m.step });
      break;
    case 'detail':
      if (m.detail.step !== fullStep) cache.put([m.detail], search);
      if (m.detail.step !== detailStep) return;
      showDetail(m.detail);
      break;
    case 'details':
      cache.put(m.details, m.search);
      buildAhead();
      break;
    case 'raw':
      if (detail?.step === m.step) showRaw(detailEl, m.text, m.cut, m.where);
      break;
    case 'notice': flash(m.message); break;
    case 'error': flash(m.message, true); break;
  }
}

function flash(message: string, bad = false): void {
  notice.textContent = message;
  notice.className = `notice show${bad ? ' bad' : ''}`;
  window.setTimeout(() => { if (notice.textContent === message) notice.className = 'notice'; }, bad ? 8000 : 3000);
}

window.addEventListener('message', (event: MessageEvent) => {
  const parsed = TrajHostMessageSchema.safeParse(event.data);
  if (parsed.success) onMessage(parsed.data);
});

// ── keyboard ──────────────────────────────────────────────────────────────────────────────────
document.addEventListener('keydown', (e) => {
  const t = e.target as HTMLElement;
  if (t instanceof HTMLInputElement || t instanceof HTMLSelectElement || t instanceof HTMLTextAreaElement) return;
  if (e.ctrlKey || e.metaKey || e.altKey) return;
  const move = (d: number) => {
    e.preventDefault();
    moveStart = performance.now();
    if (relocating) { queuedMove += d; return; } // applied once the view's selection is known ('reveal')
    pick(Math.max(0, Math.min(total - 1, list.selected + d)));
  };
  switch (e.key) {
    case 'j': case 'ArrowDown': move(1); break;
    case 'k': case 'ArrowUp': move(-1); break;
    case 'PageDown': move(20); break;
    case 'PageUp': move(-20); break;
    case 'Home': e.preventDefault(); pick(0); break;
    case 'End': e.preventDefault(); pick(total - 1); break;
    case 'Enter': e.preventDefault(); if (list.selected >= 0) { const r = list.row(list.selected); if (r) askDetail(r.step); detailEl.focus(); } break;
    case 'Escape': list.scroller.focus(); break;
    case '/': e.preventDefault(); searchBox.focus(); searchBox.select(); break;
    case 'n': e.preventDefault(); step(1); break;
    case 'N': e.preventDefault(); step(-1); break;
    case 'g': e.preventDefault(); send({ type: 'run', command: 'goToStep', step: list.row(list.selected)?.step ?? 0 }); break;
  }
});

send({ type: 'ready' });
