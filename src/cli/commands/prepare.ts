import * as path from 'node:path';
import { Command } from 'commander';
import { writeSessionMarker } from '../../core/session/marker';
import { prepareTask } from '../../core/flows/prepareTask';
import { requireTask } from '../datasets';
import { printJson } from '../output';
import { plural } from '../../core/util/plural';

const collect = (v: string, acc: string[]) => [...acc, v];

/**
 * `expbench prepare ID [--source URL|PATH] [--commit SHA] --out DIR [--json]`: prepares a pinned,
 * masked task session (src/core/flows/prepareTask.ts) at the paper's curation-file pin and
 * environment when it has one (docs/curation.md). Prints the manifest as JSON with `--json`,
 * else a summary; progress goes to stderr. Ctrl-C cancels (git is killed, the folder removed).
 */
export function register(program: Command): void {
  program.command('prepare').argument('<id>', 'task id <conference>/<paperId>/<index>')
    .option('--source <url|path>', 'the paper repository: a git URL, a local clone or a folder (default: the curation file\'s repository, else the task\'s code_url)')
    .option('--commit <sha>', 'commit to pin (default: the curation file\'s commit, else the source\'s HEAD; recorded)')
    .requiredOption('--out <dir>', 'session folder to create (must not exist or be empty)')
    .option('--dataset <dir>', 'dataset folder (repeatable; default: $EXPBENCH_DATASETS, plus the bundled sample)', collect, [])
    .option('--no-sample', 'leave out the bundled sample task')
    .option('--cache <dir>', 'pristine clone cache (default: ~/.cache/expbench/pristine)')
    .option('--image <tag>', 'sandbox image recorded for the session (default: the curation file\'s baseImage, else expbench/sandbox:1)')
    .option('--json', 'print the manifest as JSON')
    .description('prepare a masked, pinned task workspace (fresh repository, one commit "task start")')
    .action(async (id: string, opts) => {
      const { task } = await requireTask(id, opts);
      const ac = new AbortController();
      const onSigint = () => { process.stderr.write('expbench: cancelling…\n'); ac.abort(); };
      process.once('SIGINT', onSigint);
      const started = Date.now();
      try {
        const { manifest: m, warnings } = await prepareTask({
          task, source: opts.source, commit: opts.commit, outDir: path.resolve(opts.out), cacheDir: opts.cache, image: opts.image,
          signal: ac.signal, onProgress: (p) => process.stderr.write(`${p.step}: ${p.message}\n`),
        });
        for (const w of warnings) process.stderr.write(`expbench: warning: ${w}\n`);
        await writeSessionMarker(path.resolve(opts.out), task);
        if (opts.json) printJson(m);
        else {
          console.log(`prepared ${m.taskId} in ${path.resolve(opts.out)} (${Date.now() - started} ms)`);
          console.log(`source   ${m.source.kind} ${m.source.location}`);
          console.log(`commit   ${m.commit} (${m.source.kind === 'folder' ? 'an import of the folder\'s files: it is not the top of a git repository' : m.pin?.from === 'curation' ? `pinned by ${m.pin.file}` : m.pin?.from === 'option' ? '--commit' : 'the source\'s HEAD'})`);
          console.log(`image    ${m.image} (${m.environment?.from === 'curation' ? `environment of ${m.environment.file}` : m.environment?.from === 'option' ? '--image' : 'default'})`);
          for (const s of m.submodules) console.log(`submodule ${s.path} @ ${s.sha}`);
          console.log(`masked   ${plural(m.masked.length, 'file')}:`);
          for (const x of m.masked) console.log(`  ${x.path}  (${x.reason})${x.sameContentAs ? `  same content as ${x.sameContentAs}` : ''}`);
          console.log(`workspace ${path.resolve(opts.out, 'workspace')} (commit "task start" ${m.workspaceCommit.slice(0, 12)})`);
        }
      } finally {
        process.removeListener('SIGINT', onSigint);
      }
    });
}
