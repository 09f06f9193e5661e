import type { DesignDraftView, PhasesAction, PhasesView } from '../../../src/protocol/messages';
import { plural } from '../../../src/core/util/plural';
import { clockText } from '../clockText';
import { el, proctoredWindow } from '../dom';
import { request } from '../vscodeApi';
import { registerSection } from './registry';

/**
 * The human-baseline stepper: Design → Implementation → Execution → Conclusion, free to move
 * between them, each with its own editor, plus the clock, notes, submit and give up. The webview
 * holds the drafts while the user types (host updates never overwrite a focused field); every
 * edit goes to the host within {@link EDIT_DEBOUNCE_MS}, and the host writes it to disk.
 */
const EDIT_DEBOUNCE_MS = 150;
const PHASES = [
  ['design', 'Design'], ['implementation', 'Implementation'], ['execution', 'Execution'], ['conclusion', 'Conclusion'],
] as const;
const GROUPS: Array<[keyof Omit<DesignDraftView, 'freeText'>, string, string]> = [
  ['constants', 'Constant variables', 'held fixed'],
  ['independent', 'Independent variables', 'varied; list the values'],
  ['dependent', 'Dependent variables', 'measured'],
];

let view: PhasesView | undefined;
let shown: string | undefined;
/** Pending edits per key: the latest one is sent when the key's timer fires (throttled, not postponed by later keystrokes). */
const pending = new Map<string, PhasesAction>();

/** Asks the host to do `call`; with `debounceKey`, only the latest call of that key within {@link EDIT_DEBOUNCE_MS}. */
function act(call: PhasesAction, debounceKey?: string): void {
  if (frozen() && FROZEN_ACTIONS.has(call.action)) return;
  if (!debounceKey) return void request('phases', call);
  const armed = pending.has(debounceKey);
  pending.set(debounceKey, call);
  if (armed) return;
  setTimeout(() => {
    const p = pending.get(debounceKey);
    pending.delete(debounceKey);
    if (p) void request('phases', p);
  }, EDIT_DEBOUNCE_MS);
}

/** Actions on the answers and notes, never sent once they are frozen (the host refuses them too). */
const FROZEN_ACTIONS = new Set<PhasesAction['action']>(['setDesign', 'setConclusion', 'addNote']);

/** True once the session is submitted or given up: answers and notes are frozen. */
function frozen(): boolean {
  return !!view?.finished;
}

function focusedIn(node: Element | null): boolean {
  return !!node && !!document.activeElement && node.contains(document.activeElement);
}

registerSection('phases', (container, state) => {
  if (state.kind === 'log') return appendLog(container, state.runId, state.text, state.reset);
  view = state;
  if (!container.querySelector('.stepper')) build(container);
  update(container, view);
});

function build(c: HTMLElement): void {
  c.replaceChildren(
    el('h2', {}, 'Your work'),
    el('div', { class: 'clockbar' }),
    el('nav', { class: 'stepper', role: 'tablist' }, ...PHASES.map(([id, label], i) => {
      const b = el('button', { class: 'step secondary', role: 'tab', 'data-phase': id }, `${i + 1}. ${label}`);
      b.addEventListener('click', () => { showPhase(c, id); act({ action: 'setPhase', payload: { phase: id } }); });
      return b;
    })),
    designPanel(), implementationPanel(), executionPanel(), conclusionPanel(),
    notesPanel(), finishPanel(),
  );
}

function showPhase(c: HTMLElement, phase: string): void {
  shown = phase;
  c.querySelectorAll<HTMLElement>('.phase').forEach((p) => { p.hidden = p.dataset.phase !== phase; });
  c.querySelectorAll<HTMLElement>('.step').forEach((b) => {
    const on = b.dataset.phase === phase;
    b.classList.toggle('secondary', !on);
    b.setAttribute('aria-selected', String(on));
  });
}

function designPanel(): HTMLElement {
  const p = el('div', { class: 'phase', 'data-phase': 'design' },
    el('p', { class: 'muted' }, 'Name the variables of your experiment. Saved as structured JSON and as the harness\'s design (a list of strings).'));
  for (const [key, title, hint] of GROUPS) {
    const add = el('button', { class: 'secondary add-var', 'data-group': key }, '+ Add');
    add.addEventListener('click', () => {
      if (frozen()) return;
      const d = readDesign();
      d[key].push({ name: '', description: '' });
      renderRows(key, d[key]);
      (document.querySelector<HTMLInputElement>(`.vars[data-group="${key}"] tr:last-child input`))?.focus();
      act({ action: 'setDesign', payload: d }, 'design');
    });
    p.append(el('h3', {}, `${title} `, el('span', { class: 'muted' }, `(${hint})`)),
      el('table', { class: 'vars', 'data-group': key }, el('tbody', {})), add);
  }
  const free = el('textarea', { id: 'design-free', rows: '4', placeholder: 'Anything else about the design: procedure, controls, number of runs…', 'aria-label': 'Design notes' });
  free.addEventListener('input', () => act({ action: 'setDesign', payload: readDesign() }, 'design'));
  p.append(el('h3', {}, 'Free text'), free);
  return p;
}

