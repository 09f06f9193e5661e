import * as fs from 'node:fs';
import * as path from 'node:path';
import type { Language, Node as TsNode, Parser as TsParser, TreeCursor as TsTreeCursor } from 'web-tree-sitter';

/**
 * What a piece of code does, as facts that survive renaming: the functions and methods it calls,
 * the keyword arguments it passes, the attributes it sets or reads, the modules it imports and
 * the literal constants it uses. Local names (variables, parameters, the names of functions it
 * defines) are left out on purpose: `z` and `test_logits` are the same code here (issue 14).
 *
 * Python is parsed with tree-sitter (`web-tree-sitter` + the `tree-sitter-python` grammar's
 * prebuilt `tree-sitter-python.wasm`, both from npm; docs/prejudge.md says why not Python's `ast`).
 * Other languages, and Python that the parser cannot load, fall back to a token scan (calls
 * `name(`, `--flags`, numbers) and say so in `parser`.
 *
 * A fact is a string `kind:value`, lower-cased: `call:smece`, `kw:temperature`, `attr:use_tex_fonts`,
 * `import:relplot`, `num:10000`, `str:results`. Each fact carries the 1-based lines it occurs on.
 */
export interface CodeFacts {
  /** fact → 1-based lines (of the text given) where it occurs. */
  facts: Map<string, number[]>;
  /** Names defined in the code (`def`, `class`): calls to them are not facts of the caller. */
  defined: Set<string>;
  parser: 'tree-sitter-python' | 'tokens';
}

/** Calls too common to say anything about a requirement (Python builtins). */
const GENERIC_CALLS = new Set(['len', 'range', 'int', 'float', 'str', 'list', 'dict', 'tuple', 'set', 'zip', 'enumerate',
  'isinstance', 'super', 'type', 'min', 'max', 'abs', 'sum', 'map', 'filter', 'sorted', 'bool', 'getattr', 'setattr', 'hasattr', 'append', 'items', 'keys', 'values', 'format', 'join', 'get']);
/** Numbers too common to be a requirement's constant. */
const GENERIC_NUMS = new Set(['0', '1', '-1', '2']);

let parserPromise: Promise<TsParser | undefined> | undefined;
let parserProblem: string | undefined;

/** Why the Python parser is not available (undefined while it is, or before it was tried). */
export function pythonParserProblem(): string | undefined {
  return parserProblem;
}

/**
 * The tree-sitter Python parser, loaded once. The two `.wasm` files are looked up beside the running
 * bundle first (a build may copy them into `dist/`), then in `node_modules`.
 * Resolves undefined (and sets {@link pythonParserProblem}) when they cannot be found or loaded.
 */
export function pythonParser(): Promise<TsParser | undefined> {
  parserPromise ??= (async () => {
    try {
      const runtime = findFile('tree-sitter.wasm', 'web-tree-sitter/tree-sitter.wasm');
      const grammar = findFile('tree-sitter-python.wasm', 'tree-sitter-python/tree-sitter-python.wasm');
      const ts = require('web-tree-sitter') as typeof import('web-tree-sitter');
      await ts.Parser.init({ locateFile: () => runtime });
      const lang: Language = await ts.Language.load(fs.readFileSync(grammar));
      const p = new ts.Parser();
      p.setLanguage(lang);
      return p;
    } catch (e) {
      parserProblem = `python parser unavailable (${(e as Error).message}); token scan used`;
      return undefined;
    }
  })();
  return parserPromise;
}

function findFile(name: string, moduleSpec: string): string {
  const beside = path.join(__dirname, name);
  if (fs.existsSync(beside)) return beside;
  return require.resolve(moduleSpec);
}

/** True when `p` (or the language hint) is Python source: `.py`, `.pyw`, `.ipynb` code cells. */
export function isPythonPath(p: string): boolean {
  return /\.(py|pyw|pyi|ipynb)$/i.test(p);
}

/** Facts of `text`; Python when `python` is true and the parser loads, tokens otherwise. */
export async function codeFacts(text: string, python: boolean): Promise<CodeFacts> {
  const parser = python ? await pythonParser() : undefined;
  if (!parser) return tokenFacts(text);
  const tree = parser.parse(text);
  if (!tree) return tokenFacts(text);
  try {
    return treeFacts(tree);
  } finally {
    tree.delete();
  }
}

/** Node types {@link treeFacts} reads; every other node is only walked through. */
const FACT_TYPES = new Set(['function_definition', 'class_definition', 'call', 'keyword_argument', 'attribute', 'import_statement', 'import_from_statement', 'integer', 'float', 'string']);

/**
 * The facts of a parsed tree: a cursor walk over the named nodes (depth first, in source order),
 * materialising a node object only for the types of {@link FACT_TYPES} (crossing into the
 * parser's WebAssembly memory for every node is what costs: bench/judge.bench.ts).
 */
