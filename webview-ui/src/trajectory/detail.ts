import type { Cut, TrajDetail, TrajHeader } from '../../../src/protocol/trajectory';
import { plural } from '../../../src/core/util/plural';
import { el } from '../dom';
import { renderDiff } from './diff';
import { cost, duration, tokens } from './format';
import { marked } from './highlight';

export interface DetailHost {
  showAll(step: number): void;
  /** Selects step `step` (0-based) in the timeline. */
  goTo(step: number): void;
  raw(step: number): void;
  run(command: 'openRepositoryAtStep' | 'compareSteps' | 'showStepDiff' | 'revealItem' | 'acceptVerdict' | 'flipVerdict' | 'copyRef' | 'copyLink', step: number, item?: string): void;
  review(step: number, kind: 'comment' | 'tag' | 'score' | 'invalid', value: string, reason: string): void;
}

type Field = 'text' | 'action' | 'observation';

/** A cut text as a `<pre>`, with the search's matches marked and "show all" when it was cut. */
function textBlock(c: Cut, cls: string, ranges: Array<{ start: number; end: number }>, onAll: () => void): HTMLElement {
  const box = el('div', { class: `block ${cls}` });
  box.append(el('pre', {}, ...marked(c.text, ranges.filter((r) => r.end <= c.text.length))));
  if (c.text.length < c.total) {
    const b = el('button', { class: 'link' }, `show all (${c.total.toLocaleString('en')} characters, ${(c.total - c.text.length).toLocaleString('en')} not shown)`);
    b.addEventListener('click', onAll);
    box.append(b);
  }
  return box;
}

function button(label: string, onClick: () => void, title = ''): HTMLButtonElement {
  const b = el('button', title ? { title } : {}, label);
  b.addEventListener('click', onClick);
  return b;
}

function section(title: string, ...children: Node[]): HTMLElement {
  return el('section', { class: 'part' }, el('h3', {}, title), ...children);
}

/**
 * The detail pane of one step: header with time, tokens and running totals; actions (copy a
 * reference or a link, the repository at this step, compare, the step's diff); pins; text, action,
 * observation (cut with "show all"); edits as coloured diffs; the model call; errors; the raw
 * source (on demand); review (comment, tag, score, mark invalid) with who/when/before.
 */
