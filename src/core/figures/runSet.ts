import * as path from 'node:path';
import { z } from 'zod';
import { ExpBenchError } from '../errors';
import { SessionLayout } from '../layout';
import { readState } from '../session/store';
import { fileError, openRegular } from '../util/fs';

/** The state file of a run set folder (runs.md of issue 27: `DIR/runset.jsonl`, schema version 1). */
export const RUN_SET_STATE = 'runset.jsonl';
/** Largest state file read (a run set of thousands of units stays far below). */
export const MAX_RUN_SET_STATE_BYTES = 64 * 1024 * 1024;

/**
 * What the Results view needs of a run set: its name and each unit's session folder and whether
 * it has finished (a campaign's human unit: its session submitted or given up). Read from the state file's records through this small schema of our own (the
 * fields runs.md of issue 27 gives `runset.created`, `unit.planned`, `unit.finished`, `unit.cancelled`),
 * so the view does not depend on the run-set room's code.
 */
export interface RunSetView {
  /** The run set folder, absolute. */
  dir: string;
  name: string;
  units: { key: string; name: string; task: string; dir: string; status: 'planned' | 'done' | 'failed' | 'cancelled'; human?: true }[];
  /** Lines that did not parse (a torn last line of a killed writer) or are of a later schema version. */
  skippedLines: number;
}

const Created = z.object({ v: z.literal(1), type: z.literal('runset.created'), name: z.string() });
const Planned = z.object({ v: z.literal(1), type: z.literal('unit.planned'), unit: z.string(), name: z.string(), task: z.string(), dir: z.string(), actor: z.object({ kind: z.string() }).optional() });
const Finished = z.object({ v: z.literal(1), type: z.literal('unit.finished'), unit: z.string(), status: z.enum(['done', 'failed']) });
const Cancelled = z.object({ v: z.literal(1), type: z.literal('unit.cancelled'), unit: z.string() });
/** Records that put a unit back in the queue. */
const Requeued = z.object({ v: z.literal(1), type: z.enum(['unit.retry', 'unit.requeued', 'unit.placed']), unit: z.string() });

/** True when `dir` holds a run set's state file. */
export async function isRunSetFolder(dir: string): Promise<boolean> {
  const fh = await openRegular(path.join(dir, RUN_SET_STATE)).catch(() => undefined);
  await fh?.close();
  return !!fh;
}

/**
 * Reads a run set folder's state (at most {@link MAX_RUN_SET_STATE_BYTES}; a FIFO is never waited
 * on). A unit's folder must lie under `DIR/units/` (a `dir` that leaves it is refused as damaged).
 *
 * @throws ExpBenchError BAD_INPUT naming the state file when it is missing, too large, not a
 *   regular file, has no `runset.created` record, or names a unit folder outside `DIR/units/`
 */
export async function readRunSet(dir: string): Promise<RunSetView> {
  const abs = path.resolve(dir);
  const file = path.join(abs, RUN_SET_STATE);
  const fh = await openRegular(file);
  if (!fh) throw new ExpBenchError('BAD_INPUT', file, 'no run-set state here (runset.jsonl): not a run set folder');
  let text: string;
  try {
    const st = await fh.stat();
    if (st.size > MAX_RUN_SET_STATE_BYTES) throw new ExpBenchError('BAD_INPUT', file, `is ${st.size} bytes, over the ${MAX_RUN_SET_STATE_BYTES} this reader takes`);
    text = (await fh.readFile()).toString('utf8');
  } catch (e) {
    throw fileError(file, 'read', e);
  } finally {
    await fh.close().catch(() => undefined);
  }
  let name: string | undefined;
  let skippedLines = 0;
  const units = new Map<string, RunSetView['units'][number]>();
  const unitsRoot = path.join(abs, 'units') + path.sep;
  for (const line of text.split('\n')) {
    if (!line.trim()) continue;
    let json: unknown;
    try { json = JSON.parse(line); } catch { skippedLines++; continue; }
    if ((json as { v?: unknown })?.v !== 1) { skippedLines++; continue; }
    const c = Created.safeParse(json);
    if (c.success) { name ??= c.data.name; continue; }
    const p = Planned.safeParse(json);
    if (p.success) {
      const unitDir = path.resolve(abs, p.data.dir);
      if (!unitDir.startsWith(unitsRoot)) throw new ExpBenchError('BAD_INPUT', file, `unit ${p.data.name}: its folder ${p.data.dir} is not under units/`);
      units.set(p.data.unit, { key: p.data.unit, name: p.data.name, task: p.data.task, dir: unitDir, status: 'planned', ...(p.data.actor?.kind === 'human' ? { human: true as const } : {}) });
      continue;
    }
    const f = Finished.safeParse(json);
    if (f.success) { const u = units.get(f.data.unit); if (u) u.status = f.data.status; continue; }
    const x = Cancelled.safeParse(json);
    if (x.success) { const u = units.get(x.data.unit); if (u) u.status = 'cancelled'; continue; }
    const r = Requeued.safeParse(json);
    if (r.success) { const u = units.get(r.data.unit); if (u && u.status !== 'planned') u.status = 'planned'; }
  }
  if (name === undefined) throw new ExpBenchError('BAD_INPUT', file, 'has no runset.created record: not a run-set state');
  // A campaign's units (actor `human`, docs/campaigns.md) are served, not run: no `unit.finished`
  // is ever written for them. One has finished when its session was submitted or given up, as the
  // host's own state.json says (the session service writes it; a damaged one counts as not finished).
  for (const u of units.values()) {
    if (!u.human || u.status !== 'planned') continue;
    const state = await readState(new SessionLayout(u.dir).state).catch(() => undefined);
    if (state?.submitted || state?.gaveUp) u.status = 'done';
  }
  return { dir: abs, name, units: [...units.values()], skippedLines };
}
