import { printableLines } from '../core/untrusted';
import { isExpBenchError } from '../core/errors';

/** Prints `value` as one JSON document on stdout. */
export function printJson(value: unknown): void {
  process.stdout.write(JSON.stringify(value, null, 2) + '\n');
}

/** Prints `message` on stderr as `expbench: …` and sets the exit code. */
export function fail(message: string, code = 1): void {
  // Messages quote file names and text from the solver's side: no control character reaches the terminal.
  console.error(`expbench: ${printableLines(message)}`);
  process.exitCode = code;
}

/** Turns any thrown value into a message and exit code 1 (ExpBenchErrors already name their input). */
export function reportError(e: unknown): void {
  if (isExpBenchError(e)) fail(e.message, 1);
  else fail(e instanceof Error ? (e.stack ?? e.message) : String(e), 1);
}

/**
 * Makes a closed output pipe end the command quietly, for every command (`expbench … --json | head`):
 * when the reader of stdout or stderr has gone (`EPIPE`, also `ERR_STREAM_DESTROYED` for a write
 * after it), the process exits at once with the exit code set so far (0 unless the command had
 * already set one), printing nothing: the output was not wanted any more, and what a command writes
 * to files is written before it prints. Any other error of the stream is rethrown (a real fault).
 * Installed once by `main.ts`; safe to call again.
 */
export function endQuietlyOnClosedPipe(streams: NodeJS.WriteStream[] = [process.stdout, process.stderr]): void {
  for (const s of streams) {
    if (installed.has(s)) continue;
    installed.add(s);
    s.on('error', (e: NodeJS.ErrnoException) => {
      const closed = e.code === 'EPIPE' || e.code === 'ERR_STREAM_DESTROYED';
      if (held && (closed || e.code === 'EIO')) return; // a command cleaning up after its terminal went away (signals.ts)
      if (closed) process.exit(typeof process.exitCode === 'number' ? process.exitCode : 0);
      throw e;
    });
  }
}

const installed = new WeakSet<NodeJS.WriteStream>();
let held = false;

/**
 * From now on, a closed or broken output (`EPIPE`, `EIO`: the terminal was closed, SIGHUP) no longer
 * ends the process: what it prints is lost, and the command finishes its cleanup (src/cli/signals.ts).
 */
export function holdClosedOutput(): void {
  held = true;
}