export function renderDetail(d: TrajDetail, h: TrajHeader, host: DetailHost): HTMLElement {
  const root = el('div', { class: 'detail-body', 'data-step': String(d.step) });
  const inField = (f: Field) => d.matches.filter((m) => m.field === f);
  const lane = d.purpose ? (d.purpose === 'system-prompt' ? 'the system prompt' : `the run's ${d.purpose}`) : d.stage ? `${d.stage} (the harness's work, not the agent's)` : `${d.phase}${d.phaseInferred ? ' (inferred)' : ''}`;
  const meta = [`${d.kind} · ${d.actor}`, lane];
  if (d.time) meta.push(`+${duration(d.time.relMs)}`, new Date(d.time.ms).toISOString().replace('T', ' ').replace(/\.\d+Z$/, ' UTC'));
  if (d.time?.durationMs !== undefined) meta.push(`took ${duration(d.time.durationMs)}`);
  root.append(el('h2', {}, `Step ${d.step}`), el('p', { class: 'meta' }, meta.join(' · ')));
  // a running total only where the log counts per step (SWE-agent's counts are the run's alone: a "Σ 0" would look like none were used)
  const tot = h.usage.perStep ? `Σ ${tokens(d.totalTokens)} tokens${d.totalCostUsd ? ` · ${cost(d.totalCostUsd)}` : ''} up to here` : 'no per-step token counts in the log (the run\'s total is in the header)';
  root.append(el('p', { class: 'meta' }, tot));
  if (d.spans?.length) root.append(el('p', { class: 'meta spans', title: 'the Inspect spans this step ran in, outermost first' }, `span: ${d.spans.map((x) => `${x.name}${x.type && x.type !== x.name ? ` (${x.type})` : ''}`).join(' › ')}`));
  if (d.matches.length) root.append(el('p', { class: 'meta hits' }, `${plural(d.matches.length, 'match', 'matches')} in this step`));

  const actions = el('div', { class: 'actions' },
    button('Copy reference', () => host.run('copyRef', d.step), d.ref),
    button('Copy link', () => host.run('copyLink', d.step), 'a vscode:// link to this step'),
  );
  if (h.can.repository) {
    actions.append(
      button('Repository at this step', () => host.run('openRepositoryAtStep', d.step)),
      button('Compare with step…', () => host.run('compareSteps', d.step)),
      button('Show diff', () => host.run('showStepDiff', d.step)),
    );
  } else if (h.can.repositoryWhy) {
    // offered only where they can work: here, why not
    actions.append(el('span', { class: 'muted why', title: h.can.repositoryWhy }, `No repository at this step: ${h.can.repositoryWhy}`));
  }
  const rawBox = el('div', { class: 'raw' });
  actions.append(button('Raw source', () => { if (rawBox.childElementCount) rawBox.replaceChildren(); else host.raw(d.step); }, 'the JSON of the event this step came from'));
  root.append(actions);

  if (d.pins.length) {
    const list = el('ul', { class: 'pins' });
    for (const p of d.pins) {
      const li = el('li', { class: `pin-${p.kind}` }, el('strong', {}, p.label), ` ${p.verdict ? `${p.verdict} · ` : ''}${p.detail}`, el('div', { class: 'muted' }, `why this step: ${p.why}`));
      li.append(button('Show in gap report', () => host.run('revealItem', d.step, p.item)));
      if (p.kind === 'verdict') {
        // A curator's review of the judge's verdict, stored as in the gap report (docs/review.md).
        li.append(button('Accept', () => host.run('acceptVerdict', d.step, p.item), 'agree with the judge (a reason optional)'));
        li.append(button('Flip…', () => host.run('flipVerdict', d.step, p.item), 'give your verdict and the reason'));
      }
      list.append(li);
    }
    root.append(section(`Pinned here (${d.pins.length})`, list));
  }

  const all = () => host.showAll(d.step);
  if (d.reasoning) root.append(reasoningBlock(d.reasoning, all));
  if (d.text) root.append(section(d.kind === 'model' ? 'Reply' : d.purpose === 'task' ? 'Task' : 'Text', textBlock(d.text, 'text', inField('text'), all)));
  if (d.calls?.length) {
    const list = el('ul', { class: 'calls' });
    for (const c of d.calls) {
      const li = el('li', {}, el('code', {}, c.tool));
      if (c.step !== undefined) { const at = c.step; li.append(' ', button(`step ${at}`, () => host.goTo(at), 'the tool call\'s own row: its arguments and result')); }
      list.append(li);
    }
    root.append(section(`Tool calls (${d.calls.length}), each a row of its own`, list));
  }
  if (d.action) {
    const c = d.action.display;
    root.append(section(`Action${d.action.callId ? ` (${d.action.callId})` : ''}`, textBlock(c, 'action', inField('action'), all)));
  }
  if (d.observation) {
    const o = d.observation;
    const title = `Observation${o.exitCode !== undefined && o.exitCode !== null ? ` · exit ${o.exitCode}` : ''}${o.error ? ' · error' : ''}`;
    root.append(section(title, textBlock(o.text, `observation${o.error ? ' error' : ''}`, inField('observation'), all)));
  }
  if (d.execs?.length) {
    const det = el('details', { class: 'execs' }, el('summary', {}, `Sandbox: ${plural(d.execs.length, 'operation')} this tool call ran`));
    for (const x of d.execs) {
      const head = `${x.action}${x.command ? ` $ ${x.command}` : x.file ? ` ${x.file}` : ''}${x.exitCode !== undefined && x.exitCode !== null ? ` · exit ${x.exitCode}` : ''}${x.durationMs !== undefined ? ` · ${duration(x.durationMs)}` : ''}`;
      det.append(el('p', { class: 'mono' }, head));
      if (x.output && x.output.total) det.append(textBlock(x.output, 'exec', [], all));
    }
    root.append(det);
  }
  for (const e of d.edits) {
    const body = e.diff.total === 0 ? el('p', { class: 'muted' }, 'the source says the file changed, without its contents') : renderDiff(e.diff.text);
    const s = section(`${e.op ?? 'edit'} ${e.path}${e.made ? ' (diff made from before/after)' : ''}`, body);
    s.classList.add('edit');
    if (e.diff.text.length < e.diff.total) s.append(button(`show all (${e.diff.total.toLocaleString('en')} characters)`, all));
    root.append(s);
  }
  if (d.model) {
    const m = d.model;
    const bits = [m.model, m.totalTokens !== undefined ? `${tokens(m.totalTokens)} tokens` : '', m.inputTokens !== undefined ? `input ${tokens(m.inputTokens)}` : '', m.outputTokens !== undefined ? `output ${tokens(m.outputTokens)}` : '',
      m.cacheReadTokens ? `cache read ${tokens(m.cacheReadTokens)}` : '', m.cacheWriteTokens ? `cache write ${tokens(m.cacheWriteTokens)}` : '', m.reasoningTokens ? `of which reasoning ${tokens(m.reasoningTokens)}` : '',
      m.costUsd !== undefined ? `${cost(m.costUsd)}${m.costFrom === 'table' ? ' (from the price table)' : ''}` : m.costFrom === 'unpriced' ? 'unpriced' : ''].filter(Boolean);
    root.append(section('Model call', el('p', {}, bits.join(' · ') || 'no figures')));
  }
  if (d.errors?.length) root.append(section('Errors', el('ul', { class: 'errors' }, ...d.errors.map((x) => el('li', {}, x)))));
  const src = d.source;
  // the file by its name (the whole path in its tooltip): a page never shows where on the machine it is
  root.append(section('Source', el('p', { class: 'mono', title: src.file }, `${baseName(src.file)}${src.entry ? ` ! ${src.entry}` : ''}${src.line ? ` : line ${src.line}` : ''}${src.pointer ? ` # ${src.pointer}` : ''}${src.kind ? ` (${src.kind})` : ''}`), rawBox));
  if (d.extra) {
    const det = el('details', {}, el('summary', {}, 'Other fields of the source event'));
    det.append(textBlock(d.extra, 'extra', [], all));
    root.append(det);
  }
  if (h.can.review) root.append(reviewPart(d, host));
  return root;
}

/** The model's reasoning, collapsed by default, labelled; redacted (encrypted) reasoning says so, with its readable summary when the provider gave one. */
function reasoningBlock(r: NonNullable<TrajDetail['reasoning']>, onAll: () => void): HTMLElement {
  const size = r.text ? ` (${r.text.total.toLocaleString('en')} characters)` : '';
  const label = r.redacted ? `Reasoning: redacted by the provider (encrypted)${r.summary ? ', its summary' : ''}${r.text ? ', and the readable part' : ''}` : `Reasoning${size}`;
  const det = el('details', { class: `reasoning${r.redacted ? ' redacted' : ''}` }, el('summary', {}, label));
  if (r.summary) det.append(el('h4', {}, 'Summary'), textBlock(r.summary, 'reasoning-summary', [], onAll));
  if (r.text) det.append(textBlock(r.text, 'reasoning-text', [], onAll));
  if (r.redacted && !r.summary && !r.text) det.append(el('p', { class: 'muted' }, 'The provider sent the reasoning encrypted: there is no text to show.'));
  return det;
}

/** The last part of a path (`/` or `\\` separated). */
export function baseName(p: string): string {
  return p.split(/[\\/]/).filter(Boolean).pop() ?? p;
}

/** Shows the raw JSON the host read for step `step` in the open detail pane. */
export function showRaw(root: HTMLElement, text: string, cut: boolean, where: string): void {
  const box = root.querySelector('.raw');
  if (!box) return;
  box.replaceChildren(el('p', { class: 'muted mono', title: where }, baseName(where)), el('pre', { class: 'rawjson' }, text), ...(cut ? [el('p', { class: 'muted' }, 'cut at 200,000 characters')] : []));
}

function reviewPart(d: TrajDetail, host: DetailHost): HTMLElement {
  const list = el('ul', { class: 'judgements' });
  for (const j of d.judgements) {
    list.append(el('li', {}, el('strong', {}, j.kind), ` ${j.value}`, j.reason ? el('span', { class: 'muted' }, ` — ${j.reason}`) : '',
      el('div', { class: 'muted' }, `${j.by} · ${j.at.replace('T', ' ').replace(/\.\d+Z$/, ' UTC')}${j.before !== undefined ? ` · before: ${j.before}` : ''}`)));
  }
  const kind = el('select', { 'aria-label': 'kind of judgement' },
    el('option', { value: 'comment' }, 'Comment'), el('option', { value: 'tag' }, 'Tag'), el('option', { value: 'score' }, 'Score'), el('option', { value: 'invalid' }, 'Mark invalid'));
  const value = el('input', { type: 'text', placeholder: 'comment, tag or score', 'aria-label': 'value' });
  const reason = el('input', { type: 'text', placeholder: 'reason', 'aria-label': 'reason' });
  const save = el('button', {}, 'Save');
  kind.addEventListener('change', () => {
    value.disabled = kind.value === 'invalid';
    value.placeholder = kind.value === 'score' ? 'a number, e.g. 0.5' : kind.value === 'invalid' ? '(the reason says why)' : kind.value;
  });
  save.addEventListener('click', () => {
    const k = kind.value as 'comment' | 'tag' | 'score' | 'invalid';
    const v = k === 'invalid' ? 'true' : value.value.trim();
    if (!v || (k === 'score' && !Number.isFinite(Number(v)))) { value.focus(); value.classList.add('bad'); return; }
    host.review(d.step, k, v, reason.value.trim());
  });
  return section(`Review (${d.judgements.length})`, list, el('div', { class: 'review-form' }, kind, value, reason, save));
}
