import { promises as fsp } from 'node:fs';
import * as path from 'node:path';
import { parse, printParseErrorCode, type ParseError } from 'jsonc-parser';
import { z } from 'zod';
import { ExpBenchError } from '../errors';
import { PlacementSpecSchema } from '../placement/spec';
import { errorMessage } from '../util/errors';

/** Version of the run-set spec this code reads and writes (docs/runs.md, "The spec"). */
export const SPEC_VERSION = 1;
/** Largest spec file read, bytes. */
const MAX_SPEC_BYTES = 4 * 1024 * 1024;

const positiveInt = z.number().int().positive();
const name = z.string().regex(/^[A-Za-z0-9][\w.+-]{0,63}$/, 'must be 1-64 letters, digits, or . _ + - (a folder-name part)');

/** One built-in agent actor: the model and its limits (src/core/agent/loop.ts `AgentLimits`). */
export const AgentActorSpec = z.strictObject({
  /** Unique among the spec's agents; default the model (made folder-safe). Part of each unit's folder name. */
  name: name.optional(),
  /** The model, on the endpoint of EXPBENCH_AGENT_BASE_URL / OPENAI_BASE_URL (docs/agent.md). */
  model: z.string().min(1),
  maxSteps: positiveInt.optional(),
  maxTokens: positiveInt.optional(),
  budgetUsd: z.number().positive().optional(),
  /** Working time of the agent, minutes. */
  maxMinutes: z.number().positive().optional(),
  /** A price-table file `{model: {inputPerMTok, outputPerMTok}}` (USD per 1M tokens). */
  prices: z.string().min(1).optional(),
  /** Network in the work container (default false). */
  network: z.boolean().optional(),
});
export type AgentActorSpec = z.infer<typeof AgentActorSpec>;

/** Imported runs: a harness output folder or trajectory files, matched to tasks (docs/runs.md). */
export const ImportSpec = z.strictObject({
  /** Folders (searched for harness records and trajectories) and files. */
  from: z.array(z.string().min(1)).min(1),
  /** The actor's name; default the harness folders' `<agent>-<model>`, else `import`. */
  name: name.optional(),
});
export type ImportSpec = z.infer<typeof ImportSpec>;

/** What a unit needs where its task's environment does not say (docs/placement.md `Resources`). */
export const LimitsSpec = z.strictObject({
  cpus: positiveInt.max(1024).optional(),
  memoryMiB: positiveInt.optional(),
  gpus: z.number().int().nonnegative().max(64).optional(),
  timeSeconds: positiveInt.optional(),
});

export const RetrySpec = z.strictObject({
  /** Tries after a harness error (default 2). */
  max: z.number().int().nonnegative().max(20).optional(),
  /** First wait, seconds (default 10), doubled each time, at most 600. */
  backoffSeconds: z.number().nonnegative().max(3600).optional(),
  /** Placements after an interruption (timeout, preemption, node failure, a lost process; default 3). */
  requeues: z.number().int().nonnegative().max(100).optional(),
});

/** A task id or glob, or a split file. */
export const TaskSelector = z.union([z.string().min(1), z.strictObject({ file: z.string().min(1) })]);

/**
 * The fields every spec of version 1 has, a run set's and a campaign's (src/core/campaigns/spec.ts):
 * `version`, `name`, `datasets`, `tasks`, `source`, `image`, `verify`, `judge`, `limits`.
 */
export const COMMON_SPEC_FIELDS = {
  version: z.literal(SPEC_VERSION),
  name: z.string().min(1).max(200),
  datasets: z.array(z.string().min(1)).optional(),
  /** Task ids and globs (`*` = one segment), and split files. */
  tasks: z.array(TaskSelector).min(1),
  source: z.string().min(1).optional(),
  image: z.string().min(1).optional(),
  verify: z.boolean().optional(),
  judge: z.boolean().optional(),
  limits: LimitsSpec.optional(),
};

/** The run-set spec, version 1 (docs/runs.md). */
export const RunSetSpecSchema = z.strictObject({
  ...COMMON_SPEC_FIELDS,
  agent: AgentActorSpec.optional(),
  agents: z.array(AgentActorSpec).min(1).optional(),
  import: ImportSpec.optional(),
  /** A run a limit stopped is submitted as it stands (default true), so the table counts it as a run. */
  submitOnStop: z.boolean().optional(),
  attempts: positiveInt.max(100).optional(),
  concurrency: positiveInt.max(1024).optional(),
  retries: RetrySpec.optional(),
  placement: PlacementSpecSchema.optional(),
}).superRefine((s, ctx) => {
  const kinds = [s.agent || s.agents ? 'agents' : undefined, s.import ? 'import' : undefined].filter(Boolean);
  if (kinds.length !== 1) ctx.addIssue({ code: 'custom', path: [], message: 'give exactly one of "agent"/"agents" or "import": what each unit does' });
  if (s.agent && s.agents) ctx.addIssue({ code: 'custom', path: ['agent'], message: 'give "agent" or "agents", not both' });
  const names = (s.agents ?? (s.agent ? [s.agent] : [])).map(agentName);
  const dup = names.find((n, i) => names.indexOf(n) !== i);
  if (dup) ctx.addIssue({ code: 'custom', path: ['agents'], message: `two agents are named ${dup}: give each a unique "name"` });
});
export type RunSetSpec = z.infer<typeof RunSetSpecSchema>;

