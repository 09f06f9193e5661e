import type { Dirent, Stats } from 'node:fs';
import { promises as fsp } from 'node:fs';
import * as path from 'node:path';
import { isInside } from './read';

/** What an entry of a folder is (its own kind: a link is a link, never its target). */
export type EntryKind = 'file' | 'directory' | 'symlink' | 'fifo' | 'socket' | 'device';

/** The kind of an lstat result or a directory entry. */
export function entryKind(st: Stats | Dirent): EntryKind {
  if (st.isFile()) return 'file';
  if (st.isDirectory()) return 'directory';
  if (st.isSymbolicLink()) return 'symlink';
  if (st.isFIFO()) return 'fifo';
  if (st.isSocket()) return 'socket';
  return 'device';
}

/** True for the kinds the host never opens: FIFOs, sockets and devices. */
export function isSpecial(kind: EntryKind): boolean {
  return kind === 'fifo' || kind === 'socket' || kind === 'device';
}

/** The kind in words, for messages (`a FIFO (named pipe)`, …). */
export function kindWords(kind: EntryKind): string {
  switch (kind) {
    case 'file': return 'a regular file';
    case 'directory': return 'a directory';
    case 'symlink': return 'a symbolic link';
    case 'fifo': return 'a FIFO (named pipe)';
    case 'socket': return 'a socket';
    case 'device': return 'a device file';
  }
}

/** An entry the host leaves alone, with the reason (for the "skipped" lists of patch, export, the watcher…). */
export interface SkippedEntry {
  /** Root-relative path with `/`. */
  path: string;
  kind: EntryKind;
  /** A sentence: what it is and why it was left out. */
  reason: string;
}

/** The reason a special file is skipped: it is never opened (it could block or reach a device). */
export function specialReason(kind: EntryKind): string {
  return `${kindWords(kind)}: never opened by the host (only regular files, folders and links are taken)`;
}

/**
 * Where a symbolic link at `abs` points: its text, and whether it stays inside `root` (resolved
 * against the link's folder, lexically: the text is what a checkout recreates). Never follows it.
 * @returns undefined when `abs` is not a link
 */
export async function linkTarget(root: string, abs: string): Promise<{ text: string; inside: boolean } | undefined> {
  const text = await fsp.readlink(abs).catch(() => undefined);
  if (text === undefined) return undefined;
  const resolved = path.resolve(path.dirname(abs), text);
  return { text, inside: isInside(path.resolve(root), resolved) };
}

/** One entry met by {@link walkEntries}. */
export interface WalkedEntry {
  /** Root-relative path with `/`. */
  path: string;
  abs: string;
  kind: EntryKind;
}

/**
 * Every entry under `root`, a folder's entries before those of its sub-folders, names sorted
 * within a folder; from readdir only: nothing is opened, no link is followed (a link to a folder
 * is an entry, not a folder to go into). `skipDir(rel)` leaves a folder out (e.g. `.git`).
 * A folder that cannot be listed (gone, permission) is left out.
 */
export async function* walkEntries(root: string, skipDir: (rel: string) => boolean = () => false): AsyncGenerator<WalkedEntry> {
  const stack: string[] = [''];
  while (stack.length) {
    const rel = stack.pop()!;
    const dir = rel ? path.join(root, rel) : root;
    const entries = (await fsp.readdir(dir, { withFileTypes: true }).catch(() => [] as Dirent[]))
      .sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
    const sub: string[] = [];
    for (const d of entries) {
      const r = rel ? `${rel}/${d.name}` : d.name;
      const kind = entryKind(d);
      yield { path: r, abs: path.join(dir, d.name), kind };
      if (kind === 'directory' && !skipDir(r)) sub.push(r);
    }
    stack.push(...sub.reverse());
  }
}
