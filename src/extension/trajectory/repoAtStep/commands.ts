import { promises as fsp } from 'node:fs';
import * as path from 'node:path';
import * as vscode from 'vscode';
import { ExpBenchError } from '../../../core/errors';
import { log } from '../../../core/log';
import { errorMessage } from '../../../core/util/errors';
import type { ChangedFile, StepTree } from '../../../core/viewer/repoAtStep';
import type { CommandSpec } from '../../commands';
import { withCancellableProgress } from '../../progress';
import { stepFileUri } from './documents';
import { repoOf, resolveRun, type SourceDeps, type StepArgs } from './source';

const logger = log('viewer');

export const OPEN_REPOSITORY_COMMAND = 'expbench.trajectory.openRepositoryAtStep';
export const SHOW_STEP_DIFF_COMMAND = 'expbench.trajectory.showStepDiff';
export const COMPARE_STEPS_COMMAND = 'expbench.trajectory.compareSteps';

/** What {@link OPEN_REPOSITORY_COMMAND} did (for tests and callers). */
export interface OpenedRepository {
  step: number;
  dir: string;
  title: string;
  approximate: boolean;
  approximateFrom?: number;
  changed: ChangedFile[];
  /** Files of the tree (the quick pick's items). */
  files: number;
}

/** `(approximate from step K: <why>)` or ''. */
function approxNote(t: Pick<StepTree, 'approximate' | 'approximateFrom' | 'uncertain'>): string {
  return t.approximate ? ` — approximate from step ${t.approximateFrom}` : '';
}

function checkArgs(a: unknown, other = false): StepArgs & { other?: number } {
  const o = (a ?? {}) as Record<string, unknown>;
  if (typeof o.uri !== 'string' || !Number.isInteger(o.step) || (other && !Number.isInteger(o.other))) {
    throw new ExpBenchError('BAD_INPUT', JSON.stringify(a) ?? 'undefined', `needs {uri: string, step: integer${other ? ', other: integer' : ''}}`);
  }
  return o as unknown as StepArgs & { other?: number };
}

/** Every file of `dir`, relative, sorted. */
async function filesOf(dir: string): Promise<string[]> {
  const out: string[] = [];
  for (const e of await fsp.readdir(dir, { recursive: true, withFileTypes: true })) {
    if (e.isFile() || e.isSymbolicLink()) out.push(path.relative(dir, path.join(e.parentPath, e.name)).split(path.sep).join('/'));
  }
  return out.sort();
}

/** Opens `pairs` (left/right files, `undefined` = absent) in one diff editor, or the multi-file diff editor for several. */
async function openDiffs(title: string, label: string, pairs: Array<{ path: string; left?: string; right?: string }>): Promise<void> {
  // one path on both sides (they differ by query): the diff editor shows a change, not a rename
  const uris = pairs.map((p) => ({ path: p.path, left: stepFileUri(label, p.path, p.left), right: stepFileUri(label, p.path, p.right) }));
  if (uris.length === 1) {
    await vscode.commands.executeCommand('vscode.diff', uris[0].left, uris[0].right, `${uris[0].path}: ${title}`, { preview: true });
    return;
  }
  await vscode.commands.executeCommand('vscode.changes', title, uris.map((u) => [u.right, u.left, u.right]));
}

const inTree = (dir: string, rel: string) => path.join(dir, ...rel.split('/'));

/**
 * The repository commands of the trajectory viewer (issue 17), each `{uri, step}` (JSON; `uri` a
 * trajectory file or a session folder, `step` 0-based):
 * - `expbench.trajectory.openRepositoryAtStep`: the workspace after step N (materialised in the
 *   OS cache, src/core/viewer/repoAtStep.ts): its changed files against the prepared workspace in
 *   the diff editor (read-only documents), and a quick pick of every file of the tree (`pick:
 *   false` leaves it out); "approximate from step K" in the titles when a step before carries no content;
 * - `expbench.trajectory.showStepDiff`: each file the step edited, before ↔ after it;
 * - `expbench.trajectory.compareSteps` `{uri, step, other}`: the tree at `other` ↔ the tree at `step`.
 * Each returns what it opened (tests), and shows an error message naming the input when it fails.
 */
