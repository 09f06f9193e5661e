import { promises as fsp } from 'node:fs';
import * as path from 'node:path';
import { createTwoFilesPatch } from 'diff';

/** Files larger than this (bytes) are compared by size and time only, never inlined. */
const MAX_FILE_BYTES = 256 * 1024;
/** Files walked at most (a workspace beyond that is summarised from the first ones). */
const MAX_FILES = 5000;
/** Characters of the diff summary told to the model (the file list is always whole). */
export const MAX_SUMMARY_CHARS = 8000;
/** Folders never walked: git's own data and caches. */
const SKIP_DIRS = new Set(['.git', 'node_modules', '__pycache__', '.venv']);

/** A file's content at the snapshot: its text, or `null` for a binary or large file (then `sig` is compared). */
interface FileSnap { text: string | null; sig: string }

/** The workspace's files at one moment (relative POSIX paths). */
export type WorkspaceSnapshot = Map<string, FileSnap>;

/**
 * Reads every file under `dir` (skipping `.git`, `node_modules`, `__pycache__`, `.venv`; at most
 * 5000 files): text files up to 256 KiB in full, others as size and modification time.
 */
export async function snapshotWorkspace(dir: string): Promise<WorkspaceSnapshot> {
  const snap: WorkspaceSnapshot = new Map();
  const walk = async (rel: string): Promise<void> => {
    const entries = await fsp.readdir(path.join(dir, rel), { withFileTypes: true }).catch(() => []);
    for (const e of entries.sort((a, b) => a.name.localeCompare(b.name))) {
      if (snap.size >= MAX_FILES) return;
      const r = rel ? `${rel}/${e.name}` : e.name;
      if (e.isDirectory()) {
        if (!SKIP_DIRS.has(e.name)) await walk(r);
      } else if (e.isFile()) {
        const abs = path.join(dir, r);
        const st = await fsp.stat(abs).catch(() => undefined);
        if (!st) continue;
        const sig = `${st.size}:${st.mtimeMs}`;
        if (st.size > MAX_FILE_BYTES) { snap.set(r, { text: null, sig }); continue; }
        const buf = await fsp.readFile(abs).catch(() => undefined);
        if (!buf) continue;
        snap.set(r, buf.includes(0) ? { text: null, sig } : { text: buf.toString('utf8'), sig });
      }
    }
  };
  await walk('');
  return snap;
}

/** What changed between two snapshots: the paths by kind and a unified diff of the text changes. */
export interface WorkspaceChanges {
  added: string[];
  changed: string[];
  deleted: string[];
  /** Unified diffs (3 lines of context) of added, changed and deleted text files, in path order. */
  diff: string;
}

/** Compares two snapshots of the same folder (see {@link snapshotWorkspace}). */
export function compareSnapshots(before: WorkspaceSnapshot, after: WorkspaceSnapshot): WorkspaceChanges {
  const out: WorkspaceChanges = { added: [], changed: [], deleted: [], diff: '' };
  const parts: string[] = [];
  for (const p of [...new Set([...before.keys(), ...after.keys()])].sort()) {
    const a = before.get(p);
    const b = after.get(p);
    if (a && b && (a.text !== null && b.text !== null ? a.text === b.text : a.sig === b.sig)) continue;
    (a ? (b ? out.changed : out.deleted) : out.added).push(p);
    if ((a?.text ?? null) === null && (b?.text ?? null) === null) continue;
    parts.push(createTwoFilesPatch(a ? `a/${p}` : '/dev/null', b ? `b/${p}` : '/dev/null', a?.text ?? '', b?.text ?? '', undefined, undefined, { context: 3 })
      .split('\n').slice(1).join('\n'));
  }
  out.diff = parts.join('');
  return out;
}

/**
 * The message for the agent on resume: which files the person added, changed and deleted in
 * /workspace while it was paused, and the diff (cut at {@link MAX_SUMMARY_CHARS} characters,
 * said so when cut). `No file changed` when nothing did.
 */
export function changesMessage(c: WorkspaceChanges): string {
  if (!c.added.length && !c.changed.length && !c.deleted.length) return 'While you were paused the researcher changed no file in /workspace.';
  const list = (k: string, ps: string[]) => (ps.length ? [`${k}: ${ps.join(', ')}`] : []);
  const diff = c.diff.length > MAX_SUMMARY_CHARS ? `${c.diff.slice(0, MAX_SUMMARY_CHARS)}\n… (diff cut at ${MAX_SUMMARY_CHARS} characters; read the files)` : c.diff;
  return [
    'While you were paused the researcher edited /workspace (what changed since the pause):',
    ...list('added', c.added), ...list('changed', c.changed), ...list('deleted', c.deleted),
    ...(diff ? ['```diff', diff.trimEnd(), '```'] : []),
  ].join('\n');
}
