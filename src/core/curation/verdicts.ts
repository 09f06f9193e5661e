import { compareJudgements, type Judgement, type ReviewProblem, type ReviewStore, type TaskVerdictValue } from '../review';

/**
 * Curators' task verdicts (docs/curation.md "Verdicts, edits, disputes"): each curator's latest
 * `task-verdict` of a task counts; when they differ, the task is in disagreement until a
 * `resolution` newer than every verdict settles it (who decided: its `by`; why: its `reason`).
 */

/** One task's state in the curators' queue. */
export interface TaskVerdictState {
  task: string;
  /** Each curator's latest verdict, by curator name. */
  byCurator: Judgement[];
  /** True when the curators' latest verdicts differ and no resolution is newer than all of them. */
  disagreement: boolean;
  /** The newest resolution of the task, when there is one. */
  resolution?: Judgement;
  /** The verdict that holds: the resolution's (when newer than every verdict), else the curators' common one; undefined while they disagree or none judged. */
  verdict?: TaskVerdictValue;
  /** Who decided `verdict` and why (the resolution, else the latest verdict). */
  decidedBy?: string;
  reason?: string;
  /** Disputes of the task's ground truth not settled by a resolution (`resolves` lists their ids). */
  openDisputes: Judgement[];
  /** Every dispute of the task, oldest first. */
  disputes: Judgement[];
  /** Edits of the task, oldest first. */
  edits: Judgement[];
}

/** The state of every task that has a verdict, a resolution, a dispute or an edit among `all`, sorted by task id. */
export function resolveVerdicts(all: readonly Judgement[]): TaskVerdictState[] {
  const byTask = new Map<string, Judgement[]>();
  for (const j of all) {
    if (j.subject.kind !== 'task') continue;
    if (!['task-verdict', 'resolution', 'dispute', 'task-edit'].includes(j.kind)) continue;
    byTask.set(j.subject.task, [...(byTask.get(j.subject.task) ?? []), j]);
  }
  return [...byTask.keys()].sort().map((task) => stateOf(task, byTask.get(task)!.slice().sort(compareJudgements)));
}

function stateOf(task: string, js: Judgement[]): TaskVerdictState {
  const latest = new Map<string, Judgement>();
  for (const j of js) if (j.kind === 'task-verdict') latest.set(j.by, j);
  const byCurator = [...latest.values()].sort((a, b) => (a.by < b.by ? -1 : a.by > b.by ? 1 : 0));
  const resolutions = js.filter((j) => j.kind === 'resolution');
  const resolution = resolutions[resolutions.length - 1];
  const newestVerdict = byCurator.reduce<Judgement | undefined>((m, j) => (!m || compareJudgements(m, j) < 0 ? j : m), undefined);
  const values = new Set(byCurator.map((j) => j.value as TaskVerdictValue));
  // A resolution without a verdict settles disputes only: the verdict question is settled by the newest resolution that gives one.
  const withVerdict = resolutions.filter((r) => (r.value as { verdict?: TaskVerdictValue }).verdict !== undefined);
  const decision = withVerdict[withVerdict.length - 1];
  const resolutionHolds = decision !== undefined && (newestVerdict === undefined || compareJudgements(newestVerdict, decision) < 0);
  const resolvedVerdict = resolutionHolds ? (decision.value as { verdict?: TaskVerdictValue }).verdict : undefined;
  const settled = new Set(resolutions.flatMap((r) => (r.value as { resolves: string[] }).resolves));
  const disputes = js.filter((j) => j.kind === 'dispute');
  const s: TaskVerdictState = {
    task, byCurator, disagreement: values.size > 1 && resolvedVerdict === undefined,
    openDisputes: disputes.filter((d) => !settled.has(d.id)), disputes, edits: js.filter((j) => j.kind === 'task-edit'),
  };
  if (resolution) s.resolution = resolution;
  if (resolvedVerdict) {
    s.verdict = resolvedVerdict;
    s.decidedBy = decision.by;
    if (decision.reason) s.reason = decision.reason;
  } else if (values.size === 1 && newestVerdict) {
    s.verdict = newestVerdict.value as TaskVerdictValue;
    s.decidedBy = byCurator.length > 1 ? byCurator.map((j) => j.by).join(', ') : newestVerdict.by;
    if (newestVerdict.reason) s.reason = newestVerdict.reason;
  }
  return s;
}

/**
 * The curators' queue of one store: {@link resolveVerdicts} over its task judgements, and the
 * store's files that could not be read as judgements (`unreadable`, each with why: ReviewStore.read),
 * which the queue does not hold and a caller must name.
 */
export async function curatorQueue(store: ReviewStore): Promise<{ queue: TaskVerdictState[]; unreadable: ReviewProblem[] }> {
  const { judgements, problems } = await store.read();
  return { queue: resolveVerdicts(judgements), unreadable: problems };
}
