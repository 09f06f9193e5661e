import { createHash } from 'node:crypto';
import * as fs from 'node:fs';
import { promises as fsp } from 'node:fs';
import * as path from 'node:path';
import { deflateSync } from 'node:zlib';

/**
 * Git objects written by the workspace builder itself: the few tree objects a mask changes, the
 * "task start" commit and the branch. Format: git's loose objects (`<type> <size>\0<body>`,
 * zlib-deflated, named by the SHA-1 of the uncompressed bytes; Documentation/gitformat-*.txt and
 * `git hash-object`). SHA-1 only: the workspace is always a SHA-1 repository (init.ts pins the
 * format, prepare.ts refuses SHA-256 sources); trees are checked against `git mktree` and
 * `git fsck --strict` in test/unit/workspace.objects.unit.test.ts.
 *
 * Why not a library: isomorphic-git 1.44 does the same (writeTree/writeCommit/writeRef), but adds
 * 223 KB minified to the bundle and took 84 ms on its first call in a process and 9–11 ms after
 * (two trees, a commit, a ref), against about 1 ms here and 13 ms for the three git processes
 * this replaces (measured 2026-11-30; prepare is benchmarked against `git clone --local`).
 */

/** A file entry of a tree: `mode` as `git ls-tree` prints it (`100644`, `100755`, `120000`). */
export interface FileEntry { mode: string; sha: string; path: string }
/** A folder whose tree object is reused as it is (it exists in the source). */
export interface ReusedTree { sha: string; path: string }

/** A loose object to write: its id and its uncompressed bytes (header included). */
export interface LooseObject { id: string; raw: Buffer }

/** Header + body of a git object, and its id (SHA-1). */
export function gitObject(type: 'blob' | 'tree' | 'commit', body: Buffer): LooseObject {
  const raw = Buffer.concat([Buffer.from(`${type} ${body.length}\0`), body]);
  const id = createHash('sha1').update(raw).digest('hex');
  return { id, raw };
}

type Node = { kind: 'file'; mode: string; sha: string } | { kind: 'reused'; sha: string } | { kind: 'dir'; children: Map<string, Node> };

/**
 * The tree objects of a folder hierarchy holding `files`, where every folder listed in `reused`
 * is taken as that existing tree (its files in `files` are then ignored; a reused folder inside
 * another reused folder is covered by the outer one). Entries are sorted as git sorts them
 * (byte order of the name, a folder's name compared as if followed by `/`).
 *
 * @returns the root tree's id and the tree objects to write (the reused ones excepted), children first.
 * @throws Error when a path is both a file and a folder (not a tree git could have listed).
 */
export function buildTrees(files: FileEntry[], reused: ReusedTree[]): { root: string; trees: LooseObject[] } {
  const root: Node = { kind: 'dir', children: new Map() };
  const place = (p: string, leaf: Node): void => {
    const parts = p.split('/');
    let dir = root;
    for (let i = 0; i < parts.length - 1; i++) {
      let next = dir.children.get(parts[i]);
      if (next?.kind === 'reused') return;
      if (!next) dir.children.set(parts[i], (next = { kind: 'dir', children: new Map() }));
      if (next.kind !== 'dir') throw new Error(`${parts.slice(0, i + 1).join('/')} is both a file and a folder`);
      dir = next;
    }
    const name = parts[parts.length - 1];
    const old = dir.children.get(name);
    if (old?.kind === 'reused') return;
    if (old && (old.kind === 'file' || leaf.kind === 'file')) throw new Error(`${p} is both a file and a folder`);
    dir.children.set(name, leaf);
  };
  for (const t of [...reused].sort((a, b) => a.path.length - b.path.length)) place(t.path, { kind: 'reused', sha: t.sha });
  for (const f of files) place(f.path, { kind: 'file', mode: f.mode, sha: f.sha });

  const trees: LooseObject[] = [];
  const write = (dir: Extract<Node, { kind: 'dir' }>): string => {
    const entries = [...dir.children].map(([name, n]) => {
      const isTree = n.kind !== 'file';
      const sha = n.kind === 'dir' ? write(n) : n.sha;
      return { key: Buffer.from(isTree ? `${name}/` : name), head: Buffer.from(`${n.kind === 'file' ? n.mode : '40000'} ${name}\0`), sha };
    });
    entries.sort((a, b) => Buffer.compare(a.key, b.key));
    const body = Buffer.concat(entries.flatMap((e) => [e.head, Buffer.from(e.sha, 'hex')]));
    const obj = gitObject('tree', body);
    trees.push(obj);
    return obj.id;
  };
  return { root: write(root), trees };
}

/** The body of a root commit of `tree` by `ident` (`Name <email>`) at `when`, with `message`. */
export function commitBody(tree: string, ident: string, message: string, when = new Date()): Buffer {
  const offset = -when.getTimezoneOffset();
  const tz = `${offset < 0 ? '-' : '+'}${String(Math.floor(Math.abs(offset) / 60)).padStart(2, '0')}${String(Math.abs(offset) % 60).padStart(2, '0')}`;
  const stamp = `${Math.floor(when.getTime() / 1000)} ${tz}`;
  return Buffer.from(`tree ${tree}\nauthor ${ident} ${stamp}\ncommitter ${ident} ${stamp}\n\n${message}\n`);
}

