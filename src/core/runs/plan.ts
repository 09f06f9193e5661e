import { promises as fsp } from 'node:fs';
import * as path from 'node:path';
import { ExpBenchError } from '../errors';
import { resolveTaskPin, type TaskPin } from '../flows/prepareTask';
import { readPriceTable } from '../llm/ledger';
import { bundledDatasetDir } from '../paths';
import type { Resources } from '../placement/types';
import { loadDatasets } from '../tasks/loader';
import type { LoadResult, Task } from '../tasks/types';
import { errorMessage } from '../util/errors';
import { collectImports, sha256File } from './imports';
import { hashOf, unitKey, type KeyParts } from './keys';
import { agentName, specAgents, specDefaults, type RunSetSpec } from './spec';
import type { Actor } from './state';
import { wildcard } from './wildcard';

/** One unit as planned (the `unit.planned` record without `v`, `at`, `type`). */
export interface UnitPlan {
  unit: string;
  name: string;
  task: string;
  attempt: number;
  actor: Actor;
  resources: Resources;
  keyParts: KeyParts;
  /** The unit's session folder, relative to the run set's folder: `units/<name>`. */
  dir: string;
  source: string;
  commit: string | null;
  image: string;
}

/** What {@link planRunSet} found. */
export interface RunSetPlan {
  units: UnitPlan[];
  /** Imported records that match no selected task, with the reason (nothing is planned for them). */
  skipped: Array<{ files: string[]; reason: string }>;
  loaded: LoadResult;
}

/** Default needs of a unit where neither the task's environment nor the spec's `limits` say. */
export const DEFAULT_RESOURCES = { cpus: 1, memoryMiB: 2048, gpus: 0 } as const;

/** The dataset folders of a spec: its `datasets`, else `$EXPBENCH_DATASETS` (path-delimited) and the bundled sample. */
export function specDatasets(spec: RunSetSpec, env: NodeJS.ProcessEnv = process.env): string[] {
  if (spec.datasets?.length) return spec.datasets;
  const fromEnv = (env.EXPBENCH_DATASETS ?? '').split(path.delimiter).filter(Boolean).map((d) => path.resolve(d));
  return [...new Set([...fromEnv, bundledDatasetDir()])];
}

/**
 * The spec as `runs start` records it: its `datasets`, when it names none, are the caller's
 * (`$EXPBENCH_DATASETS`, each relative folder resolved against `cwd`, then the bundled sample), so
 * a unit, which runs in another folder and maybe on another machine, reads the same folders.
 * Paths written in the spec were made absolute from the spec file's folder by `readSpec`.
 */
export function pinSpecPaths(spec: RunSetSpec, env: NodeJS.ProcessEnv = process.env, cwd = process.cwd()): RunSetSpec {
  if (spec.datasets?.length) return spec;
  const fromEnv = (env.EXPBENCH_DATASETS ?? '').split(path.delimiter).filter(Boolean).map((d) => path.resolve(cwd, d));
  return { ...spec, datasets: [...new Set([...fromEnv, bundledDatasetDir()])] };
}

/**
 * Plans a run set: the tasks the spec selects (ids, globs, split files; a selector that matches
 * nothing is an error naming it), each task's pin, image and environment (src/core/flows/prepareTask.ts
 * `resolveTaskPin`: the curation file, else the task; the spec's `source` and `image` win), and one
 * unit per task × actor × attempt (agents), or per imported record (import), each with its
 * resources (docs/placement.md) and its key (docs/runs.md "Units and their keys").
 * @throws ExpBenchError BAD_INPUT naming the selector, the price file or the import path that is wrong; what resolveTaskPin throws (a curation file that is not valid)
 */
