import type { Command } from 'commander';

/** An unknown command name found in the arguments, and the command whose subcommands it is not. */
export interface UnknownCommand {
  /** The command that has subcommands, none of which is `name` (the program for a top-level one). */
  parent: Command;
  /** The name as typed. */
  name: string;
}

/** `expbench session`: the command's names from the program down. */
export function commandPath(cmd: Command): string {
  const names: string[] = [];
  for (let c: Command | null = cmd; c; c = c.parent) names.unshift(c.name());
  return names.join(' ');
}

/** Whether `token` is an option of `cmd` that takes its value from the next argument. */
function takesNextValue(cmd: Command, token: string): boolean {
  if (token.startsWith('--')) {
    if (token.includes('=')) return false;
    const opt = cmd.options.find((o) => o.long === token);
    return !!opt && opt.required;
  }
  if (token.length !== 2) return false; // `-ofile`: the value is attached
  const opt = cmd.options.find((o) => o.short === token);
  return !!opt && opt.required;
}

/**
 * Walks `args` (the arguments after the program name) the way commander dispatches them and
 * returns the first name that is not a subcommand where a subcommand is expected: at the program
 * or at a command that has subcommands and declares no arguments of its own. Options are skipped
 * (with their value when they take one); `help NAME` is walked like `NAME`. Commander prints the
 * parent's help and exits 0 for `NAME --help` (its help flag is handled before the unknown-command
 * check); git and npm exit 1 naming the command, with or without `--help` (README: The command line), and so
 * does `expbench`, through this check before parsing.
 * @returns undefined when every command name in `args` is known (or none is given)
 */
export function findUnknownCommand(program: Command, args: readonly string[]): UnknownCommand | undefined {
  let cmd = program;
  for (let i = 0; i < args.length; i++) {
    const a = args[i];
    if (a === '--') return undefined;
    if (a.startsWith('-') && a !== '-') {
      if (takesNextValue(cmd, a)) i++;
      continue;
    }
    if (cmd.commands.length === 0 || cmd.registeredArguments.length > 0) return undefined; // the rest are arguments
    if (a === 'help') continue; // `help session show` is walked as `session show`
    const sub = cmd.commands.find((c) => c.name() === a || c.aliases().includes(a));
    if (!sub) return { parent: cmd, name: a };
    cmd = sub;
  }
  return undefined;
}

/**
 * The message for an unknown command: `unknown command 'NAME' for 'expbench session' (its
 * commands: show, submit, …; see 'expbench session --help')`.
 */
export function unknownCommandMessage(u: UnknownCommand): string {
  const where = commandPath(u.parent);
  const names = u.parent.commands.map((c) => c.name()).join(', ');
  return `unknown command '${u.name}'${u.parent.parent ? ` for '${where}'` : ''} (${u.parent.parent ? 'its' : 'the'} commands: ${names}; see '${where} --help')`;
}
