import { constants as fsConstants, promises as fsp } from 'node:fs';
import * as path from 'node:path';
import { Command } from 'commander';
import { loadDatasets, findTask } from '../../core/tasks/loader';
import type { LoadResult, Task } from '../../core/tasks/types';
import { datasetDirs } from '../datasets';
import { fail, printJson } from '../output';
import { plural } from '../../core/util/plural';

/** `expbench tasks list|show|validate`: read EXP-Bench task files (see README.md, "CLI"). */
export function register(program: Command): void {
  const tasks = program.command('tasks').description('find, read and validate EXP-Bench tasks');

  tasks.command('list').argument('[dirs...]', 'dataset folders: only their tasks (default: $EXPBENCH_DATASETS, plus the bundled sample)')
    .option('--json', 'print one JSON object {tasks, problems}')
    .option('--no-sample', 'leave out the bundled sample task')
    .description('list tasks')
    .action(async (dirs: string[], opts) => {
      const folders = datasetDirs(dirs, opts, { sample: 'unless-given' });
      const r = await loadDatasets(folders);
      if (opts.json) printJson(listJson(r));
      else {
        for (const t of r.tasks) console.log(`${t.id}\ttype ${t.type}\t${oneLine(t.question, 100)}`);
        console.error(`${plural(r.tasks.length, 'task')}, ${plural(r.problems.length, 'problem')}`);
      }
      await exitForInputs(folders, r);
    });

  tasks.command('validate').argument('[dirs...]', 'dataset folders: only their tasks; exit 2 when one does not exist (default: $EXPBENCH_DATASETS, plus the bundled sample)')
    .option('--json', 'print one JSON object {tasks, problems}')
    .option('--no-sample', 'leave out the bundled sample task')
    .description('check task files and report every problem with its file and JSON pointer')
    .action(async (dirs: string[], opts) => {
      const folders = datasetDirs(dirs, opts, { sample: 'unless-given' });
      const r = await loadDatasets(folders);
      if (opts.json) printJson(listJson(r));
      else {
        for (const p of r.problems) console.log(`${p.severity.padEnd(7)} ${p.file}#${p.pointer} ${p.message}`);
        const by = countBy(r.tasks, (t) => `type ${t.type}`);
        console.log(`${plural(r.tasks.length, 'task')}${r.tasks.length ? ` (${Object.entries(by).map(([k, v]) => `${k}: ${v}`).join(', ')})` : ''}, ` +
          `${plural(r.problems.length, 'problem')} (${Object.entries(countBy(r.problems, (p) => p.severity)).map(([k, v]) => `${k}: ${v}`).join(', ') || 'none'}), ` +
          `${plural(r.unreadableFiles.length, 'unreadable file')}`);
      }
      await exitForInputs(folders, r);
    });

  tasks.command('show').argument('<id>', 'task id <conference>/<paperId>/<index>')
    .option('--dataset <dir>', 'dataset folder (repeatable)', collect, [])
    .option('--json', 'print the task as JSON (ground truth included)')
    .option('--no-sample', 'leave out the bundled sample task')
    .description('show one task')
    .action(async (id: string, opts) => {
      const folders = datasetDirs(undefined, opts);
      const r = await loadDatasets(folders);
      const t = findTask(r, id);
      if (!t) {
        const why = await whyNotFound(id, folders, r);
        return why.unreadable ? fail(why.message, 2) : fail(why.message, 1);
      }
      if (opts.json) printJson(taskJson(t, true));
      else console.log(taskText(t));
    });
}

/**
 * Exit code of `list` / `validate`: 2 when a dataset folder does not exist (named on stderr) or a
 * task file is not JSON at all, else 0.
 */
async function exitForInputs(folders: string[], r: LoadResult): Promise<void> {
  const missing = (await Promise.all(folders.map(async (d) => (await fsp.stat(d).catch(() => undefined)) ? undefined : d))).filter((d) => d !== undefined);
  for (const d of missing) console.error(`expbench: ${d}: dataset folder does not exist`);
  process.exitCode = missing.length > 0 || r.unreadableFiles.length > 0 ? 2 : 0;
}

/**
 * Why task `id` (`<conference>/<paperId>/<index>`) is not in the loaded datasets, in words: its
 * paper's task file (`…/<conference>/<paperId>/<paperId>_*.json`, or a `<paperId>_*.json` in a
 * `<conference>` folder) could not be read (not JSON, not a regular file: a folder, a dangling
 * link, no permission; the reason is given), or the paper has fewer tasks, or nothing holds it.
 * `unreadable` is true for the first case (exit 2, as for `validate`).
 */
