import { z } from 'zod';
import { ExpBenchError, isExpBenchError } from '../errors';
import { SessionLayout } from '../layout';
import { errorMessage } from '../util/errors';
import { readJsonIfExists, writeJsonAtomic } from '../util/fs';
import { FULL_SHA } from '../git';

/** A git object id (SHA-1, 40 hex; SHA-256 repositories give 64). */
const Sha = z.string().regex(FULL_SHA, 'a full git object id');

/**
 * Where the repository came from. `url`: a git URL; `clone`: a local git repository (path);
 * `folder`: a local folder that is not a git repository, imported into a cache repository
 * (`cacheRepo`) by committing its files (its `.gitignore` rules apply).
 */
export const ManifestSourceSchema = z.object({
  kind: z.enum(['url', 'clone', 'folder']),
  /** The URL, or the absolute path of the clone or folder, as given (paths resolved). */
  location: z.string().min(1),
  /** The pristine cache repository the workspace was built from. */
  cacheRepo: z.string().optional(),
});
export type ManifestSource = z.infer<typeof ManifestSourceSchema>;

/** A submodule at its recorded commit; its files are flattened into the workspace tree. */
export const ManifestSubmoduleSchema = z.object({
  /** Repository-relative path of the submodule (nested ones: the full path from the root). */
  path: z.string().min(1),
  sha: Sha,
  /** The URL (resolved when relative in `.gitmodules`); absent when the submodule was masked whole. */
  url: z.string().optional(),
});

/** One masked file: repository-relative path and the blob id of its original content. */
export const ManifestMaskedSchema = z.object({
  path: z.string().min(1),
  blob: Sha,
  /** Path of the submodule holding the file, when it is in one. */
  inSubmodule: z.string().optional(),
  /**
   * A kept (unmasked) file with byte-identical content, when there is one: that content is then
   * visible in the workspace anyway (for example an empty `__init__.py`).
   */
  sameContentAs: z.string().optional(),
  /** Why it is masked: the root README rule, or the task path (`masked_source` / `source`) that covers it. */
  reason: z.string().optional(),
});

/**
 * Where the pinned commit came from: `curation` (the paper's curation file, `file`), `option` (a
 * commit given to prepare: `--commit`, Open Task's `commit`), `source-head` (the source's HEAD).
 * `requested`: the commit as asked for (a SHA, branch or tag), absent for `source-head`.
 */
export const ManifestPinSchema = z.object({
  from: z.enum(['curation', 'option', 'source-head']),
  file: z.string().optional(),
  requested: z.string().optional(),
});
export type ManifestPin = z.infer<typeof ManifestPinSchema>;

/**
 * The environment the session runs in and where it came from: `curation` (the curation file,
 * `file`), `option` (an image given to prepare), `default` (the contract image). `gpus`, `limits`
 * and `mounts` are the curation file's (docs/curation.md); the verifier applies `limits` and `gpus`.
 */
export const ManifestEnvironmentSchema = z.object({
  from: z.enum(['curation', 'option', 'default']),
  file: z.string().optional(),
  image: z.string().min(1),
  /** GPUs the experiment needs (0: none). */
  gpus: z.number().int().nonnegative().optional(),
  limits: z.object({
    /** Wall-clock seconds of one run. */
    timeSeconds: z.number().int().positive().optional(),
    /** Memory of one run, MiB. */
    memoryMiB: z.number().int().positive().optional(),
    /** CPUs (whole cores) of one run. */
    cpus: z.number().int().positive().optional(),
  }).optional(),
  /** Read-only data folders (absolute host path → absolute container path). */
  mounts: z.array(z.object({ host: z.string(), container: z.string() })).optional(),
  /** Setup commands and Debian packages the curation file lists (recorded, not run by prepare). */
  setup: z.array(z.string()).optional(),
  debianPackages: z.array(z.string()).optional(),
});
export type ManifestEnvironment = z.infer<typeof ManifestEnvironmentSchema>;

/**
 * `private/manifest.json` of a prepared session (see docs/architecture.md, "A session on disk"). Written once with
 * `complete: false` when preparation starts, then atomically replaced with the full manifest and
 * `complete: true` as the very last step: a session whose preparation was interrupted (window
 * reload, crash, cancel) is never read as complete.
 */
export const ManifestSchema = z.object({
  complete: z.literal(true),
  /** `<conference>/<paperId>/<index>` */
  taskId: z.string().min(1),
  source: ManifestSourceSchema,
  /** The pinned commit of the source (full SHA) the workspace was made from. */
  commit: Sha,
  submodules: z.array(ManifestSubmoduleSchema),
  masked: z.array(ManifestMaskedSchema),
  /** The single "task start" commit of the workspace repository, and its tree. */
  workspaceCommit: Sha,
  workspaceTree: Sha,
  /**
   * The task start commit in the host's repository (`private/repo.git`): the base of every patch,
   * verify tree and repository at step (never the workspace's own HEAD). Equal to
   * `workspaceCommit` for sessions prepared since it was recorded; absent in older manifests
   * (set when such a session's host repository is rebuilt: src/core/workspace/hostRepo.ts).
   */
  taskStart: Sha.optional(),
  /** Workspace-relative path of the session's devcontainer.json (excluded from the patch by `.git/info/exclude`). */
  devcontainer: z.string().optional(),
  /** Container image tag for this session (for example `expbench/sandbox:1`). */
  image: z.string().min(1),
  /** Where `commit` came from (absent in manifests written before it was recorded). */
  pin: ManifestPinSchema.optional(),
  /** The environment, `image` included, and where it came from (absent in older manifests). */
  environment: ManifestEnvironmentSchema.optional(),
  /** `version` of the package that prepared the session. */
  toolVersion: z.string().min(1),
  /** ISO 8601 time preparation started. */
  createdAt: z.iso.datetime(),
  /** ISO 8601 time preparation finished. */
  completedAt: z.iso.datetime(),
});
export type Manifest = z.infer<typeof ManifestSchema>;

