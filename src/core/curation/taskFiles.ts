import { promises as fsp } from 'node:fs';
import * as path from 'node:path';
import type { LintFinding, Unreadable } from './types';
import { errorMessage } from '../util/errors';

/** The task files to lint, the paper lists beside them, and what was left out or could not be read. */
export interface TaskFileSelection {
  /** Task files to lint (absolute, sorted): the final file of each paper, or every file when a paper has none. */
  taskFiles: string[];
  /** Paper lists (`*.jsonl`), for the loader's paper join. */
  paperLists: string[];
  /** One `intermediate-file` finding per left-out file. */
  findings: LintFinding[];
  unreadable: Unreadable[];
}

/** `<id>_complete_final.json`, or a variant of it such as `<id>_complete_final_sonnet37.json` (seen in EXP-Bench's pipeline outputs). */
const FINAL = /_complete_final(?:_[^\\/]+)?\.json$/;
const EXACT_FINAL = /_complete_final\.json$/;

/**
 * Lists the task files under `inputs` (folders, searched recursively without `node_modules` and
 * `.git`, or single `.json` files) and picks one per paper: files are grouped by folder and paper
 * id (the file name without a leading `temp_`, up to the first `_` or `.json`). In a group with a
 * final file — `<id>_complete_final.json`, else the first (by name) variant `<id>_complete_final_<tag>.json`
 * — every other file (`<id>.json`, `temp_<id>.json`, `<id>_*.json`, the other variants) is a
 * pipeline intermediate: reported once (rule `intermediate-file`, pointer `''`) and not linted.
 * Without a final file, `temp_<id>.json` beside `<id>.json` is the intermediate. Never throws: a
 * missing input is an {@link Unreadable}.
 */
export async function selectTaskFiles(inputs: string[]): Promise<TaskFileSelection> {
  const json: string[] = [];
  const paperLists: string[] = [];
  const unreadable: Unreadable[] = [];
  for (const input of inputs) {
    const abs = path.resolve(input);
    const st = await fsp.stat(abs).catch((e: NodeJS.ErrnoException) => e);
    if (st instanceof Error) {
      unreadable.push({ input: abs, message: st.code === 'ENOENT' ? 'does not exist' : `cannot read: ${st.message}` });
      continue;
    }
    if (st.isFile()) {
      if (abs.endsWith('.jsonl')) paperLists.push(abs);
      else json.push(abs);
      continue;
    }
    let entries;
    try {
      entries = await fsp.readdir(abs, { recursive: true, withFileTypes: true });
    } catch (e) {
      unreadable.push({ input: abs, message: `cannot list the folder: ${errorMessage(e)}` });
      continue;
    }
    for (const e of entries) {
      if (!e.isFile() || !/\.jsonl?$/.test(e.name)) continue;
      const file = path.join(e.parentPath ?? (e as unknown as { path: string }).path, e.name);
      if (/[\\/](node_modules|\.git)[\\/]/.test(path.relative(abs, file))) continue;
      (file.endsWith('.jsonl') ? paperLists : json).push(file);
    }
  }
  const groups = new Map<string, string[]>();
  for (const f of [...new Set(json)].sort()) {
    const key = `${path.dirname(f)}\0${paperKey(path.basename(f))}`;
    groups.set(key, [...(groups.get(key) ?? []), f]);
  }
  const taskFiles: string[] = [];
  const findings: LintFinding[] = [];
  for (const files of groups.values()) {
    const final = files.find((f) => EXACT_FINAL.test(f)) ?? files.find((f) => FINAL.test(f));
    const plain = files.find((f) => !path.basename(f).startsWith('temp_') && !FINAL.test(f));
    const preferred = final ?? (files.some((f) => path.basename(f).startsWith('temp_')) ? plain : undefined);
    if (preferred === undefined) {
      taskFiles.push(...files);
      continue;
    }
    taskFiles.push(preferred);
    for (const f of files) {
      if (f === preferred) continue;
      findings.push({
        file: f, pointer: '', rule: 'intermediate-file', severity: 'warning',
        message: final && FINAL.test(f)
          ? `another final file beside ${path.basename(preferred)}: not linted (${EXACT_FINAL.test(preferred) ? 'the plain final file' : 'the first variant by name'} is preferred)`
          : `pipeline intermediate beside ${path.basename(preferred)}: not linted (the ${final ? 'final' : 'non-temp'} file is preferred)`,
      });
    }
  }
  return { taskFiles: taskFiles.sort(), paperLists: [...new Set(paperLists)].sort(), findings, unreadable };
}

/** `temp_123.json` → `123`; `123_complete_final.json` → `123`; `123.json` → `123`. */
function paperKey(name: string): string {
  return name.replace(/^temp_/, '').replace(/\.json$/, '').split('_')[0];
}
