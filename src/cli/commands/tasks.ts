import { Command } from 'commander';
import { loadDatasets, findTask } from '../../core/tasks/loader';
import type { LoadResult, Task } from '../../core/tasks/types';
import { datasetDirs } from '../datasets';
import { fail, printJson } from '../output';

/** `expbench tasks list|show|validate`: read EXP-Bench task files (see README.md, "CLI"). */
export function register(program: Command): void {
  const tasks = program.command('tasks').description('find, read and validate EXP-Bench tasks');

  tasks.command('list').argument('[dirs...]', 'dataset folders (default: $EXPBENCH_DATASETS, plus the bundled sample)')
    .option('--json', 'print one JSON object {tasks, problems}')
    .option('--no-sample', 'leave out the bundled sample task')
    .description('list tasks')
    .action(async (dirs: string[], opts) => {
      const r = await loadDatasets(datasetDirs(dirs, opts));
      if (opts.json) printJson(listJson(r));
      else {
        for (const t of r.tasks) console.log(`${t.id}\ttype ${t.type}\t${oneLine(t.question, 100)}`);
        console.error(`${r.tasks.length} tasks, ${r.problems.length} problems`);
      }
      process.exitCode = r.unreadableFiles.length > 0 ? 2 : 0;
    });

  tasks.command('validate').argument('[dirs...]', 'dataset folders')
    .option('--json', 'print one JSON object {tasks, problems}')
    .option('--no-sample', 'leave out the bundled sample task')
    .description('check task files and report every problem with its file and JSON pointer')
    .action(async (dirs: string[], opts) => {
      const r = await loadDatasets(datasetDirs(dirs, opts));
      if (opts.json) printJson(listJson(r));
      else {
        for (const p of r.problems) console.log(`${p.severity.padEnd(7)} ${p.file}#${p.pointer} ${p.message}`);
        const by = countBy(r.tasks, (t) => `type ${t.type}`);
        console.log(`${r.tasks.length} tasks (${Object.entries(by).map(([k, v]) => `${k}: ${v}`).join(', ')}), ` +
          `${r.problems.length} problems (${Object.entries(countBy(r.problems, (p) => p.severity)).map(([k, v]) => `${k}: ${v}`).join(', ') || 'none'}), ` +
          `${r.unreadableFiles.length} unreadable files`);
      }
      process.exitCode = r.unreadableFiles.length > 0 ? 2 : 0;
    });

  tasks.command('show').argument('<id>', 'task id <conference>/<paperId>/<index>')
    .option('--dataset <dir>', 'dataset folder (repeatable)', collect, [])
    .option('--json', 'print the task as JSON (ground truth included)')
    .option('--no-sample', 'leave out the bundled sample task')
    .description('show one task')
    .action(async (id: string, opts) => {
      const r = await loadDatasets(datasetDirs(undefined, opts));
      const t = findTask(r, id);
      if (!t) return fail(`task ${id} not found in ${datasetDirs(undefined, opts).join(', ')}`, 1);
      if (opts.json) printJson(taskJson(t, true));
      else console.log(taskText(t));
    });
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