/** What is on disk while preparation runs. */
export interface ManifestDraft {
  complete: false;
  taskId: string;
  source: ManifestSource;
  createdAt: string;
}

/**
 * Writes the draft (preparation started, not finished) to `private/manifest.json`, with this
 * process's `pid` (a later `prepare` leaves a folder alone while that process runs), atomically
 * (temp file + rename) but without fsync: should the draft be lost in a crash, the session folder
 * holds no manifest and never looks complete (see folder.ts for how `prepare` reads it then).
 */
export async function writeManifestDraft(sessionDir: string, draft: ManifestDraft): Promise<void> {
  await writeJsonAtomic(new SessionLayout(sessionDir).manifest, { ...draft, pid: process.pid }, { fsync: false });
}

/** Validates and writes the complete manifest atomically; call it as the LAST step of preparation. */
export async function writeManifest(sessionDir: string, manifest: Manifest): Promise<void> {
  await writeJsonAtomic(new SessionLayout(sessionDir).manifest, ManifestSchema.parse(manifest));
}

/**
 * Reads `private/manifest.json` of a session.
 *
 * @throws ExpBenchError `SESSION_INVALID` naming the manifest file when it is missing, not JSON,
 *   not a regular file, from an unfinished preparation (`complete: false`: the message says to
 *   prepare into a new folder, never to prepare this one again), or not of {@link ManifestSchema}
 *   (the first three issues listed).
 */
export async function readManifest(sessionDir: string): Promise<Manifest> {
  const layout = new SessionLayout(sessionDir);
  const file = layout.manifest;
  let raw: unknown;
  try {
    raw = await readJsonIfExists(file);
  } catch (e: any) {
    throw damagedManifest(layout, 'use this session', `${isExpBenchError(e) ? e.message.replace(`${file}: `, '') : errorMessage(e)}`, e);
  }
  if (raw === undefined) {
    throw new ExpBenchError('SESSION_INVALID', file, 'no manifest: this folder is not a prepared session; prepare one with `expbench prepare <task> --out <new folder>`');
  }
  if (typeof raw === 'object' && raw !== null && !Array.isArray(raw) && (raw as { complete?: unknown }).complete === false) {
    const started = (raw as { createdAt?: unknown }).createdAt;
    throw unfinishedPreparation(layout, 'use this session', typeof started === 'string' ? started : undefined);
  }
  const parsed = ManifestSchema.safeParse(raw);
  if (!parsed.success) {
    const all = parsed.error.issues;
    const issues = all.slice(0, 3).map((i) => `${i.path.join('.') || '(root)'}: ${i.message}`).join('; ') + (all.length > 3 ? `; and ${all.length - 3} more` : '');
    throw damagedManifest(layout, 'use this session', `it does not match the manifest schema: ${issues}`);
  }
  return parsed.data;
}

/**
 * The error for a manifest that is neither a draft nor complete (not JSON, `{}`, `1`…): what is
 * wrong, that nothing was changed, and what to do without losing the work in the folder.
 */
export function damagedManifest(layout: SessionLayout, action: string, problem: string, cause?: unknown): ExpBenchError {
  return new ExpBenchError('SESSION_INVALID', layout.manifest,
    `cannot ${action}: the manifest is damaged (${problem}); nothing was changed. Your work in ${layout.workspace} is kept: `
    + 'restore the manifest from a backup, or prepare the task into a new folder (`expbench prepare <task> --out <new folder>`) and copy your work there', cause === undefined ? undefined : { cause });
}

/**
 * The error for a session whose preparation did not finish (its manifest is still the draft):
 * what happened, that nothing was changed, and what to do without losing work (prepare into a
 * NEW folder and copy the work over; `prepare` refuses to clear a folder that holds work).
 */
export function unfinishedPreparation(layout: SessionLayout, action: string, started?: string): ExpBenchError {
  return new ExpBenchError('SESSION_INVALID', layout.manifest,
    `cannot ${action}: the preparation of this session did not finish${started ? ` (started ${started})` : ''}, so its workspace may be incomplete; nothing was changed. `
    + `Prepare the task into a new folder (\`expbench prepare <task> --out <new folder>\`) and copy any work from ${layout.workspace} there `
    + '(`prepare` refuses to clear a folder that holds work)');
}
