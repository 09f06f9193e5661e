import { randomBytes } from 'node:crypto';
import { promises as fsp } from 'node:fs';
import * as path from 'node:path';
import { ExpBenchError } from '../errors';
import { git, hasIndex, isGitDir, solverRepositoryRefs } from '../git';
import { SessionLayout } from '../layout';
import { log } from '../log';
import { isTempFile, readRegularFile, sweepTempFiles, writeJsonAtomic } from '../util/fs';
import { damagedManifest, ManifestSchema, unfinishedPreparation } from './manifest';
import { errorMessage } from '../util/errors';

/**
 * What a session folder holds, as every command must read it (one classification, so that no
 * command mistakes one state for another):
 *
 * - `absent`: no such folder; `empty`: a folder with nothing in it.
 * - `preparing`: only the files of a preparation that has not finished (a draft manifest, or none
 *   yet, a workspace repository without user changes, the writer's temp files): it may be cleared
 *   and prepared again.
 * - `prepared`: a complete manifest and no user work yet.
 * - `worked`: user work is present (see {@link FolderReport.work}), whatever the manifest says.
 * - `submitted`: submitted or given up (state.json says so, or private/answers.json exists).
 * - `damaged`: the manifest is there but is neither a draft nor a complete manifest (not JSON,
 *   `{}`, `[]`, `1`, `{"complete":"true"}`…), and no user work was found.
 * - `foreign`: no manifest and files a preparation does not write: not a session made by `prepare`.
 */
export type SessionFolderState = 'absent' | 'empty' | 'preparing' | 'prepared' | 'worked' | 'submitted' | 'damaged' | 'foreign';

/** The result of {@link inspectSessionFolder}. */
export interface FolderReport {
  state: SessionFolderState;
  /** `private/manifest.json`: missing, a draft (preparation started), complete, or neither. */
  manifest: 'absent' | 'draft' | 'complete' | 'damaged';
  /** Why the manifest is `damaged`, when it is. */
  manifestProblem?: string;
  /** The process that wrote the draft manifest (`preparing` with a draft). */
  preparingPid?: number;
  /** The task id the manifest (draft or complete) names. */
  taskId?: string;
  /**
   * The user work found, one short item each (paths relative to the session folder, at most
   * {@link MAX_WORK_ITEMS}): any file of private/ other than the preparation's (state.json,
   * events.jsonl, answers, verify and judge records, runs…), files beside workspace/ and private/,
   * and workspace changes since "task start" (modified, untracked or ignored files, as the host
   * repository sees them).
   */
  work: string[];
}

const logger = log('workspace.prepare');

/** The lock `prepare` holds in a session folder while it inspects, clears and claims it. */
export const PREPARE_LOCK = '.expbench-prepare.lock';

/** Folders that {@link clearPreparation} moves a preparation's files into before removing them. */
const CLEARING = /^\.expbench-clearing-\d+-[0-9a-f]{8}$/;

/** True for a folder left by a {@link clearPreparation} that was killed before it finished. */
export function isClearingLeftover(name: string): boolean {
  return CLEARING.test(name) || name === PREPARE_LOCK;
}

/** How many work items a report lists at most. */
export const MAX_WORK_ITEMS = 8;

/** Files of private/ a preparation writes (temp files of the durable writer aside). */
const PREPARATION_PRIVATE = new Set(['manifest.json', 'task.json', 'repo.git']);

/**
 * Claims of private/ that a host process holds while it works on the session (`serve.json` of
 * `baseline serve`, taken before it prepares a new folder; `submit.lock`): neither work nor a
 * preparation's, so a folder holding only these is still empty.
 */
const HOST_CLAIMS = new Set(['serve.json', 'submit.lock']);

/**
 * Classifies a session folder (see {@link SessionFolderState}). Reads the folder listing,
 * private/manifest.json and private/state.json, and asks git for the workspace's changes
 * (`git status`, the refs) in the session's host repository (`private/repo.git`, never the
 * workspace's own `.git`). Never changes anything.
 * @throws ExpBenchError `BAD_INPUT` naming `dir` when it is not a folder or cannot be listed
 */
