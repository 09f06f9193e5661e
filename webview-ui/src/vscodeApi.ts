import type { Reply, SectionAction, SectionName, WebviewMessage, WebviewUiState } from '../../src/protocol/messages';
import { CANCELLED, RequestClient, RequestError } from '../../src/protocol/requests';
import { showError } from './alerts';

interface VsCodeApi {
  postMessage(m: unknown): void;
  getState(): unknown;
  setState(s: unknown): void;
}
declare function acquireVsCodeApi(): VsCodeApi;

/**
 * A wrapper around `acquireVsCodeApi` that falls back to a browser stand-in (messages logged to
 * `window.__expbenchSent`, state in memory) so the UI also runs outside VS Code for its own tests.
 */
const api: VsCodeApi = typeof acquireVsCodeApi === 'function'
  ? acquireVsCodeApi()
  : (() => {
      let state: unknown;
      const sent: unknown[] = ((window as any).__expbenchSent = []);
      return { postMessage: (m: unknown) => sent.push(m), getState: () => state, setState: (s: unknown) => { state = s; } };
    })();

const client = new RequestClient((m) => api.postMessage(m));

export function send(m: WebviewMessage): void {
  api.postMessage(m);
}

/**
 * Asks the host to run one action of a section (a request with an id, see src/protocol/messages.ts).
 * A failure is shown in the brief's error box (a cancelled request is not); the promise settles
 * either way: true when the host did it.
 */
export async function request<K extends SectionName>(section: K, call: SectionAction<K>, opts: { signal?: AbortSignal } = {}): Promise<boolean> {
  try {
    await client.request(section, call, opts);
    return true;
  } catch (e) {
    if (!(e instanceof RequestError && e.code === CANCELLED)) showError(e instanceof Error ? e.message : String(e));
    return false;
  }
}

/** Settles the request a host reply answers. */
export function receiveReply(r: Reply): void {
  client.receive(r);
}

export function saveUiState(s: WebviewUiState): void {
  api.setState(s);
}

export function loadUiState(): Partial<WebviewUiState> | undefined {
  return api.getState() as Partial<WebviewUiState> | undefined;
}
