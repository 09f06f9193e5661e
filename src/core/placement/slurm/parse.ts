import type { PlacementEnd, PlacementPhase } from '../types';

/**
 * Pure readers of what Slurm's clients print (Slurm 22.05 and later: `squeue -o`, `sacct -P`,
 * `sinfo -o`), and the mapping of Slurm's job states onto the placement's phases and ends
 * (docs/placement.md). Sources: the JOB STATE CODES of squeue(1) and sacct(1), TIME FORMAT of
 * sbatch(1) `--time`, and `Gres` of slurm.conf(5).
 */

/** A job state as the placement reads it. */
export interface SlurmStateWords {
  phase: PlacementPhase;
  end?: PlacementEnd;
  /** Said for states that the phase alone does not tell (`SUSPENDED`, `OUT_OF_MEMORY`, `REQUEUED`). */
  note?: string;
}

/**
 * Slurm's job state (`PENDING`, `RUNNING`, `CANCELLED by 0`, `TIMEOUT`…; long names as squeue
 * `%T` and sacct `State` print them) onto the placement's phase and end. Unknown states are
 * `running` when they are not final by Slurm's list, so that nothing is requeued on a word this
 * code does not know.
 */
export function slurmState(state: string): SlurmStateWords {
  const s = state.trim().split(/\s/)[0].toUpperCase().replace(/\+$/, '');
  switch (s) {
    case 'PENDING': return { phase: 'pending' };
    case 'REQUEUED': case 'REQUEUE_HOLD': case 'REQUEUE_FED': case 'RESV_DEL_HOLD': return { phase: 'pending', note: s };
    case 'SUSPENDED': case 'STOPPED': return { phase: 'pending', note: s };
    case 'RUNNING': case 'CONFIGURING': case 'COMPLETING': case 'RESIZING': case 'SIGNALING': case 'STAGE_OUT': return { phase: 'running' };
    case 'COMPLETED': case 'FAILED': case 'SPECIAL_EXIT': return { phase: 'ended', end: 'exited' };
    case 'OUT_OF_MEMORY': return { phase: 'ended', end: 'exited', note: 'OUT_OF_MEMORY' };
    case 'CANCELLED': return { phase: 'ended', end: 'cancelled' };
    case 'TIMEOUT': case 'DEADLINE': return { phase: 'ended', end: 'timeout', ...(s === 'DEADLINE' ? { note: s } : {}) };
    case 'PREEMPTED': return { phase: 'ended', end: 'preempted' };
    case 'NODE_FAIL': case 'BOOT_FAIL': return { phase: 'ended', end: 'node_fail', ...(s === 'BOOT_FAIL' ? { note: s } : {}) };
    case 'REVOKED': return { phase: 'ended', end: 'lost', note: 'REVOKED (the job runs on another cluster of a federation)' };
    default: return { phase: 'running', note: s };
  }
}

/** One line of squeue ({@link SQUEUE_FORMAT}) or of sacct (`JobID|State|ExitCode|NodeList|Start|End|Reason`). */
export interface SlurmJobLine {
  /** `123_4` for an array element, `123` for a plain job, `123_[5-9%2]` for array elements sacct has not split yet. */
  id: string;
  state: string;
  reason?: string;
  node?: string;
  start?: string;
  end?: string;
  /** The exit code of the batch script, and the signal that ended it (sacct's `ExitCode` `code:signal`). */
  exitCode?: number;
  signal?: number;
}

const none = (v: string | undefined): string | undefined => {
  const t = v?.trim();
  return !t || /^(n\/a|none|unknown|\(null\)|None assigned)$/i.test(t) ? undefined : t;
};

/**
 * What the placement asks squeue for (`squeue -h -r -t all -O …`): id, state, reason, nodes, start
 * time, the exit status and the end time, each field followed by `|` and never padded or cut (a
 * field with a suffix and no size, squeue(1) `--Format`). The exit status is the raw wait status
 * (`768` for exit code 3, `9` for SIGKILL): the controller knows how a job ended before accounting
 * does. The end time of a job not ended is its expected end, and is not read.
 */