function treeFacts(tree: { walk(): TsTreeCursor }): CodeFacts {
  const facts = new Map<string, number[]>();
  const defined = new Set<string>();
  const add = (f: string, n: TsNode) => {
    const line = n.startPosition.row + 1;
    const arr = facts.get(f);
    if (!arr) facts.set(f, [line]);
    else if (!arr.includes(line)) arr.push(line);
  };
  const visit = (n: TsNode) => {
    switch (n.type) {
      case 'function_definition':
      case 'class_definition': {
        const name = n.childForFieldName('name');
        if (name) defined.add(name.text.toLowerCase());
        break;
      }
      case 'call': {
        const fn = n.childForFieldName('function');
        const last = fn ? lastSegment(fn) : undefined;
        if (last && !GENERIC_CALLS.has(last)) add(`call:${last}`, n);
        break;
      }
      case 'keyword_argument': {
        const name = n.childForFieldName('name');
        if (name) add(`kw:${name.text.toLowerCase()}`, n);
        break;
      }
      case 'attribute': {
        const parent = n.parent;
        const isCallee = parent?.type === 'call' && parent.childForFieldName('function')?.id === n.id;
        const attr = n.childForFieldName('attribute');
        if (attr && !isCallee) add(`attr:${attr.text.toLowerCase()}`, n);
        break;
      }
      case 'import_statement':
      case 'import_from_statement':
        for (const d of n.descendantsOfType('dotted_name')) {
          if (!d) continue;
          const parts = d.text.toLowerCase().split('.');
          parts.forEach((p) => add(`import:${p}`, n));
        }
        break;
      case 'integer':
      case 'float': {
        const v = Number(n.text.replace(/_/g, ''));
        const neg = n.parent?.type === 'unary_operator' && n.parent.text.startsWith('-');
        if (Number.isFinite(v)) { const s = String(neg ? -v : v); if (!GENERIC_NUMS.has(s)) add(`num:${s}`, n); }
        break;
      }
      case 'string': {
        if (n.parent?.type === 'expression_statement') break; // a docstring
        const content = n.descendantsOfType('string_content').map((c) => c?.text ?? '').join('');
        if (n.descendantsOfType('interpolation').length === 0 && /^[\w./-]{3,40}$/.test(content)) add(`str:${content.toLowerCase()}`, n);
        break;
      }
    }
  };
  const cursor = tree.walk();
  try {
    for (;;) {
      if (cursor.nodeIsNamed && FACT_TYPES.has(cursor.nodeType)) visit(cursor.currentNode);
      if (cursor.gotoFirstChild()) continue;
      while (!cursor.gotoNextSibling()) if (!cursor.gotoParent()) return { facts, defined, parser: 'tree-sitter-python' };
    }
  } finally {
    cursor.delete();
  }
}

function lastSegment(fn: TsNode): string | undefined {
  if (fn.type === 'identifier') return fn.text.toLowerCase();
  if (fn.type === 'attribute') return fn.childForFieldName('attribute')?.text.toLowerCase();
  return undefined;
}

/** The fallback: `name(` calls (last dotted segment), `--flags`, `key=` and numbers, per line. */
export function tokenFacts(text: string): CodeFacts {
  const facts = new Map<string, number[]>();
  const add = (f: string, line: number) => {
    const arr = facts.get(f);
    if (!arr) facts.set(f, [line]);
    else if (!arr.includes(line)) arr.push(line);
  };
  const defined = new Set<string>();
  text.split('\n').forEach((l, i) => {
    const line = i + 1;
    if (/^\s*(#|\/\/)/.test(l)) return;
    for (const m of l.matchAll(/\b(?:def|function|func|fn)\s+([A-Za-z_]\w*)/g)) defined.add(m[1].toLowerCase());
    for (const name of calledNames(l)) {
      const last = name.split('.').pop()!.toLowerCase();
      if (!GENERIC_CALLS.has(last) && !/^(if|for|while|return|def|function|print)$/.test(last)) add(`call:${last}`, line);
    }
    for (const m of l.matchAll(/--([A-Za-z][\w-]*)|\b([A-Za-z_]\w*)=(?!=)/g)) add(`kw:${(m[1] ?? m[2]).toLowerCase().replace(/-/g, '_')}`, line);
    for (const m of l.matchAll(/(?<![\w.])(-?\d+(?:\.\d+)?(?:e-?\d+)?)(?![\w.])/gi)) {
      const s = String(Number(m[1]));
      if (!GENERIC_NUMS.has(s)) add(`num:${s}`, line);
    }
  });
  return { facts, defined, parser: 'tokens' };
}

/** The facts of a ground-truth range worth looking for: calls to functions the range itself (or its file) defines are left out. */
export function requirementFacts(range: CodeFacts, fileDefined: Set<string>): string[] {
  return [...range.facts.keys()].filter((f) => !(f.startsWith('call:') && fileDefined.has(f.slice(5))));
}

/** A fact for a person: `call:smece` → `smece()`, `kw:nbins` → `nbins=`, `num:10000` → `10000`. */
export function showFact(f: string): string {
  const [kind, ...rest] = f.split(':');
  const v = rest.join(':');
  switch (kind) {
    case 'call': return `${v}()`;
    case 'kw': return `${v}=`;
    case 'attr': return `.${v}`;
    case 'import': return `import ${v}`;
    case 'str': return `"${v}"`;
    default: return v;
  }
}

/**
 * The dotted names called on a line (`a.b(`, `f (`): each name run is read once and followed by
 * optional spaces and `(`. What `/([A-Za-z_][\w.]*)\s*\(/g` finds, without retrying every suffix of a
 * long name that is not called (quadratic in its length).
 */
function calledNames(line: string): string[] {
  const out: string[] = [];
  const name = /[A-Za-z_][\w.]*/g;
  for (let m = name.exec(line); m; m = name.exec(line)) {
    let i = m.index + m[0].length;
    while (i < line.length && /\s/.test(line[i])) i++;
    if (line[i] === '(') out.push(m[0]);
  }
  return out;
}
