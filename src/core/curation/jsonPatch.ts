import { ExpBenchError } from '../errors';
import type { PatchOperation } from '../review';

/**
 * RFC 6902 JSON Patch (https://www.rfc-editor.org/rfc/rfc6902) over RFC 6901 JSON pointers, on
 * a copy: the document given is never changed. All six operations: `add` (into an object, or into
 * an array at an index or `-` for the end), `remove`, `replace` (the target must exist), `move`,
 * `copy`, `test` (deep equality, §4.6). The operations apply in order and all or none (§5: one
 * failure and the patch is refused).
 *
 * @param label what the error names (the task and the edit's id)
 * @returns the patched copy
 * @throws ExpBenchError `BAD_INPUT` naming `label` and the operation's index, path and reason
 */
export function applyJsonPatch(doc: unknown, ops: readonly PatchOperation[], label: string): unknown {
  let root: unknown = structuredClone(doc);
  ops.forEach((op, i) => {
    const fail = (why: string): never => { throw new ExpBenchError('BAD_INPUT', label, `operation ${i} (${op.op} ${op.path}): ${why}`); };
    switch (op.op) {
      case 'add': root = add(root, parsePointer(op.path, fail), structuredClone(op.value), fail); break;
      case 'remove': root = remove(root, parsePointer(op.path, fail), fail).root; break;
      case 'replace': {
        const p = parsePointer(op.path, fail);
        get(root, p, fail);
        root = p.length === 0 ? structuredClone(op.value) : add(remove(root, p, fail).root, p, structuredClone(op.value), fail);
        break;
      }
      case 'move': {
        const from = parsePointer(op.from, fail);
        const to = parsePointer(op.path, fail);
        if (to.length > from.length && from.every((s, k) => s === to[k])) fail(`cannot move ${op.from} into its own child`);
        const r = remove(root, from, fail);
        root = add(r.root, to, r.value, fail);
        break;
      }
      case 'copy': root = add(root, parsePointer(op.path, fail), structuredClone(get(root, parsePointer(op.from, fail), fail)), fail); break;
      case 'test': if (!deepEqual(get(root, parsePointer(op.path, fail), fail), op.value)) fail('the value differs from the one the edit expected'); break;
    }
  });
  return root;
}

/** RFC 6901: `''` is the whole document; else `/`-separated tokens with `~1` → `/` and `~0` → `~`. */
export function parsePointer(pointer: string, fail: (why: string) => never): string[] {
  if (pointer === '') return [];
  if (!pointer.startsWith('/')) fail(`${JSON.stringify(pointer)} is not a JSON pointer (it must start with /)`);
  return pointer.slice(1).split('/').map((t) => t.replace(/~1/g, '/').replace(/~0/g, '~'));
}

type Container = Record<string, unknown> | unknown[];

function isContainer(v: unknown): v is Container {
  return v !== null && typeof v === 'object';
}

function arrayIndex(arr: unknown[], token: string, forAdd: boolean, fail: (why: string) => never): number {
  if (forAdd && token === '-') return arr.length;
  if (!/^(0|[1-9]\d*)$/.test(token)) fail(`${JSON.stringify(token)} is not an array index`);
  const i = Number(token);
  if (i > arr.length || (!forAdd && i === arr.length)) fail(`index ${i} is past the end of an array of ${arr.length}`);
  return i;
}

function parentOf(root: unknown, p: string[], fail: (why: string) => never): Container {
  const parent = get(root, p.slice(0, -1), fail);
  if (!isContainer(parent)) fail(`/${p.slice(0, -1).join('/')} is not an object or an array`);
  return parent as Container;
}

function get(root: unknown, p: string[], fail: (why: string) => never): unknown {
  let cur = root;
  for (const t of p) {
    if (Array.isArray(cur)) cur = cur[arrayIndex(cur, t, false, fail)];
    else if (isContainer(cur) && Object.prototype.hasOwnProperty.call(cur, t)) cur = (cur as Record<string, unknown>)[t];
    else fail(`no member ${JSON.stringify(t)}`);
  }
  return cur;
}

function add(root: unknown, p: string[], value: unknown, fail: (why: string) => never): unknown {
  if (p.length === 0) return value;
  const parent = parentOf(root, p, fail);
  const last = p[p.length - 1];
  if (Array.isArray(parent)) parent.splice(arrayIndex(parent, last, true, fail), 0, value);
  else parent[last] = value;
  return root;
}

function remove(root: unknown, p: string[], fail: (why: string) => never): { root: unknown; value: unknown } {
  if (p.length === 0) fail('cannot remove the whole document');
  const parent = parentOf(root, p, fail);
  const last = p[p.length - 1];
  if (Array.isArray(parent)) {
    const i = arrayIndex(parent, last, false, fail);
    return { root, value: parent.splice(i, 1)[0] };
  }
  if (!Object.prototype.hasOwnProperty.call(parent, last)) fail(`no member ${JSON.stringify(last)}`);
  const value = parent[last];
  delete parent[last];
  return { root, value };
}

/** JSON equality (§4.6): same type; numbers by value; arrays item by item; objects by members, any order. */
export function deepEqual(a: unknown, b: unknown): boolean {
  if (a === b) return true;
  if (Array.isArray(a) || Array.isArray(b)) {
    return Array.isArray(a) && Array.isArray(b) && a.length === b.length && a.every((v, i) => deepEqual(v, b[i]));
  }
  if (isContainer(a) && isContainer(b)) {
    const ka = Object.keys(a);
    const kb = Object.keys(b);
    return ka.length === kb.length && ka.every((k) => Object.prototype.hasOwnProperty.call(b, k) && deepEqual((a as Record<string, unknown>)[k], (b as Record<string, unknown>)[k]));
  }
  return false;
}
