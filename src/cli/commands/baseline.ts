import * as path from 'node:path';
import { Command } from 'commander';
import { startProctoredBaseline } from '../../core/flows/proctoredBaseline';
import { requireTask } from '../datasets';
import { serveUntilStopped } from '../signals';

const collect = (v: string, acc: string[]) => [...acc, v];

/**
 * `expbench baseline serve ID [--source URL|PATH] [--bind ADDR] --out DIR`: the proctored human
 * baseline (docs/proctored.md). Prepares the task into DIR (a prepared session there is reused),
 * serves a VS Code whose server runs inside the work container, and prints the link with its
 * session token on stdout; progress goes to stderr. Stays in the foreground; Ctrl-C (or SIGTERM, or
 * SIGHUP: the terminal closed) stops the
 * forwarder, the channel and the container (kept, so a later serve of DIR reattaches).
 */
export function register(program: Command): void {
  const baseline = program.command('baseline').description('human baselines: a proctored window whose editor runs inside the task container');
  baseline.command('serve').argument('<id>', 'task id <conference>/<paperId>/<index>')
    .requiredOption('--out <dir>', 'session folder (prepared here when empty; a prepared session of the task is reused)')
    .option('--source <url|path>', 'the paper repository (default: the curation file\'s, else the task\'s code_url)')
    .option('--commit <sha>', 'commit to pin (default: the curation file\'s, else the source\'s HEAD)')
    .option('--bind <addr>', 'address of the forwarder: HOST:PORT, PORT or HOST (default 127.0.0.1 and a free port; 0.0.0.0:PORT for a baseliner on another machine)')
    .option('--dataset <dir>', 'dataset folder (repeatable; default: $EXPBENCH_DATASETS, plus the bundled sample)', collect, [])
    .option('--no-sample', 'leave out the bundled sample task')
    .option('--cache <dir>', 'pristine clone cache (default: ~/.cache/expbench/pristine)')
    .option('--solver-extension <dir>', 'the solver build of the extension (default: dist/solver)')
    .option('--allow-ai', 'this session allows AI assistance (default: chat, agents and inline completions are off)')
    .description('serve a proctored window for a task; prints its URL with the session token')
    .action(async (id: string, opts) => {
      const { task } = await requireTask(id, opts);
      // Ctrl-C, SIGTERM or a closed terminal (SIGHUP) stop it cleanly from here on, during the
      // start-up too: node's default ended the process at once and left the container running with
      // whatever the baseliner had started in it, watched by no one.
      const stop = serveUntilStopped('stopping the proctored window…', 'still stopping the work container (files are kept)…');
      try {
        const served = await startProctoredBaseline({
          task, sessionDir: path.resolve(opts.out), source: opts.source, commit: opts.commit, cacheDir: opts.cache,
          bind: opts.bind, solverExtension: opts.solverExtension, aiAllowed: opts.allowAi === true, signal: stop.signal,
          onProgress: (m) => process.stderr.write(`${m}\n`),
          onSubmitted: (r) => {
            const step = (name: string, o?: { ok: boolean; summary?: string; error?: string }) => (o ? `${name} ${o.ok ? 'ok' : 'failed'}${o.summary ? `: ${o.summary}` : ''}${o.error ? `: ${o.error}` : ''}` : `${name} not run`);
            process.stderr.write(`submitted (host side): ${step('verify', r.verify)}; ${step('judge', r.judge)}; results in ${path.resolve(opts.out, 'private')}\n`);
          },
        });
        if (stop.signal.aborted) {
          process.stderr.write('expbench: stopped during the start-up: the window was not served\n');
          process.exitCode = 1;
        } else {
          process.stderr.write(`proctored window for ${task.id} (container ${served.container.name}); open this link once in the baseliner's browser:\n`);
          console.log(served.url);
          await stop.stopped;
        }
        await served.dispose();
      } finally {
        stop.dispose();
      }
    });
}
