import { randomBytes } from 'node:crypto';
import { promises as fsp } from 'node:fs';
import { ExpBenchError } from '../errors';
import { toolVersion } from '../paths';
import { writeAtomic } from '../util/fs';
import { foldRunSet, type RunSetView } from './fold';
import { changedParts } from './keys';
import { RunSetLayout } from './layout';
import type { UnitPlan } from './plan';
import type { RunSetSpec } from './spec';
import { readRunSet, RunSetLog } from './state';

/** What {@link createRunSet} did. */
export interface CreateResult {
  created: boolean;
  /** Units added to an existing run set (new tasks or actors). */
  added: UnitPlan[];
  view: RunSetView;
}

/** A unit whose slot holds another key than the plan's, or that the plan drops. */
export interface KeyConflict { name: string; task: string; why: string }

/**
 * Writes a new run set into `dir` (`spec.jsonc` as given, `runset.created`, one `unit.planned` per
 * unit), or checks a plan against the run set already there: a slot (task, actor, attempt) whose
 * key changed, or a unit the plan no longer has, is a conflict and nothing is written; new units
 * are added.
 * @throws ExpBenchError BAD_INPUT naming `dir` and every conflicting unit; naming `dir` when it holds files but no run set
 */
export async function createRunSet(dir: string, spec: RunSetSpec, specText: string, specFile: string, units: UnitPlan[]): Promise<CreateResult> {
  const layout = new RunSetLayout(dir);
  const read = await readRunSet(layout.state);
  const log = new RunSetLog(layout.state);
  if (!read || !read.records.length) {
    const entries = await fsp.readdir(layout.root).catch(() => undefined);
    if (entries && entries.length > 0) throw new ExpBenchError('BAD_INPUT', layout.root, 'the folder is not empty and holds no run set (runset.jsonl): give an empty or new folder');
    await fsp.mkdir(layout.root, { recursive: true });
    await writeAtomic(layout.spec, specText);
    const id = `${new Date().toISOString().replace(/[-:]/g, '').slice(0, 15)}-${randomBytes(4).toString('hex')}`;
    await log.append({ type: 'runset.created', id, name: spec.name, spec: spec as unknown as Record<string, unknown>, specFile, tool: toolVersion() });
    for (const u of units) await log.append({ type: 'unit.planned', ...u });
    const after = await readRunSet(layout.state);
    return { created: true, added: units, view: foldRunSet(after!.records)! };
  }
  const view = foldRunSet(read.records);
  if (!view) throw new ExpBenchError('BAD_INPUT', layout.state, 'not a run set\'s state (no runset.created record)');
  const conflicts = keyConflicts(view, units);
  if (conflicts.length) throw conflictError(layout.root, conflicts);
  const added = units.filter((u) => !view.units.some((v) => v.name === u.name));
  for (const u of added) await log.append({ type: 'unit.planned', ...u });
  const after = await readRunSet(layout.state);
  return { created: false, added, view: foldRunSet(after!.records)! };
}

/** The conflicts between a run set's units and a plan (see {@link createRunSet}); `dropped` false: only changed keys count. */
export function keyConflicts(view: RunSetView, units: UnitPlan[], dropped = true): KeyConflict[] {
  const byName = new Map(units.map((u) => [u.name, u]));
  const out: KeyConflict[] = [];
  for (const v of view.units) {
    const p = byName.get(v.name);
    if (!p) { if (dropped) out.push({ name: v.name, task: v.task, why: 'no longer in the spec' }); continue; }
    if (p.unit !== v.unit) out.push({ name: v.name, task: v.task, why: changedParts(v.keyParts, p.keyParts).join('; ') || 'the key changed' });
  }
  return out;
}

/** BAD_INPUT naming every conflicting unit (`fixture2026/90001/3 scripted a1: the task changed`). */
export function conflictError(dir: string, conflicts: KeyConflict[], cause: 'spec' | 'files' = 'spec'): ExpBenchError {
  const lines = conflicts.map((c) => `  ${c.task} ${c.name.split('.').slice(1).join(' ')}: ${c.why}`);
  const lead = cause === 'spec'
    ? `the spec changes ${conflicts.length} unit(s) of this run set, so it is refused and nothing runs (give a new --out folder for a new run set)`
    : `${conflicts.length} unit(s) of this run set changed since it was planned (task files, curation files, images or imported files as they are now), so nothing runs (put the files back, or start a new run set)`;
  return new ExpBenchError('BAD_INPUT', dir, `${lead}:\n${lines.join('\n')}`);
}
