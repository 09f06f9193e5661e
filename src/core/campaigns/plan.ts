import { ExpBenchError } from '../errors';
import { conflictError, createRunSet, keyConflicts, type CreateResult } from '../runs/create';
import { foldRunSet, type RunSetView } from '../runs/fold';
import { RunSetLayout } from '../runs/layout';
import { planUnit, selectTasks, specDatasets, type UnitPlan } from '../runs/plan';
import { readRunSet } from '../runs/state';
import { loadDatasets } from '../tasks/loader';
import type { LoadResult } from '../tasks/types';
import { maskRules } from '../workspace/mask';
import { resolveTaskPin } from '../flows/prepareTask';
import { assignmentChanges, balancedAssignment, fixedAssignment, refuseMaskSights, repositoryKey, type AssignableTask, type Assignment } from './assign';
import { CampaignLog } from './log';
import { runSetPart, type CampaignSpec } from './spec';

/** What {@link planCampaign} found: the assignment and one human unit per assignment. */
export interface CampaignPlan {
  assignment: Assignment[];
  units: UnitPlan[];
  loaded: LoadResult;
}

/**
 * Plans a campaign: the tasks the spec selects (as a run set's: ids, globs, split files), the
 * assignment (`balanced` or `fixed`, src/core/campaigns/assign.ts), and one unit per assignment
 * with the actor `{kind: "human", name: <id>, baseliner: <id>}`, attempt 1, keyed as every unit
 * (docs/runs.md "Units and their keys"). Its name is `<conference>-<paperId>-<index>.<id>.a1`.
 * A person is never given two tasks of one repository whose masks differ ({@link refuseMaskSights}:
 * one task's workspace would show the other's masked files).
 * @throws ExpBenchError BAD_INPUT naming a selector that matches nothing, a `fixed` entry that is wrong, a `perPerson` larger than the tasks, an assignment that shows a person a masked file
 */
export async function planCampaign(spec: CampaignSpec, o: { env?: NodeJS.ProcessEnv; loaded?: LoadResult } = {}): Promise<CampaignPlan> {
  const runSpec = runSetPart(spec);
  const loaded = o.loaded ?? await loadDatasets(specDatasets(runSpec, o.env));
  const tasks = await selectTasks(runSpec, loaded);
  const people = spec.baseline.baseliners.map((b) => b.id);
  const assignable: AssignableTask[] = [];
  for (const t of tasks) {
    // The repository the session is prepared from (resolveTaskPin: the curation file's pin, else local_repo, else code_url).
    const source = await resolveTaskPin(t).then((p) => p.source, () => t.paper?.localRepo ?? t.paper?.codeUrl);
    assignable.push({ id: t.id, paper: `${t.conference}/${t.paperId}`, ...(source ? { repository: repositoryKey(source) } : {}), masked: maskRules(t).map((r) => r.path) });
  }
  const assignment = spec.baseline.assignment === 'fixed'
    ? fixedAssignment(people, assignable, spec.baseline.fixed ?? {})
    : balancedAssignment(people, assignable, spec.baseline.perPerson?.tasks);
  refuseMaskSights(`baseline.assignment (${spec.baseline.assignment})`, assignment, assignable);
  const byId = new Map(tasks.map((t) => [t.id, t]));
  const units: UnitPlan[] = [];
  for (const a of assignment) {
    units.push(await planUnit(runSpec, byId.get(a.task)!, { kind: 'human', name: a.person, baseliner: a.person }, 1));
  }
  return { assignment, units, loaded };
}

/** The assignment a run set holds: its human units' (person, task), in the state's order. */
export function recordedAssignment(view: RunSetView): Assignment[] {
  return view.units.flatMap((u) => (u.actor.kind === 'human' ? [{ person: u.actor.baseliner, task: u.task }] : []));
}

/**
 * Writes a campaign into `dir` before anything is served: the run set (`spec.jsonc`, `runset.created`
 * with the campaign spec, one `unit.planned` per assignment) and the campaign's own log
 * (`campaign.jsonl`: the assignment's size, and the first link of each person). On a folder that
 * already holds the campaign, the plan must give the same assignment and the same unit keys:
 * a person or task added or dropped, or a unit whose key changed, is refused naming each, and
 * nothing is written (the assignment never changes silently).
 * @throws ExpBenchError BAD_INPUT naming `dir` and every change; what createRunSet throws
 */
export async function createCampaign(dir: string, spec: CampaignSpec, specText: string, specFile: string, plan: CampaignPlan): Promise<CreateResult> {
  const layout = new RunSetLayout(dir);
  const read = await readRunSet(layout.state);
  const view = read && read.records.length ? foldRunSet(read.records) : undefined;
  if (view) {
    const changes = assignmentChanges(recordedAssignment(view), plan.assignment);
    if (changes.length) {
      throw new ExpBenchError('BAD_INPUT', layout.root, `the spec changes this campaign's assignment, so it is refused and nothing is written (give a new --out folder for a new campaign):\n${changes.map((c) => `  ${c}`).join('\n')}`);
    }
    const conflicts = keyConflicts(view, plan.units);
    if (conflicts.length) throw conflictError(layout.root, conflicts);
    return { created: false, added: [], view };
  }
  const created = await createRunSet(dir, spec as unknown as Parameters<typeof createRunSet>[1], specText, specFile, plan.units);
  const log = new CampaignLog(layout.root);
  await log.append({ type: 'campaign.assigned', runSet: created.view.id, assignments: plan.assignment.length, people: spec.baseline.baseliners.length });
  for (const b of spec.baseline.baseliners) await log.append({ type: 'link.issued', person: b.id, generation: 1 });
  return created;
}
