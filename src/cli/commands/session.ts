import { printableLines } from '../../core/untrusted';
import * as path from 'node:path';
import { Command } from 'commander';
import { ExpBenchError } from '../../core/errors';
import { clockStatus, formatWorking, workingByActor, workingMs } from '../../core/session/clock';
import { unconfinedAgents } from '../../core/agent/outside';
import { readEvents, SessionEvent } from '../../core/session/events';
import { SessionLayout } from '../../core/layout';
import type { SessionState } from '../../core/session/state';
import { readState } from '../../core/session/store';
import { giveUp, SubmitAnswers } from '../../core/session/submit';
import { submitAndScore, type SubmitFlowOptions } from '../../core/flows/submit';
import { readTaskSnapshot } from '../../core/session/marker';
import { judgeStep } from '../../core/flows/judge';
import { findTask, loadDatasets } from '../../core/tasks/loader';
import { verifyStep } from '../../core/flows/verify';
import { readManifest } from '../../core/workspace/manifest';
import { datasetDirs } from '../datasets';
import { endpointFromEnv } from './judge';
import { exists, readRegularFile } from '../../core/util/fs';
import { assertPreparationFinished } from '../../core/workspace/folder';
import { printJson } from '../output';
import { errorMessage } from '../../core/util/errors';
import { registerImport } from './sessionImport';
import { registerExport } from './sessionExport';
import { registerWindow } from './sessionWindow';

/** `expbench session show|submit|import|export|window-file|give-up`: read and finish a session from outside VS Code; import an agent's run as one; export one as an Inspect log. */
export function register(program: Command): void {
  const session = program.command('session').description('show, submit or give up a task session');

  session.command('show').argument('<dir>', 'session folder (holds workspace/ and private/)')
    .option('--json', 'print one JSON object {session, state, clock, unconfined, events, eventProblems}')
    .description("print a session's state, clock and recorded events")
    .action(async (dir: string, opts: { json?: boolean }) => {
      const layout = await sessionLayout(dir);
      const state = await readState(layout.state);
      if (!state) throw new ExpBenchError('SESSION_INVALID', layout.state, 'the session has no state yet (it was never opened)');
      const ev = await readEvents(layout.events);
      const clock = clockJson(state);
      if (opts.json) {
        printJson({ session: layout.root, state, clock, unconfined: unconfinedAgents(ev.events), events: ev.events, eventProblems: { invalid: ev.invalid, torn: ev.torn ?? null } });
        return;
      }
      console.log(printableLines(showText(layout, state, clock, ev.events))); // notes are the solver's text
      for (const l of ev.invalid) console.error(`expbench: ${layout.events}:${l.line}: invalid event (${l.error})`);
      if (ev.torn) console.error(`expbench: ${layout.events}:${ev.torn.line}: torn last line (${ev.torn.text.length} characters, no newline): a writer stopped mid-line`);
    });

  session.command('submit').argument('<dir>', 'session folder')
    .requiredOption('--answers <file>', 'answers in the harness JSON form {"design": string | string[], "conclusion": string}')
    .option('--no-verify', 'do not run the verifier after submitting')
    .option('--no-judge', 'do not run the judge after submitting')
    .option('--json', 'print the submission result as JSON')
    .description('freeze the answers, write the harness files, then verify and judge')
    .action(async (dir: string, opts: { answers: string; verify: boolean; judge: boolean; json?: boolean }) => {
      const layout = await sessionLayout(dir);
      await assertPreparationFinished(layout.root, 'submit');
      const answers = await readAnswers(opts.answers);
      const steps = await submitSteps(layout, { verify: opts.verify, judge: opts.judge });
      const r = await submitAndScore(layout, answers as SubmitAnswers, { ...steps, answersSource: opts.answers });
      if (opts.json) printJson(r);
      else {
        console.log(`submitted ${layout.root} after ${formatWorking(r.workingMs)} of working time`);
        for (const [k, v] of Object.entries(r.files)) if (v) console.log(`  ${k.padEnd(14)} ${v}`);
        for (const [name, step] of [['verify', r.verify], ['judge', r.judge]] as const) {
          if (step) console.log(`  ${name.padEnd(14)} ${step.ok ? 'ok' : 'failed'}${step.summary ? `: ${step.summary}` : ''}${step.error ? `: ${step.error}` : ''}`);
        }
      }
      for (const w of r.warnings) console.error(`expbench: warning: ${w}`);
      if (r.verify?.error || r.judge?.error) process.exitCode = 1;
    });

  registerImport(session);
  registerExport(session);
  registerWindow(session);

  session.command('give-up').argument('<dir>', 'session folder')
    .option('--reason <text>', 'why (recorded with the time)')
    .description('record an explicit give-up with the working time')
    .action(async (dir: string, opts: { reason?: string }) => {
      const layout = await sessionLayout(dir);
      const o = await giveUp(layout, opts.reason);
      console.log(`gave up ${layout.root} at ${o.at} after ${formatWorking(o.workingMs)} of working time`);
    });
}

async function sessionLayout(dir: string): Promise<SessionLayout> {
  const layout = new SessionLayout(path.resolve(dir));
  if (!(await exists(layout.workspace)) && !(await exists(layout.private))) {
    throw new ExpBenchError('SESSION_INVALID', layout.root, 'not a session folder: it has neither workspace/ nor private/');
  }
  return layout;
}

