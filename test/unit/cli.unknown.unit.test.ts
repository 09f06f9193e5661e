import * as assert from 'node:assert/strict';
import type { Command } from 'commander';
import { buildProgram } from '../../src/cli/main';
import { commandPath, findUnknownCommand } from '../../src/cli/unknownCommand';
import { cli } from './cli.helpers';

/**
 * Unknown commands (issue 33 item 6): `expbench nosuch` and `expbench nosuch --help` exit 1 naming
 * `nosuch`, at the top and under every command that has subcommands, as git and npm do (commander
 * alone prints the parent's help and exits 0 for `nosuch --help`); known commands' help exits 0.
 */
describe('unknown commands (src/cli/unknownCommand.ts, dist/cli.js)', function () {
  this.timeout(120_000);
  const program = buildProgram();
  /** Every command of the program, depth first. */
  const all = (c: Command): Command[] => [c, ...c.commands.flatMap(all)];
  const groups = all(program).filter((c) => c.commands.length > 0 && c.registeredArguments.length === 0);
  const leaves = all(program).filter((c) => c.commands.length === 0);
  const pathArgs = (c: Command): string[] => commandPath(c).split(' ').slice(1);

  it('finds the unknown name under every command that has subcommands, with or without --help, after options, and in `help NAME`', () => {
    assert.ok(groups.length >= 5, `groups: ${groups.map(commandPath).join(', ')}`);
    for (const g of groups) {
      for (const tail of [[], ['--help'], ['-h']]) {
        const u = findUnknownCommand(program, [...pathArgs(g), 'nosuch', ...tail]);
        assert.equal(u?.name, 'nosuch', `${commandPath(g)} nosuch ${tail.join(' ')}`);
        assert.equal(u?.parent, g);
      }
      const viaHelp = findUnknownCommand(program, ['help', ...pathArgs(g), 'nosuch']);
      assert.equal(viaHelp?.parent, g, `help ${commandPath(g)} nosuch`);
    }
    assert.equal(findUnknownCommand(program, ['--verbose', 'nosuch'])?.name, 'nosuch');
  });

  it('finds nothing for known commands, their help, their arguments and options with values', () => {
    for (const c of all(program)) {
      assert.equal(findUnknownCommand(program, [...pathArgs(c), '--help']), undefined, `${commandPath(c)} --help`);
      assert.equal(findUnknownCommand(program, ['help', ...pathArgs(c)]), undefined, `help ${commandPath(c)}`);
    }
    for (const c of leaves) {
      // a leaf's operands are its arguments, however they are spelled
      assert.equal(findUnknownCommand(program, [...pathArgs(c), 'nosuch', 'help', '--json']), undefined, commandPath(c));
      // an option that takes a value: the value is not a command name
      const withValue = c.options.find((o) => o.required && o.long);
      if (withValue) assert.equal(findUnknownCommand(program, [...pathArgs(c), withValue.long!, 'nosuch']), undefined, `${commandPath(c)} ${withValue.long} nosuch`);
    }
    assert.equal(findUnknownCommand(program, []), undefined);
    assert.equal(findUnknownCommand(program, ['--', 'nosuch']), undefined);
  });

  it('dist/cli.js: `nosuch`, `nosuch --help`, `session nosuch --help` and `help nosuch` exit 1 naming it; help of known commands exits 0', async () => {
    for (const args of [['nosuch'], ['nosuch', '--help'], ['help', 'nosuch']]) {
      const r = await cli(args);
      assert.equal(r.code, 1, `${args.join(' ')}: ${r.stderr}`);
      assert.match(r.stderr, /^expbench: unknown command 'nosuch' \(the commands: agent, .*see 'expbench --help'\)/, args.join(' '));
      assert.equal(r.stdout, '', `${args.join(' ')}: nothing on stdout`);
    }
    for (const args of [['session', 'nosuch'], ['session', 'nosuch', '--help'], ['session', 'help', 'nosuch']]) {
      const r = await cli(args);
      assert.equal(r.code, 1, `${args.join(' ')}: ${r.stderr}`);
      assert.match(r.stderr, /unknown command 'nosuch' for 'expbench session' \(its commands: show, submit.*see 'expbench session --help'\)/);
    }
    for (const args of [['--help'], ['session', '--help'], ['help', 'session'], ['session', 'show', '--help']]) {
      const r = await cli(args);
      assert.equal(r.code, 0, `${args.join(' ')}: ${r.stderr}`);
      assert.match(r.stdout, /^Usage: expbench/, args.join(' '));
    }
  });
});
