import type { GapsAction, GapsLink, GapsView } from '../../../src/protocol/messages';
import { el } from '../dom';
import { request } from '../vscodeApi';
import { registerSection } from './registry';

/**
 * The gap report (section `gaps`): the latest judgement per phase and per item, with its verdict,
 * the reason, and links that open the solver's hunk, the ground truth beside it (diff editor) or
 * the requirement's line. A heuristic judgement is labelled so in the heading and on every row's
 * verdict; a stale one (the patch changed since) carries a banner. Phases whose items are all fine
 * start collapsed.
 */
function act(call: GapsAction): void {
  void request('gaps', call);
}

function link(l: GapsLink): HTMLElement {
  const a = el('a', { href: '#', class: 'gap-link', 'data-action': l.call.action, title: l.call.action === 'openDiff' ? 'Open the ground truth beside your code' : '' }, l.label);
  a.addEventListener('click', (e) => { e.preventDefault(); act(l.call); });
  return a;
}

/** Phases whose verdicts the judge gives (the others come from the verifier and the log scan). */
const JUDGED = new Set(['design', 'implementation']);

/** A curator's accept / flip of the item (docs/review.md): the latest curator's verdict, and the two actions. */
function review(r: NonNullable<GapsView['phases'][number]['items'][number]['review']>): HTMLElement {
  const action = (label: string, accept: boolean) => {
    const a = el('a', { href: '#', class: 'gap-link', 'data-action': accept ? 'acceptVerdict' : 'flipVerdict', title: accept ? 'Agree with the judge (stored with your name)' : `Flip to ${r.choices.join(' or ')}, with a reason` }, label);
    a.addEventListener('click', (e) => { e.preventDefault(); act({ action: 'reviewVerdict', payload: { item: r.item, accept } }); });
    return a;
  };
  const c = r.curator;
  const said = c ? (c.verdict === r.judged ? `accepted ${c.verdict}` : `flipped ${r.judged} → ${c.verdict}`) : 'not reviewed';
  return el('div', { class: 'gap-review', 'data-item': r.item, ...(c ? { 'data-curator': c.verdict } : {}) },
    el('span', { class: c && c.verdict !== r.judged ? 'warn' : 'muted' }, `Curator: ${said}${c ? ` (${c.by}, ${c.at.slice(0, 16).replace('T', ' ')})${c.reason ? ` — ${c.reason}` : ''}` : ''}`),
    ' · ', action('Accept', true), ' · ', action('Flip…', false));
}

function phase(p: GapsView['phases'][number], heuristic: boolean, focus?: string): HTMLElement {
  const rows = p.items.map((it) => el('tr', { class: `gap-item${focus && it.item === focus ? ' focused' : ''}`, 'data-verdict': it.verdict, ...(it.item ? { 'data-item': it.item } : {}) },
    el('td', { class: `gap-verdict ${it.tone}` }, `${it.verdict.replace(/ /g, '\u00a0')}${heuristic && JUDGED.has(p.id) ? '*' : ''}`),
    el('td', { class: 'wide' },
      el('div', {}, it.label),
      el('div', { class: 'muted' }, it.reason),
      ...(it.links.length ? [el('div', { class: 'gap-links' }, ...it.links.flatMap((l, i) => (i ? [' · ', link(l)] : [link(l)])))] : []),
      ...(it.review ? [review(it.review)] : []))));
  // a phase whose items are all fine starts collapsed, so that the gaps come first
  const open = p.items.some((it) => it.tone !== 'ok' || (focus !== undefined && it.item === focus));
  return el('details', { class: 'gap-phase', 'data-phase': p.id, ...(open ? { open: '' } : {}) },
    el('summary', {}, el('strong', {}, p.title), ' ', el('span', { class: 'muted' }, `— ${p.score}`)),
    rows.length ? el('table', { class: 'gaps' }, el('tbody', {}, ...rows)) : el('p', { class: 'muted' }, 'Nothing to report.'));
}

registerSection('gaps', (container, v) => {
  const heuristic = v.kind === 'heuristic';
  const rerun = el('button', { class: 'secondary' }, 'Run judge and verifier again');
  rerun.addEventListener('click', () => act({ action: 'rerun' }));
  container.replaceChildren(
    el('h2', {}, 'Gap report ', el('span', { class: 'badge' }, heuristic ? 'heuristic' : v.by)),
    el('p', { class: 'muted' }, v.summary, heuristic ? ' — * heuristic verdicts are word and file overlaps, not judgements.' : ''),
    ...(v.stale ? [el('p', { class: 'warn', role: 'status' }, 'Stale: your patch changed since this judgement. The editor annotations are cleared; run the judge again.')] : []),
    ...v.phases.map((p) => phase(p, heuristic, v.focus)),
    ...(v.notes.length ? [el('details', { class: 'gap-notes' }, el('summary', {}, `Notes (${v.notes.length})`), el('ul', {}, ...v.notes.map((n) => el('li', {}, n))))] : []),
    el('div', { class: 'row' }, rerun),
  );
  // `expbench.gaps.revealItem`: the row asked for, in view
  container.querySelector('tr.gap-item.focused')?.scrollIntoView({ block: 'center' });
});
