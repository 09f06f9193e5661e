import { applyPatch, structuredPatch } from 'diff';
import type { FileOp } from './stepEdits';

/** One file as a span of steps left it: its content before and after (`null`: absent). */
export interface FileChange {
  path: string;
  before: string | null;
  after: string | null;
}

/**
 * The files a span of steps touches, held in memory over a tree on disk: each op is applied to the
 * current text (jsdiff `applyPatch` for hunks, exact text replacement for before/after pairs), and
 * {@link changes} gives what differs from the tree. Nothing is written here.
 */
export class Overlay {
  private readonly original = new Map<string, string | null>();
  private readonly current = new Map<string, string | null>();

  /** @param read the content of a workspace-relative path in the tree below (`null` when absent or not a text file) */
  constructor(private readonly read: (path: string) => Promise<string | null>) {}

  /** The current content of `path` (`null`: absent). */
  async get(path: string): Promise<string | null> {
    if (!this.current.has(path)) {
      const text = await this.read(path);
      this.original.set(path, text);
      this.current.set(path, text);
    }
    return this.current.get(path) ?? null;
  }

  /**
   * Applies `op`; returns why it could not be applied (the file then stays as it was), else undefined.
   * An `unknown` op changes nothing except that a file said to appear exists (empty) afterwards.
   */
  async apply(op: FileOp): Promise<string | undefined> {
    const cur = await this.get(op.path);
    switch (op.kind) {
      case 'diff': {
        if (op.delete) { this.current.set(op.path, null); return cur === null ? 'the diff deletes a file that is not there' : undefined; }
        if (cur === null && !op.create && op.patch.hunks.some((h) => h.oldLines > 0)) return 'the diff changes a file that is not there';
        const out = applyPatch(cur ?? '', op.patch);
        if (out === false) return 'the diff does not apply to the file as the earlier steps left it';
        this.current.set(op.path, out);
        return undefined;
      }
      case 'write': this.current.set(op.path, op.content); return undefined;
      case 'replace': {
        if (cur === null) return 'the text to replace is in a file that is not there';
        const at = cur.indexOf(op.before);
        if (at < 0) return 'the text to replace is not in the file as the earlier steps left it';
        this.current.set(op.path, cur.slice(0, at) + op.after + cur.slice(at + op.before.length));
        return undefined;
      }
      case 'insert': {
        if (cur === null) return 'the insertion is into a file that is not there';
        const lines = cur.split('\n');
        if (op.line > lines.length) return `line ${op.line} is past the end of the file (${lines.length} lines)`;
        const add = op.text.endsWith('\n') ? op.text.slice(0, -1) : op.text;
        lines.splice(op.line, 0, ...add.split('\n'));
        this.current.set(op.path, lines.join('\n'));
        return undefined;
      }
      case 'delete': this.current.set(op.path, null); return undefined;
      case 'unknown': if (cur === null && op.created) this.current.set(op.path, ''); return undefined;
    }
  }

  /** The files whose content now differs from the tree below, sorted by path. */
  changes(): FileChange[] {
    const out: FileChange[] = [];
    for (const [path, after] of this.current) {
      const before = this.original.get(path) ?? null;
      if (before !== after) out.push({ path, before, after });
    }
    return out.sort((a, b) => (a.path < b.path ? -1 : a.path > b.path ? 1 : 0));
  }
}

/**
 * A patch in git's form (`diff --git a/P b/P`, `new file mode`/`deleted file mode`, `/dev/null`
 * sides; paths C-quoted as git writes them when they hold a quote, a backslash, a control or a
 * non-ASCII character) taking each file from `before` to `after`, 3 lines of context. `git apply`
 * reads it (git-apply(1), "the diff --git header"); '' when nothing changes.
 */
export function gitPatch(changes: FileChange[]): string {
  let out = '';
  for (const c of changes) {
    if (c.before === c.after) continue;
    const a = quote(`a/${c.path}`);
    const b = quote(`b/${c.path}`);
    out += `diff --git ${a} ${b}\n`;
    if (c.before === null) out += 'new file mode 100644\n';
    if (c.after === null) out += 'deleted file mode 100644\n';
    const p = structuredPatch(c.path, c.path, c.before ?? '', c.after ?? '', undefined, undefined, { context: 3 });
    if (p.hunks.length === 0) continue;
    out += `--- ${c.before === null ? '/dev/null' : a}\n+++ ${c.after === null ? '/dev/null' : b}\n`;
    for (const h of p.hunks) {
      const os = h.oldLines === 0 ? h.oldStart - 1 : h.oldStart;
      const ns = h.newLines === 0 ? h.newStart - 1 : h.newStart;
      out += `@@ -${os},${h.oldLines} +${ns},${h.newLines} @@\n${h.lines.join('\n')}\n`;
    }
  }
  return out;
}

/** `name` as git's `quote_c_style` writes it: in double quotes with C escapes when it needs them. */
function quote(name: string): string {
  if (!/["\\\x00-\x1f\x7f-\uffff]/.test(name)) return name;
  const named: Record<number, string> = { 7: '\\a', 8: '\\b', 9: '\\t', 10: '\\n', 11: '\\v', 12: '\\f', 13: '\\r', 34: '\\"', 92: '\\\\' };
  let s = '"';
  for (const byte of Buffer.from(name, 'utf8')) {
    if (named[byte]) s += named[byte];
    else if (byte < 0x20 || byte >= 0x7f) s += `\\${byte.toString(8).padStart(3, '0')}`;
    else s += String.fromCharCode(byte);
  }
  return `${s}"`;
}
