import type { HarnessAnswers } from '../session/answers';
import type { Task } from '../tasks/types';
import type { PristineSource } from './pristine';
import type { DesignResult, DesignVerdict, ExecutionResult, ImplementationResult, RequirementVerdict } from './types';

/** Everything a judge (LLM or heuristic) looks at for one session. */
export interface JudgeInput {
  task: Task;
  /** `private/answers.json`; undefined when the solver never submitted (a solver failure, scored as such). */
  answers?: HarnessAnswers;
  /** The solver's patch (unified diff against the `task start` commit). */
  patch: string;
  /** `private/verify/latest.json` as read (any shape of the verify room's record; see {@link executionFrom}). */
  verify?: unknown;
  /** `private/events.jsonl` text. */
  eventsJsonl?: string;
  /** Pinned pristine checkout; undefined when none was found (noted; ground-truth citations then fail). */
  pristine?: PristineSource;
  /** Paths masked in the workspace (manifest), for the monitor's masked-path rule. */
  maskedPaths: string[];
}

export interface JudgeOptions {
  /** Credit of a `partial` verdict in the record's recall/score (0..1). Default 0.5. */
  partialCredit?: number;
  /** Characters of hunk text shown per implementation call. Default 60000. */
  hunkBudgetChars?: number;
  /** Characters of ground-truth text shown per implementation call. Default 20000. */
  groundTruthBudgetChars?: number;
  /** Characters of log shown to the LLM monitor. Default 60000. */
  logBudgetChars?: number;
  /** Parallel model calls. Default 4. */
  concurrency?: number;
  signal?: AbortSignal;
  now?: () => Date;
}

export type RoleVar = { id: string; role: DesignVerdict['role']; name: string; description: string; values?: string[] };

/** Ground-truth design variables in order constants, independent, dependent, labelled V1…. */
export function designVariables(task: Task): RoleVar[] {
  const out: RoleVar[] = [];
  const add = (role: RoleVar['role'], vs: Task['design']['constants']) =>
    vs.forEach((v) => out.push({ id: `V${out.length + 1}`, role, name: v.name, description: v.description, values: v.values }));
  add('constant', task.design.constants);
  add('independent', task.design.independent);
  add('dependent', task.design.dependent);
  return out;
}

/** Counts, recall (with `partialCredit`) and precision of design verdicts. */
export function scoreDesign(status: DesignResult['status'], verdicts: DesignVerdict[], solverItems: DesignResult['solverItems'], partialCredit: number, error?: string): DesignResult {
  const matched = verdicts.filter((v) => v.verdict === 'matched').length;
  const partial = verdicts.filter((v) => v.verdict === 'partial').length;
  const total = verdicts.length;
  const ok = status === 'ok' && total > 0;
  return {
    status, verdicts, solverItems,
    counts: { matched, partial, missing: total - matched - partial, total },
    recall: ok ? (matched + partialCredit * partial) / total : null,
    precision: ok && solverItems.length > 0 ? solverItems.filter((s) => s.relevant).length / solverItems.length : null,
    ...(error ? { error } : {}),
  };
}

/** Counts and score of requirement verdicts: (met + partialCredit·partial) / total; null if any harness error. */
export function scoreImplementation(basis: ImplementationResult['basis'], verdicts: RequirementVerdict[], partialCredit: number, hunksTotal: number, unseen: ImplementationResult['unseenHunks']): ImplementationResult {
  const n = (v: string) => verdicts.filter((x) => x.verdict === v).length;
  const harnessError = verdicts.filter((x) => x.status === 'harness_error').length;
  const counts = { met: n('met'), partial: n('partial'), unmet: n('unmet'), unverifiable: n('unverifiable'), harnessError, total: verdicts.length };
  const status = verdicts.length === 0 ? 'not_applicable' : harnessError > 0 ? 'harness_error' : 'ok';
  return {
    status, basis, verdicts, counts,
    score: status === 'ok' ? (counts.met + partialCredit * counts.partial) / counts.total : null,
    hunksTotal, unseenHunks: unseen,
  };
}

/**
 * The execution part (E) from the verify room's record (src/core/verify/record.ts):
 * `E_exit`, `exitCode`, `E_clean`, `E_claims` ({claims: [{text, found}], allFound}), `lint`
 * (findings with `rule` and `message`). Read tolerantly: a field of another shape becomes null.
 */
export function executionFrom(verify: unknown): ExecutionResult {
  if (!verify || typeof verify !== 'object') {
    return { available: false, exit: null, mode: null, exitCode: null, clean: null, claimsAllFound: null, claims: [], lint: [] };
  }
  const r = verify as Record<string, any>;
  const exit = typeof r.E_exit === 'boolean' ? r.E_exit : typeof r.exitCode === 'number' ? r.exitCode === 0 : null;
  const claims = Array.isArray(r.E_claims?.claims)
    ? r.E_claims.claims.map((c: any) => ({ text: String(c?.text ?? c?.value ?? ''), found: c?.found === true })) : [];
  const lint = Array.isArray(r.lint)
    ? r.lint.map((l: any) => typeof l === 'string' ? l : `${l?.severity ? `${l.severity} ` : ''}${l?.rule ? `${l.rule}: ` : ''}${l?.message ?? JSON.stringify(l)}`) : [];
  return {
    available: true, exit, mode: typeof r.mode === 'string' ? r.mode : null,
    exitCode: typeof r.exitCode === 'number' ? r.exitCode : null,
    clean: typeof r.E_clean === 'boolean' ? r.E_clean : null,
    claimsAllFound: typeof r.E_claims?.allFound === 'boolean' ? r.E_claims.allFound : null,
    claims, lint,
  };
}

/** Solver design items as text (empty list when no answers). */
export function solverDesignItems(answers: HarnessAnswers | undefined): string[] {
  if (!answers) return [];
  const items = Array.isArray(answers.design) ? answers.design : answers.design.split(/\r?\n/);
  return items.map((s) => s.trim()).filter((s) => s !== '');
}
