/**
 * The tally of the verifier's and the task loader's fault cases (test/unit/faults.verify and
 * faults.tasks): each case reports what it observed after the fault, is classified, and the mocha
 * run prints one line `faults(verify/tasks): N cases, H held, D degraded, L lost, C crashed`.
 *
 * Classification of one case, worst first:
 * - lost: a byte of the user's work from before the fault is gone or changed;
 * - crashed: a raw stack (a line starting with four spaces and `at `) reached the user, a command
 *   hung past its limit, or an exception escaped where a result or an ExpBenchError was due;
 * - degraded: the work is intact but the next command does not say what happened and what to do,
 *   or a container or temp file was left behind;
 * - held: none of the above.
 */
import * as assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';

export type Outcome = 'held' | 'degraded' | 'lost' | 'crashed';

export interface Observation {
  /** Every byte of the user's work from before the fault is still there. */
  workIntact: boolean;
  /** No raw stack, no hang, no escaped exception. */
  noCrash: boolean;
  /** The next command said what happened and what to do. */
  says: boolean;
  /** No container of the case's sessions and no temp file of the project is left. */
  clean: boolean;
  /** What was seen, for the failure message. */
  detail?: string;
}

const tally: Record<Outcome, number> = { held: 0, degraded: 0, lost: 0, crashed: 0 };
let printed = false;

export function classify(o: Observation): Outcome {
  if (!o.workIntact) return 'lost';
  if (!o.noCrash) return 'crashed';
  if (!o.says || !o.clean) return 'degraded';
  return 'held';
}

/** Records one case and fails the test unless it held. */
export function expectHeld(name: string, o: Observation): void {
  const outcome = classify(o);
  tally[outcome]++;
  assert.equal(outcome, 'held', `${name}: ${outcome} (${JSON.stringify(o)})`);
}

/** The figures line. */
export function figures(): string {
  const n = tally.held + tally.degraded + tally.lost + tally.crashed;
  return `faults(verify/tasks): ${n} cases, ${tally.held} held, ${tally.degraded} degraded, ${tally.lost} lost, ${tally.crashed} crashed`;
}

/** Registers (once per mocha process) a root `after` hook that prints the figures and removes the cases' temp folders. */
export function printFiguresAtEnd(): void {
  if (printed) return;
  printed = true;
  after(() => {
    process.stdout.write(`${figures()}\n`);
    for (const d of caseDirs.splice(0)) fs.rmSync(d, { recursive: true, force: true });
  });
}

/** A raw stack frame in text (`    at f (file:1:2)`). */
export function hasStack(text: string): boolean {
  return /^\s{4}at /m.test(text);
}

const REPO = path.resolve(__dirname, '..', '..', '..');
export const CLI = path.join(REPO, 'out', 'src', 'cli', 'main.js');

/** Runs the compiled CLI; `timedOut` when it did not end within `ms` (it is killed then). */
export function cli(args: string[], o: { ms?: number; env?: NodeJS.ProcessEnv } = {}): Promise<{ code: number; stdout: string; stderr: string; timedOut: boolean; ms: number }> {
  const t0 = Date.now();
  return new Promise((resolve) => {
    execFile(process.execPath, [CLI, ...args], { cwd: REPO, maxBuffer: 64 * 1024 * 1024, timeout: o.ms ?? 60_000, killSignal: 'SIGKILL', env: { ...process.env, ...o.env } },
      (err, stdout, stderr) => {
        const timedOut = err !== null && (err as { killed?: boolean }).killed === true;
        resolve({ code: err ? (typeof err.code === 'number' ? err.code : 1) : 0, stdout, stderr, timedOut, ms: Date.now() - t0 });
      });
  });
}

const caseDirs: string[] = [];

/**
 * A fresh temp folder for one case's processes (pass it as TMPDIR: what is left in it was left by
 * them); removed at the end of the run ({@link printFiguresAtEnd}).
 */
export function caseTmp(tag: string): string {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), `expbench-faults-${tag}-`));
  caseDirs.push(dir);
  return dir;
}

/** Entries of `dir` (a case's TMPDIR) whose name is one the project's temp files have. */
export function projectTempFiles(dir: string): string[] {
  return fs.readdirSync(dir).filter((n) => n.startsWith('expbench-'));
}
