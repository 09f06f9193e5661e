import type { WebviewMessage, WebviewUiState } from '../../src/protocol/messages';

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

export function send(m: WebviewMessage): void {
  api.postMessage(m);
}

export function saveUiState(s: WebviewUiState): void {
  api.setState(s);
}

export function loadUiState(): Partial<WebviewUiState> | undefined {
  return api.getState() as Partial<WebviewUiState> | undefined;
}