async function readAnswers(file: string): Promise<unknown> {
  let text: string;
  try {
    const buf = await readRegularFile(file);
    if (buf === undefined) throw new Error('no such file');
    text = buf.toString('utf8');
  } catch (e: any) {
    throw new ExpBenchError('BAD_INPUT', file, `cannot read the answers file: ${errorMessage(e).replace(`${file}: `, '')}`);
  }
  try { return JSON.parse(text); } catch (e: any) {
    throw new ExpBenchError('BAD_INPUT', file, `the answers file is not JSON: ${errorMessage(e)}`);
  }
}

/** The `clock` of `show --json`: status, working ms counted to the last heartbeat (see clock.ts), budget. */
function clockJson(state: SessionState) {
  const last = state.clock.segments.at(-1);
  return {
    status: clockStatus(state),
    workingMs: workingMs(state.clock),
    /** Working ms by whose time it was (segment `actor`; absent = the person's). */
    byActor: workingByActor(state.clock),
    budgetMs: state.clock.budgetMs,
    lastHeartbeat: last && last.end === undefined ? last.lastBeat : null,
    pauses: state.clock.segments.filter((s) => s.endReason === 'paused').length,
  };
}

function showText(layout: SessionLayout, s: SessionState, clock: ReturnType<typeof clockJson>, events: SessionEvent[]): string {
  const lines: string[] = [];
  const row = (k: string, v: string) => lines.push(`${k.padEnd(11)} ${v}`);
  row('session', layout.root);
  row('phase', s.phase);
  let c = `${clock.status}, working ${formatWorking(clock.workingMs)}`;
  if (clock.budgetMs) c += ` of ${formatWorking(clock.budgetMs)} (${Math.round((100 * clock.workingMs) / clock.budgetMs)}%)`;
  if (clock.lastHeartbeat) c += `, counted to the last heartbeat ${clock.lastHeartbeat}`;
  if (clock.byActor.agent > 0) c += ` (human ${formatWorking(clock.byActor.human)}, agent ${formatWorking(clock.byActor.agent)})`;
  row('clock', `${c}; ${clock.pauses} pause(s)`);
  row('outcome', s.submitted ? `submitted at ${s.submitted.at}` : s.gaveUp ? `gave up at ${s.gaveUp.at}${s.gaveUp.reason ? ` (${s.gaveUp.reason})` : ''}` : 'in progress');
  const unconfined = unconfinedAgents(events);
  if (unconfined.length) row('unconfined', `yes: ${unconfined.map((u) => `${u.client} (${u.via})`).join(', ')} kept its own shell on the host (docs/outside-agents.md)`);
  row('design', `${s.design.constants.length} constant, ${s.design.independent.length} independent, ${s.design.dependent.length} dependent variables; free text ${s.design.freeText.length} chars`);
  row('conclusion', `${s.conclusion.length} chars`);
  row('notes', String(s.notes.length));
  for (const n of s.notes) lines.push(`  ${n.at}  ${n.text.replace(/\s+/g, ' ')}`);
  row('runs', String(s.runs.length));
  for (const r of s.runs) lines.push(`  ${r.id}  exit ${r.exitCode ?? '-'}  ${formatWorking(r.durationMs)}  ${r.log}${r.error ? `  (${r.error})` : ''}`);
  row('events', String(events.length));
  for (const e of events) lines.push(`  ${e.at}  ${e.type}${eventDetail(e)}`);
  return lines.join('\n');
}

function eventDetail(e: SessionEvent): string {
  switch (e.type) {
    case 'phase.changed': return ` ${e.from} → ${e.to}`;
    case 'clock.paused': return `${e.reason ? ` (${e.reason})` : ''} at ${formatWorking(e.workingMs)}`;
    case 'file.edited': case 'file.created': case 'file.deleted': case 'file.changed': return ` ${e.path}`;
    case 'command.run': return ` ${e.command} → ${e.exitCode ?? '-'}`;
    case 'script.run': return ` ${e.runId} → ${e.exitCode ?? '-'}`;
    case 'budget.warning': return ` ${e.level}%`;
    case 'verify.finished': case 'judge.finished': return ` ${e.ok ? 'ok' : 'failed'}${e.summary ? `: ${e.summary}` : ''}${e.error ? `: ${e.error}` : ''}`;
    default: return '';
  }
}

/**
 * The verify and judge steps the CLI passes to `submitAndScore` (src/core/flows `verifyStep`, clean mode
 * with default limits; src/core/flows `judgeStep`, the LLM judge when the environment configures an
 * endpoint, see `endpointFromEnv`, else the heuristic pre-judge). The judge needs the session's task:
 * its snapshot `private/task.json`, else the manifest's task id looked up in the datasets
 * ($EXPBENCH_DATASETS and the bundled sample). Resolved before submitting, so a missing task stops
 * the submission instead of losing the judge step.
 */
async function submitSteps(layout: SessionLayout, want: { verify: boolean; judge: boolean }): Promise<Pick<SubmitFlowOptions, 'verify' | 'judge'>> {
  const steps: Pick<SubmitFlowOptions, 'verify' | 'judge'> = {};
  if (want.verify) steps.verify = verifyStep();
  if (want.judge) {
    let task = await readTaskSnapshot(layout.root);
    if (!task) {
      const { taskId } = await readManifest(layout.root);
      const dirs = datasetDirs(undefined, {});
      task = findTask(await loadDatasets(dirs), taskId);
      if (!task) throw new ExpBenchError('TASK_NOT_FOUND', taskId, `the session's task is not in ${dirs.join(', ')}: set EXPBENCH_DATASETS, or submit with --no-judge`);
    }
    steps.judge = judgeStep({ task, endpoint: endpointFromEnv() });
  }
  return steps;
}
