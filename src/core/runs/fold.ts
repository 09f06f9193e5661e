import type { PlacementRef } from '../placement/types';
import type { UnitPlan } from './plan';
import type { RunSetRecord, UnitOutcome } from './state';

/** A unit's status (docs/runs.md "A unit's status"). */
export type UnitStatus = 'pending' | 'running' | 'done' | 'failed' | 'cancelled';
export const UNIT_STATUSES: readonly UnitStatus[] = ['pending', 'running', 'done', 'failed', 'cancelled'];

/** One unit as the state says it stands. */
export interface UnitView extends UnitPlan {
  status: UnitStatus;
  /** Why a pending unit waits, or the last word on a finished one, for a person. */
  detail?: string;
  /** The try under way or last made (0: never placed). */
  try: number;
  ref?: PlacementRef;
  /** Set while the unit cannot run on this placement at all (`needs 8 GPUs, 0 here`). */
  waiting?: string;
  /** Harness-error retries made, and requeues after interruptions. */
  retries: number;
  requeues: number;
  /** ISO time before which a retry waits. */
  retryAfter?: string;
  /** ISO times of the current try: placed, started; and when the unit finished. */
  placedAt?: string;
  startedAt?: string;
  endedAt?: string;
  /** Live figures from its session (`unit.progress`). */
  phase?: string;
  steps?: number;
  tokens?: number;
  costUsd?: number | null;
  workingMs?: number;
  outcome?: UnitOutcome;
  message?: string;
  /** The log of the last try, relative to the run set's folder. */
  log?: string;
  rebuilt?: boolean;
}

/** A run set as its state says it stands. */
export interface RunSetView {
  id: string;
  name: string;
  spec: Record<string, unknown>;
  specFile: string;
  createdAt: string;
  units: UnitView[];
  byKey: Map<string, UnitView>;
  /** The last orchestrator that took the run set, and whether it recorded its end. */
  orchestrator?: { owner: string; command: string; at: string; finished: boolean; exitCode?: number };
  cancelled: boolean;
  counts: Record<UnitStatus, number>;
  /** Records of units the state never planned (a damaged state), counted. */
  strays: number;
}

const FINAL: ReadonlySet<UnitStatus> = new Set(['done', 'failed']);

/** Whether a status is final (`done` or `failed`: nothing more will run). */
export function isFinal(s: UnitStatus): boolean {
  return FINAL.has(s);
}

/**
 * Folds the state's records (in order) into the run set as it stands. Pure. Undefined when the
 * records hold no `runset.created` (not a run set's state).
 */
export function foldRunSet(records: readonly RunSetRecord[]): RunSetView | undefined {
  let view: RunSetView | undefined;
  for (const r of records) {
    if (r.type === 'runset.created') {
      view ??= { id: r.id, name: r.name, spec: r.spec, specFile: r.specFile, createdAt: r.at, units: [], byKey: new Map(), cancelled: false, counts: zeroCounts(), strays: 0 };
      continue;
    }
    if (!view) continue;
    apply(view, r);
  }
  if (view) view.counts = countOf(view.units);
  return view;
}

/** Applies one more record to a folded view (the board follows the state this way). */
export function applyRecord(view: RunSetView, r: RunSetRecord): void {
  apply(view, r);
  view.counts = countOf(view.units);
}

