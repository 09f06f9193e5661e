/**
 * Fault injection against the command line's session writers (test/unit/faults.sessions): the
 * bundled CLI (`dist/cli.js`, built by `npm run build`) is killed at seeded random moments, run
 * on a small tmpfs that fills, run on corrupted session files and run twice at once; each case
 * then looks at what is left and is classified, and the mocha run prints one line
 * `faults: N cases, H held, D degraded, L lost, C crashed`.
 *
 * Classification of one case, worst first:
 * - lost: a byte of the user's work from before the fault is gone or changed (workspace files,
 *   answers, state drafts and notes, events, verdicts);
 * - crashed: a raw stack (a line of four spaces and `at `) reached the user, a command hung past
 *   its limit or died of a signal it was not sent;
 * - degraded: the work is intact but the next command does not say what happened and what to do
 *   (a failure that does not name the file or folder at fault), or a temp file was left behind;
 * - held: none of the above.
 *
 * Nothing here imports the code under test: the same file runs against an older checkout to show
 * which cases failed before a fix.
 */
import { spawn } from 'node:child_process';
import { createHash } from 'node:crypto';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { mulberry32 } from '../../src/core/metrics/bootstrap';

export type Outcome = 'held' | 'degraded' | 'lost' | 'crashed';

/** What a case saw after its fault. */
export interface Observation {
  /** Work items that are gone or changed (empty: all there). */
  lost: string[];
  /** Why it crashed (raw stack, hang, signal), if it did. */
  crash?: string;
  /** Why the message was not enough, if it was not. */
  unclear?: string;
  /** Temp files left behind. */
  leftovers: string[];
}

const tally: Record<Outcome, number> = { held: 0, degraded: 0, lost: 0, crashed: 0 };
let registered = false;
const pending: string[] = [];

export function classify(o: Observation): Outcome {
  if (o.lost.length) return 'lost';
  if (o.crash) return 'crashed';
  if (o.unclear || o.leftovers.length) return 'degraded';
  return 'held';
}

/**
 * Records one case and returns its outcome. A case that lost data or crashed (and, with
 * `mustHold`, one that degraded) is a failure, thrown by the next {@link settle}: the cases after
 * it in the same test still run and count.
 */
export function record(name: string, o: Observation, mustHold = false): Outcome {
  const outcome = classify(o);
  tally[outcome]++;
  if (outcome === 'lost' || outcome === 'crashed' || (mustHold && outcome !== 'held')) pending.push(`${name}: ${outcome}: ${JSON.stringify(o)}`);
  else if (outcome === 'degraded') process.stdout.write(`      (degraded: ${name}: ${o.unclear ?? ''}${o.leftovers.length ? ` leftovers ${o.leftovers.join(', ')}` : ''})\n`);
  return outcome;
}

/** Throws the failures recorded since the last call (call it at the end of each test). */
export function settle(): void {
  const failed = pending.splice(0);
  if (failed.length) throw new Error(`${failed.length} case(s) failed:\n${failed.join('\n')}`);
}

/** The figures line. */
export function figures(): string {
  const n = tally.held + tally.degraded + tally.lost + tally.crashed;
  return `faults: ${n} cases, ${tally.held} held, ${tally.degraded} degraded, ${tally.lost} lost, ${tally.crashed} crashed`;
}

/** Registers (once) an `after` hook of the calling suite that prints the figures. */
export function printFiguresAtEnd(): void {
  if (registered) return;
  registered = true;
  after(() => { process.stdout.write(`${figures()}\n`); });
}

/** A raw stack frame in text. */
export function hasStack(text: string): boolean {
  return /^ {4}at /m.test(text);
}

/** A small seeded generator: the same seed gives the same kill moments (the core's mulberry32). */
export const seeded = mulberry32;

export interface CliResult { code: number | null; signal: NodeJS.Signals | null; stdout: string; stderr: string; ms: number; hung: boolean; killed: boolean }

/**
 * Runs `node <cli> args` in its own process group. `killAfterMs`: SIGKILL to the whole group
 * (git children too) after that long, as a crash would; `limitMs`: a run still going then is a
 * hang (killed, `hung: true`).
 */
