import * as assert from 'node:assert/strict';
import { promises as fsp } from 'node:fs';
import * as path from 'node:path';
import { ESLint } from 'eslint';
import { repoRoot } from '../harness/paths';

// The layer order of src/core (eslint/layers.mjs, docs/architecture.md), checked through the
// ESLint API with the project's own config: every pair of rooms in the wrong direction is
// reported, every pair in the right direction is not, src/core has no violation, and the folder
// import graph of src/core has no loop.

type Layers = { FLOORS: string[][]; SAME_FLOOR_PAIRS: string[] };
// tsc compiles `import()` to `require()` under CommonJS; an .mjs module needs the real import.
const importEsm = new Function('s', 'return import(s)') as (s: string) => Promise<Layers>;

const ROOT = repoRoot;

async function layers(): Promise<Layers> {
  return importEsm(path.join(ROOT, 'eslint', 'layers.mjs'));
}

/** Messages of rule layers/floor-order for `code` linted as if it were at `file` (repo-relative). */
async function floorErrors(eslint: ESLint, code: string, file: string): Promise<{ line: number; message: string }[]> {
  const [r] = await eslint.lintText(code, { filePath: path.join(ROOT, file) });
  return r.messages.filter((m) => m.ruleId === 'layers/floor-order').map((m) => ({ line: m.line, message: m.message }));
}

