import { z } from 'zod';

/** The four phases of an EXP-Bench task, in order (paper §3: design, implementation, execution, conclusion). */
export const PHASES = ['design', 'implementation', 'execution', 'conclusion'] as const;
export const PhaseSchema = z.enum(PHASES);
export type Phase = z.infer<typeof PhaseSchema>;

/** One design variable as the baseliner writes it; mirrors `DesignVariable` of the ground truth. */
export const DesignVariableSchema = z.object({
  name: z.string(),
  description: z.string(),
  values: z.array(z.string()).optional(),
});
export type DesignVariableDraft = z.infer<typeof DesignVariableSchema>;

/**
 * The structured design: constant, independent and dependent variables plus free text (the
 * groups of EXP-Bench's `design_complexity`). Stored as `private/design.json` when submitted.
 */
export const DesignDraftSchema = z.object({
  constants: z.array(DesignVariableSchema),
  independent: z.array(DesignVariableSchema),
  dependent: z.array(DesignVariableSchema),
  freeText: z.string(),
});
export type DesignDraft = z.infer<typeof DesignDraftSchema>;
