import { printableLines } from '../../core/untrusted';
import { Command } from 'commander';
import { unconfinedSessions } from '../../core/agent/outside';
import { collectOutcomes } from '../../core/interop/collect';
import { policyByName } from '../../core/metrics/policies';
import { buildTable, formatTable } from '../../core/metrics/table';
import { buildFigures } from '../../core/figures/build';
import { runFacts } from '../../core/figures/facts';
import { writeFigures } from '../../core/figures/write';
import { loadDatasets } from '../../core/tasks/loader';
import type { Task } from '../../core/tasks/types';
import { promises as fsp } from 'node:fs';
import * as path from 'node:path';
import type { TaskOutcome } from '../../core/metrics/types';
import { formatRows, groupOutcomesByActor, harnessJudgeRows, sortRows, triageRuns, type TriageRow } from '../../core/viewer/triage';
import { plural } from '../../core/util/plural';
import { datasetDirs } from '../datasets';
import { fail, printJson } from '../output';

const collect = (v: string, acc: string[]) => [...acc, v];

/**
 * `--figures OUT` also writes the results' figures (src/core/figures/, docs/results.md): OUT/table.csv (the
 * table's numbers with both intervals and the run keys of each cell), one SVG and one Vega-Lite
 * spec per figure, and OUT/report.html; task types come from the datasets. The table printed is
 * the figures' own (one computation).
 *
 * `expbench report DIR…`: the paper's metrics table over folders of sessions and of harness judge
 * files. Harness files named `<paperId>_task_index_<i>_iter_<k>_…_eval_judge.json` are grouped by
 * the agent and model of their folders (`…/<paperId>/<agent>/<model>/`) or config file; a paper id
 * whose conference the folders do not say is looked up in the datasets (`--dataset`, else
 * `$EXPBENCH_DATASETS`, loaded only then). Nothing to report (no judged session, no harness judge
 * file): says so on stderr and exits 1.
 *
 * `--by actor` groups the table by who did the work (`human`, `agent`: src/core/viewer/triage.ts
 * `groupOutcomesByActor`) instead of by folder. `--runs` adds one row per run (session folders at
 * any depth, trajectory files given by name; src/core/viewer/triage.ts `TriageRow`), judged or not,
 * and one agent run per reference-harness judge file the table counts (`harnessJudgeRows`), so the
 * list has a row for every task the table counts; scored by the same policy: printed before the
 * table, or as `runs` in the JSON; a run read from a damaged file (a truncated .eval zip) has its
 * `problems` in the JSON and a `damaged <run>: …` line after the rows. With `--runs` a folder whose
 * runs are all unjudged prints its rows and no table (exit 0). A file given by name that is not
 * `.json` is never tried as a judge file (skipped as `not a judge file`, unless its runs are listed).
 * A run is counted once: copies of one session (one run key) count as one, said on stderr
 * (`folded N copies of run …`) and in the JSON's `folded` (src/core/interop/collect.ts).
 */