export async function planRunSet(spec: RunSetSpec, o: { env?: NodeJS.ProcessEnv; loaded?: LoadResult } = {}): Promise<RunSetPlan> {
  const loaded = o.loaded ?? await loadDatasets(specDatasets(spec, o.env));
  const tasks = await selectTasks(spec, loaded);
  const d = specDefaults(spec);
  const pins = new Map<string, Promise<TaskPin>>();
  const pinOf = (t: Task) => {
    let p = pins.get(t.id);
    if (!p) { p = resolveTaskPin(t, { source: spec.source, image: spec.image }); pins.set(t.id, p); }
    return p;
  };
  const units: UnitPlan[] = [];
  const skipped: RunSetPlan['skipped'] = [];
  for (const a of specAgents(spec)) {
    const actor: Actor = {
      kind: 'agent', name: agentName(a), model: a.model,
      ...(a.maxSteps !== undefined ? { maxSteps: a.maxSteps } : {}), ...(a.maxTokens !== undefined ? { maxTokens: a.maxTokens } : {}),
      ...(a.budgetUsd !== undefined ? { budgetUsd: a.budgetUsd } : {}), ...(a.maxMinutes !== undefined ? { maxMinutes: a.maxMinutes } : {}),
      ...(a.network !== undefined ? { network: a.network } : {}), ...(a.prices ? { prices: a.prices } : {}),
    };
    const actorKey = await actorKeyOf(actor);
    for (const t of tasks) for (let k = 1; k <= d.attempts; k++) units.push(await planUnit(spec, t, actor, k, { actorKey, pin: await pinOf(t) }));
  }
  if (spec.import) {
    const selected = new Map(tasks.map((t) => [t.id, t]));
    const found = await collectImports(spec.import.from, loaded);
    skipped.push(...found.skipped);
    for (const r of found.records) {
      const task = selected.get(r.task);
      if (!task) { skipped.push({ files: r.files.map((f) => f.path), reason: `task ${r.task} is not among the spec's tasks` }); continue; }
      const actor: Actor = { kind: 'import', name: spec.import.name ?? r.actorName, files: r.files, ...(r.trajectoryId ? { trajectoryId: r.trajectoryId } : {}) };
      units.push(await planUnit(spec, task, actor, r.attempt, { actorKey: importKey(actor), pin: await pinOf(task) }));
    }
  }
  const seen = new Map<string, UnitPlan>();
  for (const u of units) {
    const twin = seen.get(u.name);
    if (twin) throw new ExpBenchError('BAD_INPUT', u.name, `two units have this name (${twin.task} and ${u.task}): give the actors distinct names`);
    seen.set(u.name, u);
  }
  return { units, skipped, loaded };
}

/**
 * One unit of `task` × `actor` × `attempt`: its pin, image and environment (resolveTaskPin, unless
 * given), its resources and its key. `runs exec` and `runs resume` plan a recorded unit again this
 * way to see whether its key still holds.
 */
export async function planUnit(spec: RunSetSpec, task: Task, actor: Actor, attempt: number, known: { actorKey?: unknown; pin?: TaskPin } = {}): Promise<UnitPlan> {
  const pin = known.pin ?? await resolveTaskPin(task, { source: spec.source, image: spec.image });
  const actorKey = known.actorKey ?? await actorKeyOf(actor);
  const keyParts: KeyParts = {
    task: hashOf(task.raw), actor: hashOf(actorKey), image: pin.environment.image, pin: hashOf({ source: pin.source, commit: pin.commit ?? null }),
  };
  const name = `${task.conference}-${task.paperId}-${task.index}.${actor.name}.a${attempt}`;
  return {
    unit: unitKey(keyParts, attempt), name, task: task.id, attempt, actor, resources: resourcesOf(spec, actor, pin),
    keyParts, dir: `units/${name}`, source: pin.source, commit: pin.commit ?? null, image: pin.environment.image,
  };
}

/**
 * What of an actor goes into a unit's key: for an agent its model, limits, network and the price
 * its model has in its price table (read now); for an import its files' names and SHA-256 (hashed
 * now, so an imported file that changed changes the key); for a person the baseliner's id.
 * @throws ExpBenchError BAD_INPUT naming a price file that cannot be read
 */
export async function actorKeyOf(actor: Actor): Promise<unknown> {
  if (actor.kind === 'agent') {
    const prices = actor.prices ? await readPriceTable(actor.prices) : undefined;
    const price = prices && Object.hasOwn(prices, actor.model) ? prices[actor.model] : null;
    return {
      kind: 'agent', model: actor.model, maxSteps: actor.maxSteps ?? null, maxTokens: actor.maxTokens ?? null, budgetUsd: actor.budgetUsd ?? null,
      maxMinutes: actor.maxMinutes ?? null, network: actor.network ?? false, price,
    };
  }
  if (actor.kind === 'import') {
    const files = await Promise.all(actor.files.map(async (f) => ({ path: f.path, sha256: await sha256File(f.path).catch(() => 'unreadable') })));
    return importKey({ ...actor, files });
  }
  return { kind: 'human', baseliner: actor.baseliner };
}

