import { parsePatch, type StructuredPatch } from 'diff';
import type { FileEdit, Step } from '../steps/step';

/**
 * What one step does to the workspace's files, read from what the step carries (room `viewer`):
 * a unified diff, before/after text (`old_str`/`new_str`, `file_text`), a creation or deletion, or
 * nothing but the fact that a file changed. Pure: no file is read here.
 */

/** One change to one file, in workspace-relative terms (the path is normalised later, by {@link normalisePath}). */
export type FileOp =
  /** Hunks of a unified diff (jsdiff `parsePatch`), applied in order. */
  | { kind: 'diff'; path: string; patch: StructuredPatch; create?: boolean; delete?: boolean }
  /** The whole new content (`file_text`, `content`, an editor's `write`/`create`). */
  | { kind: 'write'; path: string; content: string }
  /** Replace the first occurrence of `before` by `after` (`str_replace`, `replace_in_file`). */
  | { kind: 'replace'; path: string; before: string; after: string }
  /** Insert `text` after line `line` (1-based; 0 = at the top): `str_replace_editor insert`. */
  | { kind: 'insert'; path: string; line: number; text: string }
  | { kind: 'delete'; path: string }
  /** The file changed or appeared, but the step does not carry its content. */
  | { kind: 'unknown'; path: string; created?: boolean; why: string };

/** A change the step made whose content is not known: the tree after it is approximate. */
export interface Uncertain {
  /** Workspace-relative path when known; absent for a shell command whose targets are not named. */
  path?: string;
  why: string;
}

/** What {@link stepChanges} reads from one step. */
export interface StepChanges {
  ops: FileOp[];
  /** Changes without content (shell writes, content-less file events, cut arguments). */
  uncertain: Uncertain[];
}

/**
 * Shell commands that write files (docs/steps.md "Inferred phases" lists the same family):
 * redirections into a file (`>`, `>>`, not `>&2` or `/dev/null`), `sed -i`, `tee`, `cp`, `mv`,
 * `rm`, `touch`, `patch`, `git apply|checkout|reset|stash|restore|mv|rm`, `perl -i`, `truncate`,
 * `dd of=`. Programs run (`python train.py`) may write files too; their outputs are not tracked.
 */
const SHELL_WRITE = new RegExp([
  String.raw`(?:^|[^0-9&>])>{1,2}\s*(?!&|\/dev\/null\b)[^\s|;&]`,
  String.raw`(?:^|[\s;&|(])(?:sed|perl)\s+(?:-[a-zA-Z]*\s+)*-[a-zA-Z]*i`,
  String.raw`(?:^|[\s;&|(])(?:tee|cp|mv|rm|touch|patch|truncate|install|unzip|tar\s+-?x[a-z]*)\s`,
  String.raw`(?:^|[\s;&|(])git\s+(?:apply|checkout|reset|stash|restore|mv|rm|am|cherry-pick|merge|pull)\b`,
  String.raw`(?:^|[\s;&|(])dd\s.*\bof=`,
].join('|'));

/** True when `command` writes files by the rule of {@link SHELL_WRITE}. */
export function commandWritesFiles(command: string): boolean {
  return SHELL_WRITE.test(command);
}

/**
 * The changes `step` makes:
 * - `step.edits`: a `diff` gives its hunks (several files: one op each, paths from the headers);
 *   `op` `delete` a deletion; `before` + `after` a replacement (`insert` with the source's
 *   `insert_line` an insertion); `after` alone (or `op` `create`/`write`) the whole content; an
 *   edit with none of these (`file.created`/`file.changed` of a session) is `unknown`;
 * - the built-in agent's `write_file` {path, content} and `replace_in_file` {path, old, new}, whose
 *   arguments a session records as JSON text (cut at 4000 characters: then `unknown`); a refused
 *   call (`errors`, or an observation marked as an error) changes nothing;
 * - a shell command that writes files ({@link commandWritesFiles}) without edits: uncertain.
 */
export function stepChanges(step: Step): StepChanges {
  const ops: FileOp[] = [];
  const uncertain: Uncertain[] = [];
  const failed = step.observation?.error === true || (step.kind === 'tool' && (step.errors?.length ?? 0) > 0);
  for (const e of step.edits ?? []) ops.push(...editOps(e, step));
  if (!step.edits?.length && !failed) {
    const agent = agentToolOps(step);
    if (agent) ops.push(...agent);
    else {
      const command = step.action?.command ?? commandInArguments(step.action?.arguments);
      if (command !== undefined && commandWritesFiles(command)) uncertain.push({ why: `the command writes files without recording their content: ${oneLine(command)}` });
    }
  }
  for (const op of ops) if (op.kind === 'unknown') uncertain.push({ path: op.path, why: op.why });
  return { ops, uncertain };
}

