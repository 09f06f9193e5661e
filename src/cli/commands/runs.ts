import * as path from 'node:path';
import { Command } from 'commander';
import { ExpBenchError } from '../../core/errors';
import { setLogSink } from '../../core/log';
import { writeOwnExitRecord } from '../../core/placement/local';
import { createPlacement } from '../../core/placement/spec';
import { cancelRunSet, createRunSet, execUnit, exitCodeOf, orchestrate, pinSpecPaths, planRunSet, readSpec, RunSetLayout, RunSetSpecSchema, runSetStatus, type OrchestrateResult } from '../../core/runs';
import { readRunSet } from '../../core/runs/state';
import { foldRunSet } from '../../core/runs/fold';
import { plural } from '../../core/util/plural';
import { printJson } from '../output';
import { onStopSignals } from '../signals';
import { boardHeader, formatBoard, TerminalBoard } from '../runsBoard';
import { campaignStatus, isCampaign, registerCampaignRuns } from './campaign';

/**
 * `expbench runs start SPEC --out DIR | status DIR | resume DIR | cancel DIR | exec DIR --unit KEY`:
 * run sets (docs/runs.md). `start` plans the units (a run set already in DIR is checked unit by
 * unit: a changed key is refused, naming the units) and runs them; `resume` reaps what a dead run
 * left and finishes what is not done; both show a live board on stderr (a TTY: one block updated
 * in place; else plain lines) and print the report table at the end. Exit code 0 when every unit
 * is done, 1 otherwise. `exec` is what a placement runs for one unit (docs/placement.md).
 */
