import * as path from 'node:path';
import { readJudgeRecord } from '../judge/session';
import { SessionLayout } from '../layout';
import { policyByName } from '../metrics/policies';
import { outcomeFromRecord } from '../metrics/scores';
import { buildTable, formatTable, type MetricsTable } from '../metrics/table';
import type { TaskOutcome } from '../metrics/types';
import { plural } from '../util/plural';
import type { RunSetView } from './fold';
import type { RunSetLayout } from './layout';
import { OUTCOME_POLICY } from './session';

/**
 * The judged units' outcomes (their sessions' `private/judge/latest.json`, as `expbench report`
 * reads them: src/core/metrics/scores.ts `outcomeFromRecord`), one table row per actor.
 */
export async function runSetOutcomes(layout: RunSetLayout, view: RunSetView): Promise<TaskOutcome[]> {
  const out: TaskOutcome[] = [];
  for (const u of view.units) {
    if (u.status !== 'done') continue;
    const file = path.join(new SessionLayout(layout.session(u.dir)).judge, 'latest.json');
    const rec = await readJudgeRecord(file).catch(() => undefined);
    if (rec) out.push(outcomeFromRecord(rec, u.actor.name, file));
  }
  return out;
}

/** The metrics table of a run set (the metrics room's, under `paper-likely`, bootstrap by paper as `expbench report`). */
export async function runSetTable(layout: RunSetLayout, view: RunSetView): Promise<MetricsTable | undefined> {
  const outcomes = await runSetOutcomes(layout, view);
  return outcomes.length ? buildTable(outcomes, policyByName(OUTCOME_POLICY), { seed: 1, resamples: 2000 }) : undefined;
}

/**
 * The report at the end of a run (printed by `runs start` / `runs resume`, written to
 * `report.txt`): the counts, the metrics table as `expbench report` prints it, then each unit that
 * did not finish with where its log is (failed, waiting, cancelled, pending).
 */
export async function buildReport(layout: RunSetLayout, view: RunSetView): Promise<string> {
  const c = view.counts;
  const lines: string[] = [`run set ${view.name} (${view.id}): ${plural(view.units.length, 'unit')}: ${c.done} done, ${c.failed} failed, ${c.running} running, ${c.pending} pending, ${c.cancelled} cancelled`];
  const table = await runSetTable(layout, view);
  lines.push('', table ? formatTable(table) : 'no judged unit: no metrics table');
  const notDone = view.units.filter((u) => u.status !== 'done');
  if (notDone.length) {
    lines.push('', 'not done:');
    for (const u of notDone) {
      const where = u.log ? ` (log ${path.join(layout.root, u.log)})` : '';
      lines.push(`  ${u.task} ${u.actor.name} a${u.attempt}: ${u.status}: ${u.detail ?? u.message ?? ''}${where}`);
    }
  }
  return lines.join('\n');
}