async function whyNotFound(id: string, folders: string[], r: LoadResult): Promise<{ message: string; unreadable: boolean }> {
  const [conference, paperId, index] = id.split('/');
  const where = folders.join(', ');
  if (!conference || !paperId || index === undefined) return { message: `${id}: not a task id (expected <conference>/<paperId>/<index>) in ${where}`, unreadable: false };
  const ofPaper = (file: string) => {
    const parts = file.split(path.sep);
    const name = parts[parts.length - 1];
    return name.startsWith(`${paperId}_`) && parts.includes(conference);
  };
  // Files the loader read but could not parse (or read), with the loader's reason.
  for (const file of r.unreadableFiles.filter(ofPaper)) {
    const reason = r.problems.find((p) => p.file === file && p.pointer === '')?.message ?? 'cannot be read';
    return { message: `task ${id}: its task file ${file} is unreadable: ${reason}`, unreadable: true };
  }
  // Paths the loader does not list at all: a folder or a dangling link where the task file should be.
  for (const dir of folders) {
    for (const base of [path.join(dir, 'tasks', conference, paperId), path.join(dir, conference, paperId), path.join(dir, paperId), dir]) {
      const names = await fsp.readdir(base).catch(() => [] as string[]);
      for (const name of names.filter((n) => n.startsWith(`${paperId}_`) && n.endsWith('.json'))) {
        const file = path.join(base, name);
        const reason = await notAFile(file);
        if (reason) return { message: `task ${id}: its task file ${file} is unreadable: ${reason}`, unreadable: true };
      }
    }
  }
  const siblings = r.tasks.filter((t) => t.conference === conference && t.paperId === paperId);
  if (siblings.length > 0) {
    return { message: `task ${id} not found: paper ${conference}/${paperId} has ${siblings.length} task(s), indexes ${siblings.map((t) => t.index).join(', ')} (${siblings[0].file})`, unreadable: false };
  }
  return { message: `task ${id} not found in ${where}`, unreadable: false };
}

/** Why `file` is not a readable regular file (undefined when it is one). */
async function notAFile(file: string): Promise<string | undefined> {
  const st = await fsp.stat(file).catch((e: NodeJS.ErrnoException) => e);
  if (st instanceof Error) {
    const link = await fsp.readlink(file).catch(() => undefined);
    return link !== undefined ? `a symbolic link to ${link}, which does not exist (${st.code})` : `${st.code ?? st.message}`;
  }
  if (st.isDirectory()) return 'it is a folder, not a file';
  if (!st.isFile()) return 'not a regular file';
  return fsp.access(file, fsConstants.R_OK).then(() => undefined, (e: NodeJS.ErrnoException) => `no permission to read it (${e.code})`);
}

/** The `--json` shape of `list`/`validate`: `{ tasks: [...], problems: [...] }` (README.md, "CLI"). */
export function listJson(r: LoadResult): unknown {
  return { tasks: r.tasks.map((t) => taskJson(t, false)), problems: r.problems, unreadableFiles: r.unreadableFiles };
}

function taskJson(t: Task, full: boolean): Record<string, unknown> {
  const base: Record<string, unknown> = {
    id: t.id, type: t.type, conference: t.conference, paperId: t.paperId, index: t.index,
    title: t.paper?.title ?? null, codeUrl: t.paper?.codeUrl ?? null,
    question: t.question, requirements: t.requirements, source: t.source, maskedSource: t.maskedSource,
    noAnswer: t.noAnswer, file: t.file, problems: t.problems.length,
  };
  if (!full) return base;
  return { ...base, method: t.method, agentInstructions: t.agentInstructions, expectedOutcome: t.expectedOutcome,
    design: t.design, usageInstructions: t.usageInstructions, paper: t.paper ?? null, problems: t.problems };
}

function taskText(t: Task): string {
  const lines = [`${t.id}  (type ${t.type}${t.noAnswer ? ', no ground-truth implementation' : ''})`];
  if (t.paper?.title) lines.push(`paper: ${t.paper.title}`);
  lines.push(`code: ${t.paper?.codeUrl ?? t.paper?.localRepo ?? '(no code_url: supply a repository)'}`, '', 'QUESTION', t.question, '', 'METHOD', t.method);
  if (t.agentInstructions) lines.push('', 'AGENT INSTRUCTIONS', t.agentInstructions);
  lines.push('', `REQUIREMENTS (${t.requirements.length})`, ...t.requirements.map((r, i) => `${i + 1}. ${r.text}`));
  if (t.problems.length) lines.push('', 'PROBLEMS', ...t.problems.map((p) => `${p.severity} ${p.pointer} ${p.message}`));
  return lines.join('\n');
}

function oneLine(s: string, max: number): string {
  const x = s.replace(/\s+/g, ' ').trim();
  return x.length > max ? x.slice(0, max - 1) + '…' : x;
}

function countBy<T>(xs: T[], key: (x: T) => string): Record<string, number> {
  const out: Record<string, number> = {};
  for (const x of xs) out[key(x)] = (out[key(x)] ?? 0) + 1;
  return out;
}

function collect(v: string, prev: string[]): string[] {
  return [...prev, v];
}