function importKey(actor: Extract<Actor, { kind: 'import' }>): unknown {
  const files = actor.files.map((f) => ({ name: path.basename(f.path), sha256: f.sha256 })).sort((a, b) => a.name.localeCompare(b.name));
  return { kind: 'import', files, trajectoryId: actor.trajectoryId ?? null };
}

/**
 * What a unit needs (docs/placement.md `Resources`): the task's environment (the curation file's
 * `environment.gpus` and `limits.cpus` / `limits.memoryMiB`), else the spec's `limits`, else
 * {@link DEFAULT_RESOURCES}; its time limit is the spec's `limits.timeSeconds`, else the agent's
 * working time (`maxMinutes`, default 60) plus the verifier's limit (`limits.timeSeconds` of the
 * environment, default one hour) plus ten minutes for preparing, judging and starting.
 */
export function resourcesOf(spec: RunSetSpec, actor: Actor, pin: Pick<TaskPin, 'environment'>): Resources {
  const env = pin.environment;
  const l = spec.limits ?? {};
  const verifySeconds = env.limits?.timeSeconds ?? 3600;
  const agentSeconds = actor.kind === 'agent' ? Math.ceil((actor.maxMinutes ?? 60) * 60) : 0;
  const envLimits = env.limits as { cpus?: number; memoryMiB?: number } | undefined;
  return {
    cpus: envLimits?.cpus ?? l.cpus ?? DEFAULT_RESOURCES.cpus,
    memoryMiB: envLimits?.memoryMiB ?? l.memoryMiB ?? DEFAULT_RESOURCES.memoryMiB,
    gpus: env.gpus ?? l.gpus ?? DEFAULT_RESOURCES.gpus,
    timeSeconds: l.timeSeconds ?? agentSeconds + verifySeconds + 600,
  };
}

/**
 * The tasks a spec's `tasks` select, in the order selected (first mention), each once.
 * @throws ExpBenchError BAD_INPUT naming a selector that matches no task, or a split file that cannot be read
 */
export async function selectTasks(spec: Pick<RunSetSpec, 'tasks'>, loaded: LoadResult): Promise<Task[]> {
  const out = new Map<string, Task>();
  const patterns: Array<{ pattern: string; from: string }> = [];
  for (const sel of spec.tasks) {
    if (typeof sel === 'string') { patterns.push({ pattern: sel, from: 'the spec' }); continue; }
    let text: string;
    try {
      text = await fsp.readFile(sel.file, 'utf8');
    } catch (e) {
      throw new ExpBenchError('BAD_INPUT', sel.file, `cannot read the split file: ${errorMessage(e)}`);
    }
    text.split('\n').forEach((raw, i) => {
      const hash = raw.indexOf('#');
      const line = (hash < 0 ? raw : raw.slice(0, hash)).trim();
      if (line) patterns.push({ pattern: line, from: `${sel.file}:${i + 1}` });
    });
  }
  for (const { pattern, from } of patterns) {
    const segs = pattern.split('/');
    if (segs.length !== 3 || segs.some((s) => !s)) throw new ExpBenchError('BAD_INPUT', `${pattern} (${from})`, 'a task selector is <conference>/<paperId>/<index>, each part a name or a glob with *');
    const hits = loaded.tasks.filter((t) => {
      const parts = t.id.split('/');
      return segs.every((s, i) => wildcard(s, parts[i]));
    });
    if (!hits.length) throw new ExpBenchError('BAD_INPUT', `${pattern} (${from})`, 'matches no task of the datasets');
    for (const t of hits.sort(byId)) if (!out.has(t.id)) out.set(t.id, t);
  }
  return [...out.values()];
}

function byId(a: Task, b: Task): number {
  return a.conference.localeCompare(b.conference) || a.paperId.localeCompare(b.paperId) || a.index - b.index;
}