function editOps(e: FileEdit, step: Step): FileOp[] {
  const op = (e.op ?? '').toLowerCase();
  if (e.diff !== undefined && e.diff.trim() !== '') {
    if (step.errors?.some((x) => /diff cut/.test(x))) return [{ kind: 'unknown', path: e.path, why: 'the diff was cut by the recorder' }];
    let patches: StructuredPatch[];
    try { patches = parsePatch(e.diff); } catch (err) {
      return [{ kind: 'unknown', path: e.path, why: `the diff cannot be read: ${(err as Error).message}` }];
    }
    patches = patches.filter((p) => p.hunks.length > 0 || isDevNull(p.oldFileName) || isDevNull(p.newFileName));
    if (patches.length === 0) return op === 'delete' ? [{ kind: 'delete', path: e.path }] : [];
    return patches.map((p) => {
      const path = patches.length === 1 ? e.path : headerPath(p) ?? e.path;
      const del = isDevNull(p.newFileName) || (op === 'delete' && patches.length === 1);
      const create = isDevNull(p.oldFileName) || op === 'create';
      return { kind: 'diff', path, patch: p, ...(create ? { create } : {}), ...(del ? { delete: del } : {}) };
    });
  }
  if (op === 'delete' || op === 'remove') return [{ kind: 'delete', path: e.path }];
  if (op === 'insert' && e.after !== undefined) {
    const line = insertLine(step.action?.arguments);
    return line === undefined
      ? [{ kind: 'unknown', path: e.path, why: 'an insertion without its line number' }]
      : [{ kind: 'insert', path: e.path, line, text: e.after }];
  }
  if (e.before !== undefined && e.after !== undefined) return [{ kind: 'replace', path: e.path, before: e.before, after: e.after }];
  if (e.after !== undefined) return [{ kind: 'write', path: e.path, content: e.after }];
  if (e.before !== undefined) return [{ kind: 'replace', path: e.path, before: e.before, after: '' }];
  return [{ kind: 'unknown', path: e.path, ...(op === 'create' ? { created: true } : {}),
    why: op === 'create' ? 'the file appeared; its content is not recorded' : 'the file changed; its content is not recorded' }];
}

/** The built-in agent's file tools as a session records them (`agent.tool_call`, arguments as JSON text). */
function agentToolOps(step: Step): FileOp[] | undefined {
  const tool = step.action?.tool;
  if (step.actor !== 'agent' || (tool !== 'write_file' && tool !== 'replace_in_file')) return undefined;
  const raw = step.action?.arguments;
  let args: Record<string, unknown> | undefined;
  if (typeof raw === 'string') { try { args = JSON.parse(raw) as Record<string, unknown>; } catch { args = undefined; } }
  else if (raw && typeof raw === 'object') args = raw as Record<string, unknown>;
  const path = typeof args?.path === 'string' ? args.path : undefined;
  if (!args || !path) return [{ kind: 'unknown', path: path ?? pathInText(raw) ?? '(unknown)', why: `the ${tool} arguments are cut or unreadable (recorded as an excerpt)` }];
  if (tool === 'write_file' && typeof args.content === 'string') return [{ kind: 'write', path, content: args.content }];
  if (tool === 'replace_in_file' && typeof args.old === 'string' && typeof args.new === 'string') return [{ kind: 'replace', path, before: args.old, after: args.new }];
  return [{ kind: 'unknown', path, why: `the ${tool} arguments lack the content` }];
}

function pathInText(raw: unknown): string | undefined {
  return typeof raw === 'string' ? /"path"\s*:\s*"([^"]+)"/.exec(raw)?.[1] : undefined;
}

/** `command` in tool arguments given as an object or as JSON text (the built-in agent's `shell`). */
function commandInArguments(raw: unknown): string | undefined {
  let a: unknown = raw;
  if (typeof raw === 'string') { try { a = JSON.parse(raw); } catch { return /"(?:command|cmd)"\s*:\s*"((?:[^"\\]|\\.)*)"/.exec(raw)?.[1]; } }
  if (!a || typeof a !== 'object') return undefined;
  const o = a as Record<string, unknown>;
  return typeof o.command === 'string' ? o.command : typeof o.cmd === 'string' ? o.cmd : undefined;
}

function insertLine(raw: unknown): number | undefined {
  const a = raw && typeof raw === 'object' ? (raw as Record<string, unknown>) : undefined;
  const n = a?.insert_line ?? a?.line;
  return typeof n === 'number' && Number.isInteger(n) && n >= 0 ? n : typeof n === 'string' && /^\d+$/.test(n) ? Number(n) : undefined;
}

function isDevNull(name: string | undefined): boolean {
  return name === '/dev/null' || name === 'dev/null';
}

function headerPath(p: StructuredPatch): string | undefined {
  const name = isDevNull(p.newFileName) ? p.oldFileName : p.newFileName;
  return name ? name.replace(/^[ab]\//, '') : undefined;
}

function oneLine(s: string): string {
  const t = s.replace(/\s+/g, ' ').trim();
  return t.length > 120 ? `${t.slice(0, 117)}…` : t;
}

/** Roots agents' containers mount a repository at; an absolute path under one is taken relative to it. */
const KNOWN_ROOTS = ['/workspace/', '/testbed/', '/repo/', '/app/', '/code/', '/home/user/workspace/'];

/**
 * A workspace-relative POSIX path for an edit's `path`, or undefined when it leaves the workspace:
 * `a/`/`b/` diff prefixes and `./` dropped; an absolute path under a known root (`/workspace`,
 * `/testbed`, `/repo`, …) or whose suffix starts with one of `topLevel` (the base tree's first
 * names) made relative; `..` refused.
 */
export function normalisePath(p: string, topLevel: ReadonlySet<string>): string | undefined {
  let s = p.replace(/\\/g, '/');
  for (const r of KNOWN_ROOTS) if (s.startsWith(r)) { s = s.slice(r.length); break; }
  if (s.startsWith('/')) {
    const parts = s.split('/').filter(Boolean);
    const at = parts.findIndex((x) => topLevel.has(x));
    if (at < 0) return undefined;
    s = parts.slice(at).join('/');
  }
  s = s.replace(/^(?:\.\/)+/, '');
  const parts = s.split('/').filter((x) => x !== '' && x !== '.');
  if (parts.length === 0 || parts.includes('..') || parts[0] === '.git') return undefined;
  return parts.join('/');
}
