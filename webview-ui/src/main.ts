import { HostMessageSchema } from '../../src/protocol/messages';
import { showError } from './alerts';
import { renderBrief } from './brief';
import { renderSection } from './sections/registry';
import './sections/phases';
import './sections/gaps';
import './sections/feasibility';
import { loadUiState, receiveReply, saveUiState, send } from './vscodeApi';

/** The brief webview's entry: validates every host message, renders, and saves UI-only state. */
const root = document.getElementById('root') as HTMLElement;

window.addEventListener('message', (event: MessageEvent) => {
  const parsed = HostMessageSchema.safeParse(event.data);
  if (!parsed.success) return;
  const m = parsed.data;
  switch (m.type) {
    case 'brief':
      renderBrief(root, m.brief);
      saveUiState({ ...(loadUiState() ?? {}), taskId: m.brief.taskId, sessionDir: m.brief.sessionDir });
      break;
    case 'section': renderSection(root, m); break;
    case 'reply': receiveReply(m); break;
    case 'error': showError(m.message); break;
  }
});

send({ type: 'ready' });
