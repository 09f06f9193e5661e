import * as vscode from 'vscode';
import { abortOnCancel } from './cancellation';

/**
 * Runs `task` under a cancellable progress notification titled `title`: `report(message)` shows
 * the current step after the title, and the notification's Cancel button aborts `signal` (the
 * task decides how to stop; long core operations throw ExpBenchError CANCELLED).
 * @returns what `task` returns
 * @throws what `task` throws
 */
export function withCancellableProgress<T>(title: string, task: (report: (message: string) => void, signal: AbortSignal) => Promise<T>): Promise<T> {
  return Promise.resolve(vscode.window.withProgress({ location: vscode.ProgressLocation.Notification, title, cancellable: true }, async (progress, token) => {
    const bridge = abortOnCancel(token);
    try {
      return await task((message) => progress.report({ message }), bridge.signal);
    } finally {
      bridge.dispose();
    }
  }));
}
