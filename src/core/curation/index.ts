/**
 * The curation room (floor 11, docs/architecture.md): what curators of EXP-Bench's ground truth
 * use. Today: the task lint (file rules and repository rules), the curation file (a paper's
 * pin and environment, versioned schema) and feasibility (can a task run here); docs/curation.md.
 */
export { CURATION_FILE, CURATION_VERSION, CurationFileSchema, curationFileFor, readCurationFile, type CurationFile, type CurationRead } from './curationFile';
export { checkFeasibility, PROBE_TIMEOUT_MS, type Feasibility, type FeasibilityNeed, type FeasibilityOptions } from './feasibility';
export { parseRequirements, type DeclaredRequirement } from './requirements';
export { lintTasks, type LintOptions } from './lint';
export { pointerSpan, type PointerSpan } from './pointer';
export { openSnapshot, readSnapshot, type RepoSnapshot } from './snapshot';
export { LINT_RULES, type LintFinding, type LintReport, type LintRule, type Unreadable } from './types';
