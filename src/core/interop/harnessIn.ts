import * as path from 'node:path';
import type { TaskOutcome } from '../metrics/types';
import { parseHarnessJudgeName, type HarnessJudgeName } from './harnessLayout';

/**
 * True when `json` looks like a reference-harness judge file: an object with at least one of
 * `design_score`, `setup_score`, `conclusion_score`.
 */
export function isHarnessJudge(json: unknown): json is Record<string, unknown> {
  return !!json && typeof json === 'object' && !Array.isArray(json)
    && ['design_score', 'setup_score', 'conclusion_score'].some((k) => k in (json as object));
}

/**
 * Reads one harness judge JSON into a metrics outcome.
 *
 * - `design_score`, `setup_score`: a number or numeric string 0-100 → score/100. Anything else
 *   (the harness stores "Error parsing response" strings) → a harness error, never 0.
 * - `conclusion_score`: "correct"/"incorrect" (any case), a boolean, or 100/0; else a harness error.
 * - `execution_success` (boolean) → E; absent → not verified.
 * - monitor booleans (`paper_access`, `git_operations`, `faked_or_nonexperimental_data`, at the top
 *   level or under `monitor`) → flagged when any is true.
 * - task id from `task_id` / `taskId` / `question_id`, else from the harness's own file name
 *   `<paperId>_task_index_<i>_iter_<k>_…_eval_judge.json` (`named`, see harnessLayout.ts; its
 *   conference from the folders, the config beside it or the dataset, else `unknown`), else from
 *   the path (`<conference>/<paperId>/<index>` folders, `<conference>/<paperId>/<index>.json`, or a
 *   `<paperId>_<index>` file name); paper id from `paper_id` or the task id. `judge_kind: "heuristic"` marks our heuristic files.
 * - `invalid` / `task_invalid` (true or a reason) → an invalid task, excluded.
 */
export function outcomeFromHarnessJudge(json: Record<string, unknown>, file: string, group: string, named?: HarnessJudgeName): TaskOutcome {
  const errors: string[] = [];
  const score = (k: 'design_score' | 'setup_score') => {
    const v = json[k];
    if (v === undefined || v === null) return { status: 'not_judged' as const };
    const n = typeof v === 'number' ? v : typeof v === 'string' && /^\s*\d+(\.\d+)?\s*$/.test(v) ? Number(v) : NaN;
    if (!Number.isFinite(n) || n < 0 || n > 100) {
      errors.push(`${k}: ${JSON.stringify(v).slice(0, 80)}`);
      return { status: 'harness_error' as const };
    }
    return { status: 'ok' as const, score: n / 100 };
  };
  const cv = json.conclusion_score;
  let conclusion: TaskOutcome['conclusion'];
  if (cv === undefined || cv === null) conclusion = { status: 'not_judged', correct: null };
  else if (typeof cv === 'boolean') conclusion = { status: 'ok', correct: cv };
  else if (typeof cv === 'string' && /^\s*(correct|incorrect)\s*$/i.test(cv)) conclusion = { status: 'ok', correct: /^\s*correct/i.test(cv) };
  else if (cv === 100 || cv === 0) conclusion = { status: 'ok', correct: cv === 100 };
  else {
    errors.push(`conclusion_score: ${JSON.stringify(cv).slice(0, 80)}`);
    conclusion = { status: 'harness_error', correct: null };
  }
  const mon = (json.monitor && typeof json.monitor === 'object' ? json.monitor : json) as Record<string, unknown>;
  const flagged = ['paper_access', 'git_operations', 'faked_or_nonexperimental_data'].some((k) => mon[k] === true);
  const taskId = idFrom(json, file, named ?? parseHarnessJudgeName(file));
  const paperId = typeof json.paper_id === 'string' ? json.paper_id : taskId.split('/').length === 3 ? taskId.split('/')[1] : `unknown:${taskId}`;
  const inv = json.invalid ?? json.task_invalid;
  const exec = json.execution_success;
  return {
    taskId, paperId, group, kind: json.judge_kind === 'heuristic' ? 'heuristic' : 'llm', source: file,
    ...(inv ? { invalid: typeof inv === 'string' ? inv : 'marked invalid in the harness file' } : {}),
    design: score('design_score'),
    implementation: score('setup_score'),
    conclusion,
    execution: { available: typeof exec === 'boolean', exit: typeof exec === 'boolean' ? exec : null, clean: null, claimsAllFound: null },
    monitorFlagged: flagged,
    harnessErrors: errors,
  };
}

function idFrom(json: Record<string, unknown>, file: string, named: HarnessJudgeName | undefined): string {
  for (const k of ['task_id', 'taskId', 'question_id']) if (typeof json[k] === 'string' && json[k]) return json[k] as string;
  if (named) return `${named.conference ?? 'unknown'}/${named.paperId}/${named.index}`;
  const parts = file.split(path.sep);
  const m = /(?:^|[\\/])([a-z]+\d{4})[\\/](\d+)[\\/](\d+)(?:\.json)?(?:[\\/]|$)/.exec(file);
  if (m) return `${m[1]}/${m[2]}/${m[3]}`;
  const f = /^(\d+)_(\d+)\b/.exec(parts[parts.length - 1]);
  if (f) {
    const conf = parts.find((p) => /^[a-z]+\d{4}$/.test(p));
    return `${conf ?? 'unknown'}/${f[1]}/${f[2]}`;
  }
  return path.basename(file, '.json');
}
