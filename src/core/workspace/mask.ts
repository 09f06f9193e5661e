import { ExpBenchError } from '../errors';
import type { Task } from '../tasks/types';
import type { TreeFile } from './tree';
import { trimEndOf } from '../untrusted';

/** A path the task asks to mask, repository-relative, and the task field it came from. */
export interface MaskRule {
  path: string;
  /** `masked_source` (type 1) or `source` (type 2). */
  field: 'masked_source' | 'source';
}

/** One masked file of the source tree. */
export interface MaskedFile {
  path: string;
  blob: string;
  inSubmodule?: string;
  /** `root README`, or `masked_source: <path>` / `source: <path>`. */
  reason: string;
}

export interface MaskResult {
  kept: TreeFile[];
  masked: MaskedFile[];
}

/** `MASKED_PATH_MISSING` with the full list of missing paths in {@link missing}. */
export class MaskedPathMissingError extends ExpBenchError {
  constructor(taskId: string, readonly commit: string, readonly missing: string[]) {
    super('MASKED_PATH_MISSING', taskId,
      `${missing.length} path${missing.length > 1 ? 's' : ''} to mask not found at commit ${commit}: ` +
      `${missing.join(', ')}; the task is invalid at this commit`);
  }
}

/** Root files whose name starts with README (any case, any extension), masked as the harness does. */
export const ROOT_README = /^readme/i;

/**
 * The task's mask rules, by the reference harness's task types: type 1 masks `masked_source`,
 * type 2 masks `source`, type 3 masks nothing but the root README (source: EXP-Bench harness,
 * see docs/exp-bench-harness.md). Paths lose a leading `/workspace/`, `/` or `./`
 * and a trailing `/`; duplicates are dropped.
 *
 * @throws ExpBenchError `BAD_INPUT` naming the task and the path when a path is empty, is the
 *   repository root, or climbs out of it (`..`).
 */
export function maskRules(task: Pick<Task, 'id' | 'type' | 'source' | 'maskedSource'>): MaskRule[] {
  const field = task.type === 1 ? 'masked_source' : task.type === 2 ? 'source' : undefined;
  if (!field) return [];
  const list = field === 'masked_source' ? task.maskedSource : task.source;
  const seen = new Set<string>();
  const rules: MaskRule[] = [];
  for (const raw of list) {
    const p = normaliseTaskPath(raw);
    if (!p || p === '.' || p.split('/').includes('..')) {
      throw new ExpBenchError('BAD_INPUT', task.id, `${field} path ${JSON.stringify(raw)} is not a path inside the repository`);
    }
    if (!seen.has(p)) rules.push({ path: p, field });
    seen.add(p);
  }
  return rules;
}

/** `/workspace/a/b/` → `a/b`. */
export function normaliseTaskPath(raw: string): string {
  return trimEndOf(raw.trim().replace(/^\/workspace(\/|$)/, '').replace(/^(\.\/|\/)+/, ''), '/').replace(/\/{2,}/g, '/');
}

/** True when `file` is `rule` or lies under the folder `rule`. */
export function covers(rule: string, file: string): boolean {
  return file === rule || file.startsWith(rule + '/');
}

/**
 * Splits the flattened tree into kept and masked files: root README* files, and every file at or
 * under a rule path (files of submodules included). Submodules masked whole count as matches.
 *
 * @throws ExpBenchError `MASKED_PATH_MISSING` with input = the task id, naming EVERY rule path
 *   that matches nothing at this commit (the task is invalid at this commit).
 */
export function applyMask(taskId: string, commit: string, files: TreeFile[], rules: MaskRule[], maskedSubmodules: string[] = []): MaskResult {
  const kept: TreeFile[] = [];
  const masked: MaskedFile[] = [];
  const hit = new Set<string>();
  for (const s of maskedSubmodules) for (const r of rules) if (covers(r.path, s)) hit.add(r.path);
  for (const f of files) {
    let reason: string | undefined;
    if (!f.path.includes('/') && ROOT_README.test(f.path)) reason = 'root README';
    for (const r of rules) {
      if (covers(r.path, f.path)) {
        hit.add(r.path);
        reason ??= `${r.field}: ${r.path}`;
      }
    }
    if (reason) masked.push({ path: f.path, blob: f.sha, inSubmodule: f.submodule, reason });
    else kept.push(f);
  }
  const missing = rules.filter((r) => !hit.has(r.path)).map((r) => r.path);
  if (missing.length > 0) {
    throw new MaskedPathMissingError(taskId, commit, missing);
  }
  return { kept, masked };
}
