import { z } from 'zod';

/**
 * zod schemas for the EXP-Bench task-file family (`tasks/<conference>/<paperId>/*.json`) and the
 * paper lists (`papers/<conference>.jsonl`). Every field is optional in practice (see
 * docs/exp-bench-harness.md, "Task fields"), so the schemas here check each field on its own and the
 * normaliser turns each failure into a {@link Problem} instead of rejecting the task.
 */

/** The top level of a task file. `questions` is checked separately so that one bad entry never hides the rest. */
export const TaskFileSchema = z.looseObject({
  questions: z.array(z.unknown()),
  follow_up_work_ideas: z.unknown().optional(),
  main_takeaways: z.unknown().optional(),
});

/** Text fields of a task entry; `method` may also be an object in real files (rendered as text, with a warning). */
export const TextField = z.string();
export const PathList = z.array(z.string());
export const RequirementList = z.array(z.string());

/** A design-variable group: `{ name: description | [values] | {nested} }`. */
export const VariableGroup = z.record(z.string(), z.unknown());

/** One line of a paper list. Only `id` is required; the rest is metadata. */
export const PaperLineSchema = z.looseObject({
  /** A number id must be a whole number written exactly (a safe integer ≥ 0): `1e+23` would name no paper. */
  id: z.union([z.string(), z.number().int().nonnegative().max(Number.MAX_SAFE_INTEGER)]).transform(String),
  title: z.string().optional(),
  url: z.string().optional(),
  abstract: z.string().optional(),
  pdf_url: z.string().optional(),
  code_url: z.string().optional(),
  reproduce_difficulty: z.unknown().optional(),
  reproduce_eval: z.unknown().optional(),
  local_repo: z.string().optional(),
});
export type PaperLine = z.infer<typeof PaperLineSchema>;

/** The field names of a task entry that the model knows; anything else is kept in `raw` and reported as info. */
export const KNOWN_TASK_FIELDS = new Set([
  'question', 'hypothesis', 'method', 'agent_instructions', 'expected_outcome', 'design_complexity',
  'experiment_design_complexity', 'requirements', 'source', 'masked_source', 'usage_instructions',
  'no_answer', 'mode', 'design_ambiguity', 'experiment_design_ambiguity', 'experiment_setup_complexity',
  'experiment_setup_ambiguity', 'setup_ambiguity', 'experiment_constraints', 'random_uncertainty',
  'systematic_uncertainty', 'experiment_uncertainty', 'subsection_source', 'reproduction_steps',
  'related_tables', 'related_figures',
]);
