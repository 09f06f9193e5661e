import { holdClosedOutput } from './output';

/** The signals that ask a command to stop: Ctrl-C, `kill` / systemd / CI / `timeout`, a closed terminal. */
export const STOP_SIGNALS = ['SIGINT', 'SIGTERM', 'SIGHUP'] as const;
export type StopSignal = (typeof STOP_SIGNALS)[number];

const SIGNAL_NUMBER: Record<StopSignal, number> = { SIGHUP: 1, SIGINT: 2, SIGTERM: 15 };

/**
 * Makes SIGINT, SIGTERM and SIGHUP cancel a long command the same clean way (its `signal` aborts:
 * the container is stopped and removed, the record or the session saved, exit 1 with the core's
 * message), where SIGTERM and SIGHUP used to end the process at once like kill -9. `say` is told
 * which signal came (a line on stderr). A second stop signal ends the process at once with
 * 128 + its number, as a shell expects, saying that the next run repairs what is left. After a
 * SIGHUP (the terminal is gone) output errors no longer end the process, so the cleanup finishes.
 * Call `dispose()` when the command ends.
 */
export function cancelOnStopSignals(say: (signal: StopSignal) => string): { signal: AbortSignal; dispose(): void } {
  const ac = new AbortController();
  const handlers = new Map<StopSignal, () => void>();
  for (const sig of STOP_SIGNALS) {
    const h = () => {
      if (ac.signal.aborted) {
        process.stderr.write(`expbench: ${sig} again: stopping at once; what is left (a container, a running record) is repaired by the next run\n`);
        process.exit(128 + SIGNAL_NUMBER[sig]);
      }
      if (sig === 'SIGHUP') holdClosedOutput();
      process.stderr.write(`expbench: ${say(sig)}\n`);
      ac.abort();
    };
    handlers.set(sig, h);
    process.on(sig, h);
  }
  return {
    signal: ac.signal,
    dispose: () => { for (const [sig, h] of handlers) process.removeListener(sig, h); },
  };
}