export async function inspectSessionFolder(dir: string): Promise<FolderReport> {
  const layout = new SessionLayout(path.resolve(dir));
  let top: string[];
  try {
    top = await fsp.readdir(layout.root);
  } catch (e: any) {
    if (e?.code === 'ENOENT') return { state: 'absent', manifest: 'absent', work: [] };
    throw new ExpBenchError('BAD_INPUT', layout.root, `cannot use as session folder: ${errorMessage(e)}`, { cause: e });
  }
  if (top.every((n) => n === PREPARE_LOCK)) return { state: 'empty', manifest: 'absent', work: [] };

  const m = await manifestStatus(layout.manifest);
  const work: string[] = [];
  const add = (item: string) => { if (work.length < MAX_WORK_ITEMS) work.push(item); };
  for (const name of top) if (name !== 'workspace' && name !== 'private' && !isClearingLeftover(name)) add(name);

  const priv = await fsp.readdir(layout.private).catch(() => [] as string[]);
  if (top.every((n) => n === PREPARE_LOCK || n === 'private') && priv.every((n) => HOST_CLAIMS.has(n))) return { state: 'empty', manifest: 'absent', work: [] };
  for (const name of priv) {
    if (PREPARATION_PRIVATE.has(name) || HOST_CLAIMS.has(name) || isTempFile(name) || name === 'owner.json') continue;
    add(`private/${name}`);
  }
  const finished = await finishedMark(layout);

  const ws = await workspaceWork(layout, m.status === 'complete' ? m.commit : undefined);
  for (const w of ws.items) add(w);

  const report = (state: SessionFolderState): FolderReport => ({
    state, manifest: m.status, ...(m.problem ? { manifestProblem: m.problem } : {}),
    ...(m.pid !== undefined ? { preparingPid: m.pid } : {}), ...(m.taskId ? { taskId: m.taskId } : {}), work,
  });
  if (finished) return report('submitted');
  if (work.length > 0) return report('worked');
  if (m.status === 'complete') return report('prepared');
  if (m.status === 'draft') return report('preparing');
  if (m.status === 'damaged') return report('damaged');
  // No manifest: a preparation killed before its draft landed leaves at most an initialised,
  // empty repository (no commit, no index) and temp files; anything else was not made by it.
  return report(ws.bareInit ? 'preparing' : 'foreign');
}

/** Reads the manifest's status without throwing. */
async function manifestStatus(file: string): Promise<{ status: FolderReport['manifest']; problem?: string; commit?: string; started?: string; pid?: number; taskId?: string }> {
  let raw: unknown;
  try {
    const buf = await readRegularFile(file);
    if (buf === undefined) return { status: 'absent' };
    raw = JSON.parse(buf.toString('utf8'));
  } catch (e) {
    return { status: 'damaged', problem: e instanceof ExpBenchError ? e.message.replace(`${file}: `, '') : `not valid JSON (${errorMessage(e)})` };
  }
  if (isDraft(raw)) {
    const d = raw as { createdAt: string; taskId: string; pid?: unknown };
    return { status: 'draft', started: d.createdAt, taskId: d.taskId, ...(Number.isSafeInteger(d.pid) ? { pid: d.pid as number } : {}) };
  }
  const parsed = ManifestSchema.safeParse(raw);
  if (parsed.success) return { status: 'complete', commit: parsed.data.taskStart ?? parsed.data.workspaceCommit, taskId: parsed.data.taskId };
  return { status: 'damaged', problem: `neither a preparation's draft nor a complete manifest: ${JSON.stringify(raw)?.slice(0, 80) ?? String(raw)}` };
}

/** The draft exactly as preparation writes it (see manifest.ts `ManifestDraft`). */
function isDraft(raw: unknown): boolean {
  if (!raw || typeof raw !== 'object' || Array.isArray(raw)) return false;
  const d = raw as Record<string, unknown>;
  return d.complete === false && typeof d.taskId === 'string' && typeof d.createdAt === 'string';
}