export function register(program: Command): void {
  program.command('report').argument('<dirs...>', 'folders of sessions and/or reference-harness judge JSON files (one table row per folder, or per agent/model for the harness\'s files)')
    .option('--policy <name>', 'metric policy: paper-likely or strict', 'paper-likely')
    .option('--json', 'print the table as JSON {policy, bootstrap, rows, exclusions, tasks, skipped, unconfined, folded}')
    .option('--seed <n>', 'bootstrap seed', (v) => parseInt(v, 10), 1)
    .option('--resamples <n>', 'bootstrap resamples', (v) => parseInt(v, 10), 2000)
    .option('--dataset <dir>', 'dataset folder giving the conference of a harness file\'s paper id (repeatable; default $EXPBENCH_DATASETS)', collect, [])
    .option('--by <grouping>', 'table rows per `folder` (default) or per `actor` (human vs agent)', 'folder')
    .option('--figures <out>', 'also write OUT/table.csv, an SVG and a Vega-Lite spec per figure (funnel, per-phase by actor, model, paper, conference and task type, failures, per-paper heat map) and OUT/report.html')
    .option('--runs', 'also list every run (task, agent, model, actor, D, I, E, C, All·E✓, monitor flags, steps, tokens, cost, duration, first flagged step)')
    .description('per-task D, I, E, C, I·E, C·D, All✓, All·E✓ and an aggregate table with 95% intervals (resampled by paper)')
    .action(async (dirs: string[], opts: { policy: string; json?: boolean; seed: number; resamples: number; dataset: string[]; by: string; runs?: boolean; figures?: string }) => {
      const policy = policyByName(opts.policy);
      if (opts.by !== 'folder' && opts.by !== 'actor') return fail(`--by ${opts.by}: expected folder or actor`, 2);
      if (opts.figures && await fsp.stat(opts.figures).then((st) => !st.isDirectory(), () => false)) return fail(`--figures ${opts.figures}: is a file, not a folder for the figures`, 2);
      let datasets: Promise<Task[]> | undefined;
      const tasks = () => (datasets ??= loadDatasets(datasetDirs(undefined, opts)).then((r) => r.tasks));
      const conferenceOf = async (paperId: string) => (await tasks()).find((t) => t.paperId === paperId)?.conference;
      const collected = await collectOutcomes(dirs, { conferenceOf });
      // Copies of one run are counted once (collectOutcomes): said, and left out of the run rows too.
      const copyDirs = new Set(collected.folded.flatMap((f) => f.copies.map(sessionOfRecord)));
      for (const f of collected.folded) {
        console.error(`expbench: folded ${plural(f.copies.length, 'copy', 'copies')} of run ${f.run} (${f.taskId}): counted once, from ${f.counted}${f.differ ? '; the copies\' judge records differ: the newest is counted' : ''}; copies: ${f.copies.slice(0, 3).join(', ')}${f.copies.length > 3 ? `, … (${f.copies.length - 3} more; --json lists them)` : ''}`);
      }
      const runs: TriageRow[] | undefined = opts.runs ? (await runRows(dirs, policy, opts.by, collected.outcomes)).filter((r) => !copyDirs.has(r.run)) : undefined;
      // A file whose runs are listed was read (as a trajectory): its "not a judge file" is no news.
      const skipped = runs ? collected.skipped.filter((s) => !runs.some((r) => r.run === s.file || r.run.startsWith(`${s.file}#`))) : collected.skipped;
      const outcomes = opts.by === 'actor' ? await groupOutcomesByActor(collected.outcomes) : collected.outcomes;
      for (const s of skipped) console.error(printableLines(`expbench: skipped ${s.file}: ${s.reason}`));
      if (outcomes.length === 0 && runs?.length) {
        if (opts.json) printJson({ policy: { name: policy.name, description: policy.description }, runs, rows: [], skipped, folded: collected.folded });
        else console.log(`${formatRuns(runs, opts.by)}\n\nno judged run: no metrics table`);
        return;
      }
      if (outcomes.length === 0) {
        return fail(`nothing to report in ${dirs.join(', ')}: no judged session (private/judge/latest.json) and no reference-harness judge file (*.json with design_score, setup_score or conclusion_score)`, 1);
      }
      const bootstrap = { seed: opts.seed, resamples: opts.resamples };
      let figures: { out: string; files: string[] } | undefined;
      let table;
      if (opts.figures) {
        const types = new Map((await tasks()).map((t) => [t.id, t.type]));
        const set = buildFigures(outcomes, await runFacts(collected.outcomes, { taskType: (id) => types.get(id) }), policy, bootstrap);
        table = set.table;
        figures = { out: path.resolve(opts.figures), files: await writeFigures(opts.figures, set, { inputs: dirs }) };
      } else table = buildTable(outcomes, policy, bootstrap);
      // Sessions an outside agent worked with its own shell on the host (docs/outside-agents.md).
      const unconfined = await unconfinedSessions(collected.outcomes.map((o) => o.source));
      if (opts.json) printJson({ ...table, skipped, unconfined, folded: collected.folded, ...(runs ? { runs } : {}), ...(figures ? { figures } : {}) });
      else {
        console.log(runs ? `${formatRuns(runs, opts.by)}\n\n${formatTable(table)}` : formatTable(table));
        if (unconfined.length) console.log(`\nunconfined (an outside agent kept its own shell on the host): ${unconfined.map((u) => `${u.session} (${u.agents.map((a) => `${a.client} via ${a.via}`).join(', ')})`).join('; ')}`);
        if (figures) console.log(`\nfigures: ${plural(figures.files.length, 'file')} in ${figures.out} (open report.html)`);
      }
    });
}

/**
 * The run rows: triageRuns' (sessions, trajectory files) and one per reference-harness judge file
 * the table counts (`outcomes`, before any regrouping), so the list and the table agree. An input
 * triageRuns found no session in is not reported as empty when harness judge files under it were.
 */
async function runRows(dirs: string[], policy: ReturnType<typeof policyByName>, by: string, outcomes: TaskOutcome[]): Promise<TriageRow[]> {
  const { rows, skipped } = await triageRuns(dirs, policy);
  const harness = await harnessJudgeRows(outcomes, policy, new Set(rows.map((r) => r.run)));
  const sources = outcomes.map((o) => o.source);
  const under = (p: string) => sources.some((s) => s === p || s.startsWith(p.endsWith(path.sep) ? p : p + path.sep));
  for (const s of skipped) if (!under(s.file)) console.error(printableLines(`expbench: no run in ${s.file}: ${s.reason}`));
  const byTask = sortRows([...rows, ...harness], 'task');
  return by === 'actor' ? sortRows(byTask, 'actor') : byTask;
}

/** The session folder of a judge record `<session>/private/judge/latest.json`. */
function sessionOfRecord(file: string): string {
  return path.dirname(path.dirname(path.dirname(file)));
}

function formatRuns(runs: TriageRow[], by: string): string {
  if (by !== 'actor') return `runs (${runs.length}):\n${formatRows(runs)}${damageNotes(runs)}`;
  return (['human', 'agent'] as const).filter((a) => runs.some((r) => r.actor === a))
    .map((a) => { const rs = runs.filter((r) => r.actor === a); return `${a} (${plural(rs.length, 'run')}):\n${formatRows(rs)}${damageNotes(rs)}`; }).join('\n\n');
}

/** One `damaged <run>: …` line per run that could not be read whole (its `problems`), after the rows. */
function damageNotes(runs: TriageRow[]): string {
  const notes = runs.filter((r) => r.problems?.length).map((r) => `damaged ${r.run}: ${r.problems!.join('; ')}`);
  return notes.length ? `\n${notes.join('\n')}` : '';
}
