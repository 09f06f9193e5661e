import * as assert from 'node:assert/strict';
import { promises as fsp } from 'node:fs';
import * as path from 'node:path';
import { callTokens, StepSchema } from '../../src/core/steps/step';
import { importFiles } from '../../src/core/trajectory/import';
import { mappedShare, type Trajectory } from '../../src/core/trajectory/types';

/**
 * Issue 33: the importers on each format's own test data, from its repository (inputs this
 * project did not write). Nothing of it is committed: `bash scripts/format-fixtures.sh MIRRORS
 * OUT` extracts the files from local clones into OUT/<format>/, and this test reads
 * EXPBENCH_FORMAT_FIXTURES=OUT; without it the test is skipped, saying so. For every file: it is
 * read as its format (or, when it is no trajectory, is refused with a reason naming what it is),
 * every step fits the step model, a trajectory without steps says why, the steps' tokens equal the
 * log's own total or a problem says they differ; Inspect's chunked logs (ts-mono's fixtures) give
 * the same trajectories as their original, unchunked form. A table of what each file gave is
 * printed.
 */
const ROOT = process.env.EXPBENCH_FORMAT_FIXTURES;
const FAMILY: Record<string, string[]> = {
  inspect: ['inspect-eval', 'inspect-json'], 'inspect-chunked': ['inspect-eval'], openhands: ['openhands-v0', 'openhands-v1'],
  'openhands-v1': ['openhands-v1'], swe: ['swe-agent'], mini: ['mini-swe-agent'], atif: ['atif'],
};
/** Files of the format folders that hold no trajectory, and the reason the importer must give. */
const NOT_TRAJECTORIES: Array<{ name: RegExp; reason: RegExp }> = [
  { name: /example_model_output\.json$/, reason: /SWE-bench predictions/ },
  { name: /multi_swe_bench_examples_config\.json$/, reason: /no known trajectory shape \(keys mode, workdir/ },
  // Multi-SWE-bench's patch file: one fix patch per instance, no steps
  { name: /multi_swe_bench_examples_patch\.jsonl$/, reason: /no known shape \(keys org, repo, number, fix_patch/ },
];

describe('trajectory import: each format\'s own test data from its repository (issue 33)', function () {
  this.timeout(300_000);
  const rows: string[] = [];

  before(function () {
    if (!ROOT) { console.log('      (skipped: set EXPBENCH_FORMAT_FIXTURES to a folder made by scripts/format-fixtures.sh)'); this.skip(); }
  });
  after(() => { if (rows.length) console.log(['      file | format | trajectories | steps | mapped | tokens (log / steps) | problems', ...rows.map((r) => `      ${r}`)].join('\n')); });

  for (const sub of Object.keys(FAMILY)) {
    it(`${sub}/: read as ${FAMILY[sub].join(' or ')}, steps that fit the model, totals that agree or say why`, async function () {
      const dir = path.join(ROOT!, sub);
      const names = await fsp.readdir(dir).catch(() => [] as string[]);
      if (!names.length) { console.log(`      (no ${sub}/ files: its repository was not extracted)`); this.skip(); }
      for (const name of names.sort()) {
        const file = path.join(dir, name);
        const ts: Trajectory[] = [];
        const r = await importFiles([file], (t) => { ts.push(t); });
        const not = NOT_TRAJECTORIES.find((x) => x.name.test(name));
        if (not) {
          assert.equal(r.files[0].unreadable, true, `${name} is no trajectory`);
          assert.match(r.problems.map((p) => p.message).join('\n'), not.reason);
          rows.push(`${sub}/${name} | refused: ${r.problems[0]?.message}`);
          continue;
        }
        assert.equal(r.files[0].unreadable, false, `${sub}/${name}: ${r.problems.map((p) => p.message).join('; ')}`);
        assert.ok(FAMILY[sub].includes(r.files[0].format ?? ''), `${sub}/${name} read as ${r.files[0].format}`);
        for (const t of ts) {
          for (const s of t.steps) StepSchema.parse(s);
          assert.ok(t.steps.every((s, i) => s.index === i));
          if (!t.steps.length) assert.ok(t.problems.some((p) => p.severity !== 'info'), `${name} ${t.id}: no steps and no reason`);
          const steps = t.steps.reduce((a, s) => a + (callTokens(s.model) ?? 0), 0);
          const own = t.sourceUsage?.totalTokens;
          const perStep = t.steps.some((s) => callTokens(s.model) !== undefined);
          if (own !== undefined && perStep && own !== steps) assert.ok(t.problems.some((p) => /the log's own total/.test(p.message)), `${name} ${t.id}: steps ${steps}, log ${own}, unsaid`);
          rows.push(`${sub}/${name} | ${t.format} | ${t.id} | ${t.steps.length} | ${mappedShare(t)} | ${own ?? '–'} / ${perStep ? steps : '–'} | ${t.problems.filter((p) => p.severity !== 'info').length} (+${t.problems.filter((p) => p.severity === 'info').length} notes)`);
        }
        if (!ts.length) {
          assert.ok(r.problems.length > 0, `${name}: no trajectory and no problem`);
          rows.push(`${sub}/${name} | ${r.files[0].format} | none | – | – | – | ${r.problems[0].message}`);
        }
      }
    });
  }

  it('Inspect\'s chunked logs give the same trajectories as the same logs unchunked', async function () {
    const dir = path.join(ROOT!, 'inspect-chunked');
    const names = await fsp.readdir(dir).catch(() => [] as string[]);
    const pairs = names.filter((n) => n.includes('logs_chunked_')).map((n) => [n, n.replace('logs_chunked_', 'logs_original_')]).filter(([, o]) => names.includes(o));
    if (!pairs.length) this.skip();
    for (const [chunked, original] of pairs) {
      const a: Trajectory[] = []; const b: Trajectory[] = [];
      await importFiles([path.join(dir, chunked)], (t) => { a.push(t); });
      await importFiles([path.join(dir, original)], (t) => { b.push(t); });
      const key = (ts: Trajectory[]) => ts.map((t) => `${t.id}:${t.steps.length}:${t.steps.map((s) => `${s.kind}/${s.action?.tool ?? ''}`).join(',')}`).sort();
      assert.deepEqual(key(a), key(b), `${chunked} vs ${original}`);
      assert.deepEqual(a.map((t) => t.sourceUsage?.totalTokens).sort(), b.map((t) => t.sourceUsage?.totalTokens).sort());
    }
  });
});
