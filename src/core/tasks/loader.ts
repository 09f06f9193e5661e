import { promises as fsp } from 'node:fs';
import * as path from 'node:path';
import { log } from '../log';
import { errorMessage } from '../util/errors';
import { splitLines } from '../util/jsonl';
import { escapePointer } from './design';
import { MAX_JSON_DEPTH, MAX_TASK_FILE_BYTES, tooDeepAt } from './limits';
import { normaliseTask } from './normalise';
import { PaperLineSchema, TaskFileSchema } from './schemas';
import type { LoadResult, PaperInfo, Problem, Task } from './types';

const logger = log('tasks');
const ID_ORDER = new Intl.Collator('en', { numeric: true });

/**
 * Loads every task file (`*.json`) and paper list (`*.jsonl`) under the given folders.
 *
 * Conference and paper id come from the layout `…/<conference>/<paperId>/<paperId>_*.json`; a file
 * elsewhere takes its paper id from the file name (the part before the first `_`) and its conference
 * from its parent folder. Paper lists are `<conference>.jsonl`. Nothing here throws on bad input:
 * a missing folder, a file that is not JSON, a field of the wrong type or an empty `questions`
 * becomes a {@link Problem} with the file and a JSON pointer (for `.jsonl`, `/<line index>`), and
 * loading goes on. Two files for the same paper: the first (in path order) is used, the second is
 * reported as an error and not merged. Untrusted shapes are bounded (limits.ts): a task entry nested
 * deeper than {@link MAX_JSON_DEPTH} levels is one error (pointer to where the limit is passed) and
 * is not loaded, the other entries and files are; a file larger than {@link MAX_TASK_FILE_BYTES}
 * is not read.
 *
 * @param dirs dataset folders (absolute or relative to the process cwd)
 * @returns tasks sorted by id (numeric-aware), papers, problems, and files that were not JSON at all
 */
export async function loadDatasets(dirs: string[]): Promise<LoadResult> {
  const problems: Problem[] = [];
  const unreadableFiles: string[] = [];
  const taskFiles: string[] = [];
  const paperFiles: string[] = [];
  for (const dir of dirs) {
    const abs = path.resolve(dir);
    const files = await listFiles(abs, problems);
    for (const f of files) {
      if (f.endsWith('.jsonl')) paperFiles.push(f);
      else if (f.endsWith('.json')) taskFiles.push(f);
    }
  }
  taskFiles.sort();
  paperFiles.sort();

  const papers = new Map<string, PaperInfo>();
  for (const f of paperFiles) await readPaperList(f, papers, problems, unreadableFiles);

  const tasks: Task[] = [];
  const seen = new Map<string, string>();
  const contents = await Promise.all(taskFiles.map((f) => readBounded(f).then((t) => ({ t }), (e: Error) => ({ e }))));
  taskFiles.forEach((file, i) => {
    const c = contents[i];
    if ('e' in c) {
      problems.push({ file, pointer: '', severity: 'error', message: `cannot read file: ${c.e.message}` });
      unreadableFiles.push(file);
      return;
    }
    let json: unknown;
    try {
      json = JSON.parse(c.t);
    } catch (e: any) {
      problems.push({ file, pointer: '', severity: 'error', message: `not JSON: ${errorMessage(e)}` });
      unreadableFiles.push(file);
      return;
    }
    const { conference, paperId } = identify(file);
    const key = `${conference}/${paperId}`;
    const first = seen.get(key);
    if (first !== undefined) {
      problems.push({ file, pointer: '', severity: 'error', message: `second task file for paper ${key} (first: ${first}): not merged, ignored` });
      return;
    }
    seen.set(key, file);
    const parsed = TaskFileSchema.safeParse(json);
    if (!parsed.success) {
      const issue = parsed.error.issues[0];
      problems.push({ file, pointer: toPointer(issue.path.map(String)), severity: 'error',
        message: issue.path.length === 0 ? `task file must be an object with "questions", found ${describe(json)}` : `"questions" ${issue.message.toLowerCase()}` });
      return;
    }
    if (parsed.data.questions.length === 0) {
      problems.push({ file, pointer: '/questions', severity: 'warning', message: '"questions" is empty: no tasks in this file' });
      return;
    }
    const paper = papers.get(key);
    const deepElsewhere = tooDeepAt({ ...parsed.data, questions: [] });
    if (deepElsewhere) problems.push({ file, pointer: toPointer(deepElsewhere), severity: 'warning', message: `nested deeper than ${MAX_JSON_DEPTH} levels: ignored (not used)` });
    parsed.data.questions.forEach((q, index) => {
      const deep = tooDeepAt(q, MAX_JSON_DEPTH - 2);
      if (deep) {
        problems.push({ file, pointer: toPointer(['questions', String(index), ...deep]), severity: 'error',
          message: `task entry nested deeper than ${MAX_JSON_DEPTH} levels (arrays/objects inside each other): not loaded` });
        return;
      }
      const task = normaliseTask(q, { file, conference, paperId, index }, paper);
      tasks.push(task);
      problems.push(...task.problems);
    });
  });
  tasks.sort((a, b) => ID_ORDER.compare(a.id, b.id));
  logger.info(`loaded ${tasks.length} tasks from ${taskFiles.length} files in ${dirs.length} folders, ${problems.length} problems`);
  return { tasks, papers: [...papers.values()], problems, unreadableFiles };
}

