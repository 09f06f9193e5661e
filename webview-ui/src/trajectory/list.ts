import { Virtualizer, elementScroll, observeElementOffset, observeElementRect } from '@tanstack/virtual-core';
import type { TrajRow } from '../../../src/protocol/trajectory';
import { el } from '../dom';
import { highlighted } from './highlight';
import { cost, tokens } from './format';

/** Height of one row, px (fixed: rows are one line). */
export const ROW_HEIGHT = 26;
/** Rows asked of the host at once. */
export const PAGE = 200;

export interface ListHost {
  /** Asks the host for rows `start`..`start+count` of the current view. */
  requestRows(start: number, count: number): void;
  /** A row was clicked. */
  onPick(position: number): void;
  /** The list drew (rows shown with data, first visible position). */
  onRendered(rows: number, first: number | undefined): void;
}

/** Short names of kinds and actors for the narrow columns (the full name is the cell's tooltip). */
const SHORT: Record<string, string> = { environment: 'env', message: 'msg', system: 'sys' };

/** What a row's lane (the column after the tool) names: the run's task or result, else the harness's stage, else the phase. */
export function laneOf(r: TrajRow): { label: string; cls: string } {
  if (r.purpose) return { label: r.purpose === 'system-prompt' ? 'system prompt' : r.purpose, cls: `purpose-${r.purpose}` };
  if (r.stage) return { label: r.stage, cls: `stage-${r.stage}` };
  return { label: r.phase, cls: `phase-${r.phase}` };
}

/**
 * The virtualised timeline (@tanstack/virtual-core): only the rows in and near the viewport exist
 * in the DOM; their data come from the host in pages of {@link PAGE} and are cached per view. A
 * row is a grid of fixed columns (step, kind, actor, tool, lane, text, badges, tokens, Σ) whose
 * widths the header sets to fit the trajectory, so nothing overlaps. The lane names the phase
 * band (its coloured left border; the name on the band's first row), or the harness's stage
 * (setup, scoring, cleanup) in place of a phase, or the task / submission. Row nodes are kept while
 * they stay in range: moving the selection only moves a class (one frame per step, issue 30).
 */
export class TimelineList {
  readonly scroller: HTMLElement;
  private readonly spacer: HTMLElement;
  private readonly v: Virtualizer<HTMLElement, HTMLElement>;
  private rows = new Map<number, TrajRow>();
  private asked = new Set<number>();
  private bandStarts = new Set<number>();
  private hits = new Set<number>();
  /** Drawn row nodes by view position (kept across draws while in range). */
  private nodes = new Map<number, HTMLElement>();
  private count = 0;
  private frame = 0;
  private query_ = '';
  selected = -1;

  constructor(parent: HTMLElement, private readonly host: ListHost) {
    this.scroller = el('div', { class: 'timeline', tabindex: '0', role: 'listbox', 'aria-label': 'Steps' });
    this.spacer = el('div', { class: 'spacer' });
    this.scroller.append(this.spacer);
    parent.append(this.scroller);
    this.v = new Virtualizer<HTMLElement, HTMLElement>({
      count: 0,
      getScrollElement: () => this.scroller,
      estimateSize: () => ROW_HEIGHT,
      overscan: 12,
      observeElementRect, observeElementOffset, scrollToFn: elementScroll,
      onChange: () => this.schedule(),
    });
    this.v._didMount();
    this.v._willUpdate();
  }

  get query(): string { return this.query_; }
  set query(q: string) { if (q !== this.query_) { this.query_ = q; this.dropNodes(); } }

  /** A new view: `count` rows, nothing cached; band starts and search hits as view positions. */
  reset(count: number, bandStarts: number[], hits: number[]): void {
    this.count = count;
    this.rows.clear(); this.asked.clear();
    this.bandStarts = new Set(bandStarts);
    this.hits = new Set(hits);
    this.dropNodes();
    this.v.setOptions({ ...this.v.options, count });
    this.v._willUpdate();
    this.schedule();
  }

  /** Rows arrived from the host. */
  add(start: number, rows: TrajRow[]): void {
    rows.forEach((r, i) => this.rows.set(start + i, r));
    this.schedule();
  }

  row(position: number): TrajRow | undefined { return this.rows.get(position); }

  /** Selects `position` and scrolls it into view; the old and new rows only change class. */
  select(position: number): void {
    const old = this.nodes.get(this.selected);
    if (old) { old.classList.remove('selected'); old.setAttribute('aria-selected', 'false'); }
    this.selected = position;
    const now = this.nodes.get(position);
    if (now) { now.classList.add('selected'); now.setAttribute('aria-selected', 'true'); }
    if (position >= 0 && !this.inView(position)) this.v.scrollToIndex(position, { align: 'auto' });
  }

  /** Positions visible now (first, last), or undefined when the list is empty. */
  visible(): { first: number; last: number } | undefined {
    const items = this.v.getVirtualItems();
    if (!items.length) return undefined;
    const top = this.scroller.scrollTop; const bottom = top + this.scroller.clientHeight;
    const shown = items.filter((i) => i.end > top && i.start < bottom);
    return shown.length ? { first: shown[0].index, last: shown[shown.length - 1].index } : undefined;
  }

