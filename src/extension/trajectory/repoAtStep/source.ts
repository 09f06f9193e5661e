import { createHash } from 'node:crypto';
import { promises as fsp } from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import * as vscode from 'vscode';
import { ExpBenchError } from '../../../core/errors';
import { prepareTask } from '../../../core/flows/prepareTask';
import { SessionLayout } from '../../../core/layout';
import type { Task } from '../../../core/tasks/types';
import { importFiles } from '../../../core/trajectory/import';
import { importOwnEvents } from '../../../core/trajectory/own';
import type { Trajectory } from '../../../core/trajectory/types';
import { RepoAtStep } from '../../../core/viewer/repoAtStep';

/** The arguments every repository command takes (JSON-serialisable): a trajectory file or a session folder, a 0-based step. */
export interface StepArgs {
  uri: string;
  step: number;
  /** Which trajectory of a file holding several (Inspect samples): its id; default the first. */
  trajectory?: string;
}

/** A run ready for {@link RepoAtStep}: its trajectory and the prepared workspace it starts from. */
export interface RunSource {
  trajectory: Trajectory;
  /** A work tree with "task start": the session's `workspace/`, or a fresh preparation of the task in the OS cache. */
  workspace: string;
  /** Set when the run is a session (its own log). */
  sessionDir?: string;
  /** For titles: the session's or the file's name. */
  label: string;
}

/** What resolving a run needs from the extension. */
export interface SourceDeps {
  findTask(id: string): Promise<Task | undefined>;
}

/** A path from a path, a `file:` URI string or a `vscode.Uri`. */
export function fsPathOf(u: string | vscode.Uri): string {
  if (typeof u !== 'string') return u.fsPath;
  return /^[a-z][\w+.-]*:/i.test(u) && !/^[a-z]:[\\/]/i.test(u) ? vscode.Uri.parse(u).fsPath : u;
}

/** Trajectories read, by file, size and modification time (a file read once per change). */
const loaded = new Map<string, { stamp: string; list: Trajectory[] }>();

async function trajectoriesOf(file: string): Promise<Trajectory[]> {
  const st = await fsp.stat(file);
  const stamp = `${st.size}:${st.mtimeMs}`;
  const hit = loaded.get(file);
  if (hit?.stamp === stamp) return hit.list;
  const list: Trajectory[] = [];
  if (path.basename(file) === 'events.jsonl') list.push(await importOwnEvents(file));
  else await importFiles([file], (t) => { list.push(t); });
  loaded.set(file, { stamp, list });
  return list;
}

/** The session folder of `target` (a session folder, or its `private/events.jsonl`), else undefined. */
async function sessionOf(target: string): Promise<string | undefined> {
  const st = await fsp.stat(target).catch(() => undefined);
  if (!st) throw new ExpBenchError('BAD_INPUT', target, 'does not exist');
  const dir = st.isDirectory() ? target : path.basename(target) === 'events.jsonl' && path.basename(path.dirname(target)) === 'private' ? path.dirname(path.dirname(target)) : undefined;
  if (!dir) return undefined;
  const layout = new SessionLayout(dir);
  if (!(await fsp.stat(layout.events).catch(() => undefined))) throw new ExpBenchError('BAD_INPUT', target, 'is a folder without private/events.jsonl (not a session folder)');
  return dir;
}

/**
 * The run `args.uri` names: a session (its own log, its workspace), or a trajectory file on an
 * EXP-Bench task (the task prepared once into `<OS cache>/expbench/repo-at-step-prepared/<hash>`).
 * @throws ExpBenchError `BAD_INPUT` naming the file when it holds no such trajectory, names no
 *   task, or names one the configured datasets do not have; what prepare throws
 */
export async function resolveRun(args: StepArgs, deps: SourceDeps, signal?: AbortSignal): Promise<RunSource> {
  const target = path.resolve(fsPathOf(args.uri));
  const session = await sessionOf(target);
  if (session) {
    const layout = new SessionLayout(session);
    const [trajectory] = await trajectoriesOf(layout.events);
    return { trajectory, workspace: layout.workspace, sessionDir: session, label: path.basename(session) };
  }
  const list = await trajectoriesOf(target);
  const trajectory = args.trajectory ? list.find((t) => t.id === args.trajectory) : list[0];
  if (!trajectory) throw new ExpBenchError('BAD_INPUT', target, args.trajectory ? `holds no trajectory ${args.trajectory}` : 'holds no trajectory');
  if (!trajectory.task) throw new ExpBenchError('BAD_INPUT', target, `the trajectory ${trajectory.id} names no task: import it as a session ("Import as Session…") to see its repository`);
  const task = await deps.findTask(trajectory.task);
  if (!task) throw new ExpBenchError('BAD_INPUT', target, `the trajectory's task ${trajectory.task} is not in the configured datasets`);
  return { trajectory, workspace: await preparedWorkspace(task, signal), label: `${path.basename(target)} (${trajectory.id})` };
}

/** One preparation per task (and dataset file) in the OS cache, reused while its manifest is complete. */
async function preparedWorkspace(task: Task, signal?: AbortSignal): Promise<string> {
  const base = process.env.XDG_CACHE_HOME || path.join(os.homedir(), '.cache');
  const dir = path.join(base, 'expbench', 'repo-at-step-prepared', createHash('sha256').update(`${task.file}#${task.id}`).digest('hex').slice(0, 20));
  const layout = new SessionLayout(dir);
  const manifest = await fsp.readFile(layout.manifest, 'utf8').then((t) => JSON.parse(t) as { complete?: boolean }, () => undefined);
  if (!manifest?.complete) {
    await fsp.rm(dir, { recursive: true, force: true });
    await prepareTask({ task, outDir: dir, signal });
  }
  return layout.workspace;
}

/** A {@link RepoAtStep} over the run (its trees in the OS cache; calls on one run are serialised there). */
export function repoOf(run: RunSource, signal?: AbortSignal): RepoAtStep {
  return new RepoAtStep({ trajectory: run.trajectory, workspace: run.workspace, signal });
}
