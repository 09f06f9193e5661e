/**
 * The normalised EXP-Bench task model. One {@link Task} per entry of a task file's `questions`.
 * Field names follow EXP-Bench's own (`masked_source` → `maskedSource`, …) in camelCase.
 */

/** A line range in a repository file referenced by a requirement. Lines are 1-based, inclusive. */
export interface RequirementRef {
  /** Repository-relative path, without the `/workspace/` prefix (for example `src/train.py`). */
  path: string;
  /** First line (1-based); `null` when the reference names a whole file (`(/workspace/run.sh)`). */
  startLine: number | null;
  /** Last line (1-based, inclusive; equals startLine for a single line); `null` for a whole file. */
  endLine: number | null;
  /** Notebooks only: the cell the lines are counted in (`…ipynb:8-13 in cell 8`). */
  cell?: number;
}

/** One implementation step of `requirements`, with its parsed references (possibly none). */
export interface Requirement {
  text: string;
  refs: RequirementRef[];
}

/** One ground-truth design variable. `values` is set when the task lists values (independent variables often do). */
export interface DesignVariable {
  name: string;
  description: string;
  values?: string[];
}

/** Ground-truth design, normalised from `design_complexity` and its variants. */
export interface DesignGroundTruth {
  constants: DesignVariable[];
  independent: DesignVariable[];
  dependent: DesignVariable[];
}

/**
 * Task type, by the reference harness's rules: 1 = has `masked_source`; 2 = has `source` only;
 * 3 = neither (only the README is masked; implementation judged against `method`).
 */
export type TaskType = 1 | 2 | 3;

/** Paper metadata from `papers/<conference>.jsonl`, joined by paper id. */
export interface PaperInfo {
  id: string;
  conference: string;
  title?: string;
  url?: string;
  pdfUrl?: string;
  /** Missing (undefined) when the paper list has no or an empty `code_url`: the user must supply a repository. */
  codeUrl?: string;
  abstract?: string;
  reproduceDifficulty?: string;
  /** `reproduce_eval.code` of the paper list, a repository suggestion when `code_url` is empty. */
  suggestedCodeUrl?: string;
  /** Bundled samples only: a repository folder shipped with the extension, absolute path. */
  localRepo?: string;
}

export type Severity = 'error' | 'warning' | 'info';

/** Anything odd found while loading, pointing at the exact place with a JSON pointer (RFC 6901). */
export interface Problem {
  file: string;
  pointer: string;
  severity: Severity;
  message: string;
}

export interface Task {
  /** `<conference>/<paperId>/<index>`, index into `questions`. */
  id: string;
  conference: string;
  paperId: string;
  index: number;
  type: TaskType;
  /** `question`, or `hypothesis` when `question` is absent. */
  question: string;
  method: string;
  agentInstructions: string;
  /** Ground truth conclusion (`expected_outcome`). Never shown to solvers. */
  expectedOutcome: string;
  /** Ground truth design. Never shown to solvers. */
  design: DesignGroundTruth;
  requirements: Requirement[];
  /** Repository-relative ground-truth script paths (`source`), `/workspace/` removed. */
  source: string[];
  /** Repository-relative paths masked before the task is attempted (`masked_source`). */
  maskedSource: string[];
  usageInstructions: string;
  /** True when the extraction found no ground-truth implementation (`no_answer`). */
  noAnswer: boolean;
  /** The extraction's explanation when `no_answer` is a string (as in the real files). */
  noAnswerReason?: string;
  mode?: string;
  paper?: PaperInfo;
  /** The task file it came from (absolute path). */
  file: string;
  /** Problems that concern this task only. */
  problems: Problem[];
  /** The raw entry of `questions`, for interop and for fields not modelled here. */
  raw: Record<string, unknown>;
}

/** Result of loading one or more dataset folders. */
export interface LoadResult {
  tasks: Task[];
  papers: PaperInfo[];
  problems: Problem[];
  /** Files that were not JSON at all (CLI exit code 2). */
  unreadableFiles: string[];
}
