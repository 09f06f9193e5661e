import { promises as fsp } from 'node:fs';
import * as path from 'node:path';
import { ExpBenchError } from '../errors';
import { commitTree, git } from '../git';
import { HARNESS_FILES } from '../layout';
import { SUBMITTED_REF } from './build';
import type { HostRepository } from './hostRepo';
import { snapshotWorkTree, tempIndex, type WorkTreeSnapshot } from './snapshot';

/** The frozen submission of a session: a commit of the host repository on {@link SUBMITTED_REF}. */
export interface FrozenSubmission {
  commit: string;
  tree: string;
  /**
   * How it was made: `submit` (the work tree committed at Submit), or `patch` (a session
   * submitted by an earlier version: task start with its submitted `patch.diff` applied; binary
   * files, never inlined in that patch, are not in it).
   */
  from: 'submit' | 'patch';
}

/**
 * Commits the work tree (as {@link snapshotWorkTree} takes it: binaries included, ignored files
 * and caches left out) to the host repository at Submit: a commit whose parent is task start,
 * message `submitted`, on {@link SUBMITTED_REF}, which is created only when absent (`update-ref`
 * with an empty old value: two submissions never both freeze). What verify and the judge read of
 * a submitted session, never the live workspace.
 *
 * @throws ExpBenchError `SESSION_INVALID` when the session was frozen already; `GIT_FAILED`, `CANCELLED`.
 */
export async function freezeSubmission(h: HostRepository, o: { signal?: AbortSignal } = {}): Promise<FrozenSubmission & { snapshot: WorkTreeSnapshot }> {
  // the work container is paused while git walks the work tree (snapshot.ts, walkPaused)
  const snapshot = await snapshotWorkTree(h, { ...o, reason: 'freezing the submission' });
  const commit = await commitTree(h.gitDir, snapshot.tree, 'submitted', o.signal, [h.taskStart]);
  const r = await git(['update-ref', SUBMITTED_REF, commit, ''], { repo: { gitDir: h.gitDir }, signal: o.signal, okCodes: [128] });
  if (r.code !== 0) {
    throw new ExpBenchError('SESSION_INVALID', h.layout.root, `the submission was frozen already (${SUBMITTED_REF} exists): ${r.stderr.trim()}`);
  }
  return { commit, tree: snapshot.tree, from: 'submit', snapshot };
}

/**
 * The frozen submission of a session, or undefined when it was never frozen. A session submitted
 * by an earlier version (its `private/harness/patch.diff` exists, no {@link SUBMITTED_REF}) gets
 * one made here from that patch (`git apply --cached` onto task start in a temporary index; the
 * workspace is not read), recorded on the ref so that it is made once.
 *
 * @throws ExpBenchError `SESSION_INVALID` when that patch does not apply to task start; `GIT_FAILED`.
 */
export async function frozenSubmission(h: HostRepository, o: { signal?: AbortSignal } = {}): Promise<FrozenSubmission | undefined> {
  const repo = { gitDir: h.gitDir };
  const found = await git(['rev-parse', '--verify', '--quiet', `${SUBMITTED_REF}^{commit}`], { repo, okCodes: [1] });
  if (found.code === 0) {
    const commit = found.text.trim();
    const tree = (await git(['rev-parse', `${commit}^{tree}`], { repo })).text.trim();
    const message = (await git(['log', '-1', '--format=%s', commit], { repo })).text.trim();
    return { commit, tree, from: message === 'submitted from patch.diff' ? 'patch' : 'submit' };
  }
  const patchFile = path.join(h.layout.harness, HARNESS_FILES.patch);
  const answered = await fsp.lstat(h.layout.answers).then(() => true, () => false);
  const patch = answered ? await fsp.readFile(patchFile).catch(() => undefined) : undefined;
  if (patch === undefined) return undefined;
  const index = tempIndex('frozen');
  try {
    const env = { GIT_INDEX_FILE: index };
    await git(['read-tree', h.taskStart], { repo, env, signal: o.signal });
    if (patch.length > 0) {
      const r = await git(['apply', '--cached', '--whitespace=nowarn', '-'], { repo, env, input: patch, signal: o.signal, okCodes: [1, 128] });
      if (r.code !== 0) throw new ExpBenchError('SESSION_INVALID', patchFile, `the submitted patch does not apply to task start ${h.taskStart.slice(0, 12)}: ${r.stderr.trim()}`);
    }
    const tree = (await git(['write-tree'], { repo, env, signal: o.signal })).text.trim();
    const commit = await commitTree(h.gitDir, tree, 'submitted from patch.diff', o.signal, [h.taskStart]);
    await git(['update-ref', SUBMITTED_REF, commit, ''], { repo, signal: o.signal, okCodes: [128] });
    return frozenSubmission(h, o);
  } finally {
    await fsp.rm(index, { force: true });
  }
}

/**
 * The paths where the work tree now differs from the frozen tree `frozenTree` (a snapshot taken
 * now, compared tree to tree), sorted; empty when the workspace is as it was submitted.
 */
export async function changedSince(h: HostRepository, frozenTree: string, o: { signal?: AbortSignal } = {}): Promise<string[]> {
  const now = await snapshotWorkTree(h, { ...o, reason: 'comparing the workspace with the frozen submission' });
  if (now.tree === frozenTree) return [];
  const r = await git(['diff-tree', '-r', '-z', '--no-renames', '--name-only', frozenTree, now.tree], { repo: { gitDir: h.gitDir }, signal: o.signal });
  return r.text.split('\0').filter(Boolean).sort();
}
