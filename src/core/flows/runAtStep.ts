import { createHash } from 'node:crypto';
import { promises as fsp } from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { ExpBenchError } from '../errors';
import { SessionLayout } from '../layout';
import type { Task } from '../tasks/types';
import { importFiles } from '../trajectory/import';
import { importOwnEvents } from '../trajectory/own';
import type { Trajectory } from '../trajectory/types';
import { RepoAtStep } from '../viewer/repoAtStep';
import { prepareTask } from './prepareTask';

/**
 * A run ready for the viewer's repository at a step (src/core/viewer/repoAtStep.ts): its
 * trajectory and the prepared workspace it starts from. One resolution for VS Code's commands and
 * `expbench traj repo-at-step` / `compare`.
 */
export interface RunSource {
  trajectory: Trajectory;
  /** A work tree with "task start": the session's `workspace/`, or a fresh preparation of the task in the OS cache. */
  workspace: string;
  /** Set when the run is a session (its own log). */
  sessionDir?: string;
  /** For titles: the session's or the file's name. */
  label: string;
}

/** What resolving a run needs from its caller: the task a trajectory names, from the caller's datasets. */
export interface RunSourceDeps {
  findTask(id: string): Promise<Task | undefined>;
}

/** Trajectories read, by file, size and modification time (a file read once per change in one process). */
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
 * The run `target` names (a path): a session (its own log, its workspace), or a trajectory file
 * on an EXP-Bench task (`trajectoryId` chooses one of several; default the first), whose task is
 * prepared once into `<OS cache>/expbench/repo-at-step-prepared/<hash>` (reused while its
 * manifest is complete).
 * @throws ExpBenchError `BAD_INPUT` naming `target` when it does not exist, holds no such
 *   trajectory, names no task, or names one `deps.findTask` does not know; what prepare throws
 */
export async function resolveRun(target: string, deps: RunSourceDeps, o: { trajectoryId?: string; signal?: AbortSignal } = {}): Promise<RunSource> {
  const abs = path.resolve(target);
  const session = await sessionOf(abs);
  if (session) {
    const layout = new SessionLayout(session);
    const [trajectory] = await trajectoriesOf(layout.events);
    return { trajectory, workspace: layout.workspace, sessionDir: session, label: path.basename(session) };
  }
  const list = await trajectoriesOf(abs);
  const trajectory = o.trajectoryId ? list.find((t) => t.id === o.trajectoryId) : list[0];
  if (!trajectory) throw new ExpBenchError('BAD_INPUT', abs, o.trajectoryId ? `holds no trajectory ${o.trajectoryId} (it holds ${list.map((t) => t.id).join(', ') || 'none'})` : 'holds no trajectory');
  if (!trajectory.task) throw new ExpBenchError('BAD_INPUT', abs, `the trajectory ${trajectory.id} names no task: import it as a session (\`expbench session import … --task ID\`, or "Import as Session…") to see its repository`);
  const task = await deps.findTask(trajectory.task);
  if (!task) throw new ExpBenchError('BAD_INPUT', abs, `the trajectory's task ${trajectory.task} is not in the datasets: add its dataset (--dataset, $EXPBENCH_DATASETS or expbench.datasets)`);
  return { trajectory, workspace: await preparedWorkspace(task, o.signal), label: `${path.basename(abs)} (${trajectory.id})` };
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
