import type { CampaignRow, RunsBoardMessage, RunsWebviewMessage } from '../../../src/protocol/runs';
import { clock as formatWorking, flag } from '../../../src/core/runs/format';
import { plural } from '../../../src/core/util/plural';
import { el } from '../dom';

// A campaign's board (docs/campaigns.md "The board"): people as rows, each person's sessions
// under them (status, opened, phase, working time by the host's clock, pauses, attestation, AI
// off, E/D/I/C once submitted), with the person's link actions. No token ever reaches this page:
// Copy Link puts it on the clipboard from the host.

type Campaign = NonNullable<RunsBoardMessage['campaign']>;

export const CAMPAIGN_COLUMNS = ['Person', 'Task', 'Status', 'Opened', 'Phase', 'Working', 'Pauses', 'Attested as', 'AI off', 'E', 'D', 'I', 'C', 'All·E✓'] as const;

function mark(v: boolean | null | undefined, what: string): HTMLElement {
  const known = v !== null && v !== undefined;
  return el('span', { class: !known ? 'muted' : v ? 'ok' : 'bad', title: `${what}: ${!known ? 'not computable (not submitted, verified or judged yet)' : v ? 'correct' : 'not correct'}` }, known ? flag(v) : '–');
}

const STATUS_CLASS: Record<CampaignRow['status'], string> = { 'not started': 'muted', working: 'live', paused: 'warn', submitted: 'ok', 'gave up': 'muted' };

/** The rows that pass the filter text (person, name, task, status). */
export function campaignFilter(c: Campaign, text: string): Campaign['rows'] {
  const t = text.trim().toLowerCase();
  if (!t) return c.rows;
  return c.rows.filter((r) => `${r.person} ${r.name ?? ''} ${r.task} ${r.status}`.toLowerCase().includes(t));
}

/** Counts for the header: sessions by status, people. */
export function campaignCounts(c: Campaign): HTMLElement[] {
  const by = (s: CampaignRow['status']) => c.rows.filter((r) => r.status === s).length;
  return [
    ...(['submitted', 'working', 'paused', 'not started', 'gave up'] as const).map((s) => el('span', { class: `pill ${s.replace(' ', '-')}`, 'data-count': s }, `${by(s)} ${s}`)),
    el('span', { class: 'muted' }, ` of ${plural(c.rows.length, 'session')}, ${plural(c.people.length, 'person', 'people')}${c.hours !== null ? ` · ${c.hours} h per person` : ''}`),
  ];
}

/** The people table's body: a header row per person (their link and hours, the actions), then one row per session. */
export function campaignTable(c: Campaign, rows: Campaign['rows'], send: (m: RunsWebviewMessage) => void): HTMLElement[] {
  const out: HTMLElement[] = [];
  for (const p of c.people) {
    const mine = rows.filter((r) => r.person === p.person);
    if (!mine.length) continue;
    const btn = (action: 'copyLink' | 'reissue' | 'revoke', label: string, title: string, disabled = false) => {
      const b = el('button', { type: 'button', class: `secondary person-${action}`, title, 'data-person': p.person }, label);
      b.disabled = disabled;
      b.addEventListener('click', (e) => { e.stopPropagation(); send({ type: 'person', action, person: p.person }); });
      return b;
    };
    const used = c.hours !== null ? `${formatWorking(p.workingMs)} of ${c.hours} h` : formatWorking(p.workingMs);
    out.push(el('tr', { class: 'person', 'data-person': p.person },
      el('th', { scope: 'rowgroup', colspan: String(CAMPAIGN_COLUMNS.length) },
        el('span', { class: 'who' }, p.name ? `${p.person} · ${p.name}` : p.person),
        el('span', { class: 'muted' }, ` ${mine.filter((r) => r.submitted).length}/${mine.length} submitted · working ${used} · link ${p.revoked ? 'revoked' : p.generation > 1 ? `re-issued (generation ${p.generation})` : 'issued'}`),
        el('span', { class: 'actions' },
          btn('copyLink', 'Copy link', `Copy ${p.person}'s link to the clipboard`, p.revoked),
          btn('reissue', 'Re-issue', `A new link for ${p.person}; the current one stops working`),
          btn('revoke', 'Revoke', `Refuse every link of ${p.person} until re-issued`, p.revoked)))));
    for (const r of mine) {
      const o = r.outcome;
      out.push(el('tr', { 'data-session': r.session, 'data-status': r.status, tabindex: '0', title: `${r.session}\nopens the session in the trajectory viewer` },
        el('td', { class: 'muted' }, r.person),
        el('td', {}, r.task),
        el('td', { class: `status ${STATUS_CLASS[r.status]}` }, r.status),
        el('td', { class: 'flag' }, r.opened ? 'yes' : 'no'),
        el('td', {}, r.phase && !r.submitted ? r.phase : '–'),
        el('td', { class: 'num', title: 'working time by the host\'s clock (pauses excluded)' }, formatWorking(r.workingMs)),
        el('td', { class: 'num' }, String(r.pauses)),
        el('td', {}, r.attestedAs ?? '–'),
        el('td', { class: 'flag', title: r.aiOff === undefined ? 'no AI-settings read yet' : r.aiOff ? 'every AI feature off (the host\'s read)' : 'AI features found on' }, r.aiOff === undefined ? '–' : r.aiOff ? 'yes' : 'NO'),
        el('td', { class: 'flag' }, mark(o?.E, 'E (clean run)')), el('td', { class: 'flag' }, mark(o?.D, 'D')), el('td', { class: 'flag' }, mark(o?.I, 'I')), el('td', { class: 'flag' }, mark(o?.C, 'C')),
        el('td', { class: 'flag' }, mark(o?.AllE, 'All·E✓'))));
    }
  }
  return out;
}
