import { Command } from 'commander';
import { setLogSink } from '../core/log';
import { toolVersion } from '../core/paths';
import { endQuietlyOnClosedPipe, fail, reportError } from './output';
import { findUnknownCommand, unknownCommandMessage } from './unknownCommand';
import * as agent from './commands/agent';
import * as baseline from './commands/baseline';
import * as campaign from './commands/campaign';
import * as curate from './commands/curate';
import * as feasibility from './commands/feasibility';
import * as judge from './commands/judge';
import * as patch from './commands/patch';
import * as prepare from './commands/prepare';
import * as report from './commands/report';
import * as runs from './commands/runs';
import * as session from './commands/session';
import * as tasks from './commands/tasks';
import * as traj from './commands/traj';
import * as verify from './commands/verify';

/**
 * `expbench`: the command-line face of the core. Each command lives in commands/<name>.ts and
 * exports `register(program)`. Exit codes: 0 ok, 1 error (an unknown command among them, with or
 * without `--help`: {@link runCli}), 2 some input file is not JSON at all
 * (or cannot be read, or a dataset folder does not exist). A closed output pipe ends any command
 * quietly (output.ts `endQuietlyOnClosedPipe`).
 */
export function buildProgram(): Command {
  const program = new Command('expbench')
    .description('EXP-Bench Workbench command line: tasks, sessions, verification and judging')
    .version(toolVersion())
    .option('-v, --verbose', 'log to stderr')
    .showHelpAfterError();
  program.hook('preAction', (cmd) => {
    if (cmd.opts().verbose) setLogSink((level, component, msg) => process.stderr.write(`[${level}] ${component}: ${msg}\n`));
  });
  for (const mod of commandModules()) mod.register(program);
  return program;
}

function commandModules(): Array<{ register(p: Command): void }> {
  // Commands registered by feature rooms; keep this list sorted.
  return [agent, baseline, campaign, curate, feasibility, judge, patch, prepare, report, runs, session, tasks, traj, verify];
}

/**
 * Runs the command line on `argv` (`process.argv` form). An unknown command or subcommand exits 1
 * naming it, with or without `--help`, before commander parses (unknownCommand.ts).
 */
export async function runCli(argv: readonly string[]): Promise<void> {
  const program = buildProgram();
  const unknown = findUnknownCommand(program, argv.slice(2));
  if (unknown) return fail(unknownCommandMessage(unknown));
  await program.parseAsync([...argv]);
}

if (require.main === module) {
  endQuietlyOnClosedPipe(); // `expbench … | head`: a closed pipe ends the command quietly (output.ts)
  runCli(process.argv).catch(reportError);
}
