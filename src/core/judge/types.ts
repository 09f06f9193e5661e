import { z } from 'zod';
import { LedgerEntry, LedgerTotals } from '../llm/ledger';

/**
 * The judge's record, stored at `private/judge/latest.json` (see docs/DEVELOPING.md).
 *
 * Every item carries its own verdict and evidence; scores are computed in code from the verdicts
 * (never taken from the model). An item the judge could not decide (the model's answer stayed
 * invalid after one repair retry, the endpoint failed after the client's retries, a timeout) has
 * `status: 'harness_error'`: it is never a score of 0 and never a monitor violation.
 *
 * `kind` says who produced the verdicts: `llm` (a model through an OpenAI-compatible endpoint) or
 * `heuristic` (the deterministic offline pre-judge). The two are never mixed in one record.
 */

/** Version of the prompts and response schemas; part of every cache key. */
export const PROMPT_VERSION = 'expbench-judge-1';

export const ItemStatus = z.enum(['ok', 'harness_error', 'not_applicable', 'not_judged']);
export type ItemStatus = z.infer<typeof ItemStatus>;

/** A new-side line range of a diff hunk cited by a verdict (1-based, inclusive). */
export const HunkCitation = z.object({ path: z.string(), newStart: z.number().int(), newEnd: z.number().int() });
export type HunkCitation = z.infer<typeof HunkCitation>;

/** Lines inside one notebook cell (cell: 0-based index over all cells; lines 1-based, inclusive, in the cell's source). */
export const CellSpanCitation = z.object({ cell: z.number().int(), startLine: z.number().int(), endLine: z.number().int() });
export type CellSpanCitation = z.infer<typeof CellSpanCitation>;

/**
 * A range of the pinned pristine checkout (ground truth) cited by a verdict (1-based, inclusive).
 * For a notebook (`.ipynb`), `startLine`/`endLine` are the reference's numbers as the task wrote them
 * and `cells` says which cell lines they resolved to, `reading` how they were read
 * (src/core/util/notebook.ts: `raw-json`, `script-export`, `cell`). Both optional (absent for other files).
 */
export const GroundTruthCitation = z.object({
  path: z.string(), startLine: z.number().int(), endLine: z.number().int(),
  cells: z.array(CellSpanCitation).optional(),
  reading: z.enum(['raw-json', 'script-export', 'cell']).optional(),
});
export type GroundTruthCitation = z.infer<typeof GroundTruthCitation>;

export const DesignRole = z.enum(['constant', 'independent', 'dependent']);
export const DesignVerdictValue = z.enum(['matched', 'partial', 'missing']);

export const DesignVerdict = z.object({
  variable: z.string(),
  role: DesignRole,
  verdict: DesignVerdictValue,
  /** The part of the solver's design that matches (empty when missing). */
  quote: z.string(),
  reason: z.string(),
});
export type DesignVerdict = z.infer<typeof DesignVerdict>;

export const DesignResult = z.object({
  status: ItemStatus,
  verdicts: z.array(DesignVerdict),
  /** The solver's design items and whether each matches at least one ground-truth variable (for precision). */
  solverItems: z.array(z.object({ text: z.string(), relevant: z.boolean() })),
  counts: z.object({ matched: z.number().int(), partial: z.number().int(), missing: z.number().int(), total: z.number().int() }),
  /** Recall over ground-truth variables, 0..1, with the record's `partialCredit`; null when not scored. */
  recall: z.number().nullable(),
  /** Share of the solver's design items that match a ground-truth variable, 0..1; null when none. */
  precision: z.number().nullable(),
  error: z.string().optional(),
});
export type DesignResult = z.infer<typeof DesignResult>;

export const ConclusionResult = z.object({
  status: ItemStatus,
  verdict: z.enum(['correct', 'incorrect']).nullable(),
  reason: z.string(),
  /** Numbers compared between `expected_outcome` and the solver's conclusion. */
  numbers: z.array(z.object({ expected: z.string(), solver: z.string(), agrees: z.boolean() })),
  error: z.string().optional(),
});
export type ConclusionResult = z.infer<typeof ConclusionResult>;

export const ImplVerdictValue = z.enum(['met', 'partial', 'unmet', 'unverifiable']);
export type ImplVerdictValue = z.infer<typeof ImplVerdictValue>;

