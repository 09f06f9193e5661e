import { existsSync, promises as fsp } from 'node:fs';
import * as path from 'node:path';
import { ExpBenchError, isExpBenchError } from '../errors';
import { SessionLayout } from '../layout';
import { log } from '../log';
import { writeSessionMarker } from '../session/marker';
import type { Task } from '../tasks/types';
import { importFiles, summarize, type TrajectorySummary } from '../trajectory/import';
import { isHarnessPatchName } from '../trajectory/expbench';
import { redactString } from '../trajectory/redact';
import type { Trajectory, TrajProblem } from '../trajectory/types';
import { ownerGone, ownerToken } from '../sandbox/processes';
import { errorMessage } from '../util/errors';
import { exists, readJsonIfExists, writeAtomic, writeJsonAtomic } from '../util/fs';
import type { PrepareStep } from '../workspace/prepare';
import { importExecution, type ImportExecution } from './importExecution';
import { applyNormalisedPatch, normalisePatch, type PatchFileImport } from './importPatch';
import { prepareTask } from './prepareTask';
import { SessionService } from './sessionService';
import type { StepFn } from './steps';
import type { SubmitFlowResult } from './submit';

const logger = log('importSession');

/** What {@link importSession} reports through `onProgress`, in order. */
export type ImportStep = 'read' | PrepareStep | 'patch' | 'steps' | 'submit';

/** Options of {@link importSession}. */
export interface ImportSessionOptions {
  /** The run's files: a harness record's files, or a trajectory file and (optionally) a patch file with its final patch. */
  files: string[];
  /** The task the run attempted (its brief, masking and ground truth come from here). */
  task: Task;
  /** Which trajectory when the files hold several; default the one whose task is `task.id`, else the only one. */
  trajectoryId?: string;
  /** The paper's repository (URL, clone or folder); default as for `prepare` (curation file, then the task). */
  source?: string;
  /** Commit to pin; default the commit the record names, else as for `prepare`. */
  commit?: string;
  /** Session folder to create (must not exist or be empty). */
  outDir: string;
  cacheDir?: string;
  image?: string;
  /** Runs after submission (src/core/flows/verify.ts `verifyStep`); omitted → not run. */
  verify?: StepFn;
  /** Runs after verification (src/core/flows/judge.ts `judgeStep`); omitted → not run. */
  judge?: StepFn;
  service?: SessionService;
  signal?: AbortSignal;
  onProgress?: (p: { step: ImportStep; message: string }) => void;
}

/** The import record, `private/import/record.json` (also what the CLI prints with `--json`). */
export interface ImportSessionResult {
  version: 1;
  sessionDir: string;
  taskId: string;
  trajectory: TrajectorySummary;
  files: string[];
  /** The commit the session is pinned at and where it came from. */
  commit: { sha: string; from: 'option' | 'record' | 'curation' | 'source-head'; recorded?: string };
  patch: {
    /** The patch as read (redacted), relative to the session root; null when the run has none. */
    source: string | null;
    /** The git-form patch applied, relative to the session root; null when the run has none. */
    git: string | null;
    strippedPrefixes: string[];
    files: PatchFileImport[];
    applied: number; failed: number; cut: number;
  };
  /** Every oddity: the importer's, the patch's, the task's; nothing here stopped the import. */
  problems: TrajProblem[];
  /** Why E came out as it did (verification record, task text): src/core/flows/importExecution.ts. */
  execution?: ImportExecution;
  /** The submission and its verify and judge outcomes (absent when submitting failed: see `problems`). */
  submission?: Pick<SubmitFlowResult, 'verify' | 'judge' | 'warnings' | 'workingMs'>;
}

/**
 * Import as Session: an agent's EXP-Bench run becomes a session folder laid out as a human's
 * (src/core/layout): the task prepared (pinned, masked, "task start"), the agent's final patch
 * normalised to git form and applied with `git apply` (./importPatch.ts), its steps recorded as
 * `trajectory.step` events after one `trajectory.imported` (docs/events.md), then submitted with
 * its answers `{design, conclusion}` (empty when the run has none, flagged), so that the verifier
 * and the judge given run on it and its gaps show as for a human.
 *
 * Bad input is a problem in the record, and the rest is imported: a task id that is not the
 * record's, a patch made in another task index's workspace, a patch cut or damaged (those files
 * left out), a file git refuses (with the hunk it named), a run with no patch or no answers.
 *
 * @throws ExpBenchError `BAD_INPUT` naming the files when they hold no trajectory (every file's
 *   problems listed) or several and none is `trajectoryId` or `task.id`; what prepareTask throws
 *   (nothing is left in `outDir` then); `CANCELLED` when `signal` fires, and any failure after the
 *   preparation (a full disk: `BAD_INPUT` naming the file): the session folder is emptied again
 *   (a verifier or judge step stopped by the signal is reported in `submission` instead);
 *   `SESSION_INVALID` when another import into `outDir` may still be running. A folder left by an
 *   import that did not finish (`private/import/importing.json` of a process that is gone) is
 *   emptied before the new import.
 */
