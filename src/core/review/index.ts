/** The review store (docs/review.md): one file per human judgement on a run, a step, a judge item or a task. */
export {
  JUDGEMENT_KINDS, JUDGEMENT_VERSION, JudgementSchema, LIST_KINDS, PatchOperation, SubjectSchema, TaskVerdictValue, VALUE_SCHEMAS,
  type Judgement, type JudgementKind, type ReviewFilter, type ReviewProblem, type Subject,
} from './types';
export { ReviewStore, compareJudgements, judgementFileName, latestOf, type NewJudgement } from './store';
export { runKeyForFile, runKeyForSession, whoAmI } from './keys';
export { describeSubject, safeSegment, subjectKey, subjectSegments } from './subject';
export { canonicalJson } from './canonical';
export { reviewFolder } from './folder';
