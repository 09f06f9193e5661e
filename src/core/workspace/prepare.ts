import { execFile } from 'node:child_process';
import { promises as fsp } from 'node:fs';
import { promisify } from 'node:util';
import { ExpBenchError, cancelled, isExpBenchError } from '../errors';
import { log } from '../log';
import { toolVersion } from '../paths';
import { SessionLayout } from '../layout';
import type { Task } from '../tasks/types';
import { allSettledOrThrow } from '../util/promises';
import { buildWorkspaceRepo, initWorkspaceRepo } from './build';
import { ensurePristine, Pristine } from './cache';
import { writeDevcontainer } from './devcontainer';
import { addExcludes, git, solverRepositoryObjects, writeSolverRepository } from '../git';
import { claimSessionFolder } from './folder';
import { Manifest, ManifestEnvironment, ManifestPin, writeManifest, writeManifestDraft } from './manifest';
import { applyMask, covers, MaskedPathMissingError, MaskRule, maskRules } from './mask';
import { ClassifiedSource, defaultCacheDir, probeSource } from './source';
import { FlatTree, flattenTree } from './tree';
import { errorMessage } from '../util/errors';

const logger = log('workspace.prepare');
const run = promisify(execFile);

/** Default sandbox image tag (contract: docs/DEVELOPING.md). */
export const DEFAULT_IMAGE = 'expbench/sandbox:1';

/** Steps reported through `onProgress`, in order. */
export type PrepareStep = 'source' | 'tree' | 'mask' | 'workspace' | 'finish';

export interface PrepareOptions {
  task: Pick<Task, 'id' | 'type' | 'source' | 'maskedSource'>;
  /** A git URL, a local clone, or a local folder (imported). */
  source: string;
  /** Commit (SHA, branch or tag) to pin; default: the source's HEAD at preparation time (recorded). */
  commit?: string;
  /** The session folder to create (must not exist, be empty, or hold an unfinished preparation). */
  outDir: string;
  /** Pristine clone cache; default {@link defaultCacheDir}. */
  cacheDir?: string;
  /** Image tag recorded in the manifest and the Dev Container file; default {@link DEFAULT_IMAGE}. */
  image?: string;
  /** Dev Container template; default `sandbox/devcontainer.template.json` when present. */
  devcontainerTemplate?: string;
  /**
   * Owner given to the workspace (`chown -R uid:gid`). Default: unchanged, because the work
   * container shares the workspace with its user `solver` (uid/gid 1000) through the group when
   * it starts (src/core/sandbox/ownership.ts), and a workspace the host user does not own trips
   * host-side git ("dubious ownership"). Pass `{uid: 1000, gid: 1000}` to hand it over instead.
   */
  owner?: { uid: number; gid: number } | null;
  /**
   * Where `commit` and `image` came from, recorded in the manifest (`pin`, `environment`).
   * Default: `pin.from` is `option` when `commit` is given, else `source-head`; the environment is
   * `{from: 'option', image}` when `image` is given, else `{from: 'default', image: DEFAULT_IMAGE}`.
   * `environment.image` is replaced by the image used.
   */
  provenance?: { pin?: ManifestPin; environment?: ManifestEnvironment };
  signal?: AbortSignal;
  onProgress?: (p: { step: PrepareStep; message: string }) => void;
}

/**
 * Prepares a task session in `outDir` (layout: {@link SessionLayout}):
 * pins the commit, fetches submodules at their recorded SHAs, masks the root README* and the
 * task's paths (`masked_source` for type 1, `source` for type 2; inside submodules too), and makes
 * the host's repository `private/repo.git` (bare, with `workspace/` as its work tree) with the
 * single commit "task start" holding the masked tree (submodule files flattened into it as plain
 * files), then `workspace/.git` for the solver at the same commit (its files written by the host:
 * git/repo.ts `writeSolverRepository`). No object of either store gives back a masked file's
 * content (both checked before finishing). The manifest is written last, with `complete: true`
 * and `taskStart` (the patch base of every later operation).
 *
 * On failure or cancel, everything this call created in `outDir` is removed; the cache keeps
 * what it fetched.
 *
 * @throws ExpBenchError `BAD_INPUT` (outDir not empty or not creatable, bad task path, a SHA-256
 *   source), `SOURCE_UNAVAILABLE`
 *   (clone/fetch failed: URL + git's stderr; missing object: id + path), `MASKED_PATH_MISSING`
 *   (every missing path listed), `GIT_FAILED`, `CANCELLED`.
 */