export async function importSession(o: ImportSessionOptions): Promise<ImportSessionResult> {
  const progress = (step: ImportStep, message: string) => { logger.info(message); o.onProgress?.({ step, message }); };
  progress('read', `reading ${o.files.length} file(s)`);
  const { trajectory: t, extraPatch, extraPatchFile, problems } = await readRun(o);
  const sessionDir = path.resolve(o.outDir);
  if (t.task && t.task !== o.task.id) {
    problems.push({ file: t.file, pointer: '', severity: 'warning', message: `the record is task ${t.task} but the import is for ${o.task.id}: imported as ${o.task.id} (its brief, mask and ground truth), the record's answers and patch as they are` });
  }
  const recorded = recordedCommit(t);
  const commit = o.commit ?? recorded;
  if (o.commit && recorded && !recorded.startsWith(o.commit) && !o.commit.startsWith(recorded)) {
    problems.push({ file: t.file, pointer: '', severity: 'warning', message: `the record says it ran at ${recorded}; the session is pinned at ${o.commit} as asked` });
  }
  await clearHalfMadeImport(sessionDir, (m) => progress('read', m));
  const { manifest, resolved } = await prepareTask({
    task: o.task, source: o.source, commit, outDir: sessionDir, cacheDir: o.cacheDir, image: o.image, signal: o.signal,
    onProgress: (p) => progress(p.step, p.message),
  });
  const marker = path.join(new SessionLayout(sessionDir).imported, IMPORT_MARKER);
  try {
    await writeJsonAtomic(marker, { owner: ownerToken(), startedAt: new Date().toISOString(), files: o.files.map((f) => path.resolve(f)) });
    const result = await fillSession(o, t, sessionDir, { extraPatch, extraPatchFile, problems, recorded, manifestCommit: manifest.commit, pinFrom: resolved.pin.from }, progress);
    await fsp.rm(marker, { force: true });
    return result;
  } catch (e) {
    // A failure after the preparation (a full disk, a cancel) leaves nothing half made: the folder
    // holds only what this import made (prepare refuses a folder that is not empty). What cannot
    // be removed keeps the marker, and the next import into the folder clears it.
    const emptied = await emptyFolder(sessionDir).then(() => true, (err: unknown) => { logger.warn(`removing the half-made import in ${sessionDir} failed: ${errorMessage(err)}`); return false; });
    if (isExpBenchError(e) && /\bdisk is full\b/.test(e.message)) {
      throw new ExpBenchError('BAD_INPUT', sessionDir, `the import was not made: the disk is full (${e.input}); ${emptied ? 'the folder was emptied again' : 'the folder could not be emptied: the next import into it clears it'}: free some space and run the command again`, { cause: e });
    }
    throw e;
  }
}

/** `private/import/<this>`: written once an import has prepared its session, removed when it is complete. */
export const IMPORT_MARKER = 'importing.json';

/**
 * Before an import into `sessionDir`: a folder left by an import that did not finish (its marker
 * there, its process gone: killed, or its cleanup failed) is emptied, said through `say`; one of a
 * live import, or of another host, is refused. Any other folder is left to prepare's own checks.
 * @throws ExpBenchError `SESSION_INVALID` naming the folder when its import may still be running
 */
async function clearHalfMadeImport(sessionDir: string, say: (message: string) => void): Promise<void> {
  const marker = path.join(new SessionLayout(sessionDir).imported, IMPORT_MARKER);
  const m = await readJsonIfExists<{ owner?: unknown; startedAt?: unknown }>(marker).catch(() => ({ owner: undefined, startedAt: undefined }));
  if (m === undefined) return;
  const owner = typeof m.owner === 'string' ? m.owner : undefined;
  const gone = ownerGone(owner);
  if (gone !== true) {
    throw new ExpBenchError('SESSION_INVALID', sessionDir, `an import into this folder ${gone === false ? `is running (${owner})` : `was started by ${owner ?? 'an unknown process'}, which cannot be checked from here`} (${marker}): wait for it, or choose a new folder for the session (--out)`);
  }
  say(`removing the half-made import left in ${sessionDir} by ${owner} (started ${String(m.startedAt)}), which did not finish`);
  await emptyFolder(sessionDir);
}

/** Removes every entry of `dir` (the folder itself stays: it may have been given empty). */
async function emptyFolder(dir: string): Promise<void> {
  for (const name of await fsp.readdir(dir).catch(() => [] as string[])) await fsp.rm(path.join(dir, name), { recursive: true, force: true });
}

