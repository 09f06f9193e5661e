import type { BriefView } from '../../src/protocol/messages';
import { plural } from '../../src/core/util/plural';
import { el, html, proctoredWindow } from './dom';
import { renderMarkdown } from './markdown';
import { send } from './vscodeApi';

const TYPE_TEXT: Record<number, string> = {
  1: 'Type 1: the ground-truth scripts were removed (masked_source).',
  2: 'Type 2: the ground-truth scripts were removed (source).',
  3: 'Type 3: only the README was removed; the implementation is judged against the method.',
};

/** What `no_answer` means (docs/exp-bench-harness.md): said in the brief, never the extraction's own text. */
const NO_ANSWER_TEXT = 'when the dataset was built, no implementation of this experiment was found in the paper\'s repository, '
  + 'so the task has no ground-truth implementation steps (requirements) to compare with. You still design, implement and run the experiment.';

/** Renders the brief: paper title and links, question, method, agent instructions. No ground truth. */
export function renderBrief(root: HTMLElement, b: BriefView): void {
  const header = el('header', { class: 'brief-header' },
    el('div', { class: 'task-id' }, b.taskId),
    el('h1', {}, b.paperTitle ?? `Paper ${b.taskId.split('/')[1]}`));
  const links = el('nav', { class: 'links' });
  for (const [label, url] of [['Paper page', b.paperUrl], ['PDF', b.pdfUrl], ['Code', b.codeUrl]] as const) {
    if (!url) continue;
    const a = el('a', { href: url, title: url }, label);
    a.addEventListener('click', (e) => { e.preventDefault(); send({ type: 'openLink', url }); });
    links.append(a);
  }
  if (!b.codeUrl && !proctoredWindow()) links.append(el('span', { class: 'muted' }, 'No code_url: the repository is supplied when the task is opened.'));
  header.append(links, el('p', { class: 'type' }, TYPE_TEXT[b.type]));
  if (b.noAnswer) header.append(el('p', { class: 'no-answer' }, el('strong', {}, 'no_answer: '), NO_ANSWER_TEXT));
  const actions = el('div', { class: 'row brief-actions' });
  if (!b.sessionDir) {
    const open = el('button', { class: 'open-task', title: 'Prepare a pinned, masked workspace of this task and open it (EXP-Bench: Open Task)' }, 'Open Task…');
    open.addEventListener('click', () => send({ type: 'openTask' }));
    actions.append(open);
  }
  const raw = el('button', { class: 'secondary raw-toggle', 'aria-pressed': 'false', title: 'Show the task text exactly as the task file has it' }, 'Show raw text');
  raw.addEventListener('click', () => {
    const on = raw.getAttribute('aria-pressed') !== 'true';
    raw.setAttribute('aria-pressed', String(on));
    raw.textContent = on ? 'Show formatted text' : 'Show raw text';
    raw.closest('article.brief')?.querySelectorAll<HTMLElement>('.brief-part').forEach((p) => {
      (p.querySelector('.markdown') as HTMLElement).hidden = on;
      (p.querySelector('pre.raw') as HTMLElement).hidden = !on;
    });
  });
  actions.append(raw);
  header.append(actions);

  const parts: HTMLElement[] = [header];
  parts.push(section('Question', b.question, 'question'));
  parts.push(section('Method', b.method, 'method'));
  if (b.agentInstructions) parts.push(section('Agent instructions', b.agentInstructions, 'agent-instructions'));
  if (b.problems.length) {
    const list = el('ul', { class: 'problems' }, ...b.problems.map((p) => el('li', {}, `${p.severity}: ${p.pointer} ${p.message}`)));
    parts.push(el('details', { class: 'task-problems' }, el('summary', {}, `⚠ ${plural(b.problems.length, 'problem')} in this task's file`), list));
  }
  const briefEl = el('article', { class: 'brief', 'data-task-id': b.taskId }, ...parts);
  const old = root.querySelector('article.brief');
  if (old) old.replaceWith(briefEl);
  else root.prepend(briefEl);
  root.querySelector('p.muted')?.remove();
}

function section(title: string, markdown: string, id: string): HTMLElement {
  const s = el('section', { class: 'brief-part', id });
  const raw = el('pre', { class: 'raw' }, markdown);
  raw.hidden = true;
  s.append(el('h2', {}, title), html('div', 'markdown', renderMarkdown(markdown)), raw);
  return s;
}
