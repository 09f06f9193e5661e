import * as vscode from 'vscode';
import { setLogSink } from '../core/log';

/**
 * Routes the core's one logger (src/core/log.ts) to a `LogOutputChannel` named "EXP-Bench".
 * Returns the channel; disposing it restores the previous sink.
 */
export function createLogChannel(): vscode.LogOutputChannel & { dispose(): void } {
  const channel = vscode.window.createOutputChannel('EXP-Bench', { log: true });
  shown = channel;
  const restore = setLogSink((level, component, message) => channel[level](`[${component}] ${message}`));
  const dispose = channel.dispose.bind(channel);
  channel.dispose = () => { restore(); dispose(); };
  return channel;
}

let shown: vscode.LogOutputChannel | undefined;

/** Reveals the "EXP-Bench" log channel (the notifications' "Show Log" button). */
export function showLog(): void {
  shown?.show(true);
}