export function runCli(cli: string, args: string[], o: { env?: NodeJS.ProcessEnv; killAfterMs?: number; limitMs?: number; cwd?: string } = {}): Promise<CliResult> {
  const t0 = Date.now();
  return new Promise((resolve) => {
    const child = spawn(process.execPath, [cli, ...args], { cwd: o.cwd, env: o.env ?? process.env, detached: true, stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.setEncoding('utf8').on('data', (d: string) => { stdout += d; });
    child.stderr.setEncoding('utf8').on('data', (d: string) => { stderr += d; });
    let killed = false;
    let hung = false;
    const killGroup = () => { try { process.kill(-child.pid!, 'SIGKILL'); } catch { /* gone */ } };
    const kill = o.killAfterMs === undefined ? undefined : setTimeout(() => { killed = true; killGroup(); }, o.killAfterMs);
    const limit = setTimeout(() => { hung = true; killGroup(); }, o.limitMs ?? 30_000);
    child.once('close', (code, signal) => {
      if (kill) clearTimeout(kill);
      clearTimeout(limit);
      killGroup(); // children of the group that outlive the leader
      resolve({ code, signal, stdout, stderr, ms: Date.now() - t0, hung, killed });
    });
  });
}

/** Why a finished (not deliberately killed) run counts as a crash, if it does. */
export function crashOf(r: CliResult): string | undefined {
  if (r.hung) return `hung (killed after ${r.ms} ms)`;
  if (hasStack(r.stderr) || hasStack(r.stdout)) return `raw stack: ${r.stderr.split('\n').slice(0, 3).join(' | ')}`;
  if (r.signal && !r.killed) return `died of ${r.signal}`;
  if (r.code !== null && r.code > 3) return `exit ${r.code}`;
  return undefined;
}

/**
 * Whether a failed run said what happened (an `expbench:` message naming one of `names`, the
 * file or folder at fault) and what to do (a verb of advice). Undefined when it did, or ran fine.
 */
export function unclearOf(r: CliResult, names: string[]): string | undefined {
  if (r.code === 0) return undefined;
  if (!/^expbench: /m.test(r.stderr)) return `no expbench: message (exit ${r.code}): ${r.stderr.slice(0, 200)}`;
  if (!names.some((n) => r.stderr.includes(n))) return `the message names none of ${names.join(', ')}: ${r.stderr.slice(0, 300)}`;
  if (!/(choose|move it|run the command again|free some space|prepare the task into a new folder|submit again|repair it|open it|wait for it|copy|set |pass |replace|already (submitted|given up))/i.test(r.stderr)) {
    return `the message does not say what to do: ${r.stderr.slice(0, 300)}`;
  }
  return undefined;
}

/** Paths (relative, `/`) of every entry under `dir`, depth first; `.git` folders are left out. */
export function listTree(dir: string, rel = ''): string[] {
  let names: string[];
  try { names = fs.readdirSync(path.join(dir, rel)); } catch { return []; }
  const out: string[] = [];
  for (const n of names.sort()) {
    if (n === '.git') continue;
    const r = rel ? `${rel}/${n}` : n;
    out.push(r);
    const st = fs.lstatSync(path.join(dir, r));
    if (st.isDirectory()) out.push(...listTree(dir, r));
  }
  return out;
}

/**
 * Temp files and half-done clearings left in a session folder: the durable writer's
 * (`.<name>.<pid>.<hex>.tmp`), write-file-atomic's (`<name>.<number>`), a killed clearing's or lock.
 */
export function leftovers(dir: string): string[] {
  return listTree(dir).filter(isLeftover);
}

/** True when the last part of `p` is the name of a temp file or a killed clearing's leftover (see {@link leftovers}). */
export function isLeftover(p: string): boolean {
  const b = path.posix.basename(p);
  return /^\..+\.\d+\.[0-9a-f]{8}\.tmp$/.test(b) || /\.(json|jsonl|diff|sh)\.\d+$/.test(b) || /^\.expbench-(clearing-|prepare\.lock$)/.test(b);
}

/** A snapshot of work: path → sha256 of the bytes (or `dir`, `fifo`…). */
export type Snapshot = Map<string, string>;

function kind(p: string): string {
  const st = fs.lstatSync(p);
  if (st.isFile()) return createHash('sha256').update(fs.readFileSync(p)).digest('hex');
  if (st.isDirectory()) return 'dir';
  if (st.isFIFO()) return 'fifo';
  if (st.isSymbolicLink()) return `link:${fs.readlinkSync(p)}`;
  return 'other';
}

/** Snapshot of the entries of `dir` (not `.git`) for which `keep` is true. */
export function snapshot(dir: string, keep: (rel: string) => boolean = () => true): Snapshot {
  const s: Snapshot = new Map();
  for (const rel of listTree(dir)) if (keep(rel)) s.set(rel, kind(path.join(dir, rel)));
  return s;
}

/**
 * What of `before` is not in `dir` now as it was: missing or changed entries. `appendOnly` paths
 * may have grown (their old bytes must be a prefix of the new ones); `mayChange` paths are not
 * compared (a legitimate writer replaced them), only required to exist.
 */
export function missingWork(before: Snapshot, dir: string, beforeBytes: Map<string, Buffer>, o: { appendOnly?: string[]; mayChange?: string[] } = {}): string[] {
  const lost: string[] = [];
  for (const [rel, k] of before) {
    const p = path.join(dir, rel);
    if (!fs.existsSync(p) && !isLink(p)) { lost.push(`${rel} (gone)`); continue; }
    if (o.mayChange?.includes(rel)) continue;
    if (o.appendOnly?.includes(rel) && k !== 'dir' && k !== 'fifo') {
      const old = beforeBytes.get(rel);
      const now = fs.readFileSync(p);
      if (old && !now.subarray(0, old.length).equals(old)) lost.push(`${rel} (old lines changed)`);
      continue;
    }
    if (kind(p) !== k) lost.push(`${rel} (changed)`);
  }
  return lost;
}

function isLink(p: string): boolean {
  try { return fs.lstatSync(p).isSymbolicLink(); } catch { return false; }
}

/** The bytes of the regular files listed in `rels` (for {@link missingWork}'s `appendOnly`). */
export function bytesOf(dir: string, rels: string[]): Map<string, Buffer> {
  const m = new Map<string, Buffer>();
  for (const r of rels) {
    try { if (fs.lstatSync(path.join(dir, r)).isFile()) m.set(r, fs.readFileSync(path.join(dir, r))); } catch { /* absent */ }
  }
  return m;
}
