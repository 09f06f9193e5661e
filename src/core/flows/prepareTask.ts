import * as path from 'node:path';
import { curationFileFor, readCurationFile, type CurationFile } from '../curation';
import { ExpBenchError } from '../errors';
import { connectDocker, inspectImage } from '../sandbox';
import { readJsonIfExists } from '../util/fs';
import { SessionLayout } from '../layout';
import type { Task } from '../tasks/types';
import type { VerifyLimits } from '../verify';
import type { Manifest, ManifestEnvironment, ManifestPin } from '../workspace/manifest';
import { DEFAULT_IMAGE, prepareSession, type PrepareOptions } from '../workspace/prepare';

/** What a preparation of a task will use, and where each part came from. */
export interface TaskPin {
  /** The repository to prepare from. */
  source: string;
  /** Where `source` came from: the caller, the curation file, or the task (`local_repo`, `code_url`). */
  sourceFrom: 'option' | 'curation' | 'task';
  /** Commit to pin (undefined: the source's HEAD). */
  commit?: string;
  pin: ManifestPin;
  environment: ManifestEnvironment;
  /** The curation file read (absolute path), when the task's paper folder has one. */
  curationFile?: string;
  curation?: CurationFile;
}

/**
 * Resolves what `prepare` uses for a task (docs/curation.md, "Pins and environments"): the source
 * is `source`, else the curation file's `repository.url`, else the task's `local_repo`/`code_url`;
 * the commit is `commit`, else the curation file's `repository.commit`, else the source's HEAD; the
 * image is `image`, else the curation file's `environment.baseImage`, else `expbench/sandbox:1`.
 * The curation file is `curation.jsonc` beside the task's file.
 *
 * @throws ExpBenchError `BAD_INPUT` naming the curation file when it exists but is not valid
 *   (its first problems listed): a wrong pin is never used silently; `BAD_INPUT` naming the task
 *   when no source is known at all.
 */
export async function resolveTaskPin(
  task: Pick<Task, 'id' | 'file' | 'conference' | 'paperId' | 'paper'>,
  o: { source?: string; commit?: string; image?: string } = {},
): Promise<TaskPin> {
  const file = curationFileFor(task.file);
  const read = await readCurationFile(file, `${task.conference}/${task.paperId}`);
  if (read && !read.curation) {
    const listed = read.problems.slice(0, 3).map((p) => `${p.pointer || '(root)'}: ${p.message}`).join('; ');
    throw new ExpBenchError('BAD_INPUT', file, `the curation file of ${task.id} is not valid (${listed}); fix it (\`expbench curate lint\`) or move it away to prepare without its pin`);
  }
  const curation = read?.curation;
  const repo = curation?.repository;
  const fromTask = task.paper?.localRepo ?? task.paper?.codeUrl;
  const source = o.source ?? repo?.url ?? fromTask;
  if (!source) throw new ExpBenchError('BAD_INPUT', task.id, 'the paper list has no code_url for this task and no curation file pins a repository: give a source (--source URL|PATH)');
  const sourceFrom = o.source !== undefined ? 'option' : repo ? 'curation' : 'task';
  const commit = o.commit ?? repo?.commit;
  const pin: ManifestPin = o.commit !== undefined ? { from: 'option', requested: o.commit }
    : repo ? { from: 'curation', file, requested: repo.commit } : { from: 'source-head' };
  const env = curation?.environment;
  const image = o.image ?? env?.baseImage ?? DEFAULT_IMAGE;
  const environment: ManifestEnvironment = {
    from: o.image !== undefined ? 'option' : env ? 'curation' : 'default',
    ...(env ? { file } : {}),
    image,
    ...(env?.gpus !== undefined ? { gpus: env.gpus } : {}),
    ...(env?.limits ? { limits: env.limits } : {}),
    ...(env?.mounts ? { mounts: env.mounts } : {}),
    ...(env?.setup ? { setup: env.setup } : {}),
    ...(env?.debianPackages ? { debianPackages: env.debianPackages } : {}),
  };
  return { source, sourceFrom, commit, pin, environment, ...(read ? { curationFile: file, curation } : {}) };
}

/** Options of {@link prepareTask}: those of prepareSession, with the source optional. */
export type PrepareTaskOptions = Omit<PrepareOptions, 'task' | 'source' | 'commit' | 'image' | 'provenance'> & {
  task: Task;
  /** A git URL, a local clone or a folder; default: see {@link resolveTaskPin}. */
  source?: string;
  /** Commit to pin; overrides the curation file's. */
  commit?: string;
  /** Image; overrides the curation file's. */
  image?: string;
};

