import * as assert from 'node:assert/strict';
import { promises as fsp } from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { MAX_JSON_DEPTH } from '../../src/core/tasks/limits';
import { loadDatasets } from '../../src/core/tasks/loader';

const SHARED = path.resolve(__dirname, '../../../../shared/data/exp-bench/tasks');

/** A small seeded PRNG (mulberry32) so that a failing mutation can be replayed. */
function rng(seed: number): () => number {
  return () => {
    seed = (seed + 0x6d2b79f5) | 0;
    let t = Math.imul(seed ^ (seed >>> 15), 1 | seed);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/** Fields whose loss or wrong type the loader must report (optional fields may vanish silently). */
const REPORTED = ['question', 'method', 'expected_outcome', 'design_complexity', 'requirements', 'source', 'masked_source', 'agent_instructions', 'usage_instructions'];
const WRONG: unknown[] = [42, true, { x: 1 }, [1, 2]];

type Mutation = { kind: 'drop' | 'rename' | 'retype' | 'truncate'; field?: string; value?: unknown };

describe('loader fuzz: mutated real task files', function () {
  this.timeout(120_000);
  const seed = Number(process.env.FUZZ_SEED ?? 20261129);
  let dir: string;
  before(async () => { dir = await fsp.mkdtemp(path.join(os.tmpdir(), 'expbench-fuzz-')); });
  after(async () => { await fsp.rm(dir, { recursive: true, force: true }); });

  it(`every mutation gives a problem and nothing throws (seed ${seed})`, async () => {
    const random = rng(seed);
    const files: string[] = [];
    for (const conf of await fsp.readdir(SHARED)) for (const p of await fsp.readdir(path.join(SHARED, conf))) {
      for (const f of await fsp.readdir(path.join(SHARED, conf, p))) files.push(path.join(SHARED, conf, p, f));
    }
    let n = 0;
    for (let round = 0; round < 120; round++) {
      const file = files[Math.floor(random() * files.length)];
      const text = await fsp.readFile(file, 'utf8');
      const json = JSON.parse(text);
      const qi = Math.floor(random() * json.questions.length);
      const q = json.questions[qi];
      const present = REPORTED.filter((f) => f in q && !(f === 'method' && typeof q[f] !== 'string'));
      const kinds: Mutation['kind'][] = ['drop', 'rename', 'retype', 'truncate'];
      const m: Mutation = { kind: kinds[Math.floor(random() * kinds.length)] };
      let out: string;
      if (m.kind === 'truncate') {
        out = text.slice(0, Math.floor(random() * (text.length - 2)) + 1);
      } else {
        m.field = present[Math.floor(random() * present.length)];
        // a drop of `question` is only reportable when there is no `hypothesis`; the design only when there is no variant
        if (m.kind === 'drop' || m.kind === 'rename') {
          if (m.field === 'design_complexity') delete q.experiment_design_complexity;
          if (m.field === 'question') delete q.hypothesis;
          if (['source', 'masked_source', 'agent_instructions', 'usage_instructions', 'requirements'].includes(m.field)) m.kind = 'retype';
        }
        if (m.kind === 'drop') delete q[m.field];
        else if (m.kind === 'rename') { q[`${m.field}_renamed`] = q[m.field]; delete q[m.field]; }
        else {
          const options = WRONG.filter((w) => !(m.field === 'method' && typeof w === 'object') && !(m.field === 'design_complexity' && Array.isArray(w) === false && typeof w === 'object'));
          m.value = options[Math.floor(random() * options.length)];
          q[m.field] = m.value;
        }
        out = JSON.stringify(json);
      }
      const sub = path.join(dir, `r${round}`, path.basename(path.dirname(path.dirname(file))), path.basename(path.dirname(file)));
      await fsp.mkdir(sub, { recursive: true });
      await fsp.writeFile(path.join(sub, path.basename(file)), out);
      const before = await loadDatasets([file]);
      const r = await loadDatasets([path.join(dir, `r${round}`)]);
      const baseline = new Set(before.problems.map((p) => `${p.pointer} ${p.message}`));
      const fresh = r.problems.filter((p) => !baseline.has(`${p.pointer} ${p.message}`));
      const label = `round ${round}: ${m.kind} ${m.field ?? ''} ${JSON.stringify(m.value) ?? ''} in ${file}#/questions/${qi}`;
      assert.ok(fresh.length > 0, `no problem reported for ${label}`);
      if (m.kind === 'truncate') assert.equal(r.unreadableFiles.length, 1, label);
      else assert.ok(fresh.some((p) => p.pointer.startsWith(`/questions/${qi}`)), `problem not pointing at the task for ${label}: ${JSON.stringify(fresh)}`);
      n++;
    }
    assert.equal(n, 120);
  });

  it(`hostile values (deep nesting, huge numbers) in real task files: nothing throws, each is one problem at its task (seed ${seed})`, async () => {
    const random = rng(seed + 1);
    const files: string[] = [];
    for (const conf of await fsp.readdir(SHARED)) for (const p of await fsp.readdir(path.join(SHARED, conf))) {
      for (const f of await fsp.readdir(path.join(SHARED, conf, p))) files.push(path.join(SHARED, conf, p, f));
    }
    for (let round = 0; round < 30; round++) {
      const file = files[Math.floor(random() * files.length)];
      const json = JSON.parse(await fsp.readFile(file, 'utf8'));
      const qi = Math.floor(random() * json.questions.length);
      const q = json.questions[qi];
      const deep = random() < 0.5;
      const field = deep ? ['method', 'design_complexity', 'expected_outcome', 'requirements'][Math.floor(random() * 4)] : 'requirements';
      // deep: nested past the limit (by 1 to 5,000 levels), written as text (JSON.stringify would recurse)
      const depth = MAX_JSON_DEPTH + 1 + Math.floor(random() * 5000);
      const marker = '"__HOSTILE__"';
      if (deep) q[field] = '__HOSTILE__';
      else q.requirements = [...(Array.isArray(q.requirements) ? q.requirements : []), `Step: huge (/workspace/x.py:${'9'.repeat(17 + Math.floor(random() * 300))})`];
      let out = JSON.stringify(json);
      if (deep) out = out.replace(marker, `${'['.repeat(depth)}1${']'.repeat(depth)}`);
      const sub = path.join(dir, `h${round}`, path.basename(path.dirname(path.dirname(file))), path.basename(path.dirname(file)));
      await fsp.mkdir(sub, { recursive: true });
      await fsp.writeFile(path.join(sub, path.basename(file)), out);
      const label = `round ${round}: ${deep ? `${field} nested ${depth}` : 'huge line'} in ${file}#/questions/${qi}`;
      const r = await loadDatasets([path.join(dir, `h${round}`)]);
      const others = json.questions.length - (deep ? 1 : 0);
      assert.equal(r.tasks.length, others, `the other tasks of the file load: ${label}`);
      const p = r.problems.filter((x) => x.pointer.startsWith(`/questions/${qi}/${field}`) && (deep ? x.severity === 'error' : /beyond the limit/.test(x.message)));
      assert.equal(p.length, 1, `one problem at the task for ${label}: ${JSON.stringify(r.problems.map((x) => x.pointer.slice(0, 50)))}`);
      for (const t of r.tasks) for (const req of t.requirements) for (const ref of req.refs) {
        assert.ok(ref.startLine === null || Number.isSafeInteger(ref.startLine), label);
      }
    }
  });
});
