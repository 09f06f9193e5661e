// ESLint plugin `layers`: rule `floor-order` enforces the layer order of src/core (eslint/layers.mjs).
// Each relative import of a file under src/core is resolved against the file's folder; the room
// is the first path segment under src/core (without `.ts`). An import of a room on a higher
// floor, of another room on the same floor (unless listed), of a room not in the list, or of
// anything outside src/core (src/extension, src/cli, src/protocol) is reported.
import * as path from 'node:path';
import { FLOOR_OF, SAME_FLOOR_PAIRS } from './layers.mjs';

const CORE = path.join('src', 'core');

/** The room of an absolute path under `<root>/src/core`, or undefined outside it. */
export function roomOf(file, root) {
  const rel = path.relative(path.join(root, CORE), file);
  if (rel.startsWith('..') || path.isAbsolute(rel)) return undefined;
  const first = rel.split(path.sep)[0];
  return first.replace(/\.(ts|js|mjs)$/, '');
}

/** Why importing room `to` from room `from` breaks the order, or undefined when it is allowed. */
export function violation(from, to) {
  if (from === to) return undefined;
  const a = FLOOR_OF.get(from);
  const b = FLOOR_OF.get(to);
  if (a === undefined) return `room '${from}' is not in the layer order (eslint/layers.mjs, docs/architecture.md)`;
  if (b === undefined) return `room '${to}' is not in the layer order (eslint/layers.mjs, docs/architecture.md)`;
  if (b > a) return `'${from}' (floor ${a}) must not import '${to}' (floor ${b}): a room imports only rooms on lower floors`;
  if (b === a && !SAME_FLOOR_PAIRS.includes(`${from} -> ${to}`)) {
    return `'${from}' and '${to}' are on one floor (${a}): rooms on one floor do not import each other unless docs/architecture.md names the pair`;
  }
  return undefined;
}

const floorOrder = {
  meta: {
    type: 'problem',
    docs: { description: 'a room of src/core imports only rooms on lower floors (docs/architecture.md)' },
    schema: [{ type: 'object', properties: { root: { type: 'string' } }, additionalProperties: false }],
    messages: { wrong: '{{why}}', outside: "src/core must not import '{{spec}}' (outside src/core): the extension and the CLI adapt the core, never the reverse" },
  },
  create(context) {
    const root = context.options[0]?.root ?? context.cwd ?? process.cwd();
    const file = context.filename ?? context.getFilename();
    const from = roomOf(path.resolve(file), root);
    if (from === undefined) return {};
    const check = (node, spec) => {
      if (typeof spec !== 'string' || !spec.startsWith('.')) return;
      const target = path.resolve(path.dirname(path.resolve(file)), spec);
      const to = roomOf(target, root);
      if (to === undefined) {
        context.report({ node, messageId: 'outside', data: { spec } });
        return;
      }
      const why = violation(from, to);
      if (why) context.report({ node, messageId: 'wrong', data: { why } });
    };
    return {
      ImportDeclaration: (n) => check(n.source, n.source.value),
      ExportNamedDeclaration: (n) => n.source && check(n.source, n.source.value),
      ExportAllDeclaration: (n) => check(n.source, n.source.value),
      ImportExpression: (n) => n.source.type === 'Literal' && check(n.source, n.source.value),
      CallExpression: (n) => {
        if (n.callee.type === 'Identifier' && n.callee.name === 'require' && n.arguments[0]?.type === 'Literal') check(n.arguments[0], n.arguments[0].value);
      },
    };
  },
};

export default { rules: { 'floor-order': floorOrder } };