/** Relative imports of every .ts file under src/core, as room → rooms. */
async function coreImportGraph(): Promise<Map<string, Set<string>>> {
  const core = path.join(ROOT, 'src', 'core');
  const graph = new Map<string, Set<string>>();
  const roomOf = (abs: string) => path.relative(core, abs).split(path.sep)[0].replace(/\.ts$/, '');
  const walk = async (dir: string): Promise<void> => {
    for (const e of await fsp.readdir(dir, { withFileTypes: true })) {
      const p = path.join(dir, e.name);
      if (e.isDirectory()) { await walk(p); continue; }
      if (!e.name.endsWith('.ts')) continue;
      const from = roomOf(p);
      const text = await fsp.readFile(p, 'utf8');
      for (const m of text.matchAll(/(?:from|import|require\()\s*\(?['"](\.[^'"]+)['"]/g)) {
        const to = roomOf(path.resolve(path.dirname(p), m[1]));
        if (to === from || to.startsWith('..')) continue;
        if (!graph.has(from)) graph.set(from, new Set());
        graph.get(from)!.add(to);
      }
    }
  };
  await walk(core);
  return graph;
}

/** Relative imports between the .ts files under `dir` (type-only imports included), as file → files. */
async function fileImportGraph(dir: string): Promise<Map<string, Set<string>>> {
  const graph = new Map<string, Set<string>>();
  const walk = async (d: string): Promise<void> => {
    for (const e of await fsp.readdir(d, { withFileTypes: true })) {
      const p = path.join(d, e.name);
      if (e.isDirectory()) { await walk(p); continue; }
      if (!e.name.endsWith('.ts')) continue;
      const deps = new Set<string>();
      for (const m of (await fsp.readFile(p, 'utf8')).matchAll(/(?:from|import|require\()\s*\(?['"](\.[^'"]+)['"]/g)) {
        const base = path.resolve(path.dirname(p), m[1]);
        if (!base.startsWith(dir + path.sep)) continue;
        for (const cand of [`${base}.ts`, path.join(base, 'index.ts')]) {
          if (await fsp.stat(cand).then(() => true, () => false)) { deps.add(cand); break; }
        }
      }
      graph.set(p, deps);
    }
  };
  await walk(dir);
  return graph;
}

describe('layer order of src/core (ESLint rule layers/floor-order)', function () {
  this.timeout(120_000);
  let eslint: ESLint;
  before(() => { eslint = new ESLint({ cwd: ROOT }); });

  it('reports every import of a higher or same-floor room and none of a lower one', async () => {
    const { FLOORS, SAME_FLOOR_PAIRS } = await layers();
    const rooms = FLOORS.flat();
    const floor = new Map(FLOORS.flatMap((rs, i) => rs.map((r) => [r, i] as const)));
    let wrongPairs = 0;
    let rightPairs = 0;
    for (const from of rooms) {
      const others = rooms.filter((r) => r !== from);
      // One import per line, in the order of `others`; line i + 1 imports others[i].
      const code = others.map((to, i) => `import * as m${i} from '../${to}/x';`).join('\n') + `\nexport const all = [${others.map((_, i) => `m${i}`).join(', ')}];\n`;
      const errors = await floorErrors(eslint, code, `src/core/${from}/probe.ts`);
      const flagged = new Set(errors.map((e) => e.line));
      others.forEach((to, i) => {
        const wrong = floor.get(to)! > floor.get(from)! || (floor.get(to) === floor.get(from) && !SAME_FLOOR_PAIRS.includes(`${from} -> ${to}`));
        if (wrong) wrongPairs++; else rightPairs++;
        assert.equal(flagged.has(i + 1), wrong, `${from} (floor ${floor.get(from)}) importing ${to} (floor ${floor.get(to)}): expected ${wrong ? 'an error' : 'no error'}`);
      });
    }
    const n = rooms.length;
    assert.equal(wrongPairs + rightPairs, n * (n - 1), 'every ordered pair of rooms was checked');
    assert.ok(wrongPairs > n, `wrong-direction pairs checked: ${wrongPairs}`);
  });

  it('reports a top-level file room (errors.ts) importing up, a nested file importing up, and an import out of src/core', async () => {
    assert.equal((await floorErrors(eslint, "import { x } from './judge/types';\nexport const y = x;\n", 'src/core/errors.ts')).length, 1);
    assert.equal((await floorErrors(eslint, "import { x } from '../../flows/submit';\nexport const y = x;\n", 'src/core/tasks/deep/probe.ts')).length, 1);
    assert.equal((await floorErrors(eslint, "import { x } from '../../extension/ids';\nexport const y = x;\n", 'src/core/util/probe.ts')).length, 1);
    assert.equal((await floorErrors(eslint, "import { x } from '../unlisted/thing';\nexport const y = x;\n", 'src/core/util/probe.ts')).length, 1,
      'a room missing from the order is reported');
    assert.equal((await floorErrors(eslint, "import { x } from './sibling';\nexport const y = x;\n", 'src/core/judge/probe.ts')).length, 0, 'an import inside the room is fine');
  });

  it('src/core has no import against the order, and every room of src/core is in it', async () => {
    const results = await eslint.lintFiles([path.join(ROOT, 'src', 'core')]);
    const bad = results.flatMap((r) => r.messages.filter((m) => m.ruleId === 'layers/floor-order').map((m) => `${path.relative(ROOT, r.filePath)}:${m.line} ${m.message}`));
    assert.deepEqual(bad, []);
    const { FLOORS } = await layers();
    const listed = new Set(FLOORS.flat());
    const present = (await fsp.readdir(path.join(ROOT, 'src', 'core'))).map((n) => n.replace(/\.ts$/, ''));
    assert.deepEqual(present.filter((r) => !listed.has(r)), [], 'rooms of src/core missing from eslint/layers.mjs');
  });

  it('the folder import graph of src/core has no loop', async () => {
    const graph = await coreImportGraph();
    assert.ok(graph.size > 5, `graph read: ${graph.size} rooms with imports`);
    const state = new Map<string, 'open' | 'done'>();
    const visit = (room: string, trail: string[]): void => {
      if (state.get(room) === 'done') return;
      assert.notEqual(state.get(room), 'open', `import loop: ${[...trail, room].join(' → ')}`);
      state.set(room, 'open');
      for (const to of graph.get(room) ?? []) visit(to, [...trail, room]);
      state.set(room, 'done');
    };
    for (const room of graph.keys()) visit(room, []);
  });

  it('src/extension and src/cli have no file import loop', async () => {
    for (const dir of ['extension', 'cli']) {
      const graph = await fileImportGraph(path.join(ROOT, 'src', dir));
      assert.ok(graph.size > 3, `${dir}: files read ${graph.size}`);
      const state = new Map<string, 'open' | 'done'>();
      const visit = (file: string, trail: string[]): void => {
        if (state.get(file) === 'done') return;
        assert.notEqual(state.get(file), 'open', `file import loop in src/${dir}: ${[...trail, file].map((f) => path.relative(ROOT, f)).join(' → ')}`);
        state.set(file, 'open');
        for (const to of graph.get(file) ?? []) visit(to, [...trail, file]);
        state.set(file, 'done');
      };
      for (const f of graph.keys()) visit(f, []);
    }
  });

  it('docs/architecture.md lists the same floors as eslint/layers.mjs', async () => {
    const { FLOORS } = await layers();
    const doc = await fsp.readFile(path.join(ROOT, 'docs', 'architecture.md'), 'utf8');
    const block = /<!-- floors:begin -->([\s\S]*?)<!-- floors:end -->/.exec(doc);
    assert.ok(block, 'docs/architecture.md has a floors block (<!-- floors:begin --> … <!-- floors:end -->)');
    const rows = [...block[1].matchAll(/^\|\s*(\d+)\s*\|\s*([^|]+?)\s*\|/gm)].map((m) => ({ floor: Number(m[1]), rooms: m[2].split(',').map((r) => r.trim().replace(/`/g, '')) }));
    assert.deepEqual(rows.map((r) => r.rooms), FLOORS, 'floors in the doc, lowest first');
    assert.deepEqual(rows.map((r) => r.floor), FLOORS.map((_, i) => i));
  });
});