export function register(program: Command): void {
  const runs = program.command('runs').description('run sets: many tasks × agents (or imports) as one resumable run with a live board');
  runs.command('start').argument('<spec>', 'run-set spec (JSON with comments, docs/runs.md)')
    .requiredOption('--out <dir>', 'the run set\'s folder (new or empty; an existing run set is checked against the spec)')
    .option('--json', 'print the result as JSON instead of the report')
    .description('plan the units of a spec and run them')
    .action(async (specFile: string, opts: { out: string; json?: boolean }) => {
      const read = await readSpec(specFile);
      const { text, file } = read;
      const spec = pinSpecPaths(read.spec, process.env, process.cwd());
      const plan = await planRunSet(spec);
      for (const s of plan.skipped) process.stderr.write(`expbench: not imported: ${s.files.map((f) => path.basename(f)).join(', ')}: ${s.reason}\n`);
      if (!plan.units.length) throw new ExpBenchError('BAD_INPUT', file, plan.skipped.length ? 'the spec plans no unit: no input gave a run (the reasons are above)' : 'the spec plans no unit');
      const made = await createRunSet(opts.out, spec, text, file, plan.units);
      process.stderr.write(made.created
        ? `expbench: run set ${made.view.name} (${made.view.id}) in ${path.resolve(opts.out)}: ${plural(made.view.units.length, 'unit')}\n`
        : `expbench: run set ${made.view.name} already in ${path.resolve(opts.out)}: keys checked, ${plural(made.added.length, 'unit')} added; going on\n`);
      await run(opts.out, 'start', opts.json);
    });
  runs.command('resume').argument('<dir>', 'the run set\'s folder')
    .option('--json', 'print the result as JSON instead of the report')
    .description('reap what a dead run left running, then finish every unit that is not done (nothing done is run again)')
    .action(async (dir: string, opts: { json?: boolean }) => run(dir, 'resume', opts.json));
  runs.command('status').argument('<dir>', 'the run set\'s folder')
    .option('--json', 'print the status as JSON')
    .option('--no-engine', 'do not ask the placement (processes, scheduler) how placed units stand')
    .description('each unit: id, task, actor, status, try, phase, elapsed vs limit, tokens, cost, E/D/I/C')
    .action(async (dir: string, opts: { json?: boolean; engine: boolean }) => {
      const layout = new RunSetLayout(dir);
      const read = await readRunSet(layout.state);
      const view = read ? foldRunSet(read.records) : undefined;
      if (view && isCampaign(view)) return campaignStatus(dir, opts.json); // a campaign's board: people as rows (docs/campaigns.md)
      const placement = opts.engine && view ? createPlacement(RunSetSpecSchema.parse(view.spec).placement ?? { kind: 'local' }) : undefined;
      try {
        const s = await runSetStatus(dir, { placement });
        if (opts.json) { printJson(s); return; }
        const o = s.orchestrator;
        const who = o ? (o.alive === false ? `its last run (process ${o.pid}) is gone${s.orphaned ? `: ${plural(s.orphaned, 'unit')} it left placed; \`runs resume\` ${placement?.outlivesSubmitter ? 're-attaches to their jobs' : 'reaps and goes on'}` : ''}` : `run by process ${o.pid} (runs ${o.command}) since ${o.since}`) : 'no run now';
        console.log(formatBoard(`${boardHeader({ name: s.name, id: s.id, counts: s.counts, units: s.rows as never })}; ${who}`, s.rows, process.stdout.columns ?? 200));
        if (s.invalidLines.length) console.log(`\n${plural(s.invalidLines.length, 'line')} of runset.jsonl could not be read (first: line ${s.invalidLines[0].line}: ${s.invalidLines[0].error})`);
      } finally {
        placement?.dispose();
      }
    });
  registerCampaignRuns(runs);
  runs.command('cancel').argument('<dir>', 'the run set\'s folder')
    .option('--wait <seconds>', 'how long to wait for a running orchestrator to stop its units', (v) => Number(v), 120)
    .description('stop the run set\'s units (SIGTERM; containers removed by label); `runs resume` goes on with them')
    .action(async (dir: string, opts: { wait: number }) => {
      const r = await cancelRunSet(dir, { waitMs: opts.wait * 1000 });
      console.log(r.how === 'asked'
        ? `cancelled: the running orchestrator stopped its units (${plural(r.cancelled, 'unit')} cancelled)`
        : `cancelled: ${plural(r.cancelled, 'unit')} recorded cancelled, ${plural(r.containers, 'container')} removed`);
    });
  runs.command('exec').argument('<dir>', 'the run set\'s folder')
    .requiredOption('--unit <key>', 'the unit\'s key')
    .option('--try <n>', 'the try (1, 2, …)', (v) => Number(v), 1)
    .description('run one unit (what a placement runs on the machine or node it chose; docs/placement.md)')
    .action(async (dir: string, opts: { unit: string; try: number }) => {
      if (!Number.isInteger(opts.try) || opts.try < 1) throw new ExpBenchError('BAD_INPUT', `--try ${opts.try}`, 'expected a whole number ≥ 1');
      // The unit's log is its process's output: every log line goes there, with the time.
      setLogSink((level, component, msg) => process.stderr.write(`${new Date().toISOString()} [${level}] ${component}: ${msg}\n`));
      const ac = new AbortController();
      // SIGTERM (Slurm's scancel, a placement's stop), Ctrl-C and SIGHUP (its terminal closed) stop the unit cleanly
      onStopSignals((sig) => {
        if (ac.signal.aborted) { process.stderr.write(`expbench: ${sig} again: leaving now\n`); writeOwnExitRecord(130); process.exit(130); }
        process.stderr.write(`expbench: ${sig}: stopping the unit cleanly\n`);
        ac.abort();
      });
      const r = await execUnit({ dir, unit: opts.unit, try: opts.try, signal: ac.signal, onLine: (t) => process.stderr.write(`${new Date().toISOString()} ${t}\n`) });
      console.log(`${r.unit.slice(0, 12)} try ${r.try}: ${r.status}: ${r.message}`);
      const code = exitCodeOf(r.status);
      writeOwnExitRecord(code);
      process.exitCode = code;
    });
}

async function run(dir: string, command: 'start' | 'resume', json?: boolean): Promise<void> {
  const layout = new RunSetLayout(dir);
  const board = new TerminalBoard(layout);
  const ac = new AbortController();
  const onStop = () => {
    if (ac.signal.aborted) { process.stderr.write('\nexpbench: leaving the units to `runs resume` (it reaps them)\n'); process.exit(130); }
    process.stderr.write('\nexpbench: stopping the units cleanly (Ctrl-C again to leave now); `runs resume` goes on with them\n');
    ac.abort();
  };
  const signals = onStopSignals(onStop);
  let r: OrchestrateResult;
  try {
    r = await orchestrate({ dir, command, signal: ac.signal, onRecord: (rec, view) => board.update(rec, view) });
  } finally {
    board.close();
    signals.dispose();
  }
  if (json) printJson({ dir: layout.root, id: r.view.id, counts: r.view.counts, exitCode: r.exitCode, report: layout.report });
  else console.log(r.report);
  process.exitCode = r.exitCode;
}
