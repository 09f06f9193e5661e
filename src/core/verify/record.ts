import { randomBytes } from 'node:crypto';
import { promises as fsp } from 'node:fs';
import * as path from 'node:path';
import { z } from 'zod';
import { SessionLayout } from '../layout';
import { readJsonIfExists, writeJsonAtomic } from '../util/fs';
import { ExpBenchError } from '../errors';
import { errorMessage } from '../util/errors';

/**
 * The verification record: what one run of the solver's `reproduce_exp_bench.sh` did, and the
 * three execution signals derived from it. Stored at `private/verify/<runId>/record.json`; the
 * latest record is copied to `private/verify/latest.json` (see docs/DEVELOPING.md).
 *
 * Signals:
 * - `E_exit`: the reference harness's E: exit code 0 within the time limit (EXP-Bench harness,
 *   step 5 in docs/exp-bench-harness.md). Set in both modes.
 * - `E_clean`: the same, from a clean tree (fresh masked checkout at "task start" + the solver's
 *   patch, copied into a new container). `null` in harness mode.
 * - `E_claims`: each numeric claim of the conclusion and whether the run produced it.
 */

export const VerifyModeSchema = z.enum(['clean', 'harness']);
export type VerifyMode = z.infer<typeof VerifyModeSchema>;

/** Longest time limit, ms: 2^31 − 1, the longest delay a Node.js timer keeps (a longer one fires at once). */
export const MAX_TIMEOUT_MS = 2 ** 31 - 1;

/** Resource limits of a verification run. */
export const VerifyLimitsSchema = z.object({
  /** Wall-clock limit of the script, ms, counted from the script's start (default 3 600 000, the harness's one hour; at most {@link MAX_TIMEOUT_MS}). */
  timeoutMs: z.number().int().positive(),
  /** Memory limit, bytes; 0 = engine default (no limit). */
  memoryBytes: z.number().int().nonnegative(),
  /** CPUs (fractional allowed); 0 = no limit. */
  cpus: z.number().nonnegative(),
  /** Max processes/threads in the container; 0 = no limit. */
  pids: z.number().int().nonnegative(),
  /** `false` = network mode `none` (default). */
  network: z.boolean(),
  /** All GPUs requested; passed through only when the engine has GPU support (see `gpusPassed`). */
  gpus: z.boolean(),
});
export type VerifyLimits = z.infer<typeof VerifyLimitsSchema>;

export const ClaimLocationSchema = z.object({
  /** `stdout`, `stderr`, or a path relative to /workspace of a file the run created or changed. */
  source: z.string(),
  /** 1-based line number in that source. */
  line: z.number().int().positive(),
});
export type ClaimLocation = z.infer<typeof ClaimLocationSchema>;

export const ClaimSchema = z.object({
  /** The claim as written in the conclusion, e.g. `71.2%`. */
  text: z.string(),
  /** Its numeric value as written (71.2 for `71.2%`). */
  value: z.number(),
  /** `%`, `x`, or a unit word following the number (`ms`, `s`, `GB`, …). */
  unit: z.string().optional(),
  /** Up to ~60 characters of the conclusion around the claim. */
  context: z.string(),
  found: z.boolean(),
  where: z.array(ClaimLocationSchema).optional(),
  /** `found` (printed), `derived` (computed from two printed numbers) or `not found` (src/core/verify/claims.ts). */
  status: z.enum(['found', 'derived', 'not found']).optional(),
  /** Written after `±`/`+-`: an uncertainty; it matches printed uncertainties. */
  uncertainty: z.boolean().optional(),
  /** How a derived claim was computed: `a / b`, `|a − b|` or `|a − b| / |b| · 100`, from two printed numbers. */
  derived: z.object({
    op: z.enum(['ratio', 'difference', 'percent change']),
    /** The computed value, unrounded. */
    value: z.number(),
    sources: z.array(ClaimLocationSchema.extend({ text: z.string(), label: z.string() })).length(2),
  }).optional(),
  /** Printed numbers of the claim's value under a label naming another quantity (not counted; up to 5). */
  otherQuantity: z.array(ClaimLocationSchema.extend({ label: z.string() })).optional(),
});
export type Claim = z.infer<typeof ClaimSchema>;

export const ClaimsResultSchema = z.object({
  claims: z.array(ClaimSchema),
  /** True when every claim was found (vacuously true with no claims; see `claims.length`). */
  allFound: z.boolean(),
  /** True when every claim was found or derived: what `verify --check` requires (absent in older records: use `allFound`). */
  allProduced: z.boolean().optional(),
  /** Why the claims were not checked (for example no submitted answers). */
  note: z.string().optional(),
});
export type ClaimsResult = z.infer<typeof ClaimsResultSchema>;

