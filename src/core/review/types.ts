import { z } from 'zod';

/**
 * The one schema of every human judgement on a run, a step of a run, a judge item or a task
 * (docs/review.md): reviewers' comments, tags, scores and "invalid" flags (the trajectory viewer),
 * curators' verdict flips, task verdicts, resolutions, edits, and disputes (docs/curation.md).
 * One judgement is one file; a judgement is never changed once written (a later one replaces it).
 */

/** Version of the judgement file format; a file with another version is reported, not read. */
export const JUDGEMENT_VERSION = 1;

/** What a judgement is about. */
export type Subject =
  /** A run (a trajectory or a session, see `runKeyForFile` / `runKeyForSession`), or one step of it (0-based index). */
  | { kind: 'run'; run: string; step?: number }
  /** A judge item of a task: `design:<variable>`, `requirement:<n>` (1-based), `conclusion` or `task`; `run` when it is about one run's verdict. */
  | { kind: 'item'; task: string; item: string; run?: string }
  /** A task (curators' verdicts, edits, disputes). */
  | { kind: 'task'; task: string };

export const JUDGEMENT_KINDS = ['comment', 'tag', 'score', 'invalid', 'verdict-flip', 'task-verdict', 'dispute', 'resolution', 'task-edit'] as const;
export type JudgementKind = (typeof JUDGEMENT_KINDS)[number];

/**
 * Kinds whose judgements add to a list (every one counts); all other kinds replace: the latest
 * judgement of a subject and kind is the current value, and its `before` is the value it replaced.
 */
export const LIST_KINDS: ReadonlySet<JudgementKind> = new Set<JudgementKind>(['comment', 'tag', 'dispute', 'task-edit']);

/** One judgement, as stored (docs/review.md). */
export interface Judgement {
  version: 1;
  /** Random, 16 hex characters; unique across curators. */
  id: string;
  /** ISO 8601 UTC time of the judgement (`2026-12-01T16:07:32.123Z`). */
  at: string;
  /** Who judged (`whoAmI()`: git user.email, user.name, else $USER). */
  by: string;
  subject: Subject;
  kind: JudgementKind;
  /** The judgement itself; its shape depends on `kind` ({@link VALUE_SCHEMAS}). */
  value: unknown;
  reason?: string;
  /** The value this judgement replaces (the latest of the same subject and kind), filled by the store; absent for list kinds and for the first. */
  before?: unknown;
}

const TaskId = z.string().regex(/^[^/\s]+\/[^/\s]+\/[^/\s]+$/, 'a task id <conference>/<paperId>/<index>');
const NonEmpty = z.string().trim().min(1);

export const SubjectSchema = z.discriminatedUnion('kind', [
  z.strictObject({ kind: z.literal('run'), run: NonEmpty, step: z.number().int().nonnegative().optional() }),
  z.strictObject({ kind: z.literal('item'), task: TaskId, item: NonEmpty, run: NonEmpty.optional() }),
  z.strictObject({ kind: z.literal('task'), task: TaskId }),
]);

/** A task verdict: the task is usable as is, is not, or is usable once fixed. */
export const TaskVerdictValue = z.enum(['valid', 'invalid', 'needs-fix']);
export type TaskVerdictValue = z.infer<typeof TaskVerdictValue>;

/** One RFC 6902 operation (https://www.rfc-editor.org/rfc/rfc6902): the six operations with their members. */
export const PatchOperation = z.discriminatedUnion('op', [
  z.strictObject({ op: z.literal('add'), path: z.string(), value: z.unknown() }),
  z.strictObject({ op: z.literal('replace'), path: z.string(), value: z.unknown() }),
  z.strictObject({ op: z.literal('remove'), path: z.string() }),
  z.strictObject({ op: z.literal('test'), path: z.string(), value: z.unknown() }),
  z.strictObject({ op: z.literal('move'), path: z.string(), from: z.string() }),
  z.strictObject({ op: z.literal('copy'), path: z.string(), from: z.string() }),
]);
export type PatchOperation = z.infer<typeof PatchOperation>;

/** Evidence of a dispute: a run key or id, a diff file, any other file, a free note. */
export const Evidence = z.looseObject({ run: z.string().optional(), diff: z.string().optional(), file: z.string().optional(), note: z.string().optional() });

/**
 * The shape of `value` per kind (objects keep members this version does not know, for later versions):
 * - `comment`: text; `tag`: a tag name; `score`: a finite number; `invalid`: true (marked) or false (cleared);
 * - `verdict-flip`: `{verdict, judged?}`, the curator's verdict of a judge item and the judge's at the time
 *   (equal: the verdict was accepted);
 * - `task-verdict`: `valid` | `invalid` | `needs-fix`;
 * - `dispute`: `{about, evidence[]}`, the ground-truth field disputed (`expected_outcome`, `requirements`, …);
 * - `resolution`: `{verdict?, resolves[]}`, the decision and the judgement ids it settles;
 * - `task-edit`: `{patch}`, RFC 6902 operations on the task's entry in its task file.
 */
export const VALUE_SCHEMAS: Record<JudgementKind, z.ZodType> = {
  comment: NonEmpty,
  tag: NonEmpty,
  score: z.number().finite(),
  invalid: z.boolean(),
  'verdict-flip': z.looseObject({ verdict: NonEmpty, judged: z.string().nullable().optional() }),
  'task-verdict': TaskVerdictValue,
  dispute: z.looseObject({ about: NonEmpty, evidence: z.array(Evidence) }),
  resolution: z.looseObject({ verdict: TaskVerdictValue.optional(), resolves: z.array(NonEmpty) }),
  'task-edit': z.looseObject({ patch: z.array(PatchOperation).min(1) }),
};

export const JudgementSchema = z.strictObject({
  version: z.literal(JUDGEMENT_VERSION),
  id: z.string().regex(/^[0-9a-f]{16}$/, '16 hex characters'),
  at: z.iso.datetime(),
  by: NonEmpty,
  subject: SubjectSchema,
  kind: z.enum(JUDGEMENT_KINDS),
  value: z.unknown(),
  reason: z.string().optional(),
  before: z.unknown().optional(),
}).superRefine((j, ctx) => {
  const r = VALUE_SCHEMAS[j.kind].safeParse(j.value);
  if (!r.success) ctx.addIssue({ code: 'custom', path: ['value'], message: `not a ${j.kind} value: ${r.error.issues.map((i) => `${i.path.join('.') || 'value'}: ${i.message}`).join('; ')}` });
});

/** A file of the store that could not be read as a judgement: which file and why. */
export interface ReviewProblem {
  file: string;
  message: string;
}

/** Which judgements {@link ReviewStore.list} returns: all given members must match. */
export interface ReviewFilter {
  /** Subjects with this run (a run subject, or an item subject with this `run`). */
  run?: string;
  /** Subjects with this task (item and task subjects). */
  task?: string;
  kind?: JudgementKind;
}
