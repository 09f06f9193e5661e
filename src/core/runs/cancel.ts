import { existsSync, promises as fsp } from 'node:fs';
import { ExpBenchError } from '../errors';
import { createPlacement } from '../placement/spec';
import type { Placement } from '../placement/types';
import { writeJsonAtomic } from '../util/fs';
import { foldRunSet, isFinal } from './fold';
import { RunSetLayout } from './layout';
import { readOrchestrator, takeRunSet } from './lock';
import { RunSetSpecSchema } from './spec';
import { readRunSet, RunSetLog } from './state';

/** What {@link cancelRunSet} did. */
export interface CancelResult {
  /** `asked`: the live orchestrator was asked and stopped its units; `done`: no orchestrator ran, this call stopped them. */
  how: 'asked' | 'done';
  /** Units recorded cancelled. */
  cancelled: number;
  /** Containers removed (by label), when this call stopped the units. */
  containers: number;
}

/**
 * Cancels a run set (`runs cancel DIR`): when an orchestrator runs it, writes `cancel.json` and
 * waits until that orchestrator has stopped the units (SIGTERM, the agent records `agent stopped:
 * cancelled`) and ended; when none runs, takes the run set and stops what the dead one left (the
 * placement's `cancel`: the recorded processes or jobs, then the run set's containers by label),
 * recording each unit that was not finished as `cancelled`. `runs resume` goes on with them.
 * @throws ExpBenchError BAD_INPUT when `dir` holds no run set, or the orchestrator does not stop within `waitMs`
 */
export async function cancelRunSet(dir: string, o: { placement?: Placement; waitMs?: number; graceMs?: number } = {}): Promise<CancelResult> {
  const layout = new RunSetLayout(dir);
  const read = await readRunSet(layout.state);
  const view = read ? foldRunSet(read.records) : undefined;
  if (!view) throw new ExpBenchError('BAD_INPUT', layout.root, 'not a run set (no runset.jsonl)');
  const orch = await readOrchestrator(layout.orchestrator);
  if (orch && orch.alive !== false) {
    await writeJsonAtomic(layout.cancel, { at: new Date().toISOString(), by: process.pid });
    const until = Date.now() + (o.waitMs ?? 120_000);
    while (existsSync(layout.orchestrator) && Date.now() < until) {
      const now = await readOrchestrator(layout.orchestrator);
      if (!now || now.alive === false || now.record.owner !== orch.record.owner) break;
      await new Promise((r) => setTimeout(r, 200));
    }
    if ((await readOrchestrator(layout.orchestrator))?.record.owner === orch.record.owner) {
      throw new ExpBenchError('BAD_INPUT', layout.root, `asked process ${orch.record.pid} to cancel (cancel.json), but it has not ended after ${Math.round((o.waitMs ?? 120_000) / 1000)} s`);
    }
    const after = foldRunSet((await readRunSet(layout.state))!.records)!;
    return { how: 'asked', cancelled: after.counts.cancelled, containers: 0 };
  }
  const lock = await takeRunSet(layout.orchestrator, 'cancel');
  try {
    const spec = RunSetSpecSchema.parse(view.spec);
    const placement = o.placement ?? createPlacement(spec.placement ?? { kind: 'local' });
    const log = new RunSetLog(layout.state);
    try {
      const open = view.units.filter((u) => !isFinal(u.status) && u.status !== 'cancelled');
      const refs = open.filter((u) => u.ref).map((u) => u.ref!);
      const report = await placement.cancel(view.id, refs, { graceMs: o.graceMs });
      const swept = await placement.cleanUp(view.id);
      for (const u of open) await log.append({ type: 'unit.cancelled', unit: u.unit, ...(u.try ? { try: u.try } : {}) });
      await log.append({ type: 'runset.cancelled', by: 'runs cancel' });
      await fsp.rm(layout.cancel, { force: true });
      return { how: 'done', cancelled: open.length, containers: new Set([...report.containers, ...swept]).size };
    } finally {
      if (!o.placement) placement.dispose();
    }
  } finally {
    await lock.release();
  }
}