export const LintFindingSchema = z.object({
  severity: z.enum(['warning', 'error']),
  /** Stable machine id, e.g. `script-missing`, `echo-only`. */
  rule: z.string(),
  message: z.string(),
  /** 1-based line in reproduce_exp_bench.sh. */
  line: z.number().int().positive().optional(),
});
export type LintFinding = z.infer<typeof LintFindingSchema>;

export const VerifyStatusSchema = z.enum(['running', 'finished', 'error']);

/** How many of the paths changed after Submit a record lists (the count is always given). */
export const MAX_CHANGED_AFTER_SUBMIT = 50;

/**
 * What a run verified, in every mode: a tree of the session's host repository (`private/repo.git`).
 * - `from: 'frozen'`: the frozen submission (`commit`, made at Submit; never the live workspace
 *   of a submitted session). `changedAfterSubmit`: the paths where the live workspace differs
 *   from it when the run started (their changes were NOT verified), at most
 *   {@link MAX_CHANGED_AFTER_SUBMIT}, `changedAfterSubmitCount` all of them; `note` when it was
 *   made from the submitted patch of an earlier version (no binary files in it).
 * - `from: 'workspace'`: a session not submitted yet: the work tree taken when the run started
 *   (what clean mode runs; harness mode mounts the live workspace itself, ignored files included).
 */
export const VerifyInputSchema = z.object({
  from: z.enum(['frozen', 'workspace']),
  commit: z.string().optional(),
  tree: z.string(),
  changedAfterSubmit: z.array(z.string()).optional(),
  changedAfterSubmitCount: z.number().int().nonnegative().optional(),
  note: z.string().optional(),
});
export type VerifyInput = z.infer<typeof VerifyInputSchema>;

export const VerificationRecordSchema = z.object({
  version: z.literal(1),
  runId: z.string(),
  /** `running` is written before the container starts, so a reloaded window can reattach. */
  status: VerifyStatusSchema,
  mode: VerifyModeSchema,
  /** Image id (`sha256:…`) actually run, and the tag asked for. */
  imageId: z.string(),
  image: z.string(),
  /** Container id while running (kept afterwards for reference; the container is removed). */
  containerId: z.string().optional(),
  /** The verifier process that made the run (`<host>/<pid>/<start>`, sandbox/processes.ts `ownerToken`): a later run can tell a `running` record left by a process that is gone. */
  owner: z.string().optional(),
  /** The command the solver's script is run with, in /workspace. */
  command: z.array(z.string()),
  user: z.string(),
  /** Whether GPUs were actually passed to the container. */
  gpusPassed: z.boolean(),
  /** The environment's data mounts bound read-only (host → container; absent without mounts). */
  mounts: z.array(z.object({ host: z.string(), container: z.string() })).optional(),
  /** The environment's setup commands run before the script (absent without any); `failed`: one exited non-zero and the script was not run. */
  setup: z.object({ commands: z.array(z.string()), failed: z.boolean() }).optional(),
  limits: VerifyLimitsSchema,
  /** ISO 8601: when the container was started (clean mode: the tree is copied in after this). */
  startedAt: z.string(),
  /** ISO 8601: when the script itself started (the time limit counts from here); absent until known. */
  scriptStartedAt: z.string().optional(),
  endedAt: z.string().optional(),
  /** RFC 3339, the engine's: when the container exited (its `State.FinishedAt`); absent when unknown (older records, an engine lost mid-run). */
  containerExitedAt: z.string().optional(),
  durationMs: z.number().nonnegative().optional(),
  /** `null` when the process was killed (timeout, cancel) or the engine failed. */
  exitCode: z.number().int().nullable(),
  timedOut: z.boolean(),
  cancelled: z.boolean(),
  /** Harness (verifier) failure, distinct from a failing script: engine lost, image missing, … */
  error: z.object({ code: z.string(), message: z.string() }).optional(),
  /** Log files, paths relative to the session folder. */
  logs: z.object({ stdout: z.string(), stderr: z.string(), combined: z.string() }),
  /** True when a stored log reached the cap and was cut (the cut is marked in the file). */
  logTruncated: z.boolean(),
  /** Stored-log cap per stream, bytes. */
  logCapBytes: z.number().int().positive(),
  E_exit: z.boolean(),
  E_clean: z.boolean().nullable(),
  E_claims: ClaimsResultSchema,
  /** Files (relative to /workspace) the run created or changed, as searched for claims. */
  changedFiles: z.array(z.string()),
  lint: z.array(LintFindingSchema),
  /** What was verified (absent in records of earlier versions): see {@link VerifyInputSchema}. */
  input: VerifyInputSchema.optional(),
});
export type VerificationRecord = z.infer<typeof VerificationRecordSchema>;