function apply(view: RunSetView, r: RunSetRecord): void {
  switch (r.type) {
    case 'runset.created': return;
    case 'unit.planned': {
      if (view.byKey.has(r.unit)) return;
      const u: UnitView = {
        unit: r.unit, name: r.name, task: r.task, attempt: r.attempt, actor: r.actor, resources: r.resources, keyParts: r.keyParts,
        dir: r.dir, source: r.source, commit: r.commit, image: r.image, status: 'pending', try: 0, retries: 0, requeues: 0, detail: 'not started',
      };
      view.units.push(u);
      view.byKey.set(r.unit, u);
      return;
    }
    case 'orchestrator.started':
      view.orchestrator = { owner: r.owner, command: r.command, at: r.at, finished: false };
      view.cancelled = false; // a run after a cancel goes on with the units
      // Each orchestrator weighs the units against its own placement's capacity again.
      for (const u of view.units) if (u.waiting) { u.waiting = undefined; if (u.status === 'pending') u.detail = 'not started'; }
      return;
    case 'orchestrator.finished': if (view.orchestrator) { view.orchestrator.finished = true; view.orchestrator.exitCode = r.exitCode; } return;
    case 'orchestrator.reaped': return;
    case 'runset.cancelled': view.cancelled = true; return;
    default: break;
  }
  const u = view.byKey.get(r.unit);
  if (!u) { view.strays++; return; }
  switch (r.type) {
    case 'unit.waiting':
      if (isFinal(u.status)) return;
      u.status = 'pending'; u.waiting = r.reason; u.detail = `waiting: ${r.reason}`;
      return;
    case 'unit.placed':
      u.status = 'pending'; u.try = r.try; u.ref = r.ref; u.placedAt = r.at; u.startedAt = undefined;
      u.waiting = undefined; u.retryAfter = undefined; u.detail = 'queued'; u.log = relLog(u.name, r.try);
      return;
    case 'unit.pending':
      if (u.status !== 'pending' || r.try !== u.try) return;
      u.detail = `pending: ${r.reason}`;
      return;
    case 'unit.started':
      if (isFinal(u.status)) return;
      u.status = 'running'; u.try = r.try; u.ref = r.ref; u.startedAt = r.at; u.detail = r.host ? `on ${r.host}` : undefined;
      return;
    case 'unit.progress':
      if (r.phase !== undefined) u.phase = r.phase;
      if (r.steps !== undefined) u.steps = r.steps;
      if (r.tokens !== undefined) u.tokens = r.tokens;
      if (r.costUsd !== undefined) u.costUsd = r.costUsd;
      if (r.workingMs !== undefined) u.workingMs = r.workingMs;
      return;
    case 'unit.retry':
      u.status = 'pending'; u.retries++; u.retryAfter = r.after; u.ref = undefined; u.startedAt = undefined;
      u.detail = `retry ${r.try + 1} after ${r.after.slice(11, 19)}: ${r.reason}`; u.message = r.reason;
      return;
    case 'unit.requeued':
      u.status = 'pending'; u.ref = undefined; u.startedAt = undefined;
      if (r.end !== 'unstarted') u.requeues++;
      u.detail = `requeued after try ${r.try} (${r.end}${r.reason ? `: ${r.reason}` : ''})`;
      return;
    case 'unit.finished':
      u.status = r.status; u.outcome = r.outcome; u.message = r.message; u.endedAt = r.at; u.ref = undefined;
      if (r.try > 0) u.try = r.try;
      if (r.log) u.log = r.log;
      if (r.rebuilt) u.rebuilt = true;
      u.detail = r.message;
      if (r.outcome?.workingMs !== undefined) u.workingMs = r.outcome.workingMs;
      if (r.outcome?.tokens !== undefined) u.tokens = r.outcome.tokens;
      if (r.outcome?.costUsd !== undefined) u.costUsd = r.outcome.costUsd;
      return;
    case 'unit.cancelled':
      if (isFinal(u.status)) return;
      u.status = 'cancelled'; u.ref = undefined; u.detail = 'cancelled: `runs resume` continues it';
      return;
  }
}

function relLog(name: string, attemptTry: number): string {
  return `exec/${name}/try-${attemptTry}.log`;
}

function zeroCounts(): Record<UnitStatus, number> {
  return { pending: 0, running: 0, done: 0, failed: 0, cancelled: 0 };
}

function countOf(units: readonly UnitView[]): Record<UnitStatus, number> {
  const c = zeroCounts();
  for (const u of units) c[u.status]++;
  return c;
}