function renderRows(key: string, vars: Array<{ name: string; description: string }>): void {
  const body = document.querySelector(`.vars[data-group="${key}"] tbody`)!;
  body.replaceChildren(...vars.map((v, i) => {
    const name = el('input', { class: 'var-name', placeholder: 'name', value: v.name, 'aria-label': `${key} ${i + 1} name` });
    const desc = el('input', { class: 'var-desc', placeholder: 'description or values', value: v.description, 'aria-label': `${key} ${i + 1} description` });
    const del = el('button', { class: 'secondary remove-var', title: 'Remove' }, '✕');
    del.disabled = frozen();
    for (const input of [name, desc]) input.addEventListener('input', () => act({ action: 'setDesign', payload: readDesign() }, 'design'));
    del.addEventListener('click', () => { if (frozen()) return; del.closest('tr')?.remove(); act({ action: 'setDesign', payload: readDesign() }, 'design'); });
    return el('tr', {}, el('td', {}, name), el('td', { class: 'wide' }, desc), el('td', {}, del));
  }));
}

function readDesign(): DesignDraftView {
  const d: DesignDraftView = { constants: [], independent: [], dependent: [], freeText: (document.getElementById('design-free') as HTMLTextAreaElement)?.value ?? '' };
  for (const [key] of GROUPS) {
    document.querySelectorAll<HTMLTableRowElement>(`.vars[data-group="${key}"] tbody tr`).forEach((tr) => {
      d[key].push({ name: (tr.querySelector('.var-name') as HTMLInputElement).value, description: (tr.querySelector('.var-desc') as HTMLInputElement).value });
    });
  }
  return d;
}

function implementationPanel(): HTMLElement {
  const refresh = el('button', { class: 'secondary' }, 'Refresh');
  refresh.addEventListener('click', () => act({ action: 'refreshPatch' }));
  const open = el('button', {}, 'Open the diff');
  open.addEventListener('click', () => act({ action: 'openPatch' }));
  return el('div', { class: 'phase', 'data-phase': 'implementation' },
    el('p', { class: 'muted' }, 'Edit the repository in the editor. Everything changed since "task start" is your implementation patch.'),
    el('div', { class: 'row' }, open, refresh), el('div', { class: 'patch' }));
}

function executionPanel(): HTMLElement {
  const edit = el('button', { class: 'secondary' }, 'Edit reproduce_exp_bench.sh');
  edit.addEventListener('click', () => act({ action: 'openScript' }));
  const run = el('button', { class: 'run' }, 'Run in the task container');
  run.addEventListener('click', () => act({ action: 'runScript' }));
  const term = el('button', { class: 'secondary', title: 'A shell in the task container (EXP-Bench: task container terminal)' }, 'Open terminal');
  term.addEventListener('click', () => act({ action: 'openTerminal' }));
  return el('div', { class: 'phase', 'data-phase': 'execution' },
    el('p', { class: 'muted' }, 'reproduce_exp_bench.sh at the repository root must run the whole experiment. Runs here use your work container; the verifier later re-runs it from a clean tree.'),
    el('div', { class: 'row' }, edit, run, term, el('span', { class: 'container-state' })),
    el('h3', {}, 'Live log'), el('pre', { class: 'runlog', 'aria-label': 'Run log' }),
    el('h3', {}, 'Runs'), el('table', { class: 'runs' }, el('tbody', {})));
}

function conclusionPanel(): HTMLElement {
  const text = el('textarea', { id: 'conclusion', rows: '8', placeholder: 'Your conclusion: answer the question with the numbers your runs produced.', 'aria-label': 'Conclusion' });
  text.addEventListener('input', () => act({ action: 'setConclusion', payload: { text: text.value } }, 'conclusion'));
  return el('div', { class: 'phase', 'data-phase': 'conclusion' }, text,
    ...(proctoredWindow() ? [] : [el('h3', {}, 'Numbers claimed'), el('ul', { class: 'claims' })]));
}

