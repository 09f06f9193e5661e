import { randomBytes } from 'node:crypto';
import { promises as fsp } from 'node:fs';
import * as path from 'node:path';
import { ExpBenchError, isExpBenchError } from '../errors';
import { addExcludes, git, isGitDir } from '../git';
import { SessionLayout } from '../layout';
import { log } from '../log';
import { errorMessage } from '../util/errors';
import { readRegularFile } from '../util/fs';
import { buildWorkspaceRepo, objectsAmong, TASK_START_REF } from './build';
import { Manifest, ManifestSchema, writeManifest } from './manifest';
import { covers } from './mask';
import { flattenTree } from './tree';

const logger = log('workspace.repo');

/**
 * A session's host repository (issue 26): the bare `private/repo.git`, never mounted and never
 * the solver's, with the session's `workspace/` as its work tree (the work tree's files are read
 * as data: no driver, hook or setting of the solver's takes effect, see src/core/git/). Every
 * host operation on a workspace (patch, verify tree, judge, repository at step, export, import,
 * watcher, folder check) goes through it; the workspace's own `.git` is the solver's and is never
 * used by the host, nor believed.
 */
export interface HostRepository {
  layout: SessionLayout;
  gitDir: string;
  workTree: string;
  /** The task start commit: the manifest's `taskStart` (or, for a session without manifest, {@link TASK_START_REF}). */
  taskStart: string;
  /** The repository as the git layer takes it (`--git-dir` and `--work-tree`). */
  repo: { gitDir: string; workTree: string };
}

/**
 * The session folder of a workspace folder (`<session>/workspace`).
 * @throws ExpBenchError `SESSION_INVALID` naming the folder when it is not named `workspace` (not a session's workspace)
 */
export function layoutOfWorkspace(workspaceDir: string): SessionLayout {
  const abs = path.resolve(workspaceDir);
  const layout = new SessionLayout(path.dirname(abs));
  if (layout.workspace !== abs) {
    throw new ExpBenchError('SESSION_INVALID', abs, 'not a task workspace: a session\'s workspace is the folder `workspace` of its session folder, beside `private/`');
  }
  return layout;
}

/**
 * Opens the host repository of the session `layout`. A session made by an earlier version (no
 * `private/repo.git`) is migrated here, once: its repository is rebuilt from the manifest's
 * pinned commit in the pristine cache, masked by the manifest's own list, and accepted only when
 * the rebuilt tree is the manifest's `workspaceTree` (the workspace's `.git` is never read);
 * `taskStart` is then added to the manifest. Without a manifest, or without the pinned commit
 * in the cache, it is refused.
 *
 * @throws ExpBenchError `SESSION_INVALID` naming the session folder: no host repository and none
 *   can be rebuilt (what to do is said), or its task start cannot be read; `GIT_FAILED`.
 */
export async function openHostRepository(layout: SessionLayout, o: { signal?: AbortSignal } = {}): Promise<HostRepository> {
  const manifest = await manifestIfComplete(layout);
  if (!isGitDir(layout.repository)) await migrate(layout, manifest, o.signal);
  const repo = { gitDir: layout.repository, workTree: layout.workspace };
  let taskStart = manifest?.taskStart;
  if (!taskStart) {
    const r = await git(['rev-parse', '--verify', '--quiet', `${TASK_START_REF}^{commit}`], { repo: { gitDir: layout.repository }, okCodes: [1] });
    taskStart = r.code === 0 ? r.text.trim() : undefined;
  }
  if (!taskStart) {
    throw new ExpBenchError('SESSION_INVALID', layout.root, `the host repository ${layout.repository} names no task start commit (${TASK_START_REF}) and the manifest has no taskStart`);
  }
  return { layout, gitDir: layout.repository, workTree: layout.workspace, taskStart, repo };
}

/** {@link openHostRepository} of the session whose workspace is `workspaceDir`. */
export function hostRepositoryOf(workspaceDir: string, o: { signal?: AbortSignal } = {}): Promise<HostRepository> {
  return openHostRepository(layoutOfWorkspace(workspaceDir), o);
}

