import * as path from 'node:path';
import { ExpBenchError } from '../errors';
import type { Placement, PlacementState } from '../placement/types';
import { foldRunSet, isFinal, type RunSetView, type UnitStatus, type UnitView } from './fold';
import { RunSetLayout } from './layout';
import { readOrchestrator, type OrchestratorRecord } from './lock';
import { readRunSet, type InvalidLine } from './state';

/** One row of the board (terminal, `runs status`, VS Code). */
export interface BoardRow {
  /** The unit's key, first 12 hex digits. */
  id: string;
  unit: string;
  name: string;
  task: string;
  actor: string;
  attempt: number;
  try: number;
  status: UnitStatus;
  /** `✓` All·E✓; `✖` done and some part wrong (or not submitted); `·` done, every part known right but one not judged (the heuristic judge leaves C open); `error` failed; '' otherwise. */
  mark: '✓' | '✖' | '·' | 'error' | '';
  detail: string;
  phase: string | null;
  /** Wall-clock time of the current (or last) try, and the unit's limit, ms. */
  elapsedMs: number | null;
  limitMs: number;
  tokens: number | null;
  costUsd: number | null;
  E: boolean | null; D: boolean | null; I: boolean | null; C: boolean | null; AllE: boolean | null;
  /** The unit's session folder and its last log, absolute. */
  session: string;
  log: string | null;
  /** What the engine says of a placed unit now (`runs status` asks it), when asked. */
  engine?: string;
}

/** What {@link runSetStatus} returns. */
export interface RunSetStatus {
  dir: string;
  id: string;
  name: string;
  counts: Record<UnitStatus, number>;
  /** The orchestrator the folder names, and whether it runs (null: none now). */
  orchestrator: (OrchestratorRecord & { alive: boolean | undefined }) | null;
  /** Units recorded running or placed while no orchestrator runs: `runs resume` reaps and goes on with them. */
  orphaned: number;
  rows: BoardRow[];
  invalidLines: InvalidLine[];
}

/** The board's rows of a folded run set at time `now` (pure). */
export function boardRows(view: RunSetView, layout: RunSetLayout, now = Date.now()): BoardRow[] {
  return view.units.map((u) => rowOf(u, layout, now));
}

function rowOf(u: UnitView, layout: RunSetLayout, now: number): BoardRow {
  const o = u.outcome;
  const start = u.startedAt ? Date.parse(u.startedAt) : undefined;
  const end = u.endedAt ? Date.parse(u.endedAt) : now;
  const parts = o ? [o.E, o.D, o.I, o.C] : [];
  const done: BoardRow['mark'] = o?.AllE === true ? '✓' : o?.AllE === false || parts.includes(false) || !o?.submitted ? '✖' : '·';
  const mark: BoardRow['mark'] = u.status === 'failed' ? 'error' : u.status === 'done' ? done : '';
  return {
    id: u.unit.slice(0, 12), unit: u.unit, name: u.name, task: u.task, actor: u.actor.name, attempt: u.attempt, try: u.try,
    status: u.status, mark, detail: u.detail ?? '', phase: u.phase ?? null,
    elapsedMs: start !== undefined && (u.status === 'running' || isFinal(u.status)) ? Math.max(0, end - start) : null,
    limitMs: u.resources.timeSeconds * 1000,
    tokens: u.tokens ?? null, costUsd: u.costUsd ?? null,
    E: o?.E ?? null, D: o?.D ?? null, I: o?.I ?? null, C: o?.C ?? null, AllE: o?.AllE ?? null,
    session: layout.session(u.dir), log: u.log ? path.join(layout.root, u.log) : null,
  };
}

/**
 * The run set in `dir` as it stands: the state folded, the orchestrator the folder names (alive or
 * not), and with `placement`, each placed unit's state as its engine says now (so a restarted
 * status sees the queued and running units of a live run). Read only.
 * @throws ExpBenchError BAD_INPUT when `dir` holds no run set
 */
export async function runSetStatus(dir: string, opts: { placement?: Placement; now?: number } = {}): Promise<RunSetStatus> {
  const layout = new RunSetLayout(dir);
  const read = await readRunSet(layout.state);
  const view = read ? foldRunSet(read.records) : undefined;
  if (!view || !read) throw new ExpBenchError('BAD_INPUT', layout.root, 'not a run set (no runset.jsonl with a runset.created record)');
  const orch = await readOrchestrator(layout.orchestrator);
  const live = orch?.alive !== false && orch !== undefined;
  const rows = boardRows(view, layout, opts.now);
  const placed = view.units.map((u, i) => ({ u, i })).filter(({ u }) => !isFinal(u.status) && u.ref);
  if (opts.placement && placed.length) {
    const states = await opts.placement.poll(placed.map(({ u }) => u.ref!));
    placed.forEach(({ i }, k) => { rows[i].engine = engineWords(states[k]); });
  }
  return {
    dir: layout.root, id: view.id, name: view.name, counts: view.counts,
    orchestrator: orch ? { ...orch.record, alive: orch.alive } : null,
    orphaned: live ? 0 : placed.length,
    rows, invalidLines: read.invalid,
  };
}

/** A placement state in words: `running on host`, `pending: Resources`, `ended: lost (…)`. */
export function engineWords(s: PlacementState): string {
  if (s.phase === 'running') return `running${s.host ? ` on ${s.host}` : ''}`;
  if (s.phase === 'ended') return `ended: ${s.end ?? 'unknown'}${s.exitCode !== undefined && s.exitCode !== null ? ` (exit ${s.exitCode})` : ''}${s.reason ? ` (${s.reason})` : ''}`;
  return `${s.phase}${s.reason ? `: ${s.reason}` : ''}`;
}
