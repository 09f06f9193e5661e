/**
 * The curation room (floor 11, docs/architecture.md): what curators of EXP-Bench's ground truth
 * use: the task lint (file rules and repository rules), the curation file (a paper's pin and
 * environment, versioned schema), feasibility (can a task run here), curators' verdicts, edits,
 * disputes, the curated export and judge agreement (in the review store, docs/review.md); docs/curation.md.
 */
export { CURATION_FILE, CURATION_VERSION, CurationFileSchema, curationFileFor, readCurationFile, type CurationFile, type CurationRead } from './curationFile';
export { checkFeasibility, PROBE_TIMEOUT_MS, type Feasibility, type FeasibilityNeed, type FeasibilityOptions } from './feasibility';
export { parseRequirements, type DeclaredRequirement } from './requirements';
export { lintTasks, type LintOptions } from './lint';
export { pointerSpan, type PointerSpan } from './pointer';
export { openSnapshot, readSnapshot, type RepoSnapshot } from './snapshot';
export { LINT_RULES, type LintFinding, type LintReport, type LintRule, type Unreadable } from './types';
export { resolveVerdicts, curatorQueue, type TaskVerdictState } from './verdicts';
export { applyJsonPatch, deepEqual, parsePointer } from './jsonPatch';
export { affectedSessions, applyEdits, curatedTaskFile, editedTask, editsOf, type AffectedSession } from './edits';
export { EXPORT_MANIFEST, exportCurated, knownIssuesText, type ExportManifest, type ExportOptions, type ExportedTask } from './export';
export { addDispute, PROCTORED_SOCKET, type DisputeInput } from './disputes';
export {
  agreementMarkdown, agreementReport, collectJudgedItems, formatEstimate, itemsOfRecord, judgeAgreement, judgeName, PHASE_LABELS, phaseOfItem,
  type AgreementReport, type AgreementRow, type CuratorRow, type JudgedItem, type Phase,
} from './agreement';
export { buildQueue, editedEntry, filterQueue, paperOf, QUEUE_STATES, taskHistory, type CuratorPair, type DeskFilter, type DeskQueue, type DeskRow, type HistoryEntry, type QueueState } from './desk';
export { describeOperations, editFromScratch, scratchText } from './scratchEdit';
export { readValidationRuns, VALIDATION_RECORD, type ValidationProblem, type ValidationRun } from './validations';