/** The complete manifest, undefined when there is none; a draft or damaged one is refused. */
async function manifestIfComplete(layout: SessionLayout): Promise<Manifest | undefined> {
  let buf: Buffer | undefined;
  try {
    buf = await readRegularFile(layout.manifest);
  } catch (e) {
    throw new ExpBenchError('SESSION_INVALID', layout.manifest, `cannot read the manifest: ${errorMessage(e)}`, { cause: e });
  }
  if (buf === undefined) return undefined;
  let raw: unknown;
  try { raw = JSON.parse(buf.toString('utf8')); } catch (e) {
    throw new ExpBenchError('SESSION_INVALID', layout.manifest, `the manifest is not JSON (${errorMessage(e)}); nothing was changed`);
  }
  const parsed = ManifestSchema.safeParse(raw);
  if (!parsed.success) {
    throw new ExpBenchError('SESSION_INVALID', layout.manifest, 'the preparation of this session did not finish, or its manifest is damaged: it has no task start to work from; nothing was changed');
  }
  return parsed.data;
}

/**
 * Rebuilds `private/repo.git` of a session made before it existed (see {@link openHostRepository}).
 * Made in a temporary folder of `private/` and renamed into place (a concurrent migration of the
 * same session keeps the first one made); the work tree is not touched (the index is read from
 * the tree, without checkout).
 */
async function migrate(layout: SessionLayout, manifest: Manifest | undefined, signal?: AbortSignal): Promise<void> {
  const refuse = (why: string, cause?: unknown) => new ExpBenchError('SESSION_INVALID', layout.root,
    `this session was made by an earlier version (it has no host repository ${layout.repository}) and ${why}. `
    + 'Nothing was changed: prepare the task into a new folder (`expbench prepare <task> --out <new folder>`) and copy your work from '
    + `${layout.workspace} there (the workspace's own .git is never used by the host)`, cause === undefined ? undefined : { cause });
  if (!manifest) throw refuse('it has no manifest to rebuild the task start from');
  const cacheRepo = manifest.source.cacheRepo;
  if (!cacheRepo || !isGitDir(cacheRepo)) throw refuse(`the pristine cache repository it was made from (${cacheRepo ?? 'not recorded'}) is gone`);
  const tmp = path.join(layout.private, `.repo.git.${process.pid}.${randomBytes(4).toString('hex')}.tmp`);
  try {
    const maskedWhole = manifest.submodules.filter((s) => !s.url).map((s) => s.path);
    const flat = await flattenTree({
      repo: cacheRepo, commit: manifest.commit, cacheDir: path.dirname(cacheRepo), location: manifest.source.location, signal,
      skipSubmodule: (p) => maskedWhole.some((m) => covers(m, p)),
    });
    const maskedPaths = manifest.masked.map((m) => m.path);
    const maskedSet = new Set(maskedPaths);
    const kept = flat.files.filter((f) => !maskedSet.has(f.path));
    const changed = [...maskedPaths, ...flat.submodules.map((s) => s.path)];
    const sameTrees = flat.trees.filter((t) => !changed.some((p) => covers(t.path, p)));
    const keptBlobs = new Set(kept.map((f) => f.sha));
    const secret = manifest.masked.filter((m) => !keptBlobs.has(m.blob)).map((m) => m.blob);
    const built = await buildWorkspaceRepo(tmp, layout.workspace, kept, sameTrees, signal, undefined, secret, { checkout: false });
    if (built.tree !== manifest.workspaceTree) throw refuse(`the task start rebuilt from the pristine cache (tree ${built.tree.slice(0, 12)}) is not the one recorded (${manifest.workspaceTree.slice(0, 12)})`);
    if (built.leaks.length || (await objectsAmong(tmp, secret)).length) throw refuse('the rebuilt repository would hold masked content');
    // The session's own files stay out of the patch, as prepare set it (devcontainer.ts: `/<its folder>/`).
    if (manifest.devcontainer) await addExcludes(tmp, [`/${path.posix.dirname(manifest.devcontainer)}/`]);
    try {
      await fsp.rename(tmp, layout.repository);
    } catch (e) {
      if (!isGitDir(layout.repository)) throw e;
      return; // another process migrated it meanwhile: keep that one
    }
    await writeManifest(layout.root, { ...manifest, taskStart: built.commit });
    manifest.taskStart = built.commit;
    logger.info(`${layout.root}: host repository rebuilt from the pristine cache (task start ${built.commit.slice(0, 12)})`);
  } catch (e) {
    if (isExpBenchError(e, 'SESSION_INVALID')) throw e;
    throw refuse(`its task start could not be rebuilt from the pristine cache: ${errorMessage(e)}`, e);
  } finally {
    await fsp.rm(tmp, { recursive: true, force: true }).catch(() => undefined);
  }
}