export async function prepareSession(o: PrepareOptions): Promise<Manifest> {
  const layout = new SessionLayout(o.outDir);
  const createdAt = new Date().toISOString();
  const cacheDir = o.cacheDir ?? defaultCacheDir();
  const image = o.image ?? DEFAULT_IMAGE;
  const progress = (step: PrepareStep, message: string) => { logger.info(message); o.onProgress?.({ step, message }); };
  const check = () => { if (o.signal?.aborted) throw cancelled(o.outDir); };

  const rules = maskRules(o.task);
  progress('source', `resolving ${o.source}`);
  // The session folder is claimed while the source is probed, and `git init` of the workspace
  // starts once it is claimed; on a probe failure both are removed again when this call made them
  // (an unfinished preparation found in it is cleared either way).
  const claiming = claimSessionFolder(o.outDir, o.task.id);
  const initialized = claiming.then(async () => {
    await fsp.mkdir(layout.workspace, { recursive: true });
    await initWorkspaceRepo(layout.repository, o.signal);
  });
  initialized.catch(() => undefined);
  const [probeResult, claimed] = await Promise.allSettled([probeSource(o.source), claiming]);
  if (claimed.status === 'rejected') throw claimed.reason;
  if (probeResult.status === 'rejected') {
    await initialized.catch(() => undefined);
    await fsp.rm(layout.workspace, { recursive: true, force: true }).catch(() => undefined);
    await fsp.rm(layout.private, { recursive: true, force: true }).catch(() => undefined);
    if (claimed.value) await fsp.rmdir(o.outDir).catch(() => undefined);
    throw probeResult.reason;
  }
  const probed = probeResult.value;
  const source = probed.source;
  if (source.kind === 'folder') progress('source', `${source.location} is not the top of a git repository: its files are imported as they are now (one commit; .gitignore applies)`);
  let listed: Promise<{ pristine: Pristine; flat: FlatTree }> | undefined;
  let drafted: Promise<void> | undefined;
  try {
    // The draft, `git init` of the workspace and reading the source (which writes only to the
    // cache) run at once; errors surface where they are awaited. A crash before the draft is
    // on disk leaves a folder without manifest, refused as not empty: never taken as complete.
    // The draft is awaited before the manifest replaces it.
    listed = readSource(o, probed.head, source, cacheDir, rules, progress);
    listed.catch(() => undefined);
    drafted = writeManifestDraft(o.outDir, { complete: false, taskId: o.task.id, source, createdAt });
    drafted.catch(() => undefined);
    const { pristine, flat } = await listed;
    check();
    if (pristine.commit.length === 64) {
      throw new ExpBenchError('BAD_INPUT', source.location,
        'is a SHA-256 repository; task workspaces are SHA-1 repositories (as GitHub and every EXP-Bench paper repository): use a SHA-1 clone of it');
    }
    const { kept, masked } = maskOrExplain(o.task.id, source, pristine.commit, flat, rules);
    progress('mask', `masking ${masked.length} file(s), keeping ${kept.length}`);
    progress('workspace', 'writing the workspace');
    // Folders holding no masked file and no submodule are the same tree objects as in the source.
    const changed = [...masked.map((m) => m.path), ...flat.submodules.map((s) => s.path)];
    const sameTrees = flat.trees.filter((t) => !changed.some((p) => covers(t.path, p)));
    const keptBlobs = new Map(kept.map((f) => [f.sha, f.path]));
    const secret = masked.filter((m) => !keptBlobs.has(m.blob)).map((m) => m.blob);
    // The Dev Container file goes in while the repository is built (it is excluded, never committed).
    const devcontainer = initialized.then(() => writeDevcontainer(layout.workspace, {
      image, taskId: o.task.id, template: o.devcontainerTemplate,
      treeHasDevcontainer: kept.some((f) => covers('.devcontainer', f.path)),
    })).then(async (written) => { await addExcludes(layout.repository, [written.exclude]); return written; });
    const [built, dc] = await allSettledOrThrow([
      buildWorkspaceRepo(layout.repository, layout.workspace, kept, sameTrees, o.signal, initialized, secret), devcontainer,
    ] as const);
    if (built.leaks.length) {
      throw new ExpBenchError('GIT_FAILED', layout.repository, `internal error: masked content in the object store (${built.leaks.join(', ')})`);
    }
    check();
    // The solver's own repository (the terminal's `git`): copies of the host's objects and index,
    // written as files (the host never runs git in it), then checked for masked content too.
    await writeSolverRepository(layout.workspace, { from: layout.repository, commit: built.commit, excludes: [dc.exclude] });
    const forbidden = new Set(secret);
    const solverLeaks = (await solverRepositoryObjects(layout.workspace)).filter((id) => forbidden.has(id));
    if (solverLeaks.length) {
      throw new ExpBenchError('GIT_FAILED', layout.workspace, `internal error: masked content in the object store of the workspace's .git (${solverLeaks.join(', ')})`);
    }
    check();
    await chownWorkspace(layout.workspace, o.owner);
    check();
    const manifest: Manifest = {
      complete: true,
      taskId: o.task.id,
      source: { ...source, cacheRepo: pristine.repo },
      commit: pristine.commit,
      submodules: flat.submodules.map((s) => ({ path: s.path, sha: s.sha, ...(s.url ? { url: s.url } : {}) })),
      masked: masked.map((m) => ({
        path: m.path, blob: m.blob, reason: m.reason,
        ...(m.inSubmodule ? { inSubmodule: m.inSubmodule } : {}),
        ...(keptBlobs.has(m.blob) ? { sameContentAs: keptBlobs.get(m.blob) } : {}),
      })),
      workspaceCommit: built.commit,
      workspaceTree: built.tree,
      taskStart: built.commit,
      devcontainer: dc.file,
      image,
      pin: o.provenance?.pin ?? (o.commit !== undefined ? { from: 'option', requested: o.commit } : { from: 'source-head' }),
      environment: { ...(o.provenance?.environment ?? { from: o.image !== undefined ? 'option' : 'default' }), image },
      toolVersion: toolVersion(),
      createdAt,
      completedAt: new Date().toISOString(),
    };
    await drafted;
    await writeManifest(o.outDir, manifest);
    progress('finish', `prepared ${o.task.id} at ${pristine.commit.slice(0, 12)} in ${o.outDir}`);
    return manifest;
  } catch (e) {
    await listed?.catch(() => undefined);
    await initialized?.catch(() => undefined);
    await drafted?.catch(() => undefined);
    await fsp.rm(layout.workspace, { recursive: true, force: true }).catch(() => undefined);
    await fsp.rm(layout.private, { recursive: true, force: true }).catch(() => undefined);
    await fsp.rmdir(o.outDir).catch(() => undefined);
    if (o.signal?.aborted && !isExpBenchError(e, 'CANCELLED')) throw cancelled(o.outDir);
    throw e;
  }
}

