import type { FeasibilityView } from '../../../src/protocol/messages';
import { el } from '../dom';
import { request } from '../vscodeApi';
import { registerSection } from './registry';

/**
 * "Can this task run here?" (section `feasibility`): the verdict in one line, then each need of the
 * task's environment (GPUs, packages, data, run time) with whether this machine has it, and a
 * button to check again. Shown before the clock starts; it never holds the ground truth.
 */
const MARK = { yes: '✓', no: '✗', info: '·' } as const;

registerSection('feasibility', (container, v: FeasibilityView) => {
  const again = el('button', { class: 'secondary' }, 'Check again');
  again.addEventListener('click', () => { void request('feasibility', { action: 'recheck' }); });
  const tone = v.status === 'cannot-run' || v.status === 'failed' ? 'warn' : 'muted';
  container.replaceChildren(
    el('h2', {}, 'Can this task run here?'),
    el('p', { class: tone, role: 'status', 'data-status': v.status }, v.summary),
    ...(v.needs.length ? [el('table', { class: 'feasibility' }, el('tbody', {}, ...v.needs.map((n) => el('tr', { 'data-have': n.have },
      el('td', {}, MARK[n.have]), el('td', {}, `${n.kind}: ${n.what}`), el('td', { class: 'muted' }, n.detail)))))] : []),
    ...(v.notes.length ? [el('ul', { class: 'muted' }, ...v.notes.map((n) => el('li', {}, n)))] : []),
    ...(v.status === 'checking' ? [] : [el('div', { class: 'row' }, again)]),
  );
});
