import type { Severity } from '../tasks/types';

/**
 * The rules of the task lint (docs/curation.md, "Task lint"), with the severity each one gives.
 * File rules read only the task files; repository rules read the paper's repository at a commit.
 */
export const LINT_RULES = {
  // file rules
  'curation-file': { severity: 'error', needs: 'files', what: 'the paper\'s curation file (curation.jsonc) does not parse or does not fit its schema' },
  'not-loaded': { severity: 'error', needs: 'files', what: 'what the task loader (tasks validate) does not load: a second task file of a paper, an entry nested past the limit or not an object, a paper-list line; a task file with no task (warning)' },
  'intermediate-file': { severity: 'warning', needs: 'files', what: 'a pipeline intermediate (<id>.json, temp_<id>.json) beside the final task file: not linted' },
  'missing-field': { severity: 'error', needs: 'files', what: 'a field the task needs is absent or empty (error for question, method, expected_outcome; warning for the rest)' },
  'type-3-task': { severity: 'info', needs: 'files', what: 'no source and no masked_source: only the README is masked, the implementation is judged against method' },
  'duplicate-task': { severity: 'warning', needs: 'files', what: 'the same question as an earlier task' },
  'ref-not-a-file': { severity: 'warning', needs: 'files', what: 'a requirement reference that names a task field or prose, not a file (warning when written as a path)' },
  'malformed-range': { severity: 'warning', needs: 'files', what: 'a line range that is reversed, zero, not a number, beyond the limit, or has no file' },
  'requirement-no-ref': { severity: 'info', needs: 'files', what: 'a requirement of a type 1/2 task with no code reference at all' },
  // repository rules
  'masked-path-missing': { severity: 'error', needs: 'repository', what: 'a path to mask matches no file at the commit' },
  'source-path-missing': { severity: 'error', needs: 'repository', what: 'a source script (type 1) is not in the tree at the commit' },
  'ref-file-missing': { severity: 'error', needs: 'repository', what: 'a referenced file is not in the tree at the commit' },
  'ref-path-resolved': { severity: 'info', needs: 'repository', what: 'a reference by a partial path, resolved to the one file whose path ends with it' },
  'ref-path-ambiguous': { severity: 'warning', needs: 'repository', what: 'a reference by a partial path that several files end with' },
  'ref-range-past-end': { severity: 'error', needs: 'repository', what: 'a referenced range goes past the last line of its file (or cell)' },
  'ref-binary-file': { severity: 'warning', needs: 'repository', what: 'a reference to a binary file' },
  'ref-in-submodule': { severity: 'info', needs: 'repository', what: 'a reference into a submodule: not checked' },
  'ref-into-kept-file': { severity: 'info', needs: 'repository', what: 'a reference into a file the mask keeps: the referenced ground truth is visible to the solver' },
  'leak-expected-number': { severity: 'warning', needs: 'repository', what: 'a number of expected_outcome found in a kept file' },
  'leak-nested-readme': { severity: 'warning', needs: 'repository', what: 'README files below the root are kept (the harness masks the root README only)' },
  'leak-result-file': { severity: 'warning', needs: 'repository', what: 'result files (results/, outputs/, logs/ data; *results*.json|csv) are kept' },
  'leak-masked-lines': { severity: 'warning', needs: 'repository', what: 'distinctive lines of a masked file found in a kept file' },
} as const satisfies Record<string, { severity: Severity; needs: 'files' | 'repository'; what: string }>;

export type LintRule = keyof typeof LINT_RULES;

/** One finding of the lint: where in which task file, which rule, how bad, and a sentence that says exactly what was seen. */
export interface LintFinding {
  /** The task file (absolute path). */
  file: string;
  /** RFC 6901 JSON pointer into the task file (`''` for the whole file, `/questions/3/requirements/2`). */
  pointer: string;
  rule: LintRule;
  severity: Severity;
  message: string;
  /** The task id (`<conference>/<paperId>/<index>`) when the finding is about one task. */
  task?: string;
}

/** An input the lint could not read (a task file that is not JSON, a folder that does not exist, a source that cannot be had). */
export interface Unreadable {
  input: string;
  message: string;
}

/** What one lint run gives back. */
export interface LintReport {
  /** Task files linted (the final file of each paper folder), sorted. */
  files: string[];
  /** Number of task entries linted. */
  tasks: number;
  findings: LintFinding[];
  /** Findings per rule (every rule of {@link LINT_RULES}, zero included). */
  counts: Record<LintRule, number>;
  /** Findings per severity. */
  bySeverity: Record<Severity, number>;
  unreadable: Unreadable[];
  /**
   * The repositories the repository rules read: the `--source` one for every task, or else each
   * paper's pin from its curation file (`paper` = `<conference>/<paperId>`); `absent`: files of
   * the tree whose content is not in that copy's object store (not scanned; omitted when none).
   */
  repositories: Array<{ source: string; commit: string; paper?: string; absent?: number }>;
}
