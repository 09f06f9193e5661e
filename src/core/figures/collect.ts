import { collectOutcomes } from '../interop/collect';
import type { MetricPolicy } from '../metrics/policies';
import type { Task } from '../tasks/types';
import { groupOutcomesByActor } from '../viewer/triage';
import { buildFigures, type BuildOptions } from './build';
import { runFacts } from './facts';
import type { FigureSet } from './model';

/** What {@link collectFigures} reads and how it groups. */
export interface FiguresRequest extends BuildOptions {
  /** Folders of sessions and of reference-harness judge files, or such files (as `expbench report` takes them). */
  inputs: string[];
  policy: MetricPolicy;
  /** Table rows and funnel groups per input folder (harness files: per agent/model), or per actor (human vs agent). */
  by: 'folder' | 'actor';
  /** The loaded datasets, for task types and the conference of a harness file's paper; called only when needed. */
  tasks?: () => Promise<readonly Task[]>;
}

/** The figures of the judged runs under the inputs, with what was skipped; `set` is null when nothing is judged. */
export interface FiguresResult {
  set: FigureSet | null;
  skipped: { file: string; reason: string }[];
}

/**
 * The composition `expbench report --figures` and the Results view share: collect the judged
 * tasks (src/core/interop/collect.ts), read their runs' facts, regroup by actor when asked (as
 * `report --by actor` does), and build the figures from the metrics table.
 *
 * @throws ExpBenchError BAD_INPUT naming an input that does not exist (collectOutcomes)
 */
export async function collectFigures(req: FiguresRequest): Promise<FiguresResult> {
  let types: Promise<Map<string, Task>> | undefined;
  const byId = () => (types ??= (req.tasks?.() ?? Promise.resolve([])).then((ts) => new Map(ts.map((t) => [t.id, t]))));
  const conferenceOf = async (paperId: string) => [...(await byId()).values()].find((t) => t.paperId === paperId)?.conference;
  const collected = await collectOutcomes(req.inputs, { conferenceOf });
  if (collected.outcomes.length === 0) return { set: null, skipped: collected.skipped };
  const facts = await runFacts(collected.outcomes, { taskType: async (id) => (await byId()).get(id)?.type });
  const outcomes = req.by === 'actor' ? await groupOutcomesByActor(collected.outcomes) : collected.outcomes;
  return { set: buildFigures(outcomes, facts, req.policy, req), skipped: collected.skipped };
}