/** An agent's name in unit names: its `name`, else its model made folder-safe. */
export function agentName(a: AgentActorSpec): string {
  return a.name ?? (a.model.replace(/[^\w.+-]+/g, '-').replace(/^[^A-Za-z0-9]+/, '').slice(0, 64) || 'agent');
}

/** The spec's agents (`agent` or `agents`). */
export function specAgents(s: RunSetSpec): AgentActorSpec[] {
  return s.agents ?? (s.agent ? [s.agent] : []);
}

/** Defaults of the spec's optional parts, resolved. */
export function specDefaults(s: RunSetSpec): { verify: boolean; judge: boolean; submitOnStop: boolean; attempts: number; concurrency: number; retries: { max: number; backoffSeconds: number; requeues: number } } {
  return {
    verify: s.verify ?? true, judge: s.judge ?? true, submitOnStop: s.submitOnStop ?? true, attempts: s.attempts ?? 1, concurrency: s.concurrency ?? 2,
    retries: { max: s.retries?.max ?? 2, backoffSeconds: s.retries?.backoffSeconds ?? 10, requeues: s.retries?.requeues ?? 3 },
  };
}

/**
 * Reads a spec file (JSONC: comments and trailing commas) and checks it against
 * {@link RunSetSpecSchema}. Relative paths in it (datasets, split files, source, import, prices)
 * are made absolute from the file's folder; a `source` that is a URL stays as it is.
 * @throws ExpBenchError BAD_INPUT naming the file and, for a schema error, the field (JSON pointer) and what is wrong
 */
export async function readSpec(file: string): Promise<{ spec: RunSetSpec; text: string; file: string }> {
  const abs = path.resolve(file);
  let text: string;
  try {
    const st = await fsp.stat(abs);
    if (!st.isFile()) throw new Error('not a regular file');
    if (st.size > MAX_SPEC_BYTES) throw new Error(`larger than ${MAX_SPEC_BYTES} bytes`);
    text = await fsp.readFile(abs, 'utf8');
  } catch (e) {
    throw new ExpBenchError('BAD_INPUT', abs, `cannot read the run-set spec: ${errorMessage(e)}`, { cause: e });
  }
  return { spec: parseSpec(text, abs), text, file: abs };
}

/** {@link readSpec} on text already read (`file` names it in errors and anchors relative paths). */
export function parseSpec(text: string, file: string): RunSetSpec {
  const errors: ParseError[] = [];
  const json: unknown = parse(text, errors, { allowTrailingComma: true, disallowComments: false });
  if (errors.length) {
    const e = errors[0];
    const line = text.slice(0, e.offset).split('\n').length;
    throw new ExpBenchError('BAD_INPUT', file, `not JSON (with comments): ${printParseErrorCode(e.error)} at line ${line}`);
  }
  if (json && typeof json === 'object' && 'version' in json && (json as { version: unknown }).version !== SPEC_VERSION) {
    throw new ExpBenchError('BAD_INPUT', file, `run-set spec version ${JSON.stringify((json as { version: unknown }).version)} is not known (this tool reads version ${SPEC_VERSION})`);
  }
  const r = RunSetSpecSchema.safeParse(json);
  if (!r.success) {
    const listed = r.error.issues.slice(0, 5).map((i) => `${i.path.length ? '/' + i.path.join('/') : '(root)'}: ${i.message}`).join('; ');
    throw new ExpBenchError('BAD_INPUT', file, `not a valid run-set spec: ${listed}`);
  }
  return absolutise(r.data, path.dirname(file));
}

const isUrl = (s: string) => /^[a-z][a-z0-9+.-]*:\/\//i.test(s) || /^[^/\s@]+@[^/\s:]+:/.test(s);

function absolutise(s: RunSetSpec, dir: string): RunSetSpec {
  const abs = (p: string) => path.resolve(dir, p);
  const agents = (a: AgentActorSpec) => ({ ...a, ...(a.prices ? { prices: abs(a.prices) } : {}) });
  return {
    ...s,
    ...(s.datasets ? { datasets: s.datasets.map(abs) } : {}),
    tasks: s.tasks.map((t) => (typeof t === 'string' ? t : { file: abs(t.file) })),
    ...(s.source ? { source: isUrl(s.source) ? s.source : abs(s.source) } : {}),
    ...(s.agent ? { agent: agents(s.agent) } : {}),
    ...(s.agents ? { agents: s.agents.map(agents) } : {}),
    ...(s.import ? { import: { ...s.import, from: s.import.from.map(abs) } } : {}),
  };
}