/** Finds a task by id (`<conference>/<paperId>/<index>`). */
export function findTask(result: LoadResult, id: string): Task | undefined {
  return result.tasks.find((t) => t.id === id);
}

/** RFC 6901 pointer of a path of keys. */
function toPointer(at: string[]): string {
  return at.map((k) => '/' + escapePointer(k)).join('');
}

/** A file's text; refuses (throws, with the reason) a file larger than {@link MAX_TASK_FILE_BYTES}. */
async function readBounded(file: string): Promise<string> {
  const { size } = await fsp.stat(file);
  if (size > MAX_TASK_FILE_BYTES) throw new Error(`file is ${size} bytes, larger than the limit of ${MAX_TASK_FILE_BYTES} bytes: not read`);
  return fsp.readFile(file, 'utf8');
}

function identify(file: string): { conference: string; paperId: string } {
  const parent = path.basename(path.dirname(file));
  const stem = path.basename(file, '.json');
  const fromName = stem.split('_')[0];
  if (fromName === parent) return { conference: path.basename(path.dirname(path.dirname(file))), paperId: parent };
  return { conference: parent, paperId: fromName };
}

async function listFiles(dir: string, problems: Problem[]): Promise<string[]> {
  let stat;
  try {
    stat = await fsp.stat(dir);
  } catch {
    problems.push({ file: dir, pointer: '', severity: 'error', message: 'dataset folder does not exist' });
    return [];
  }
  if (stat.isFile()) {
    if (/\.jsonl?$/.test(dir)) return [dir];
    problems.push({ file: dir, pointer: '', severity: 'error', message: 'not a dataset folder, a task file (.json) or a paper list (.jsonl)' });
    return [];
  }
  const entries = await fsp.readdir(dir, { recursive: true, withFileTypes: true });
  const files = entries
    .filter((e) => e.isFile() && /\.jsonl?$/.test(e.name))
    .map((e) => path.join(e.parentPath ?? (e as any).path, e.name))
    .filter((f) => !/[\\/](node_modules|\.git)[\\/]/.test(f));
  if (files.length === 0) problems.push({ file: dir, pointer: '', severity: 'warning', message: 'no task files (*.json) or paper lists (*.jsonl) in this folder' });
  return files;
}

async function readPaperList(file: string, papers: Map<string, PaperInfo>, problems: Problem[], unreadable: string[]): Promise<void> {
  let text: string;
  try {
    text = await readBounded(file);
  } catch (e: any) {
    problems.push({ file, pointer: '', severity: 'error', message: `cannot read file: ${errorMessage(e)}` });
    unreadable.push(file);
    return;
  }
  const conference = path.basename(file, '.jsonl');
  // Every line, the unterminated last one too: paper lists are written by hand and often end without a newline.
  splitLines(text).forEach(({ text: line, line: n }) => {
    const i = n - 1;
    if (line.trim() === '') return;
    let json: unknown;
    try {
      json = JSON.parse(line);
    } catch (e: any) {
      problems.push({ file, pointer: `/${i}`, severity: 'error', message: `line ${i + 1} is not JSON: ${errorMessage(e)}` });
      return;
    }
    const deep = tooDeepAt(json);
    if (deep) {
      problems.push({ file, pointer: `/${i}`, severity: 'error', message: `line ${i + 1} is nested deeper than ${MAX_JSON_DEPTH} levels: ignored` });
      return;
    }
    const r = PaperLineSchema.safeParse(json);
    if (!r.success) {
      problems.push({ file, pointer: `/${i}`, severity: 'warning', message: `line ${i + 1}: ${r.error.issues.map((x) => `${x.path.join('.') || 'line'} ${x.message}`).join('; ')}` });
      return;
    }
    const p = r.data;
    const suggested = p.reproduce_eval && typeof p.reproduce_eval === 'object' ? (p.reproduce_eval as Record<string, unknown>).code : undefined;
    papers.set(`${conference}/${p.id}`, {
      id: p.id,
      conference,
      title: p.title,
      url: p.url || undefined,
      pdfUrl: p.pdf_url || undefined,
      codeUrl: p.code_url?.trim() ? p.code_url.trim() : undefined,
      abstract: p.abstract,
      reproduceDifficulty: typeof p.reproduce_difficulty === 'string' ? p.reproduce_difficulty : undefined,
      suggestedCodeUrl: typeof suggested === 'string' && suggested.trim() ? suggested.trim() : undefined,
      localRepo: p.local_repo ? path.resolve(path.dirname(file), p.local_repo) : undefined,
    });
  });
}

function describe(v: unknown): string {
  return v === null ? 'null' : Array.isArray(v) ? 'an array' : typeof v;
}
