import { z } from 'zod';
import { normaliseDesign, text, escapePointer } from './design';
import { MAX_JSON_DEPTH } from './limits';
import { parseRequirementRefs, normalisePath } from './refs';
import { KNOWN_TASK_FIELDS, PathList, RequirementList, TextField } from './schemas';
import type { PaperInfo, Problem, Requirement, Task, TaskType } from './types';

/**
 * Turns one entry of a task file's `questions` into a {@link Task}. Never throws: every odd field
 * becomes a problem with the JSON pointer of the field (`/questions/<index>/<field>`).
 *
 * Task type follows the reference harness: 1 when `masked_source` is a non-empty list, 2 when only
 * `source` is, 3 otherwise (only the README is masked; implementation judged against `method`).
 */
export function normaliseTask(
  entry: unknown, at: { file: string; conference: string; paperId: string; index: number }, paper?: PaperInfo,
): Task {
  const pointer = `/questions/${at.index}`;
  const problems: Problem[] = [];
  const report = (p: string, severity: Problem['severity'], message: string) => problems.push({ file: at.file, pointer: p, severity, message });
  const obj: Record<string, unknown> = entry !== null && typeof entry === 'object' && !Array.isArray(entry) ? (entry as Record<string, unknown>) : {};
  if (obj !== entry) report(pointer, 'error', `task entry must be an object, found ${entry === null ? 'null' : Array.isArray(entry) ? 'an array' : typeof entry}`);

  const str = (key: string, opts: { required?: boolean; allowObject?: boolean } = {}): string => {
    const v = obj[key];
    if (v === undefined || v === null) {
      if (opts.required) report(`${pointer}/${key}`, 'warning', `missing "${key}"`);
      return '';
    }
    const r = TextField.safeParse(v);
    if (r.success) return r.data;
    if (opts.allowObject && typeof v === 'object') {
      report(`${pointer}/${key}`, 'info', `"${key}" is ${Array.isArray(v) ? 'an array' : 'an object'}, shown as text`);
      return structuredText(v);
    }
    report(`${pointer}/${key}`, 'warning', `"${key}" must be a string, found ${typeName(v)}`);
    return typeof v === 'number' || typeof v === 'boolean' ? String(v) : '';
  };
  const list = (key: string, schema: z.ZodType<string[]>): string[] => {
    const v = obj[key];
    if (v === undefined || v === null) return [];
    if (typeof v === 'string') {
      report(`${pointer}/${key}`, 'warning', `"${key}" should be a list of strings, found one string: taken as a list of one`);
      return [v];
    }
    const r = schema.safeParse(v);
    if (r.success) return r.data;
    if (Array.isArray(v)) {
      v.forEach((x, i) => { if (typeof x !== 'string') report(`${pointer}/${key}/${i}`, 'warning', `item must be a string, found ${typeName(x)}: ignored`); });
      return v.filter((x): x is string => typeof x === 'string');
    }
    report(`${pointer}/${key}`, 'warning', `"${key}" must be a list of strings, found ${typeName(v)}: ignored`);
    return [];
  };

  let question = str('question');
  if (question === '') {
    question = str('hypothesis');
    if (question !== '') report(`${pointer}/hypothesis`, 'info', 'no "question": using "hypothesis"');
    else report(`${pointer}/question`, 'warning', 'missing "question" (and no "hypothesis")');
  }
  const source = list('source', PathList).map(normalisePath);
  const maskedSource = list('masked_source', PathList).map(normalisePath);
  const type: TaskType = maskedSource.length > 0 ? 1 : source.length > 0 ? 2 : 3;
  const defaultPath = source.length === 1 ? source[0] : undefined;
  const requirements: Requirement[] = list('requirements', RequirementList).map((t, i) => {
    const { refs, unresolved, invalid } = parseRequirementRefs(t, defaultPath);
    for (const u of unresolved) report(`${pointer}/requirements/${i}`, 'info', `reference "${u}" names no file and the task has ${source.length} source files: not resolved`);
    for (const why of invalid) report(`${pointer}/requirements/${i}`, 'warning', `reference ${why}: left out (not used as ground truth)`);
    return { text: t, refs };
  });
  // `no_answer` is, in the real files, the extraction's explanation of why no implementation was
  // found (a string); `true` is accepted too. Either marks a task with no ground-truth implementation.
  const noAnswer = obj.no_answer === true || (typeof obj.no_answer === 'string' && obj.no_answer.trim() !== '');
  const noAnswerReason = typeof obj.no_answer === 'string' ? obj.no_answer : undefined;
  if (obj.no_answer !== undefined && obj.no_answer !== null && typeof obj.no_answer !== 'boolean' && typeof obj.no_answer !== 'string') {
    report(`${pointer}/no_answer`, 'warning', `"no_answer" must be a string or a boolean, found ${typeName(obj.no_answer)}`);
  }
  if (type !== 3 && requirements.length === 0 && !noAnswer) report(`${pointer}/requirements`, 'warning', 'task has source scripts but no requirements');

  for (const key of Object.keys(obj)) {
    if (!KNOWN_TASK_FIELDS.has(key)) report(`${pointer}/${escapePointer(key)}`, 'info', `unknown field "${key}" kept as is`);
  }

  return {
    id: `${at.conference}/${at.paperId}/${at.index}`,
    conference: at.conference,
    paperId: at.paperId,
    index: at.index,
    type,
    question,
    method: str('method', { required: true, allowObject: true }),
    agentInstructions: str('agent_instructions'),
    expectedOutcome: str('expected_outcome', { required: true }),
    design: normaliseDesign(obj, pointer, report),
    requirements,
    source,
    maskedSource,
    usageInstructions: str('usage_instructions'),
    noAnswer,
    noAnswerReason,
    mode: typeof obj.mode === 'string' ? obj.mode : undefined,
    paper,
    file: at.file,
    problems,
    raw: obj,
  };
}

function typeName(v: unknown): string {
  return v === null ? 'null' : Array.isArray(v) ? 'an array' : typeof v;
}

/** An object-valued text field (for example `method` as `{task_setup: …}`) as markdown bullet lines. */
function structuredText(v: unknown, depth = 0): string {
  if (v === null || typeof v !== 'object') return text(v);
  if (depth >= MAX_JSON_DEPTH) return `${'  '.repeat(depth)}- …`;
  const pad = '  '.repeat(depth);
  if (Array.isArray(v)) return v.map((x) => `${pad}- ${typeof x === 'object' ? '\n' + structuredText(x, depth + 1) : text(x)}`).join('\n');
  return Object.entries(v as Record<string, unknown>)
    .map(([k, x]) => (x !== null && typeof x === 'object' ? `${pad}- **${k}**:\n${structuredText(x, depth + 1)}` : `${pad}- **${k}**: ${text(x)}`))
    .join('\n');
}