export const SQUEUE_FORMAT = 'JobArrayID:|,State:|,Reason:|,NodeList:|,StartTime:|,exit_code:|,EndTime:';

/**
 * Parses squeue's lines of {@link SQUEUE_FORMAT} (or of `-o '%i|%T|%r|%N|%S'`, without exit
 * status and end): id, state, reason, nodes, start time; for an ended job its end time and the
 * exit code and signal from the wait status (`status >> 8`, `status & 0x7f`: wait(2)).
 */
export function parseSqueue(out: string): SlurmJobLine[] {
  const lines: SlurmJobLine[] = [];
  for (const line of out.split('\n')) {
    if (!line.trim()) continue;
    const [id, state, reason, node, start, status, end] = line.split('|');
    if (!id || !state) continue;
    const raw = /^\d{1,10}$/.test(status?.trim() ?? '') ? Number(status.trim()) : undefined;
    const ended = slurmState(state).phase === 'ended';
    lines.push(compact({
      id: id.trim(), state: state.trim(), reason: none(reason), node: none(node), start: isoOf(start),
      ...(ended ? { end: isoOf(end) } : {}),
      ...(ended && raw !== undefined ? { exitCode: (raw >> 8) & 0xff, signal: raw & 0x7f } : {}),
    }));
  }
  return lines;
}

/** Parses `sacct -n -X -P -o JobID,State,ExitCode,NodeList,Start,End,Reason`. */
export function parseSacct(out: string): SlurmJobLine[] {
  const lines: SlurmJobLine[] = [];
  for (const line of out.split('\n')) {
    if (!line.trim()) continue;
    const [id, state, exit, node, start, end, reason] = line.split('|');
    if (!id || !state) continue;
    const m = /^(\d+):(\d+)$/.exec(exit?.trim() ?? '');
    lines.push(compact({
      id: id.trim(), state: state.trim(), node: none(node), start: isoOf(start), end: isoOf(end), reason: none(reason),
      ...(m ? { exitCode: Number(m[1]), signal: Number(m[2]) } : {}),
    }));
  }
  return lines;
}

/** `o` without its undefined fields. */
function compact<T extends object>(o: T): T {
  return Object.fromEntries(Object.entries(o).filter(([, v]) => v !== undefined)) as T;
}

/** Slurm's local time `2026-12-01T23:53:34` as ISO 8601 (`undefined` for `Unknown`, `N/A`, `None`). */
export function isoOf(t: string | undefined): string | undefined {
  const v = none(t);
  if (!v) return undefined;
  const ms = Date.parse(v);
  return Number.isNaN(ms) ? undefined : new Date(ms).toISOString();
}

/**
 * Whether an array job line names element `index`: `123_4`; a range sacct keeps unsplit,
 * `123_[0-3,7%2]`; or the array's own record `123`, which stands for elements never split off
 * (squeue prints an array cancelled before any element started so).
 */
export function lineHasElement(id: string, arrayJob: string, index: number): boolean {
  if (id === `${arrayJob}_${index}` || id === arrayJob) return true;
  const m = /^(\d+)_\[([^\]]*)\]$/.exec(id);
  if (!m || m[1] !== arrayJob) return false;
  const spec = m[2].split('%')[0];
  for (const part of spec.split(',')) {
    const r = /^(\d+)(?:-(\d+))?(?::(\d+))?$/.exec(part.trim());
    if (!r) continue;
    const lo = Number(r[1]);
    const hi = r[2] === undefined ? lo : Number(r[2]);
    const step = r[3] === undefined ? 1 : Number(r[3]);
    if (index >= lo && index <= hi && (index - lo) % step === 0) return true;
  }
  return false;
}

/**
 * A Slurm duration in seconds, in any form `--time` takes and sinfo prints: `minutes`,
 * `minutes:seconds`, `hours:minutes:seconds`, `days-hours`, `days-hours:minutes`,
 * `days-hours:minutes:seconds`; `infinite`/`UNLIMITED` → undefined (no limit).
 * @returns seconds, or undefined for no limit; NaN for text that is none of these
 */
