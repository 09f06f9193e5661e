import { holdClosedOutput } from './output';

/** The signals that ask a command to stop: Ctrl-C, `kill` / systemd / CI / `timeout`, a closed terminal. */
export const STOP_SIGNALS = ['SIGINT', 'SIGTERM', 'SIGHUP'] as const;
export type StopSignal = (typeof STOP_SIGNALS)[number];

const SIGNAL_NUMBER: Record<StopSignal, number> = { SIGHUP: 1, SIGINT: 2, SIGTERM: 15 };

/**
 * Calls `stop(sig)` on each SIGINT, SIGTERM and SIGHUP until disposed, where node's default for
 * SIGTERM and SIGHUP ends the process at once like kill -9 (a container left running, a record
 * left `running`). After a SIGHUP (the terminal is gone) output errors no longer end the process
 * (holdClosedOutput), so the cleanup finishes. Install it before the command starts anything it
 * must stop: a signal that comes earlier gets node's default.
 * @param stop called once per signal, the repeats included (the caller decides what a second one does)
 */
export function onStopSignals(stop: (signal: StopSignal) => void): { dispose(): void } {
  const handlers = new Map<StopSignal, () => void>();
  for (const sig of STOP_SIGNALS) {
    const h = () => {
      if (sig === 'SIGHUP') holdClosedOutput();
      stop(sig);
    };
    handlers.set(sig, h);
    process.on(sig, h);
  }
  return { dispose: () => { for (const [sig, h] of handlers) process.removeListener(sig, h); } };
}

/**
 * Makes SIGINT, SIGTERM and SIGHUP cancel a long command the same clean way (its `signal` aborts:
 * the container is stopped and removed, the record or the session saved, exit 1 with the core's
 * message), through {@link onStopSignals}. `say` is told which signal came (a line on stderr). A
 * second stop signal ends the process at once with 128 + its number, as a shell expects, saying
 * that the next run repairs what is left. Call `dispose()` when the command ends.
 */
export function cancelOnStopSignals(say: (signal: StopSignal) => string): { signal: AbortSignal; dispose(): void } {
  const ac = new AbortController();
  const handlers = onStopSignals((sig) => {
    if (ac.signal.aborted) {
      process.stderr.write(`expbench: ${sig} again: stopping at once; what is left (a container, a running record) is repaired by the next run\n`);
      process.exit(128 + SIGNAL_NUMBER[sig]);
    }
    process.stderr.write(`expbench: ${say(sig)}\n`);
    ac.abort();
  });
  return { signal: ac.signal, dispose: () => handlers.dispose() };
}

/**
 * For a command that serves until it is told to stop (`baseline serve`, `campaign serve`): from
 * the call on, the first stop signal aborts `signal` (a start-up still under way stops early) and
 * resolves `stopped`; later ones only print `stillStopping`, so a second Ctrl-C while the
 * containers stop does not leave one running.
 * @param stopping the line printed at the first signal
 * @param stillStopping the line printed at each later one
 */
export function serveUntilStopped(stopping: string, stillStopping: string): { signal: AbortSignal; stopped: Promise<StopSignal>; dispose(): void } {
  const ac = new AbortController();
  let done!: (sig: StopSignal) => void;
  const stopped = new Promise<StopSignal>((r) => { done = r; });
  const handlers = onStopSignals((sig) => {
    if (ac.signal.aborted) { process.stderr.write(`expbench: ${stillStopping}\n`); return; }
    process.stderr.write(`expbench: ${stopping}\n`);
    ac.abort();
    done(sig);
  });
  return { signal: ac.signal, stopped, dispose: () => handlers.dispose() };
}
