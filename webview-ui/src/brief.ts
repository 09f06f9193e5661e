import type { BriefView } from '../../src/protocol/messages';
import { el, html } from './dom';
import { renderMarkdown } from './markdown';
import { send } from './vscodeApi';

const TYPE_TEXT: Record<number, string> = {
  1: 'Type 1: the ground-truth scripts were removed (masked_source).',
  2: 'Type 2: the ground-truth scripts were removed (source).',
  3: 'Type 3: only the README was removed; the implementation is judged against the method.',
};

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
  if (!b.codeUrl) links.append(el('span', { class: 'muted' }, 'No code_url: the repository is supplied when the task is opened.'));
  header.append(links, el('p', { class: 'type' }, TYPE_TEXT[b.type]));

  const parts: HTMLElement[] = [header];
  parts.push(section('Question', b.question, 'question'));
  parts.push(section('Method', b.method, 'method'));
  if (b.agentInstructions) parts.push(section('Agent instructions', b.agentInstructions, 'agent-instructions'));
  if (b.problems.length) {
    const list = el('ul', { class: 'problems' }, ...b.problems.map((p) => el('li', {}, `${p.severity}: ${p.pointer} ${p.message}`)));
    parts.push(el('details', { class: 'task-problems' }, el('summary', {}, `⚠ ${b.problems.length} problems in this task's file`), list));
  }
  const briefEl = el('article', { class: 'brief', 'data-task-id': b.taskId }, ...parts);
  const old = root.querySelector('article.brief');
  if (old) old.replaceWith(briefEl);
  else root.prepend(briefEl);
  root.querySelector('p.muted')?.remove();
}

function section(title: string, markdown: string, id: string): HTMLElement {
  const s = el('section', { class: 'brief-part', id });
  s.append(el('h2', {}, title), html('div', 'markdown', renderMarkdown(markdown)));
  return s;
}