export function parseSlurmTime(t: string): number | undefined {
  const v = t.trim();
  if (/^(infinite|unlimited)$/i.test(v)) return undefined;
  const d = /^(\d+)-(\d+)(?::(\d+))?(?::(\d+))?$/.exec(v);
  if (d) return Number(d[1]) * 86400 + Number(d[2]) * 3600 + Number(d[3] ?? 0) * 60 + Number(d[4] ?? 0);
  const parts = v.split(':');
  if (!parts.every((p) => /^\d+$/.test(p)) || parts.length > 3) return NaN;
  const n = parts.map(Number);
  if (n.length === 1) return n[0] * 60;
  if (n.length === 2) return n[0] * 60 + n[1];
  return n[0] * 3600 + n[1] * 60 + n[2];
}

/** `--time` for a limit in seconds: whole minutes, rounded up, at least 1 (`90` → `2`). */
export function slurmMinutes(seconds: number): number {
  return Math.max(1, Math.ceil(seconds / 60));
}

/**
 * The GPUs a node's `Gres` declares (sinfo `%G`): the counts of every `gpu` entry, typed or not,
 * `gpu:2`, `gpu:a100:4(S:0-1)`, `gpu:tesla:2,mps:200`; 0 for `(null)`.
 */
export function gpusOfGres(gres: string): number {
  let n = 0;
  for (const entry of topLevelEntries(gres)) {
    const m = /^gpu(?::[^:(]+)?:(\d+)/.exec(entry.trim());
    if (m) n += Number(m[1]);
  }
  return n;
}

/** `a,b(S:0,1),c` → `a`, `b(S:0,1)`, `c`: split at the commas outside parentheses (one pass, no regex). */
function topLevelEntries(s: string): string[] {
  const out: string[] = [];
  let depth = 0;
  let from = 0;
  for (let i = 0; i < s.length; i++) {
    if (s[i] === '(') depth++;
    else if (s[i] === ')') depth = Math.max(0, depth - 1);
    else if (s[i] === ',' && depth === 0) { out.push(s.slice(from, i)); from = i + 1; }
  }
  out.push(s.slice(from));
  return out;
}

/** One node line of `sinfo -h -N -o '%N|%P|%c|%m|%G|%l|%t'`. */
export interface SinfoNode {
  node: string;
  /** The partition, without the default's `*`. */
  partition: string;
  isDefault: boolean;
  cpus: number;
  memoryMiB: number;
  gpus: number;
  /** The partition's MaxTime, seconds; undefined: no limit. */
  maxTimeSeconds?: number;
  state: string;
}

/** Parses `sinfo -h -N -o '%N|%P|%c|%m|%G|%l|%t'`; lines it cannot read are left out. */
export function parseSinfo(out: string): SinfoNode[] {
  const nodes: SinfoNode[] = [];
  for (const line of out.split('\n')) {
    const f = line.split('|');
    if (f.length < 7) continue;
    const [node, partition, cpus, mem, gres, limit, state] = f.map((x) => x.trim());
    const c = Number(cpus);
    const m = Number(mem.replace(/\+$/, ''));
    if (!node || !Number.isFinite(c) || !Number.isFinite(m)) continue;
    const t = parseSlurmTime(limit);
    nodes.push({
      node, partition: partition.replace(/\*$/, ''), isDefault: partition.endsWith('*'), cpus: c, memoryMiB: m, gpus: gpusOfGres(gres),
      ...(t !== undefined && !Number.isNaN(t) ? { maxTimeSeconds: t } : {}), state,
    });
  }
  return nodes;
}

/**
 * The line of element `index` of array `arrayJob`: its own (`123_4`) first, else one that stands
 * for elements never split off (a range `123_[4-9%2]`, the array's record `123`), only when that
 * line never ran on a node (Slurm gives a job cancelled while pending a start time, not a node): a
 * line that ran is one element's run (accounting may name it `123` before it knows its index),
 * never another element's.
 */
export function lineOf(lines: Iterable<SlurmJobLine>, arrayJob: string, index: number): SlurmJobLine | undefined {
  let cover: SlurmJobLine | undefined;
  for (const l of lines) {
    if (l.id === `${arrayJob}_${index}`) return l;
    if (!cover && !l.node && lineHasElement(l.id, arrayJob, index)) cover = l;
  }
  return cover;
}
