import { promises as fsp } from 'node:fs';
import * as path from 'node:path';
import { parse, printParseErrorCode, type ParseError } from 'jsonc-parser';
import { z } from 'zod';
import { ExpBenchError } from '../errors';
import { COMMON_SPEC_FIELDS, type RunSetSpec } from '../runs/spec';
import { errorMessage } from '../util/errors';

/** Largest campaign spec read, bytes. */
const MAX_SPEC_BYTES = 4 * 1024 * 1024;

/** A baseliner's id: a folder-name part (it is in each of their units' names). */
const PersonId = z.string().regex(/^[A-Za-z0-9][\w.+-]{0,63}$/, 'must be 1-64 letters, digits, or . _ + - (a folder-name part)');

/** One person of a campaign (issue 32). `name` and `email` are for the organiser only; never shown to other people. */
export const BaselinerSpec = z.strictObject({
  id: PersonId,
  name: z.string().min(1).max(200).optional(),
  email: z.string().min(3).max(320).regex(/^[^\s@]+@[^\s@]+$/, 'must be an e-mail address').optional(),
});
export type BaselinerSpec = z.infer<typeof BaselinerSpec>;

/** The `baseline` part of a campaign spec (docs/campaigns.md "The spec"). */
export const BaselineSpec = z.strictObject({
  baseliners: z.array(BaselinerSpec).min(1).max(1000),
  /** `balanced`: every person every task unless `perPerson.tasks` caps it, spread over papers; `fixed`: `fixed` lists them. */
  assignment: z.enum(['balanced', 'fixed']),
  perPerson: z.strictObject({
    /** Tasks per person (balanced: the same number for everyone). */
    tasks: z.number().int().positive().optional(),
    /** Working hours per person: one pool shared by their sessions, tracked across them (budget.ts: the total of their working time by the host clock never passes it). */
    hours: z.number().positive().max(1000).optional(),
  }).optional(),
  /** `fixed`: person id → task ids or globs (`*` = one segment), each among the spec's tasks. */
  fixed: z.record(PersonId, z.array(z.string().min(1)).min(1)).optional(),
  /** Allow AI in the windows (default false: every AI feature off, docs/proctored.md "No AI"). */
  allowAi: z.boolean().optional(),
});
export type BaselineSpec = z.infer<typeof BaselineSpec>;

/**
 * A campaign spec (version 1 of the run-set spec, with `baseline` in place of `agents`/`import`):
 * the same `name`, `datasets`, `tasks`, `source`, `image`, `verify`, `judge`, `limits` as a run set.
 */
export const CampaignSpecSchema = z.strictObject({
  ...COMMON_SPEC_FIELDS,
  baseline: BaselineSpec,
}).superRefine((s, ctx) => {
  const ids = s.baseline.baseliners.map((b) => b.id);
  const dup = ids.find((id, i) => ids.indexOf(id) !== i);
  if (dup) ctx.addIssue({ code: 'custom', path: ['baseline', 'baseliners'], message: `two baseliners have the id ${dup}` });
  const b = s.baseline;
  if (b.assignment === 'fixed') {
    if (!b.fixed) ctx.addIssue({ code: 'custom', path: ['baseline', 'fixed'], message: 'assignment "fixed" needs "fixed": {person id: [task ids]}' });
    for (const p of Object.keys(b.fixed ?? {})) if (!ids.includes(p)) ctx.addIssue({ code: 'custom', path: ['baseline', 'fixed', p], message: `${p} is not among the baseliners` });
    if (b.perPerson?.tasks !== undefined) ctx.addIssue({ code: 'custom', path: ['baseline', 'perPerson', 'tasks'], message: 'perPerson.tasks is for assignment "balanced" ("fixed" lists each person\'s tasks)' });
  } else if (b.fixed) {
    ctx.addIssue({ code: 'custom', path: ['baseline', 'fixed'], message: '"fixed" is for assignment "fixed"' });
  }
});
export type CampaignSpec = z.infer<typeof CampaignSpecSchema>;

/**
 * Reads a campaign spec file (JSONC) and checks it against {@link CampaignSpecSchema}; relative
 * paths (datasets, split files, source) are made absolute from the file's folder.
 * @throws ExpBenchError BAD_INPUT naming the file and, for a schema error, the field (JSON pointer) and what is wrong
 */
export async function readCampaignSpec(file: string): Promise<{ spec: CampaignSpec; text: string; file: string }> {
  const abs = path.resolve(file);
  let text: string;
  try {
    const st = await fsp.stat(abs);
    if (!st.isFile()) throw new Error('not a regular file');
    if (st.size > MAX_SPEC_BYTES) throw new Error(`larger than ${MAX_SPEC_BYTES} bytes`);
    text = await fsp.readFile(abs, 'utf8');
  } catch (e) {
    throw new ExpBenchError('BAD_INPUT', abs, `cannot read the campaign spec: ${errorMessage(e)}`, { cause: e });
  }
  return { spec: parseCampaignSpec(text, abs), text, file: abs };
}

/** {@link readCampaignSpec} on text already read (`file` names it in errors and anchors relative paths). */
export function parseCampaignSpec(text: string, file: string): CampaignSpec {
  const errors: ParseError[] = [];
  const json: unknown = parse(text, errors, { allowTrailingComma: true, disallowComments: false });
  if (errors.length) {
    const e = errors[0];
    const line = text.slice(0, e.offset).split('\n').length;
    throw new ExpBenchError('BAD_INPUT', file, `not JSON (with comments): ${printParseErrorCode(e.error)} at line ${line}`);
  }
  const r = CampaignSpecSchema.safeParse(json);
  if (!r.success) {
    const listed = r.error.issues.slice(0, 5).map((i) => `${i.path.length ? '/' + i.path.join('/') : '(root)'}: ${i.message}`).join('; ');
    throw new ExpBenchError('BAD_INPUT', file, `not a valid campaign spec: ${listed}`);
  }
  const s = r.data;
  const dir = path.dirname(file);
  const abs = (p: string) => path.resolve(dir, p);
  const isUrl = (p: string) => /^[a-z][a-z0-9+.-]*:\/\//i.test(p) || /^[^/\s@]+@[^/\s:]+:/.test(p);
  return {
    ...s,
    ...(s.datasets ? { datasets: s.datasets.map(abs) } : {}),
    tasks: s.tasks.map((t) => (typeof t === 'string' ? t : { file: abs(t.file) })),
    ...(s.source ? { source: isUrl(s.source) ? s.source : abs(s.source) } : {}),
  };
}

/**
 * The run-set part of a campaign spec: what `runs` planning reads (tasks, datasets, source, image,
 * limits, verify, judge). It has neither agents nor import: its units are people's.
 */
export function runSetPart(s: CampaignSpec): RunSetSpec {
  const { baseline: _baseline, ...rest } = s;
  return rest as RunSetSpec;
}
