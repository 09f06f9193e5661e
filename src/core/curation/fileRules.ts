import { escapePointer } from '../tasks/design';
import { parseRequirementRefs } from '../tasks/refs';
import type { Task } from '../tasks/types';
import { referenceItemIssues } from './refItems';
import type { LintFinding, LintRule } from './types';
import { LINT_RULES } from './types';

/**
 * The file rules of the task lint (docs/curation.md): they read the loaded tasks only, never a
 * repository. Rules: `missing-field`, `type-3-task`, `duplicate-task`, `ref-not-a-file`,
 * `malformed-range`, `requirement-no-ref` (the `intermediate-file` rule is the file selection's,
 * taskFiles.ts). Pure; findings in task order.
 *
 * @param tasks tasks in the order they are reported (the first of two duplicates is kept silent)
 */
export function fileRuleFindings(tasks: Task[]): LintFinding[] {
  const out: LintFinding[] = [];
  const firstByQuestion = new Map<string, Task>();
  for (const t of tasks) {
    const at = `/questions/${t.index}`;
    const add = (pointer: string, rule: LintRule, message: string, severity = LINT_RULES[rule].severity as LintFinding['severity']) =>
      out.push({ file: t.file, pointer, rule, severity, message, task: t.id });

    missingFields(t, at, add);

    if (t.type === 3) {
      const why = t.noAnswerReason ? `; no_answer: "${oneLine(t.noAnswerReason, 160)}"` : t.noAnswer ? '; no_answer: true' : '';
      add(at, 'type-3-task', `type 3: no source and no masked_source, so only the root README is masked and the implementation is judged against method${why}`);
    }

    const key = t.question.replace(/\s+/g, ' ').trim().toLowerCase();
    if (key !== '') {
      const first = firstByQuestion.get(key);
      if (first) {
        const differ = differingFields(first.raw, t.raw);
        add(`${at}/question`, 'duplicate-task', `same question as ${first.id} (${first.file === t.file ? '' : first.file}#/questions/${first.index}); ` +
          (differ.length === 0 ? 'the two entries are identical' : `the entries differ in ${differ.length} field${differ.length > 1 ? 's' : ''}: ${differ.join(', ')}`));
      } else firstByQuestion.set(key, t);
    }

    const raw = Array.isArray(t.raw.requirements) ? t.raw.requirements : typeof t.raw.requirements === 'string' ? [t.raw.requirements] : [];
    raw.forEach((text, j) => {
      if (typeof text !== 'string') return;
      const p = Array.isArray(t.raw.requirements) ? `${at}/requirements/${j}` : `${at}/requirements`;
      const issues = referenceItemIssues(text, t.source.length === 1);
      for (const i of issues) {
        if (i.kind === 'not-a-file') add(p, 'ref-not-a-file', `reference "${i.item}": ${i.why}`, i.pathShaped ? 'warning' : 'info');
        else add(p, 'malformed-range', `reference "${i.item}": ${i.why}`);
      }
      if (t.type !== 3 && issues.length === 0 && parseRequirementRefs(text, t.source.length === 1 ? t.source[0] : undefined).refs.length === 0) {
        add(p, 'requirement-no-ref', 'this step cites no file of the repository: nothing to check it against in the code');
      }
    });
  }
  return out;
}

type Add = (pointer: string, rule: LintRule, message: string, severity?: LintFinding['severity']) => void;

function missingFields(t: Task, at: string, add: Add): void {
  const raw = t.raw;
  if (isEmpty(raw.question) && isEmpty(raw.hypothesis)) add(`${at}/question`, 'missing-field', 'no "question" (and no "hypothesis"): the task asks nothing', 'error');
  if (isEmpty(raw.method)) add(`${at}/method`, 'missing-field', 'no "method": nothing to judge the design and implementation against', 'error');
  if (isEmpty(raw.expected_outcome)) add(`${at}/expected_outcome`, 'missing-field', 'no "expected_outcome": nothing to judge the conclusion against', 'error');
  const d = t.design;
  if (d.constants.length + d.independent.length + d.dependent.length === 0) {
    const key = 'design_complexity' in raw || !('experiment_design_complexity' in raw) ? 'design_complexity' : 'experiment_design_complexity';
    add(`${at}/${key}`, 'missing-field', 'no design variables (constant, independent, dependent): the design cannot be judged', 'warning');
  }
  if (t.type === 3 || t.noAnswer) return;
  for (const key of ['requirements', 'agent_instructions', 'usage_instructions']) {
    if (isEmpty(raw[key])) add(`${at}/${escapePointer(key)}`, 'missing-field', `no "${key}" in a type ${t.type} task`, 'warning');
  }
}

function isEmpty(v: unknown): boolean {
  if (v === undefined || v === null) return true;
  if (typeof v === 'string') return v.trim() === '';
  if (Array.isArray(v)) return v.length === 0;
  if (typeof v === 'object') return Object.keys(v as object).length === 0;
  return false;
}

function differingFields(a: Record<string, unknown>, b: Record<string, unknown>): string[] {
  const keys = [...new Set([...Object.keys(a), ...Object.keys(b)])].sort();
  return keys.filter((k) => JSON.stringify(a[k]) !== JSON.stringify(b[k]));
}

function oneLine(s: string, max: number): string {
  const x = s.replace(/\s+/g, ' ').trim();
  return x.length > max ? x.slice(0, max - 1) + '…' : x;
}
