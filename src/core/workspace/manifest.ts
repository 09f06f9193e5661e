import { z } from 'zod';
import { ExpBenchError } from '../errors';
import { SessionLayout } from '../layout';
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
 * `private/manifest.json` of a prepared session (see docs/workspace.md). Written once with
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
  /** Workspace-relative path of the session's devcontainer.json (excluded from the patch by `.git/info/exclude`). */
  devcontainer: z.string().optional(),
  /** Container image tag for this session (for example `expbench/sandbox:1`). */
  image: z.string().min(1),
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
 * Writes the draft (preparation started, not finished) to `private/manifest.json`, atomically
 * (temp file + rename) but without fsync: should the draft be lost in a crash, the session folder
 * holds no manifest and is refused as not empty, so it never looks complete either way.
 */
export async function writeManifestDraft(sessionDir: string, draft: ManifestDraft): Promise<void> {
  await writeJsonAtomic(new SessionLayout(sessionDir).manifest, draft, { fsync: false });
}

/** Validates and writes the complete manifest atomically; call it as the LAST step of preparation. */
export async function writeManifest(sessionDir: string, manifest: Manifest): Promise<void> {
  await writeJsonAtomic(new SessionLayout(sessionDir).manifest, ManifestSchema.parse(manifest));
}

/**
 * Reads `private/manifest.json` of a session.
 *
 * @throws ExpBenchError `SESSION_INVALID` naming the manifest file when it is missing, not JSON,
 *   from an unfinished preparation (`complete` not `true`), or not of {@link ManifestSchema}
 *   (every issue listed).
 */
export async function readManifest(sessionDir: string): Promise<Manifest> {
  const file = new SessionLayout(sessionDir).manifest;
  let raw: unknown;
  try {
    raw = await readJsonIfExists(file);
  } catch (e: any) {
    throw new ExpBenchError('SESSION_INVALID', file, `not valid JSON: ${e?.message ?? e}`, { cause: e });
  }
  if (raw === undefined) throw new ExpBenchError('SESSION_INVALID', file, 'no manifest: this folder is not a prepared session');
  if (typeof raw === 'object' && raw !== null && (raw as { complete?: unknown }).complete !== true) {
    const started = (raw as { createdAt?: unknown }).createdAt;
    throw new ExpBenchError('SESSION_INVALID', file,
      `preparation did not finish${typeof started === 'string' ? ` (started ${started})` : ''}; prepare the session again`);
  }
  const parsed = ManifestSchema.safeParse(raw);
  if (!parsed.success) {
    const issues = parsed.error.issues.map((i) => `${i.path.join('.') || '(root)'}: ${i.message}`).join('; ');
    throw new ExpBenchError('SESSION_INVALID', file, `manifest does not match the schema: ${issues}`);
  }
  return parsed.data;
}

/** True when `sessionDir` holds a manifest of a preparation that started but never finished. */
export async function isIncompleteSession(sessionDir: string): Promise<boolean> {
  try {
    const raw = await readJsonIfExists<{ complete?: unknown }>(new SessionLayout(sessionDir).manifest);
    return raw !== undefined && raw.complete !== true;
  } catch {
    return false;
  }
}