interface Prepared {
  extraPatch?: string; extraPatchFile?: string; problems: TrajProblem[]; recorded?: string; manifestCommit: string; pinFrom: string;
}

async function fillSession(o: ImportSessionOptions, t: Trajectory, sessionDir: string, p: Prepared, progress: (step: ImportStep, message: string) => void): Promise<ImportSessionResult> {
  const { extraPatch, extraPatchFile, problems, recorded } = p;
  await writeSessionMarker(sessionDir, o.task);
  const layout = new SessionLayout(sessionDir);
  const rel = (p: string) => path.relative(sessionDir, p).split(path.sep).join('/');

  progress('patch', 'normalising and applying the patch');
  const patchText = extraPatch ?? t.patch;
  const result: ImportSessionResult = {
    version: 1, sessionDir, taskId: o.task.id, trajectory: summarize(t), files: o.files.map((f) => path.resolve(f)),
    commit: { sha: p.manifestCommit, from: o.commit ? 'option' : recorded ? 'record' : p.pinFrom === 'curation' ? 'curation' : 'source-head', ...(recorded ? { recorded } : {}) },
    patch: { source: null, git: null, strippedPrefixes: [], files: [], applied: 0, failed: 0, cut: 0 },
    problems,
  };
  await fsp.mkdir(layout.imported, { recursive: true });
  const patchFile = extraPatchFile ?? (t.files ?? [t.file]).find((f) => /\.(patch|diff)$/.test(f)) ?? t.file;
  if (patchText === undefined || patchText.trim() === '') {
    problems.push({ file: patchFile, pointer: '', severity: 'warning', message: patchText === undefined ? 'the run has no patch: the session is submitted with the workspace as handed out (the verifier finds no reproduce_exp_bench.sh)' : 'the patch is empty: the agent changed no file' });
  } else {
    const n = normalisePatch(patchText, (p) => existsSyncIn(layout.workspace, p));
    const sourceFile = path.join(layout.imported, 'patch.source.diff');
    const gitFile = path.join(layout.imported, 'patch.git.diff');
    await writeAtomic(sourceFile, patchText);
    await writeAtomic(gitFile, n.text);
    const applied = await applyNormalisedPatch(layout.workspace, n, patchFile, o.signal);
    result.patch = { source: rel(sourceFile), git: rel(gitFile), strippedPrefixes: n.strippedPrefixes, files: n.files, ...applied };
    for (const f of n.files) {
      // The importer flags a cut section at the same place: the import's own word replaces it.
      if (f.problem) problems.splice(0, problems.length, ...problems.filter((p) => !(p.file === patchFile && p.line === f.line)));
      if (f.problem) problems.push({ file: patchFile, pointer: '', line: f.line, severity: f.status === 'empty' ? 'info' : 'warning', message: f.failingHunk ? `${f.problem}; failing hunk ${f.failingHunk.header} at line ${f.failingHunk.line}` : `${f.path}: ${f.problem}` });
    }
    if (n.files.length === 0) problems.push({ file: patchFile, pointer: '', severity: 'warning', message: 'the patch holds no file section that could be read' });
  }
  const answers = t.answers ?? {};
  if (answers.design === undefined || answers.conclusion === undefined) {
    problems.push({ file: t.file, pointer: '', severity: 'warning', message: `the run gives no ${[answers.design === undefined ? 'design' : '', answers.conclusion === undefined ? 'conclusion' : ''].filter(Boolean).join(' and ')}: submitted empty` });
  }
  if (!(await exists(layout.script))) {
    problems.push({ file: patchFile, pointer: '', severity: 'info', message: 'the patch creates no reproduce_exp_bench.sh at the repository root: the verifier has no script to run (E = false)' });
  }
  result.problems = problems.map((p) => ({ ...p, message: redactString(p.message).text }));
  const recordFile = path.join(layout.imported, 'record.json');
  await writeJsonAtomic(recordFile, result);

  const service = o.service ?? new SessionService();
  const handle = await service.open(sessionDir, { client: 'import', taskId: o.task.id });
  try {
    progress('steps', `recording ${t.steps.length} steps`);
    await handle.record({ type: 'trajectory.imported', files: result.files, trajectory: t.id, format: t.format, task: t.task ?? null, steps: t.steps.length, problems: result.problems.length, record: rel(recordFile) });
    for (const s of t.steps) {
      const { index: _i, ...step } = s;
      await handle.record({ type: 'trajectory.step', trajectory: t.id, step });
    }
    progress('submit', 'submitting, then verifying and judging');
    try {
      const sub = await handle.submit({ design: answers.design ?? '', conclusion: answers.conclusion ?? '' }, {
        ...(o.verify ? { verify: o.verify } : {}), ...(o.judge ? { judge: o.judge } : {}), signal: o.signal, answersSource: t.file,
      });
      result.submission = { verify: sub.verify, judge: sub.judge, warnings: sub.warnings, workingMs: sub.workingMs };
    } catch (e) {
      if (e instanceof ExpBenchError && e.code === 'CANCELLED') throw e;
      result.problems.push({ file: t.file, pointer: '', severity: 'error', message: `submitting the imported run failed: ${redactString(e instanceof Error ? e.message : String(e)).text}` });
    }
  } finally {
    await handle.release();
  }
  result.execution = await importExecution(layout, o.task);
  await writeJsonAtomic(recordFile, result);
  return result;
}