export function repoAtStepCommands(deps: SourceDeps): CommandSpec[] {
  const fail = (what: string) => (e: unknown) => {
    logger.warn(`${what}: ${errorMessage(e)}`);
    void vscode.window.showErrorMessage(`EXP-Bench: ${what}: ${errorMessage(e)}`);
    return undefined;
  };
  return [
    {
      id: OPEN_REPOSITORY_COMMAND,
      execute: (raw?: unknown) => (async (): Promise<OpenedRepository> => {
        const a = checkArgs(raw);
        const { run, tree } = await withCancellableProgress(`EXP-Bench: repository at step ${a.step}`, async (report, signal) => {
          report('reading the run');
          const run = await resolveRun(a, deps, signal);
          report(`applying the edits of steps 0..${a.step}`);
          return { run, tree: await repoOf(run, signal).at(a.step) };
        });
        // the multi-file diff editor adds the count of files to its tab: "(2 files)"
        const title = `${run.label} at step ${tree.step}${approxNote(tree)}`;
        if (tree.changed.length) {
          await openDiffs(title, `step ${tree.step}`, tree.changed.map((c) => ({
            path: c.path, left: c.status === 'added' ? undefined : inTree(tree.baseDir, c.path), right: c.status === 'deleted' ? undefined : inTree(tree.dir, c.path),
          })));
        } else void vscode.window.showInformationMessage(`EXP-Bench: ${title}: no file differs from the prepared workspace.`);
        const files = await filesOf(tree.dir);
        if ((raw as { pick?: boolean }).pick !== false) {
          const changed = new Map(tree.changed.map((c) => [c.path, c.status]));
          void vscode.window.showQuickPick(files.map((f) => ({ label: f, description: changed.get(f) ?? '' })), { title, placeHolder: `Open a file of the repository at step ${tree.step} (read-only)`, matchOnDescription: true })
            .then((p) => (p ? vscode.window.showTextDocument(stepFileUri(`step ${tree.step}`, p.label, inTree(tree.dir, p.label)), { preview: true }) : undefined));
        }
        if (tree.approximate) logger.info(`${title}: ${tree.uncertain.map((u) => `step ${u.step}${u.path ? ` ${u.path}` : ''}: ${u.why}`).join('; ')}`);
        return { step: tree.step, dir: tree.dir, title, approximate: tree.approximate, ...(tree.approximateFrom !== undefined ? { approximateFrom: tree.approximateFrom } : {}), changed: tree.changed, files: files.length };
      })().catch(fail('cannot show the repository at that step')),
    },
    {
      id: SHOW_STEP_DIFF_COMMAND,
      execute: (raw?: unknown) => (async () => {
        const a = checkArgs(raw);
        const run = await resolveRun(a, deps);
        const d = await repoOf(run).stepDiff(a.step);
        const title = `step ${a.step} of ${run.label}${d.approximate ? ` — approximate from step ${d.approximateFrom}` : ''}`;
        if (d.files.length === 0) {
          void vscode.window.showInformationMessage(`EXP-Bench: ${title}: the step records no file content${d.uncertain.length ? ` (${d.uncertain.map((u) => u.why).join('; ')})` : ''}.`);
        } else {
          await openDiffs(title, `step ${a.step}`, d.files.map((f) => ({ path: f.path, left: f.before === null ? undefined : f.beforeFile, right: f.after === null ? undefined : f.afterFile })));
        }
        return { step: a.step, title, files: d.files.map((f) => f.path), approximate: d.approximate, uncertain: d.uncertain };
      })().catch(fail('cannot show the step\'s diff')),
    },
    {
      id: COMPARE_STEPS_COMMAND,
      execute: (raw?: unknown) => (async () => {
        const a = checkArgs(raw, true);
        const run = await resolveRun(a, deps);
        const c = await withCancellableProgress(`EXP-Bench: step ${a.other} ↔ step ${a.step}`, (_r, signal) => repoOf(run, signal).compare(a.step, a.other!));
        const approx = c.left.approximate || c.right.approximate ? ` — approximate from step ${Math.min(...[c.left.approximateFrom, c.right.approximateFrom].filter((x): x is number => x !== undefined))}` : '';
        const title = `${run.label}: step ${a.other} ↔ step ${a.step}${approx}`;
        if (c.files.length === 0) void vscode.window.showInformationMessage(`EXP-Bench: ${title}: the two trees are the same.`);
        else {
          await openDiffs(title, `step ${a.step}`, c.files.map((f) => ({
            path: f.path, left: f.status === 'added' ? undefined : inTree(c.left.dir, f.path), right: f.status === 'deleted' ? undefined : inTree(c.right.dir, f.path),
          })));
        }
        return { step: a.step, other: a.other, title, files: c.files, diff: c.diff };
      })().catch(fail('cannot compare the steps')),
    },
  ];
}
