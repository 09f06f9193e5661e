import { z } from 'zod';
import type { ChatMessage } from '../llm/client';

/**
 * Prompts and response schemas of the LLM judge (version {@link PROMPT_VERSION} in types.ts).
 * Every response is a JSON object checked with these zod schemas; the model never returns a
 * score, only verdicts with evidence, and scores are computed in code.
 */

export const DesignAnswer = z.object({
  variables: z.array(z.object({
    id: z.string(),
    verdict: z.enum(['matched', 'partial', 'missing']),
    quote: z.string(),
    reason: z.string(),
  }).strict()),
  solver_items: z.array(z.object({ id: z.string(), matches: z.array(z.string()) }).strict()),
}).strict();
export type DesignAnswer = z.infer<typeof DesignAnswer>;

export const ConclusionAnswer = z.object({
  verdict: z.enum(['correct', 'incorrect']),
  reason: z.string(),
  numbers: z.array(z.object({ expected: z.string(), solver: z.string(), agrees: z.boolean() }).strict()),
}).strict();
export type ConclusionAnswer = z.infer<typeof ConclusionAnswer>;

export const ImplementationAnswer = z.object({
  verdict: z.enum(['met', 'partial', 'unmet']),
  reason: z.string(),
  hunks: z.array(z.object({ path: z.string(), new_start: z.number().int().min(1), new_end: z.number().int().min(1) }).strict()),
  ground_truth: z.array(z.object({ path: z.string(), start_line: z.number().int().min(1), end_line: z.number().int().min(1) }).strict()),
}).strict();
export type ImplementationAnswer = z.infer<typeof ImplementationAnswer>;

export const MonitorAnswer = z.object({
  paper_access: z.boolean(),
  git_operations: z.boolean(),
  faked_or_nonexperimental_data: z.boolean(),
  reason: z.string(),
  cited_lines: z.array(z.number().int().min(1)),
}).strict();
export type MonitorAnswer = z.infer<typeof MonitorAnswer>;

const SYSTEM = 'You are a careful reviewer for EXP-Bench, a benchmark of AI research experiments. '
  + 'You compare a solver\'s work with the ground truth and answer only with a JSON object that matches the given schema. '
  + 'Judge meaning, not wording. Never invent evidence: quote or cite only what is shown to you.';

/** Ground-truth variables labelled V1…, solver design items labelled S1…. */
export function designMessages(vars: { id: string; role: string; name: string; description: string; values?: string[] }[], items: { id: string; text: string }[]): ChatMessage[] {
  const gt = vars.map((v) => `${v.id} [${v.role}] ${v.name}: ${v.description}${v.values?.length ? ` (values: ${v.values.join(', ')})` : ''}`).join('\n');
  const sol = items.map((s) => `${s.id}: ${s.text}`).join('\n');
  return [
    { role: 'system', content: SYSTEM },
    {
      role: 'user', content:
        'Task: for EACH ground-truth design variable, say whether the solver\'s experiment design covers it: '
        + '"matched" (same variable, same role), "partial" (related but incomplete, e.g. missing values or a different role), or "missing". '
        + 'Quote the solver\'s words that match (empty string when missing). Then for EACH solver item list the ids of the ground-truth variables it matches (empty list when none).\n'
        + 'Use every V id exactly once in "variables" and every S id exactly once in "solver_items".\n\n'
        + `## Ground-truth variables\n${gt}\n\n## Solver design items\n${sol}`,
    },
  ];
}

export function conclusionMessages(expectedOutcome: string, question: string, conclusion: string): ChatMessage[] {
  return [
    { role: 'system', content: SYSTEM },
    {
      role: 'user', content:
        'Task: decide whether the solver\'s conclusion agrees with the expected outcome of the experiment (same direction and substance of the finding; numbers within the precision the expected outcome states). '
        + 'List the numbers you compared (expected vs solver, as written) and whether each agrees; an empty list when there are none.\n\n'
        + `## Question\n${question}\n\n## Expected outcome (ground truth)\n${expectedOutcome}\n\n## Solver's conclusion\n${conclusion}`,
    },
  ];
}

export interface ShownHunk { path: string; newStart: number; newEnd: number; text: string }

/**
 * One requirement (or, for type-3 tasks, the method) against the selected hunks and the
 * ground-truth ranges read from the pinned pristine checkout.
 */
export function implementationMessages(args: {
  basis: 'requirement' | 'method';
  index: number; total: number; text: string;
  groundTruth: { path: string; startLine: number; endLine: number; numbered: string }[];
  hunks: ShownHunk[];
  omittedHunks: number;
  hunkCharLimit: number;
}): ChatMessage[] {
  const gt = args.groundTruth.length
    ? args.groundTruth.map((g) => `### ${g.path} lines ${g.startLine}-${g.endLine}\n${g.numbered}`).join('\n\n')
    : '(no ground-truth code is available for this item)';
  const hunks = args.hunks.length
    ? args.hunks.map((h) => `### hunk ${h.path} new lines ${h.newStart}-${h.newEnd}\n${h.text.length > args.hunkCharLimit ? h.text.slice(0, args.hunkCharLimit) + '\n[... hunk truncated]' : h.text}`).join('\n\n')
    : '(the patch has no hunks)';
  const what = args.basis === 'requirement'
    ? `Requirement ${args.index} of ${args.total}: ${args.text}`
    : `This task has no requirement list; judge the implementation against the method:\n${args.text}`;
  return [
    { role: 'system', content: SYSTEM },
    {
      role: 'user', content:
        'Task: decide whether the solver\'s patch implements the item below: "met", "partial" or "unmet". '
        + 'Cite the solver\'s hunks that implement it by path and new-side line range (new_start..new_end, inside one hunk shown below), '
        + 'and the ground-truth lines you compared them with (path, start_line..end_line, inside the ranges shown below). '
        + '"met" and "partial" need at least one hunk citation. Cite only what is shown.\n\n'
        + `## Item\n${what}\n\n## Ground truth (pinned pristine checkout)\n${gt}\n\n## Solver's patch (selected hunks${args.omittedHunks ? `; ${args.omittedHunks} other hunks not shown` : ''})\n${hunks}`,
    },
  ];
}

export function monitorMessages(numberedLog: string, omittedLines: number): ChatMessage[] {
  return [
    { role: 'system', content: SYSTEM },
    {
      role: 'user', content:
        'Task: review the solver\'s session log for rule violations. The rules: no reading the paper (arXiv, OpenReview, PDFs, proceedings); '
        + 'no git operations on the repository history; no faked or non-experimental results (hard-coded numbers instead of running the experiment). '
        + 'Set each flag to true only with evidence, and cite the log line numbers (the numbers before each line) that show it; '
        + 'cite an empty list when every flag is false.\n\n'
        + `## Session log${omittedLines ? ` (${omittedLines} lines not shown)` : ''}\n${numberedLog}`,
    },
  ];
}
