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

/**
 * The virtualised timeline (@tanstack/virtual-core): only the rows in and near the viewport exist
 * in the DOM; their data come from the host in pages of {@link PAGE} and are cached per view. A
 * phase band is the row's coloured left border, with the phase's name on the band's first row.
 */
export class TimelineList {
  readonly scroller: HTMLElement;
  private readonly spacer: HTMLElement;
  private readonly v: Virtualizer<HTMLElement, HTMLElement>;
  private rows = new Map<number, TrajRow>();
  private asked = new Set<number>();
  private bandStarts = new Set<number>();
  private hits = new Set<number>();
  private count = 0;
  private frame = 0;
  query = '';
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

  /** A new view: `count` rows, nothing cached; band starts and search hits as view positions. */
  reset(count: number, bandStarts: number[], hits: number[]): void {
    this.count = count;
    this.rows.clear(); this.asked.clear();
    this.bandStarts = new Set(bandStarts);
    this.hits = new Set(hits);
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

  /** Selects `position` and scrolls it into view. */
  select(position: number): void {
    this.selected = position;
    if (position >= 0) this.v.scrollToIndex(position, { align: 'auto' });
    this.schedule();
  }

  /** Positions visible now (first, last), or undefined when the list is empty. */
  visible(): { first: number; last: number } | undefined {
    const items = this.v.getVirtualItems();
    if (!items.length) return undefined;
    const top = this.scroller.scrollTop; const bottom = top + this.scroller.clientHeight;
    const shown = items.filter((i) => i.end > top && i.start < bottom);
    return shown.length ? { first: shown[0].index, last: shown[shown.length - 1].index } : undefined;
  }

  private schedule(): void {
    if (this.frame) return;
    this.frame = requestAnimationFrame(() => { this.frame = 0; this.draw(); });
  }

  private draw(): void {
    const items = this.v.getVirtualItems();
    this.spacer.style.height = `${this.v.getTotalSize()}px`;
    const missing: number[] = [];
    const nodes: HTMLElement[] = [];
    let shown = 0;
    for (const it of items) {
      const r = this.rows.get(it.index);
      const node = r ? this.rowNode(it.index, r) : el('div', { class: 'row loading' }, '…');
      if (r) shown++; else missing.push(it.index);
      node.style.transform = `translateY(${it.start}px)`;
      node.dataset.position = String(it.index);
      nodes.push(node);
    }
    this.spacer.replaceChildren(...nodes);
    for (const p of missing) {
      const page = Math.floor(p / PAGE) * PAGE;
      if (this.asked.has(page)) continue;
      this.asked.add(page);
      this.host.requestRows(page, Math.min(PAGE, this.count - page));
    }
    this.host.onRendered(shown, this.visible()?.first);
  }

  private rowNode(position: number, r: TrajRow): HTMLElement {
    const cls = ['row', `phase-${r.phase}`, `kind-${r.kind}`];
    if (position === this.selected) cls.push('selected');
    if (this.hits.has(position)) cls.push('hit');
    if (r.error) cls.push('error');
    const node = el('div', { class: cls.join(' '), role: 'option', 'aria-selected': String(position === this.selected), 'data-step': String(r.step) });
    node.addEventListener('click', () => this.host.onPick(position));
    node.append(
      el('span', { class: 'num' }, String(r.step)),
      el('span', { class: 'kind', title: r.kind }, r.kind),
      el('span', { class: 'actor', title: r.actor }, r.actor),
      el('span', { class: 'tool', title: r.tool ?? '' }, r.tool ?? ''),
    );
    // a band's first row names its phase (the band itself is the coloured left border)
    if (this.bandStarts.has(position)) node.append(el('span', { class: 'band' }, r.phase));
    node.append(el('span', { class: 'text' }, ...highlighted(r.text, this.query)));
    if (r.pins?.length) node.append(el('span', { class: 'badge pin', title: r.pins.join('\n') }, `pinned ${r.pins.length}`));
    if (r.judgements) node.append(el('span', { class: 'badge judged', title: `${r.judgements} review judgement(s)` }, `reviewed ${r.judgements}`));
    if (r.exitCode !== undefined && r.exitCode !== null && r.exitCode !== 0) node.append(el('span', { class: 'exit' }, `exit ${r.exitCode}`));
    const own = [r.tokens !== undefined ? `${tokens(r.tokens)} tok` : '', r.costUsd !== undefined ? cost(r.costUsd) : ''].filter(Boolean).join(' · ');
    if (own) node.append(el('span', { class: 'tok', title: 'tokens and cost of this step' }, own));
    if (r.totalTokens || r.totalCostUsd) node.append(el('span', { class: 'total', title: 'running totals up to this step: tokens · cost' }, `Σ ${tokens(r.totalTokens)}${r.totalCostUsd ? ` · ${cost(r.totalCostUsd)}` : ''}`));
    return node;
  }
}