/** True when state.json records a submission or give-up, or private/answers.json exists. */
async function finishedMark(layout: SessionLayout): Promise<boolean> {
  if (await fsp.lstat(layout.answers).then(() => true, () => false)) return true;
  try {
    const buf = await readRegularFile(layout.state);
    if (!buf) return false;
    const s = JSON.parse(buf.toString('utf8')) as Record<string, unknown> | null;
    return !!s && typeof s === 'object' && (s.submitted !== undefined || s.gaveUp !== undefined);
  } catch {
    return false;
  }
}

/** Paths of the workspace that a preparation writes besides its files (the solver's `.git`, the session's `.devcontainer/`). */
const PREPARATION_WORKSPACE = new Set(['.git', '.devcontainer']);

/**
 * The workspace's user work, as the host repository (`private/repo.git`, with the workspace as
 * its work tree) sees it: changes against its index and "task start" (untracked and ignored files
 * too, except the session's `.devcontainer/`). The workspace's own `.git` is the solver's: git
 * never runs in it, nor in a nested repository (an untracked folder with its own `.git` is one
 * item). Without a host repository (a preparation killed before it made one, or a session of an
 * earlier version), every file beside `.git` and `.devcontainer/` is someone's. `bareInit`: the
 * workspace is absent or holds nothing a preparation did not write, and the host repository has
 * no commit and no index.
 */
async function workspaceWork(layout: SessionLayout, commit: string | undefined): Promise<{ items: string[]; bareInit: boolean }> {
  const ws = layout.workspace;
  const entries = await fsp.readdir(ws).catch(() => undefined);
  const rel = (p: string) => `workspace/${p}`;
  const others = (entries ?? []).filter((e) => !PREPARATION_WORKSPACE.has(e));
  if (!isGitDir(layout.repository)) {
    const items = (await filesUnder(ws, others)).map(rel);
    return { items, bareInit: items.length === 0 };
  }
  const repo = { gitDir: layout.repository, workTree: ws };
  const refs = await git(['for-each-ref', '--format=%(refname)'], { repo: { gitDir: layout.repository }, okCodes: [128] }).catch((e: unknown) => ({ code: 128, text: '', stderr: errorMessage(e) }));
  if (refs.code !== 0) return { items: [`private/repo.git (not a readable repository: ${refs.stderr.trim().split('\n')[0]})`], bareInit: false };
  const refNames = refs.text.split('\n').filter(Boolean);
  const indexed = await hasIndex(layout.repository);
  if (refNames.length === 0 && !indexed) {
    // Nothing committed, nothing read into the index: every file beside .git is someone's.
    const items = (await filesUnder(ws, others)).map(rel);
    return { items, bareInit: items.length === 0 };
  }
  if (entries === undefined) return { items: [], bareInit: false };
  const items: string[] = [];
  // The solver's own repository, read as files (never run, never believed as the task start):
  // its commits and stashes are work that `prepare` must not clear.
  if (entries.includes('.git')) {
    const start = commit ?? (await git(['rev-parse', '--verify', '-q', 'refs/expbench/task-start'], { repo: { gitDir: layout.repository }, okCodes: [1] })).text.trim();
    const refs = await solverRepositoryRefs(ws);
    if (refs.others.length) items.push(`workspace/.git: refs besides the branch (${refs.others.slice(0, 4).join(', ')})`);
    if (start && refs.main !== undefined && refs.main !== start) items.push(`workspace/.git: commits after "task start" (main is ${refs.main.slice(0, 12)})`);
  }
  const st = await git(['status', '--porcelain=v1', '-z', '--untracked-files=all', '--ignored=matching'], { repo, okCodes: [128] });
  if (st.code !== 0) {
    items.push(`workspace (git status failed: ${st.stderr.trim().split('\n')[0]})`);
    return { items, bareInit: false };
  }
  const unborn = refNames.length === 0;
  for (const rec of st.text.split('\0')) {
    if (rec.length < 4) continue;
    const x = rec[0], y = rec[1], p = rec.slice(3);
    if (x === '!' && (p === '.devcontainer/' || p.startsWith('.devcontainer/'))) continue;
    // Before the "task start" commit, the index that preparation read in shows as added: only a
    // difference of the files from the index is a change.
    if (unborn && x === 'A' && y === ' ') continue;
    items.push(rel(p));
  }
  return { items, bareInit: false };
}

