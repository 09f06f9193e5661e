import { HostMessageSchema } from '../../src/protocol/messages';
import { renderBrief } from './brief';
import { renderSection } from './sections/registry';
import './sections/phases';
import './sections/gaps';
import { loadUiState, saveUiState, send } from './vscodeApi';

/** The brief webview's entry: validates every host message, renders, and saves UI-only state. */
const root = document.getElementById('root') as HTMLElement;

window.addEventListener('message', (event: MessageEvent) => {
  const parsed = HostMessageSchema.safeParse(event.data);
  if (!parsed.success) return;
  const m = parsed.data;
  if (m.type === 'brief') {
    renderBrief(root, m.brief);
    saveUiState({ ...(loadUiState() ?? {}), taskId: m.brief.taskId, sessionDir: m.brief.sessionDir });
  } else if (m.type === 'section') {
    renderSection(root, m.key, m.payload);
  } else if (m.type === 'error') {
    const box = document.createElement('div');
    box.className = 'error';
    box.setAttribute('role', 'alert');
    box.textContent = m.message;
    root.prepend(box);
  }
});

send({ type: 'ready' });