/**
 * Writes `objects` as loose objects into `gitDir/objects` (zlib level `level`, 0–9; git's
 * default `core.looseCompression` is 1); an id given twice is written once. Meant for the few
 * objects of a repository being built (a mask's trees and a commit): the writes are synchronous
 * (for three objects 0.5 ms holding the event loop against 1.6 ms through the thread pool,
 * measured), and each file is created directly under its name (`wx`: an object already there is
 * an error), without git's temporary file and rename, so a crash can leave a partial object; the
 * workspace builder's caller removes a workspace whose preparation did not finish.
 *
 * @throws the file system's error (EEXIST, ENOSPC, EACCES…) naming the object path.
 */
export function writeLoose(gitDir: string, objects: LooseObject[], level = 1): void {
  const made = new Set<string>();
  for (const o of objects) {
    const folder = path.join(gitDir, 'objects', o.id.slice(0, 2));
    if (made.has(o.id)) continue;
    if (!made.has(folder)) fs.mkdirSync(folder, { recursive: true });
    fs.writeFileSync(path.join(folder, o.id.slice(2)), deflateSync(o.raw, { level }), { mode: 0o444, flag: 'wx' });
    made.add(o.id).add(folder);
  }
}

/**
 * Points `ref` (for example `refs/heads/main`) of `gitDir` at `id`, through `<ref>.lock` renamed
 * into place as git does. Writes no reflog.
 */
export async function writeRef(gitDir: string, ref: string, id: string): Promise<void> {
  const file = path.join(gitDir, ref);
  await fsp.mkdir(path.dirname(file), { recursive: true });
  await fsp.writeFile(`${file}.lock`, `${id}\n`, { flag: 'wx' });
  await fsp.rename(`${file}.lock`, file);
}

/**
 * Every object id in the (SHA-1) object store of `gitDir` (loose objects, and the names in each
 * pack's version-2 `.idx`: magic `\377tOc`, version, 256-entry fan-out, sorted ids; Documentation/
 * gitformat-pack.txt), read without starting git; git's unfinished temporary files are not
 * objects (git skips them too). Returns `undefined` when the store holds anything this reader does
 * not cover (alternates, a version-1 index, an unknown file), so the caller can ask git instead.
 *
 * @throws the file system's error other than ENOENT.
 */
export async function listObjectStore(gitDir: string): Promise<string[] | undefined> {
  const objects = path.join(gitDir, 'objects');
  const ids: string[] = [];
  const entries = await fsp.readdir(objects, { withFileTypes: true });
  let unknown = false;
  await Promise.all(entries.map(async (e) => {
    if (e.isDirectory() && /^[0-9a-f]{2}$/.test(e.name)) {
      for (const f of await fsp.readdir(path.join(objects, e.name))) {
        if (/^[0-9a-f]{38}$/.test(f)) ids.push(e.name + f);
        else if (!f.startsWith('tmp_obj_')) unknown = true; // git's unfinished writes: not objects yet
      }
    } else if (e.isDirectory() && e.name === 'info') {
      // Only alternates lend objects; `packs` and commit-graphs hold none.
      if ((await fsp.readdir(path.join(objects, 'info'))).some((f) => /alternates$/.test(f))) unknown = true;
    } else if (e.isDirectory() && e.name === 'pack') {
      for (const f of await fsp.readdir(path.join(objects, 'pack'))) {
        if (f.endsWith('.idx')) {
          const names = packIndexNames(await fsp.readFile(path.join(objects, 'pack', f)));
          if (!names) unknown = true;
          else ids.push(...names);
        } else if (!/\.(pack|rev|bitmap|keep|mtimes|promisor)$|^multi-pack-index|^tmp_(pack|idx)_/.test(f)) {
          unknown = true;
        }
      }
    } else {
      unknown = true;
    }
  }));
  return unknown ? undefined : ids;
}

/** The object ids of a version-2 SHA-1 pack index, or undefined for any other index. */
function packIndexNames(idx: Buffer): string[] | undefined {
  if (idx.length < 8 + 1024 || idx.readUInt32BE(0) !== 0xff744f63 || idx.readUInt32BE(4) !== 2) return undefined;
  const len = 20;
  const count = idx.readUInt32BE(8 + 255 * 4);
  // v2 layout: header, fan-out, ids, CRC32s and 32-bit offsets (4 bytes each), 64-bit offsets (8), two checksums.
  const fixed = 8 + 1024 + count * (len + 8) + 2 * len;
  if (idx.length < fixed || (idx.length - fixed) % 8 !== 0) return undefined;
  const names: string[] = [];
  for (let i = 0; i < count; i++) names.push(idx.toString('hex', 8 + 1024 + i * len, 8 + 1024 + (i + 1) * len));
  return names;
}