/**
 * Refuses a session folder that a command other than `prepare` must not use: a preparation that
 * did not finish, or a damaged manifest. Folders without any manifest (made by hand, or by an
 * older version) are accepted as before. The message says what happened and what to do, and
 * never advises anything that removes work.
 * @throws ExpBenchError `SESSION_INVALID` naming the manifest
 */
export async function assertPreparationFinished(dir: string, action: string): Promise<void> {
  const layout = new SessionLayout(path.resolve(dir));
  const m = await manifestStatus(layout.manifest);
  if (m.status === 'draft') throw unfinishedPreparation(layout, action, m.started);
  if (m.status === 'damaged') throw damagedManifest(layout, action, m.problem ?? 'unreadable');
}

/**
 * The first {@link MAX_WORK_ITEMS} entries under `names` (relative to `root`) that are not
 * folders: empty folders hold no work.
 */
async function filesUnder(root: string, names: string[]): Promise<string[]> {
  const out: string[] = [];
  const stack = [...names];
  while (stack.length && out.length < MAX_WORK_ITEMS) {
    const rel = stack.pop()!;
    const st = await fsp.lstat(path.join(root, rel)).catch(() => undefined);
    if (!st) continue;
    if (!st.isDirectory()) { out.push(rel); continue; }
    const inner = await fsp.readdir(path.join(root, rel)).catch(() => [] as string[]);
    for (const n of inner) stack.push(`${rel}/${n}`);
  }
  return out;
}

/**
 * Removes the files of a preparation that did not finish (call only for a folder that
 * {@link inspectSessionFolder} found `preparing`): workspace/ and private/ are first renamed
 * aside (atomic), then removed, as are the leftovers of an earlier clearing that was killed. A
 * clearing killed at any point leaves the folder `preparing` (or empty), never half a session.
 */
export async function clearPreparation(dir: string): Promise<void> {
  const layout = new SessionLayout(path.resolve(dir));
  for (const p of [layout.workspace, layout.private]) {
    const aside = path.join(layout.root, `.expbench-clearing-${process.pid}-${randomBytes(4).toString('hex')}`);
    await fsp.rename(p, aside).catch((e: NodeJS.ErrnoException) => { if (e.code !== 'ENOENT') throw e; });
  }
  for (const name of await fsp.readdir(layout.root)) {
    if (CLEARING.test(name)) await fsp.rm(path.join(layout.root, name), { recursive: true, force: true });
  }
}

/**
 * The refusal of `prepare --out dir` for a folder in `r`'s state (see {@link refusal}), after
 * removing the temp files that writers since killed left in its private/ (no content of the
 * session is touched).
 */
export async function refuseFolder(dir: string, r: FolderReport): Promise<ExpBenchError> {
  await sweepTempFiles(new SessionLayout(path.resolve(dir)).private);
  return refusal(dir, r);
}

/**
 * Why `prepare --out dir` refuses a folder (any state but `absent`, `empty` and `preparing`):
 * what the folder holds, that nothing was changed, and what to do.
 */
