import { isExpBenchError } from '../core/errors';

/** Prints `value` as one JSON document on stdout. */
export function printJson(value: unknown): void {
  process.stdout.write(JSON.stringify(value, null, 2) + '\n');
}

/** Prints `message` on stderr as `expbench: …` and sets the exit code. */
export function fail(message: string, code = 1): void {
  console.error(`expbench: ${message}`);
  process.exitCode = code;
}

/** Turns any thrown value into a message and exit code 1 (ExpBenchErrors already name their input). */
export function reportError(e: unknown): void {
  if (isExpBenchError(e)) fail(e.message, 1);
  else fail(e instanceof Error ? (e.stack ?? e.message) : String(e), 1);
}
