import * as path from 'node:path';
import { Command } from 'commander';
import { ExpBenchError } from '../../core/errors';
import { exists } from '../../core/util/fs';
import { makePatch } from '../../core/workspace/patch';
import { printJson } from '../output';

/**
 * `expbench patch DIR [--json]`: the implementation patch of a session (DIR = the session folder or
 * its workspace) against "task start" (src/core/workspace/patch.ts). Prints the text patch on
 * stdout (binary files, ignored outputs and nested repositories noted on stderr), or with `--json`
 * `{base, tree, patch, files, binaryFiles, ignoredFiles, nestedRepositories, leftOut}`. Made from the
 * session's host repository (`private/repo.git`), never from the workspace's own `.git`.
 */
export function register(program: Command): void {
  program.command('patch').argument('<dir>', 'session folder or its workspace')
    .option('--json', 'print {base, patch, files, binaryFiles, ignoredFiles, nestedRepositories} as JSON')
    .option('--stat', 'print one line per file (status, +/-, path) instead of the patch')
    .description('print everything changed in the workspace since "task start"')
    .action(async (dir: string, opts) => {
      const abs = path.resolve(dir);
      if (!(await exists(abs))) throw new ExpBenchError('BAD_INPUT', abs, 'no such folder (expected a session folder or its workspace)');
      const ws = (await exists(path.join(abs, 'private'))) && (await exists(path.join(abs, 'workspace'))) ? path.join(abs, 'workspace') : abs;
      const p = await makePatch(ws);
      if (opts.json) return printJson(p);
      if (opts.stat) {
        for (const f of p.files) {
          const what = f.binary ? 'binary' : `+${f.additions} -${f.deletions}`;
          console.log(`${f.status.padEnd(8)} ${what.padEnd(12)} ${f.oldPath ? `${f.oldPath} → ` : ''}${f.path}`);
        }
      } else {
        process.stdout.write(p.patch);
      }
      for (const b of p.binaryFiles) process.stderr.write(`binary (not inlined): ${b}\n`);
      for (const i of p.ignoredFiles) process.stderr.write(`ignored (not inlined): ${i}\n`);
      for (const n of p.nestedRepositories) process.stderr.write(`nested repository (its files as plain files, its .git left out): ${n}\n`);
    });
}