  private inView(position: number): boolean {
    const top = this.scroller.scrollTop; const bottom = top + this.scroller.clientHeight;
    const y = position * ROW_HEIGHT;
    return y >= top && y + ROW_HEIGHT <= bottom;
  }

  private dropNodes(): void {
    for (const n of this.nodes.values()) n.remove();
    this.nodes.clear();
  }

  private schedule(): void {
    if (this.frame) return;
    this.frame = requestAnimationFrame(() => { this.frame = 0; this.draw(); });
  }

  private draw(): void {
    const items = this.v.getVirtualItems();
    this.spacer.style.height = `${this.v.getTotalSize()}px`;
    const missing: number[] = [];
    const keep = new Set<number>();
    let shown = 0;
    for (const it of items) {
      const r = this.rows.get(it.index);
      keep.add(it.index);
      let node = this.nodes.get(it.index);
      if (node && r && node.classList.contains('loading')) { node.remove(); node = undefined; }
      if (!node) {
        node = r ? this.rowNode(it.index, r) : el('div', { class: 'row loading' }, '…');
        node.style.transform = `translateY(${it.start}px)`;
        node.dataset.position = String(it.index);
        this.spacer.append(node);
        this.nodes.set(it.index, node);
      }
      if (r) shown++; else missing.push(it.index);
    }
    for (const [p, n] of this.nodes) if (!keep.has(p)) { n.remove(); this.nodes.delete(p); }
    for (const p of missing) {
      const page = Math.floor(p / PAGE) * PAGE;
      if (this.asked.has(page)) continue;
      this.asked.add(page);
      this.host.requestRows(page, Math.min(PAGE, this.count - page));
    }
    this.host.onRendered(shown, this.visible()?.first);
  }

  private rowNode(position: number, r: TrajRow): HTMLElement {
    const lane = laneOf(r);
    const cls = ['row', `phase-${r.phase}`, `kind-${r.kind}`];
    if (r.stage) cls.push('harness', `stage-${r.stage}`);
    if (r.purpose) cls.push(`purpose-${r.purpose}`);
    if (position === this.selected) cls.push('selected');
    if (this.hits.has(position)) cls.push('hit');
    if (r.error) cls.push('error');
    const node = el('div', { class: cls.join(' '), role: 'option', 'aria-selected': String(position === this.selected), 'data-step': String(r.step) });
    node.addEventListener('click', () => this.host.onPick(position));
    // a band's first row names its phase or stage (the band itself is the coloured left border); the task and submission always say so
    const laneCell = el('span', { class: 'lane' });
    if (this.bandStarts.has(position) || r.purpose) laneCell.append(el('span', { class: `band ${lane.cls}`, title: r.stage ? `${r.stage}: the harness's work, not the agent's` : lane.label }, lane.label));
    const text = el('span', { class: 'text' });
    // indentation by span depth, through the CSSOM (the page's CSP forbids style attributes)
    if (r.depth) text.style.setProperty('--depth', String(Math.min(r.depth, 8)));
    if (r.spanStart?.length) text.append(el('span', { class: 'span', title: `span: ${r.spanStart.join(' › ')}` }, `▸ ${r.spanStart.join(' › ')}`));
    text.append(...highlighted(r.text, this.query_));
    const badges = el('span', { class: 'badges' });
    if (r.reasoning) badges.append(el('span', { class: 'badge reasoning', title: 'the model\'s reasoning is in the detail, apart from the reply' }, 'reasoning'));
    if (r.execs) badges.append(el('span', { class: 'badge execs', title: `${r.execs} sandbox operation(s) of this tool call, in the detail` }, `${r.execs} exec${r.execs === 1 ? '' : 's'}`));
    if (r.pins?.length) badges.append(el('span', { class: 'badge pin', title: r.pins.join('\n') }, `pinned ${r.pins.length}`));
    if (r.judgements) badges.append(el('span', { class: 'badge judged', title: `${r.judgements} review judgement(s)` }, `reviewed ${r.judgements}`));
    if (r.exitCode !== undefined && r.exitCode !== null && r.exitCode !== 0) badges.append(el('span', { class: 'exit' }, `exit ${r.exitCode}`));
    const own = [r.tokens !== undefined ? `${tokens(r.tokens)} tok` : '', r.costUsd !== undefined ? cost(r.costUsd) : ''].filter(Boolean).join(' · ');
    node.append(
      el('span', { class: 'num' }, String(r.step)),
      el('span', { class: 'kind', title: r.kind }, SHORT[r.kind] ?? r.kind),
      el('span', { class: 'actor', title: r.actor }, SHORT[r.actor] ?? r.actor),
      el('span', { class: 'tool', title: r.tool ?? '' }, r.tool ?? ''),
      laneCell, text, badges,
      el('span', { class: 'tok', title: 'tokens (as the source counts them, cache included) and cost of this step' }, own),
      el('span', { class: 'total', title: 'running totals up to this step: tokens · cost' }, r.totalTokens || r.totalCostUsd ? `Σ ${tokens(r.totalTokens)}${r.totalCostUsd ? ` · ${cost(r.totalCostUsd)}` : ''}` : ''),
    );
    return node;
  }
}