function notesPanel(): HTMLElement {
  const input = el('input', { id: 'note', placeholder: 'A note, timestamped (Enter to add)', 'aria-label': 'Note' });
  input.addEventListener('keydown', (e) => {
    if (e.key === 'Enter' && input.value.trim() && !frozen()) { act({ action: 'addNote', payload: { text: input.value } }); input.value = ''; }
  });
  return el('details', { class: 'notes' }, el('summary', {}, 'Notes'), input, el('ul', { class: 'note-list' }));
}

function finishPanel(): HTMLElement {
  const submit = el('button', { class: 'submit' }, 'Submit…');
  submit.addEventListener('click', () => act({ action: 'submit' }));
  const giveUp = el('button', { class: 'secondary giveup' }, 'Give up…');
  giveUp.addEventListener('click', () => act({ action: 'giveUp' }));
  return el('div', { class: 'finish' }, el('div', { class: 'row actions' }, submit, giveUp), el('div', { class: 'results' }));
}

function update(c: HTMLElement, v: PhasesView): void {
  if (shown === undefined || !c.querySelector(`.phase[data-phase="${shown}"]`)) showPhase(c, v.phase);
  c.dataset.phase = v.phase;
  // clock
  const bar = c.querySelector<HTMLElement>('.clockbar')!;
  const button = (label: string, op: 'start' | 'pause' | 'resume') => {
    const b = el('button', { class: 'secondary clock-op', 'data-op': op }, label);
    b.addEventListener('click', () => act({ action: 'clock', payload: { op, ...(op === 'pause' ? { reason: (c.querySelector('#pause-reason') as HTMLInputElement | null)?.value || undefined } : {}) } }));
    return b;
  };
  // The time is refreshed on every update; the buttons only when the clock's status changes (a
  // clicked button keeps the focus, so "focused" must not freeze the bar), and never while the
  // baseliner types a pause reason.
  const clockEl = bar.querySelector<HTMLElement>('.clock') ?? bar.appendChild(el('span', {}));
  clockEl.className = `clock ${v.clock.status}`;
  clockEl.textContent = clockText(v.clock, v.finished);
  clockEl.title = 'Working time: pauses are not counted';
  const opsKey = v.finished ? 'finished' : v.clock.status;
  const typingReason = document.activeElement?.id === 'pause-reason';
  if (bar.dataset.ops !== opsKey && !typingReason) {
    bar.dataset.ops = opsKey;
    const ops = v.finished ? [] : v.clock.status === 'not-started' ? [button('Start the clock', 'start')]
      : v.clock.status === 'running' ? [el('label', { for: 'pause-reason', class: 'muted' }, 'Pause reason:'), el('input', { id: 'pause-reason', placeholder: 'optional', 'aria-label': 'Pause reason' }), button('Pause', 'pause')] : [button('Resume', 'resume')];
    bar.replaceChildren(clockEl, ...ops);
  }
  // design
  const designPanelEl = c.querySelector('.phase[data-phase="design"]');
  if (!focusedIn(designPanelEl)) {
    for (const [key] of GROUPS) renderRows(key, v.design[key]);
    (c.querySelector('#design-free') as HTMLTextAreaElement).value = v.design.freeText;
  }
  // implementation
  const patch = c.querySelector('.patch')!;
  if (!v.patch) patch.replaceChildren(el('p', { class: 'muted' }, 'No changes yet.'));
  else if (v.patch.error) patch.replaceChildren(el('p', { class: 'bad' }, v.patch.error));
  else {
    patch.replaceChildren(
      el('p', {}, `${plural(v.patch.files.length, 'file')} changed, `, el('span', { class: 'ok' }, `+${v.patch.additions}`), ' ', el('span', { class: 'bad' }, `−${v.patch.deletions}`),
        v.patch.leftOut?.length ? el('span', { class: 'muted' }, ` · ${plural(v.patch.leftOut.length, 'path')} left out (below)`)
          : v.patch.ignored ? el('span', { class: 'muted' }, ` · ${plural(v.patch.ignored, 'ignored build output')} not in the patch`) : ''),
      el('table', { class: 'files' }, el('tbody', {}, ...v.patch.files.map((f) => el('tr', {},
        el('td', {}, f.status), el('td', { class: 'wide' }, f.path), el('td', { class: 'ok' }, f.binary ? 'binary' : `+${f.additions}`), el('td', { class: 'bad' }, f.binary ? '' : `−${f.deletions}`))))),
      // What the submission leaves out, and why (the same rule: src/core/workspace/patchRule.ts).
      ...(v.patch.leftOut?.length ? [el('p', { class: 'muted' }, 'Not in the patch (as submitted):'),
        el('ul', { class: 'left-out' }, ...v.patch.leftOut.map((l) => el('li', { 'data-reason': l.reason }, el('code', {}, l.path), el('span', { class: 'muted' }, ` — ${l.why}`))))] : []));
  }
  // execution
  const runBtn = c.querySelector<HTMLButtonElement>('button.run')!;
  runBtn.disabled = v.running || !!v.finished;
  runBtn.textContent = v.running ? 'Running…' : 'Run in the task container';
  const cs = c.querySelector('.container-state')!;
  cs.className = `container-state ${v.container.state === 'unavailable' ? 'bad' : 'muted'}`;
  cs.textContent = v.container.message ?? ({ unknown: 'container not started yet (it starts on the first run)', starting: 'starting the container…', ready: 'container ready', unavailable: 'container unavailable' } as const)[v.container.state];
  c.querySelector('table.runs tbody')!.replaceChildren(...v.runs.slice().reverse().map((r) => el('tr', {},
    el('td', {}, new Date(r.startedAt).toLocaleTimeString()),
    el('td', { class: r.exitCode === 0 ? 'ok' : 'bad' }, r.exitCode === null ? (r.error ? 'error' : 'killed') : `exit ${r.exitCode}`),
    el('td', {}, `${(r.durationMs / 1000).toFixed(1)} s`), el('td', { class: 'wide muted' }, r.error ?? ''))),
    ...(v.runs.length ? [] : [el('tr', {}, el('td', { class: 'wide muted' }, 'No runs yet.'))]));
  // conclusion
  const concl = c.querySelector('#conclusion') as HTMLTextAreaElement;
  if (document.activeElement !== concl) concl.value = v.conclusion;
  c.querySelector('ul.claims')?.replaceChildren(...(v.claims.length ? v.claims.map((cl) => el('li', { class: cl.found || cl.derived ? 'ok' : 'bad' },
    `${cl.found ? '✓' : cl.derived ? '≈' : '✗'} ${cl.text}`, el('span', { class: 'muted' }, cl.found ? ` — found in ${cl.where ?? 'a run log'}`
      : cl.derived ? ` — derived: ${cl.derived}` : ' — not found in any run log so far')))
    : [el('li', { class: 'muted' }, 'No numbers claimed yet.')]));
  // notes
  c.querySelector('ul.note-list')!.replaceChildren(...v.notes.slice().reverse().map((n) => el('li', {}, el('span', { class: 'muted' }, new Date(n.at).toLocaleString() + ' '), n.text)));
  c.querySelector('details.notes summary')!.textContent = `Notes (${v.notes.length})`;
  // finish
  const finished = !!v.finished;
  c.querySelectorAll<HTMLButtonElement>('.finish .actions button').forEach((b) => { b.disabled = finished; });
  // Frozen after Submit / Give up: the answers and notes are read-only, their buttons gone (the host refuses changes too).
  c.querySelectorAll<HTMLInputElement | HTMLTextAreaElement>('.phase[data-phase="design"] input, .phase[data-phase="design"] textarea, #conclusion').forEach((x) => { x.readOnly = finished; });
  c.querySelectorAll<HTMLButtonElement>('.add-var').forEach((b) => { b.hidden = finished; b.disabled = finished; });
  c.querySelectorAll<HTMLButtonElement>('.remove-var').forEach((b) => { b.disabled = finished; });
  const noteInput = c.querySelector<HTMLInputElement>('#note');
  if (noteInput) { noteInput.disabled = finished; noteInput.placeholder = finished ? 'Notes are frozen with the answers' : 'A note, timestamped (Enter to add)'; }
  const results = c.querySelector('.results')!;
  results.replaceChildren(...(v.finished ? [el('p', { class: 'badge' }, v.finished === 'submitted' ? 'Submitted' : 'Gave up')] : []),
    ...(v.results.length ? [el('table', { class: 'results-table' }, el('tbody', {}, ...v.results.map((r) => el('tr', {},
      el('td', {}, r.label), el('td', { class: r.ok === null ? 'muted' : r.ok ? 'ok' : 'bad' }, r.value), el('td', { class: 'wide muted' }, r.detail ?? '')))))] : []));
}

function appendLog(c: HTMLElement, runId: string, text: string, reset?: boolean): void {
  const pre = c.querySelector<HTMLElement>('pre.runlog');
  if (!pre) return;
  if (reset || pre.dataset.run !== runId) { pre.textContent = ''; pre.dataset.run = runId; }
  pre.textContent += text;
  if (pre.textContent!.length > 200_000) pre.textContent = '…' + pre.textContent!.slice(-150_000);
  pre.scrollTop = pre.scrollHeight;
}