/** Paths of one verification run inside a session. */
export class VerifyRunPaths {
  constructor(readonly layout: SessionLayout, readonly runId: string) {}
  get dir(): string { return path.join(this.layout.verify, this.runId); }
  get record(): string { return path.join(this.dir, 'record.json'); }
  get stdout(): string { return path.join(this.dir, 'stdout.log'); }
  get stderr(): string { return path.join(this.dir, 'stderr.log'); }
  get combined(): string { return path.join(this.dir, 'combined.log'); }
  /** The run's output folder, bind-mounted in the container at /tmp/.expbench (removed once read). */
  get out(): string { return path.join(this.dir, 'out'); }
  /** `logs` of a record: the three files relative to the session folder. */
  relativeLogs(): VerificationRecord['logs'] {
    const rel = (p: string) => path.relative(this.layout.root, p).split(path.sep).join('/');
    return { stdout: rel(this.stdout), stderr: rel(this.stderr), combined: rel(this.combined) };
  }
}

/** `private/verify/latest.json` of a session. */
export function latestRecordPath(layout: SessionLayout): string {
  return path.join(layout.verify, 'latest.json');
}

/** Writes `record` to its run folder and copies it to `latest.json` (both atomic). */
export async function saveRecord(layout: SessionLayout, record: VerificationRecord): Promise<void> {
  const checked = VerificationRecordSchema.parse(record);
  // Both are complete copies, each written atomically: no order between them is needed.
  await Promise.all([
    writeJsonAtomic(new VerifyRunPaths(layout, checked.runId).record, checked),
    writeJsonAtomic(latestRecordPath(layout), checked),
  ]);
}

/**
 * Reads `file` as a verification record; `undefined` when absent.
 * @throws ExpBenchError BAD_INPUT naming the file when it cannot be read, is not JSON or is not a
 *   valid record.
 */
export async function readRecord(file: string): Promise<VerificationRecord | undefined> {
  let raw: unknown;
  try {
    raw = await readJsonIfExists(file);
  } catch (e) {
    const why = errorMessage(e).replace(`${file}: `, '');
    throw new ExpBenchError('BAD_INPUT', file, `not a verification record: ${e instanceof SyntaxError ? `not JSON (${why})` : why}`, { cause: e });
  }
  if (raw === undefined) return undefined;
  const parsed = VerificationRecordSchema.safeParse(raw);
  if (!parsed.success) throw new ExpBenchError('BAD_INPUT', file, `not a verification record: ${parsed.error.issues.slice(0, 3).map((i) => `${i.path.join('.') || '(top)'}: ${i.message}`).join('; ')}`);
  return parsed.data;
}

/**
 * The session's latest verification record. `latest.json` is a copy of the newest run's
 * `record.json`: when it cannot be read (not JSON, cut short, not a record), the newest readable
 * run record is used instead and `damaged` says so (the next saved record replaces the copy).
 * @returns `record` undefined when the session has no record at all
 * @throws ExpBenchError BAD_INPUT when `latest.json` is damaged and no run record can replace it,
 *   naming the file and what to do
 */
export async function readLatestRecord(layout: SessionLayout): Promise<{ record?: VerificationRecord; damaged?: string }> {
  const latest = latestRecordPath(layout);
  try {
    return { record: await readRecord(latest) };
  } catch (e) {
    const damaged = errorMessage(e);
    const runs = (await fsp.readdir(layout.verify, { withFileTypes: true }).catch(() => []))
      .filter((d) => d.isDirectory()).map((d) => d.name).sort().reverse();
    for (const run of runs) {
      const record = await readRecord(new VerifyRunPaths(layout, run).record).catch(() => undefined);
      if (record) return { record, damaged };
    }
    throw new ExpBenchError('BAD_INPUT', latest, `${damaged.replace(`${latest}: `, '')}; no run record in ${layout.verify} replaces it. `
      + 'Nothing of the work depends on it: run the verifier again (it writes a new one), or delete the file');
  }
}

/** A sortable, unique run id: `20261129T084614Z-1a2b3c`. */
export function newRunId(now = new Date()): string {
  const stamp = now.toISOString().replace(/[-:]/g, '').replace(/\.\d+Z$/, 'Z');
  return `${stamp}-${randomBytes(3).toString('hex')}`;
}