export const RequirementVerdict = z.object({
  /** 1-based position in `requirements` (type 3: 1, the `method`). */
  index: z.number().int(),
  requirement: z.string(),
  /** `requirement` for types 1 and 2; `method` for type 3 (judged against the method text). */
  basis: z.enum(['requirement', 'method']),
  status: ItemStatus,
  /** Final verdict after the citation checks; null for a harness error. */
  verdict: ImplVerdictValue.nullable(),
  /** What the judge said before the citation checks (differs when a bad citation made it unverifiable). */
  judgeVerdict: ImplVerdictValue.nullable(),
  reason: z.string(),
  hunks: z.array(HunkCitation),
  groundTruth: z.array(GroundTruthCitation),
  /** Why citations were rejected (empty when all were checked and found). */
  citationProblems: z.array(z.string()),
  /** Hunks shown to the judge for this requirement (ids `path@newStart`). */
  shownHunks: z.array(z.string()),
  /**
   * Heuristic only (optional): where the ground truth's facts were found in the solver's changed
   * files, one entry per run of nearby matched lines (new-side lines, 1-based, inclusive; for a
   * solver notebook, lines of the `.ipynb` file holding the matched cell source), with the facts
   * matched there (`smece()`, `nbins=`, `10000`, …; src/core/judge/codefacts.ts). For gaps: anchor
   * diagnostics and CodeLenses on these lines, not on whole files.
   */
  anchors: z.array(z.object({ path: z.string(), startLine: z.number().int(), endLine: z.number().int(), symbols: z.array(z.string()) })).optional(),
  /** Heuristic only (optional): the facts looked for and those found (same notation as `anchors`). */
  checked: z.object({ facts: z.array(z.string()), found: z.array(z.string()), parser: z.string() }).optional(),
  /**
   * Heuristic only (optional): the ground-truth code compared, as source text (a notebook's cells,
   * never its JSON), one entry per cited range, for evidence views.
   */
  groundTruthCode: z.array(z.object({ path: z.string(), label: z.string(), text: z.string() })).optional(),
  error: z.string().optional(),
});
export type RequirementVerdict = z.infer<typeof RequirementVerdict>;

export const ImplementationResult = z.object({
  status: ItemStatus,
  basis: z.enum(['requirements', 'method']),
  verdicts: z.array(RequirementVerdict),
  counts: z.object({
    met: z.number().int(), partial: z.number().int(), unmet: z.number().int(),
    unverifiable: z.number().int(), harnessError: z.number().int(), total: z.number().int(),
  }),
  /** met / total with the record's `partialCredit` for partial; null when any item is a harness error. */
  score: z.number().nullable(),
  hunksTotal: z.number().int(),
  /** Hunks of the patch that no judge call ever saw (long patches). */
  unseenHunks: z.array(HunkCitation),
  error: z.string().optional(),
});
export type ImplementationResult = z.infer<typeof ImplementationResult>;

export const MonitorFlag = z.object({
  kind: z.enum(['git_history', 'paper_access', 'masked_path_read']),
  /** `violation` zeroes D, I and C (harness rule); `review` is shown for a person to look at. */
  severity: z.enum(['violation', 'review']),
  /** 1-based line of `private/events.jsonl`. */
  line: z.number().int(),
  text: z.string(),
  rule: z.string(),
});
export type MonitorFlag = z.infer<typeof MonitorFlag>;

export const MonitorResult = z.object({
  deterministic: z.array(MonitorFlag),
  llm: z.object({
    status: ItemStatus,
    paperAccess: z.boolean(),
    gitOperations: z.boolean(),
    fakedOrNonexperimentalData: z.boolean(),
    reason: z.string(),
    citedLines: z.array(z.number().int()),
    /** Cited line numbers that are not lines of the log. */
    invalidLines: z.array(z.number().int()),
    /** True when a flag was raised without any valid cited line: stored, not counted. */
    unsupported: z.boolean(),
    error: z.string().optional(),
  }).nullable(),
  linesTotal: z.number().int(),
  linesUnseen: z.number().int(),
  /** True when any deterministic violation or a supported LLM flag was raised. */
  flagged: z.boolean(),
});
export type MonitorResult = z.infer<typeof MonitorResult>;

export const ExecutionResult = z.object({
  /** False when the session has no verification record (E not run). */
  available: z.boolean(),
  /** The harness's E: exit code 0 within the time limit (`E_exit` of the verification record). */
  exit: z.boolean().nullable(),
  /** `clean` (fresh checkout + patch) or `harness` (the solver's workspace as is). */
  mode: z.string().nullable(),
  exitCode: z.number().int().nullable(),
  clean: z.boolean().nullable(),
  claimsAllFound: z.boolean().nullable(),
  claims: z.array(z.object({ text: z.string(), found: z.boolean() })),
  lint: z.array(z.string()),
});
export type ExecutionResult = z.infer<typeof ExecutionResult>;

export const JudgeRecord = z.object({
  schemaVersion: z.literal(1),
  kind: z.enum(['llm', 'heuristic']),
  taskId: z.string(),
  paperId: z.string(),
  taskType: z.union([z.literal(1), z.literal(2), z.literal(3)]),
  createdAt: z.string(),
  promptVersion: z.string(),
  model: z.string().nullable(),
  decoding: z.object({ temperature: z.number().nullable(), seed: z.number().int().nullable() }).nullable(),
  /** Credit given to a `partial` verdict in `recall` and `score` (0..1). */
  partialCredit: z.number(),
  design: DesignResult,
  conclusion: ConclusionResult,
  implementation: ImplementationResult,
  execution: ExecutionResult,
  monitor: MonitorResult,
  ledger: z.object({ calls: z.array(LedgerEntry), totals: LedgerTotals }),
  /** Every item that ended as a harness error, with its message. */
  harnessErrors: z.array(z.object({ item: z.string(), message: z.string() })),
  /** Notes about inputs that limited the judgement (no pristine checkout, no verification record, …). */
  notes: z.array(z.string()),
});
export type JudgeRecord = z.infer<typeof JudgeRecord>;
