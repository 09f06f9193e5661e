import type { TrajWebviewMessage } from '../../../src/protocol/trajectory';

interface VsCodeApi { postMessage(m: unknown): void; getState(): unknown; setState(s: unknown): void }
declare function acquireVsCodeApi(): VsCodeApi;

/**
 * The viewer's end of its protocol (src/protocol/trajectory.ts): `acquireVsCodeApi` inside VS
 * Code, else a browser stand-in that logs messages to `window.__expbenchSent` (the UI's own tests).
 */
const api: VsCodeApi = typeof acquireVsCodeApi === 'function'
  ? acquireVsCodeApi()
  : (() => {
      let state: unknown;
      const sent: unknown[] = ((window as unknown as { __expbenchSent: unknown[] }).__expbenchSent = []);
      return { postMessage: (m: unknown) => sent.push(m), getState: () => state, setState: (s: unknown) => { state = s; } };
    })();

export function send(m: TrajWebviewMessage): void {
  api.postMessage(m);
}

/** UI-only state kept across reloads of the webview: the selected step, the search, the open header panel. */
export interface ViewerUiState { step?: number; search?: string; panel?: string }

export function saveUiState(s: ViewerUiState): void { api.setState(s); }
export function loadUiState(): ViewerUiState { return (api.getState() as ViewerUiState | undefined) ?? {}; }
