import { promises as fsp } from 'node:fs';
import * as path from 'node:path';
import { z } from 'zod';
import type { Task } from '../tasks/types';
import { readUntrusted } from '../untrusted';
import { readJsonIfExists, writeJsonAtomic } from '../util/fs';
import { SessionLayout } from '../layout';

/**
 * The session marker: `workspace/.devcontainer/expbench-session.json`, `{ version: 1, taskId }`.
 * It lets VS Code activate the extension in a window opened on a session's workspace
 * (`workspaceContains:.devcontainer/expbench-session.json`). It holds no answers and no secrets,
 * and `.devcontainer/` is excluded from the patch (`.git/info/exclude`), so it never reaches the
 * verifier or the judge. The session root is the workspace's parent folder.
 */
export const MARKER_PATH = path.join('.devcontainer', 'expbench-session.json');

const MarkerSchema = z.object({ version: z.literal(1), taskId: z.string() });

/** Writes the marker and a snapshot of the task (`private/task.json`, so the session is self-contained). */
export async function writeSessionMarker(sessionDir: string, task: Task): Promise<void> {
  const layout = new SessionLayout(sessionDir);
  await writeJsonAtomic(path.join(layout.workspace, MARKER_PATH), { version: 1, taskId: task.id });
  const { raw: _raw, ...rest } = task;
  await writeJsonAtomic(path.join(layout.private, 'task.json'), { ...rest, raw: task.raw });
}

/** The most bytes of a marker read (it is about 40): the workspace is the solver's to write. */
export const MARKER_MAX_BYTES = 64 * 1024;

/**
 * The session root for a workspace folder that holds a marker, else undefined. The marker lies in
 * the workspace, which the solver writes: it is read through the untrusted reader (a link, FIFO,
 * device or a file over {@link MARKER_MAX_BYTES} is no marker, and nothing blocks or fills memory
 * when the window opens), and only its presence and form count: the root is the workspace's parent
 * and the task comes from the host's `private/` (the caller reads the manifest).
 */
export async function sessionRootOf(workspaceFolder: string): Promise<{ root: string; taskId: string } | undefined> {
  try {
    const buf = await readUntrusted(path.join(workspaceFolder, MARKER_PATH), { within: workspaceFolder, maxBytes: MARKER_MAX_BYTES, what: 'the session marker' });
    if (buf === undefined) return undefined;
    const m = MarkerSchema.safeParse(JSON.parse(buf.toString('utf8')));
    if (!m.success) return undefined;
    const root = path.dirname(path.resolve(workspaceFolder));
    await fsp.access(new SessionLayout(root).private);
    return { root, taskId: m.data.taskId };
  } catch {
    return undefined;
  }
}

/** The task snapshot written by {@link writeSessionMarker}, or undefined when absent or unreadable. */
export async function readTaskSnapshot(sessionDir: string): Promise<Task | undefined> {
  try {
    return await readJsonIfExists<Task>(path.join(new SessionLayout(sessionDir).private, 'task.json'));
  } catch {
    return undefined;
  }
}