export function refusal(dir: string, r: FolderReport): ExpBenchError {
  const items = r.work.length ? ` (${r.work.join(', ')}${r.work.length >= MAX_WORK_ITEMS ? ', …' : ''})` : '';
  const kept = 'nothing in it was changed or removed';
  const choose = 'choose a new folder for the session (--out)';
  switch (r.state) {
    case 'prepared':
      return new ExpBenchError('BAD_INPUT', dir, `already holds a prepared session${r.taskId ? ` of ${r.taskId}` : ''}; ${kept}: open it, or ${choose}`);
    case 'submitted':
      return new ExpBenchError('BAD_INPUT', dir, `holds a submitted session${items}; ${kept}: ${choose}`);
    case 'worked':
      return new ExpBenchError('BAD_INPUT', dir, `holds work${items}; ${kept}: ${choose}`
        + (r.manifest === 'draft' || r.manifest === 'damaged' ? '; its preparation did not finish, so prepare into a new folder and copy your work there' : ''));
    case 'damaged':
      return new ExpBenchError('BAD_INPUT', dir, `has a damaged manifest (${r.manifestProblem}); ${kept}: ${choose}, or move the folder away yourself if nothing in it is yours`);
    default:
      return new ExpBenchError('BAD_INPUT', dir, `exists and is not empty${items}; ${kept}: ${choose}`);
  }
}

/**
 * Claims `dir` for a preparation of `taskId`: creates it when absent, takes {@link PREPARE_LOCK}
 * (exclusive; a lock whose process is gone is taken over), inspects the folder, clears it when it
 * is `preparing` and the draft's process is gone, refuses every other non-empty state, and
 * writes a first draft manifest (with this pid) before letting the lock go: from then on, another
 * `prepare` sees a live preparation and leaves the folder alone.
 * @returns true when this call created `dir`
 * @throws ExpBenchError `BAD_INPUT` naming `dir`: what it holds and what to do (nothing changed)
 */
export async function claimSessionFolder(dir: string, taskId: string): Promise<boolean> {
  const layout = new SessionLayout(path.resolve(dir));
  const made = await fsp.mkdir(layout.root, { recursive: true }).catch((e: NodeJS.ErrnoException) => {
    throw new ExpBenchError('BAD_INPUT', dir, `cannot create the session folder: ${e.message}`, { cause: e });
  });
  const lock = path.join(layout.root, PREPARE_LOCK);
  await takeLock(dir, lock);
  try {
    const report = await inspectSessionFolder(layout.root);
    if (report.state === 'preparing') {
      const pid = report.preparingPid;
      if (pid !== undefined && processAlive(pid)) {
        throw new ExpBenchError('BAD_INPUT', dir, `another preparation (pid ${pid}) is writing into this folder now; nothing was changed: wait for it to finish, or choose a new folder for the session (--out)`);
      }
      logger.warn(`${dir}: clearing an unfinished preparation (it holds no user work)`);
      await clearPreparation(layout.root);
    } else if (report.state !== 'absent' && report.state !== 'empty') {
      throw await refuseFolder(dir, report);
    }
    await writeJsonAtomic(layout.manifest, { complete: false, taskId, createdAt: new Date().toISOString(), pid: process.pid }, { fsync: false });
    return made !== undefined;
  } finally {
    await fsp.rm(lock, { force: true }).catch(() => undefined);
  }
}

async function takeLock(dir: string, lock: string): Promise<void> {
  for (let attempt = 0; ; attempt++) {
    try {
      await fsp.writeFile(lock, String(process.pid), { flag: 'wx' });
      return;
    } catch (e) {
      if ((e as NodeJS.ErrnoException).code !== 'EEXIST' || attempt > 0) {
        throw new ExpBenchError('BAD_INPUT', dir, `cannot claim the session folder (${PREPARE_LOCK}): ${errorMessage(e)}; nothing was changed: run the command again`, { cause: e });
      }
    }
    const holder = Number(await fsp.readFile(lock, 'utf8').catch(() => ''));
    if (Number.isSafeInteger(holder) && holder > 0 && processAlive(holder)) {
      throw new ExpBenchError('BAD_INPUT', dir, `another preparation (pid ${holder}) is starting in this folder now; nothing was changed: wait for it to finish, or choose a new folder for the session (--out)`);
    }
    await fsp.rm(lock, { force: true });
  }
}

function processAlive(pid: number): boolean {
  try { process.kill(pid, 0); return true; } catch (e) { return (e as NodeJS.ErrnoException).code === 'EPERM'; }
}
