import { promises as fsp } from 'node:fs';
import * as path from 'node:path';
import { errorMessage } from '../util/errors';
import { readRegularFile } from '../util/fs';

/**
 * The validation runs of tasks as the curator's desk reads them (docs/curation.md "Validate by
 * running"): each run is a folder `<root>/<task id with / as ->/<time>/` holding the record
 * `validation.json` that `curate validate` and "Validate Task by Running…" write
 * (`ValidationRecord` of src/core/flows/validateTask.ts, read here by the members below only:
 * the curation room stands below flows).
 */

/** A validation record's file name in its run folder. */
export const VALIDATION_RECORD = 'validation.json';

/** Largest record read, bytes (a record is a few KiB; a larger file is reported, not read). */
const MAX_RECORD_BYTES = 4 * 1024 * 1024;

/** One validation run of a task. */
export interface ValidationRun {
  task: string;
  /** The run's folder (holds `validation.json` and the logs). */
  dir: string;
  startedAt: string;
  durationMs: number;
  commit: string;
  image: string;
  command: string;
  /** Where the run was placed (`local`, `slurm`), when the record says. */
  placement?: string;
  exitCode: number | null;
  timedOut: boolean;
  diskFull: boolean;
  setupFailed: boolean;
  /** `expected_outcome`'s numbers: how many found in the output, derived, not found. */
  claims: { total: number; found: number; derived: number; notFound: number };
  /** Exit 0, no limit hit, and every claim found or derived. */
  ok: boolean;
}

/** A record that could not be read: its file and why. */
export interface ValidationProblem { file: string; message: string }

/**
 * Every validation run under `root` (absent: none), newest first, for `task` only when given.
 * A folder without a record (a run still going, or cancelled) is left out; a record that is not
 * JSON or lacks the members above is a problem naming its file.
 */
export async function readValidationRuns(root: string, task?: string): Promise<{ runs: ValidationRun[]; problems: ValidationProblem[] }> {
  const runs: ValidationRun[] = [];
  const problems: ValidationProblem[] = [];
  const taskDirs = task !== undefined ? [task.replace(/\//g, '-')] : await names(root);
  for (const t of taskDirs) {
    for (const time of await names(path.join(root, t))) {
      const file = path.join(root, t, time, VALIDATION_RECORD);
      let buf: Buffer | undefined;
      try {
        const st = await fsp.lstat(file).catch(() => undefined);
        if (!st) continue;
        if (!st.isFile()) { problems.push({ file, message: 'is not a regular file' }); continue; }
        if (st.size > MAX_RECORD_BYTES) { problems.push({ file, message: `is ${st.size} bytes, over the ${MAX_RECORD_BYTES} a record may have` }); continue; }
        buf = await readRegularFile(file);
      } catch (e) {
        problems.push({ file, message: errorMessage(e) });
        continue;
      }
      if (!buf) continue;
      const r = runOf(buf.toString('utf8'), path.dirname(file));
      if (typeof r === 'string') problems.push({ file, message: r });
      else if (task === undefined || r.task === task) runs.push(r);
    }
  }
  runs.sort((a, b) => (a.startedAt < b.startedAt ? 1 : a.startedAt > b.startedAt ? -1 : 0));
  return { runs, problems };
}

async function names(dir: string): Promise<string[]> {
  const entries = await fsp.readdir(dir, { withFileTypes: true }).catch(() => []);
  return entries.filter((e) => e.isDirectory() && !e.name.startsWith('.')).map((e) => e.name).sort();
}

/** The run of one record's text, or why it is not one. */
function runOf(text: string, dir: string): ValidationRun | string {
  let r: Record<string, unknown>;
  try { r = JSON.parse(text) as Record<string, unknown>; } catch (e) { return `not JSON: ${errorMessage(e)}`; }
  if (r === null || typeof r !== 'object') return 'not a validation record';
  const str = (k: string) => (typeof r[k] === 'string' ? (r[k] as string) : undefined);
  const task = str('taskId');
  const startedAt = str('startedAt');
  if (!task || !startedAt) return 'not a validation record: no taskId or startedAt';
  const claims = Array.isArray((r.claims as { claims?: unknown } | undefined)?.claims) ? (r.claims as { claims: { found?: boolean; status?: string }[] }).claims : [];
  const found = claims.filter((c) => c.found === true).length;
  const derived = claims.filter((c) => c.found !== true && c.status === 'derived').length;
  const exitCode = typeof r.exitCode === 'number' ? r.exitCode : null;
  const timedOut = r.timedOut === true;
  const diskFull = r.diskFull === true;
  const setupFailed = r.setupFailed === true;
  const placement = typeof r.placement === 'string' ? r.placement
    : typeof (r.placement as { kind?: unknown } | undefined)?.kind === 'string' ? (r.placement as { kind: string }).kind : undefined;
  return {
    task, dir, startedAt, durationMs: typeof r.durationMs === 'number' ? r.durationMs : 0,
    commit: str('commit') ?? '', image: str('image') ?? '', command: str('command') ?? '',
    ...(placement ? { placement } : {}),
    exitCode, timedOut, diskFull, setupFailed,
    claims: { total: claims.length, found, derived, notFound: claims.length - found - derived },
    ok: exitCode === 0 && !timedOut && !diskFull && !setupFailed && found + derived === claims.length,
  };
}
