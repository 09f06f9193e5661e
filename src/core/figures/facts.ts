import * as path from 'node:path';
import { unconfinedSessions } from '../agent/outside';
import { readHarnessJudgeName } from '../interop/harnessLayout';
import type { TaskOutcome } from '../metrics/types';
import type { TaskType } from '../tasks/types';
import { exists } from '../util/fs';
import { loadSessionRun } from '../viewer/run';
import { isSessionOutcome } from '../viewer/triage';
import type { RunActor } from '../viewer/triageTable';

/**
 * What the figures group one judged task by, and how to trace it back to its run. One per
 * outcome, in the same order (`facts[i]` is about `outcomes[i]`).
 */
export interface RunFacts {
  /** The run's key in figure data and table.csv: the session folder, or the reference-harness judge file (absolute paths). */
  run: string;
  /** What the trajectory viewer opens for it: the session folder; for a judge file the harness's `…_eval_gen.json` beside it when there is one, else the judge file. */
  open: string;
  actor: RunActor;
  /** `human`, `expbench-agent`, an outside agent's or an imported run's name; the harness's agent folder. */
  agent: string;
  /** The model most of the run's model steps name, the harness's model folder; null for a person or when nothing says. */
  model: string | null;
  /** The task id's first part (`neurips2024`), `unknown` when the id has none. */
  conference: string;
  /** `<conference>/<paperId>`: the unit the bootstrap resamples. */
  paper: string;
  /** The task's type by the harness's rules (src/core/tasks/types.ts `TaskType`), null when the task is not in the loaded datasets. */
  taskType: TaskType | null;
  /** An outside agent kept its own shell on the host in this session (docs/outside-agents.md): its results are not confined. */
  unconfined: boolean;
}

export interface FactsOptions {
  /** The type of a task id (from the loaded datasets); undefined when unknown. */
  taskType?: (taskId: string) => TaskType | undefined | Promise<TaskType | undefined>;
}

/**
 * The facts of each outcome (as `collectOutcomes` of src/core/interop/collect.ts returns them,
 * before any regrouping). Sessions: actor, agent and model as triage reads the session
 * (src/core/viewer/run.ts `loadSessionRun`; a session whose log cannot be read is a person's with
 * no model, as `groupOutcomesByActor` has it); unconfined when an outside agent worked it with its
 * own shell. Reference-harness judge files: an agent's run, agent and model from the harness's
 * folders or config file (src/core/interop/harnessLayout.ts), else the outcome's group as agent.
 */
export async function runFacts(outcomes: readonly TaskOutcome[], opts: FactsOptions = {}): Promise<RunFacts[]> {
  const unconfined = new Set((await unconfinedSessions(outcomes.map((o) => o.source))).map((u) => path.resolve(u.session)));
  const sessions = new Map<string, Promise<Pick<RunFacts, 'actor' | 'agent' | 'model'>>>();
  const out: RunFacts[] = [];
  for (const o of outcomes) {
    const [conference, paperId] = o.taskId.split('/').length === 3 ? o.taskId.split('/') : ['unknown', o.paperId];
    const base = { conference, paper: `${conference}/${paperId}`, taskType: (await opts.taskType?.(o.taskId)) ?? null };
    if (isSessionOutcome(o)) {
      const dir = path.resolve(o.source, '..', '..', '..');
      if (!sessions.has(dir)) {
        sessions.set(dir, loadSessionRun(dir).then((r) => ({ actor: r.actor, agent: r.agent, model: r.model }), () => ({ actor: 'human' as const, agent: 'human', model: null })));
      }
      out.push({ run: dir, open: dir, ...await sessions.get(dir)!, ...base, unconfined: unconfined.has(dir) });
      continue;
    }
    const named = await readHarnessJudgeName(o.source);
    const gen = o.source.replace(/_eval_judge\.json$/, '_eval_gen.json');
    const open = gen !== o.source && await exists(gen) ? gen : o.source;
    const agent = named?.agent ?? o.group.replace(/ iter \d+$/, '').split('/')[0];
    const model = named?.model?.replace(/\//g, '-') ?? (o.group.includes('/') ? o.group.replace(/ iter \d+$/, '').split('/').slice(1).join('/') : null);
    out.push({ run: path.resolve(o.source), open, actor: 'agent', agent, model, ...base, unconfined: false });
  }
  return out;
}