/**
 * The pristine cache repository with the commit to pin, and its flattened tree. A full SHA
 * already in the cache needs no look-up: listing its tree checks it (`<sha>^{commit}`); when
 * that fails, the commit is looked up (fetched from the source when absent) and listed again.
 */
async function readSource(
  o: PrepareOptions, sourceHead: string | undefined, source: ClassifiedSource, cacheDir: string, rules: MaskRule[],
  progress: (step: PrepareStep, message: string) => void,
): Promise<{ pristine: Pristine; flat: FlatTree }> {
  const pristineOptions = {
    source, commit: o.commit, sourceHead, cacheDir, signal: o.signal, onProgress: (m: string) => progress('source', m),
  };
  let pristine = await ensurePristine({ ...pristineOptions, lookUp: false });
  const list = () => {
    progress('tree', `listing ${pristine.commit.slice(0, 12)}`);
    return flattenTree({
      repo: pristine.repo, commit: pristine.commit, cacheDir, signal: o.signal,
      location: () => submoduleBase(source.kind, source.location),
      skipSubmodule: (p) => rules.some((r) => covers(r.path, p)),
      onProgress: (m) => progress('tree', m),
    });
  };
  try {
    return { pristine, flat: await list() };
  } catch (e) {
    if (pristine.checked || isExpBenchError(e, 'CANCELLED')) throw e;
    logger.debug(`${pristine.commit} not listed unchecked (${errorMessage(e)}); looking it up`);
    pristine = await ensurePristine(pristineOptions);
    return { pristine, flat: await list() };
  }
}

/**
 * {@link applyMask}; for a plain folder (not a repository) a missing masked path is the source's
 * fault, not the task's: the error names the folder and how it was taken.
 * @throws MaskedPathMissingError (a repository), ExpBenchError MASKED_PATH_MISSING naming the folder (a folder)
 */
function maskOrExplain(taskId: string, source: ClassifiedSource, commit: string, flat: FlatTree, rules: MaskRule[]): ReturnType<typeof applyMask> {
  try {
    return applyMask(taskId, commit, flat.files, rules, flat.submodules.filter((s) => !s.repo).map((s) => s.path));
  } catch (e) {
    if (source.kind !== 'folder' || !(e instanceof MaskedPathMissingError)) throw e;
    throw new ExpBenchError('MASKED_PATH_MISSING', source.location,
      `not a git repository (nor the top folder of one), so it was imported as a plain folder (its files as they are now, committed as ${commit.slice(0, 12)}), ` +
      `and ${e.missing.length} path${e.missing.length > 1 ? 's' : ''} that task ${taskId} masks ${e.missing.length > 1 ? 'are' : 'is'} not in it: ${e.missing.join(', ')}. ` +
      'Pass the paper\'s repository (a git URL or a clone, with --commit to pin) or a folder that holds these paths', { cause: e });
  }
}

/** Relative submodule URLs resolve against the clone's `origin` URL when it has one (as git does), else its folder. */
async function submoduleBase(kind: string, location: string): Promise<string> {
  if (kind !== 'clone') return location;
  const r = await git(['config', '--get', 'remote.origin.url'], { repo: { checkout: location }, okCodes: [1] });
  return r.code === 0 && r.text.trim() ? r.text.trim() : location;
}

async function chownWorkspace(dir: string, owner: PrepareOptions['owner']): Promise<void> {
  const target = owner ?? null;
  if (!target) return;
  try {
    await run('chown', ['-R', `${target.uid}:${target.gid}`, dir]);
  } catch (e: any) {
    throw new ExpBenchError('BAD_INPUT', dir, `cannot give the workspace to uid ${target.uid}: ${e?.stderr || e?.message}`, { cause: e });
  }
}