/** The trajectory to import, a patch file given beside it, and the importer's problems. */
async function readRun(o: ImportSessionOptions): Promise<{ trajectory: Trajectory; extraPatch?: string; extraPatchFile?: string; problems: TrajProblem[] }> {
  const patchFiles: string[] = [];
  const others: string[] = [];
  for (const f of o.files) ((await looksLikePatch(f)) && !isHarnessPatchName(f) ? patchFiles : others).push(f);
  const all: Trajectory[] = [];
  const r = await importFiles(others, (t) => { all.push(t); });
  const problems: TrajProblem[] = [...r.problems];
  if (all.length === 0) {
    const why = r.problems.slice(0, 3).map((p) => `${p.file}: ${p.message}`).join('; ');
    throw new ExpBenchError('BAD_INPUT', o.files.join(' '), `no trajectory to import in these files${why ? ` (${why})` : ''}`);
  }
  const pick = o.trajectoryId !== undefined ? all.find((t) => t.id === o.trajectoryId)
    : all.length === 1 ? all[0] : all.find((t) => t.task === o.task.id);
  if (!pick) {
    throw new ExpBenchError('BAD_INPUT', o.files.join(' '), `${o.trajectoryId !== undefined ? `no trajectory ${o.trajectoryId}` : `${all.length} trajectories and none is of task ${o.task.id}`}: they are ${all.map((t) => `${t.id}${t.task ? ` (${t.task})` : ''}`).join(', ')}; choose one by its id`);
  }
  problems.push(...pick.problems);
  if (patchFiles.length > 1) problems.push({ file: patchFiles[1], pointer: '', severity: 'warning', message: `more than one patch file given: only ${patchFiles[0]} is used` });
  let extraPatch: string | undefined;
  if (patchFiles.length > 0) {
    extraPatch = redactString(await fsp.readFile(patchFiles[0], 'utf8')).text;
    if (pick.patch) problems.push({ file: patchFiles[0], pointer: '', severity: 'info', message: `the trajectory has a final patch of its own; the patch file ${patchFiles[0]} is used instead` });
  }
  return { trajectory: pick, ...(extraPatch !== undefined ? { extraPatch, extraPatchFile: patchFiles[0] } : {}), problems };
}

async function looksLikePatch(file: string): Promise<boolean> {
  const fh = await fsp.open(file, 'r').catch(() => undefined);
  if (!fh) return false;
  try {
    const buf = Buffer.alloc(2000);
    const { bytesRead } = await fh.read(buf, 0, buf.length, 0);
    const text = buf.subarray(0, bytesRead).toString('utf8');
    return /^(diff |--- |Index: )/m.test(text) && !/^\s*[[{]/.test(text);
  } finally {
    await fh.close();
  }
}

const COMMIT_KEYS = /^(base_commit|commit|commit_sha|commit_hash|git_commit|head_commit|repo_commit|sha)$/i;

/**
 * The commit the run worked on when its record names one: the first value under a key such as
 * `base_commit`, `commit`, `git_commit` (SWE-bench, OpenHands instances, Inspect sample metadata)
 * that is 7 to 40 hex digits, searched in the trajectory's metadata (4 levels deep). The
 * EXP-Bench harness's records name none.
 */
export function recordedCommit(t: Pick<Trajectory, 'metadata'>): string | undefined {
  const seen = (v: unknown, depth: number): string | undefined => {
    if (!v || typeof v !== 'object' || depth > 4) return undefined;
    for (const [k, x] of Object.entries(v as Record<string, unknown>)) {
      if (COMMIT_KEYS.test(k) && typeof x === 'string' && /^[0-9a-f]{7,40}$/i.test(x)) return x.toLowerCase();
    }
    for (const x of Object.values(v as Record<string, unknown>)) { const r = seen(x, depth + 1); if (r) return r; }
    return undefined;
  };
  return seen(t.metadata, 0);
}

function existsSyncIn(root: string, rel: string): boolean {
  const abs = path.resolve(root, rel);
  if (!abs.startsWith(path.resolve(root) + path.sep)) return false;
  return existsSync(abs);
}