/**
 * Prepares a task session with its paper's pin and environment ({@link resolveTaskPin}), for
 * every solver (CLI `prepare`, Open Task, the agent), and records both in the manifest (`pin`,
 * `environment`).
 * @returns the manifest and what was resolved
 * @throws what {@link resolveTaskPin} and prepareSession throw
 */
export async function prepareTask(o: PrepareTaskOptions): Promise<{ manifest: Manifest; resolved: TaskPin; warnings: string[] }> {
  const { task, source, commit, image, ...rest } = o;
  const resolved = await resolveTaskPin(task, { source, commit, image });
  const manifest = await prepareSession({
    ...rest, task, source: resolved.source, commit: resolved.commit, image: resolved.environment.image,
    provenance: { pin: resolved.pin, environment: resolved.environment },
  });
  const warnings: string[] = [];
  if (resolved.environment.from === 'curation' && resolved.curation?.environment?.baseImage && resolved.curationFile) {
    const present = await inspectImage(connectDocker(), resolved.environment.image).then((i) => i !== undefined, () => undefined);
    const advice = present === false ? environmentImageAdvice(resolved.environment.image, resolved.curationFile, resolved.curation.environment) : undefined;
    if (advice) warnings.push(advice);
  }
  return { manifest, resolved, warnings };
}

/**
 * What to say when a curation file's `environment.baseImage` is not present on this engine: the
 * exact command that builds it from `debianPackages` (`bash sandbox/build-env.sh --tag IMAGE PKG…`,
 * on top of expbench/sandbox:1, apt through the host's network), what a `dockerfile` needs (an
 * image registry and package indexes: network, which an offline machine lacks), else that the
 * image must be built with the sandbox contract. The image is never replaced by another one: the
 * session records and the verifier uses the image named.
 * @param env the curation file's `environment` (`dockerfile` relative to the curation file's folder)
 */
export function environmentImageAdvice(image: string, curationFile: string, env: { debianPackages?: string[]; dockerfile?: string }): string {
  const parts = [`the image ${image} named by environment.baseImage of ${curationFile} is not present (the session records it and the verifier and work container will refuse to start without it; no other image is used)`];
  if (env.debianPackages?.length) parts.push(`build it with: bash sandbox/build-env.sh --tag ${image} ${env.debianPackages.join(' ')}`);
  if (env.dockerfile) {
    const df = path.resolve(path.dirname(curationFile), env.dockerfile);
    parts.push(`the curation file's Dockerfile (${df}) needs network to build (docker build -t ${image} -f ${df} ${path.dirname(df)}); on a machine without network it cannot be built${env.debianPackages?.length ? ': use the Debian packages above' : ''}`);
  }
  if (!env.debianPackages?.length && !env.dockerfile) parts.push(`build it with the contract of sandbox/Dockerfile (the curation file lists no debianPackages nor dockerfile), or name another image with --image`);
  return parts.join('; ');
}

/**
 * The verifier's options from a session's recorded environment (manifest `environment`): its
 * image, time limit (`timeSeconds` → `timeoutMs`), memory (`memoryMiB` → `memoryBytes`) and GPUs
 * (`gpus` > 0 → all GPUs asked for). `{}` when the manifest records none (or cannot be read: the
 * verifier reports that itself).
 */
export async function recordedVerifyOptions(sessionDir: string): Promise<{ image?: string; limits: Partial<VerifyLimits> }> {
  const raw = await readJsonIfExists<{ environment?: Partial<ManifestEnvironment> }>(new SessionLayout(sessionDir).manifest).catch(() => undefined);
  const env = raw?.environment;
  if (!env || typeof env !== 'object') return { limits: {} };
  const limits: Partial<VerifyLimits> = {};
  if (typeof env.limits?.timeSeconds === 'number') limits.timeoutMs = env.limits.timeSeconds * 1000;
  if (typeof env.limits?.memoryMiB === 'number') limits.memoryBytes = env.limits.memoryMiB * 1024 * 1024;
  if (typeof env.gpus === 'number' && env.gpus > 0) limits.gpus = true;
  return { ...(typeof env.image === 'string' ? { image: env.image } : {}), limits };
}
