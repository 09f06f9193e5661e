import * as assert from 'node:assert/strict';
import { promises as fsp } from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { ROOT, cli } from './cli.helpers';
import { sharedDatasetDir } from '../harness/paths';

const REVERSED = 'Step 12: Set up model architecture options (transformer implementation, flash attention, etc.) (/workspace/examples/pretrain_zero_bubble.sh:115-114)';

describe('expbench curate verdict | resolve | queue | edit | dispute | export | agreement (node dist/cli.js)', function () {
  this.timeout(300_000);
  let dir: string;
  let review: string;
  before(async () => {
    dir = await fsp.mkdtemp(path.join(os.tmpdir(), 'expbench-cli-curate-'));
    review = path.join(dir, 'review');
  });
  after(async () => { await fsp.rm(dir, { recursive: true, force: true }); });
  const shared = ['--dataset', sharedDatasetDir, '--no-sample'];

  it('a second curator\'s verdict says it is their first, with the other curators\' verdicts; a curator\'s second says their own before', async () => {
    const store = path.join(dir, 'review-before');
    const v = (verdict: string, by: string) => cli(['curate', 'verdict', 'neurips2024/93022/0', verdict, '--reason', 'r', '--by', by, '--review', store, ...shared]);
    let r = await v('needs-fix', 'tester');
    assert.equal(r.code, 0, r.stderr);
    assert.match(r.stdout, /^neurips2024\/93022\/0: needs-fix by tester \(first verdict of tester\) — /);
    r = await v('valid', 'tester2');
    assert.match(r.stdout, /: valid by tester2 \(first verdict of tester2; tester: needs-fix\) — /);
    assert.doesNotMatch(r.stdout, /before:/);
    r = await v('invalid', 'tester2');
    assert.match(r.stdout, /: invalid by tester2 \(before: valid\) — /);
  });

  it('records two curators\' verdicts, shows the disagreement in the queue, and a resolution settles it', async () => {
    let r = await cli(['curate', 'verdict', 'neurips2024/93022/0', 'valid', '--reason', 'design checked', '--by', 'ann', '--review', review, ...shared]);
    assert.equal(r.code, 0, r.stderr);
    r = await cli(['curate', 'verdict', 'neurips2024/93022/0', 'needs-fix', '--reason', 'no numbers in expected_outcome', '--by', 'bob', '--review', review, ...shared, '--json']);
    assert.equal(r.code, 0, r.stderr);
    assert.equal(JSON.parse(r.stdout).before, 'valid');
    r = await cli(['curate', 'queue', '--review', review]);
    assert.match(r.stdout, /neurips2024\/93022\/0: DISAGREEMENT/);
    r = await cli(['curate', 'resolve', 'neurips2024/93022/0', '--verdict', 'needs-fix', '--reason', 'bob is right', '--by', 'lead', '--review', review]);
    assert.equal(r.code, 0, r.stderr);
    const q = JSON.parse((await cli(['curate', 'queue', '--review', review, '--json'])).stdout);
    assert.equal(q[0].verdict, 'needs-fix');
    assert.equal(q[0].decidedBy, 'lead');
    r = await cli(['curate', 'verdict', 'neurips2024/93022/0', 'maybe', '--reason', 'x', '--review', review, ...shared]);
    assert.notEqual(r.code, 0);
    assert.match(r.stderr, /valid, invalid or needs-fix/);
    r = await cli(['curate', 'verdict', 'nope/1/0', 'valid', '--reason', 'x', '--review', review, ...shared]);
    assert.equal(r.code, 1);
    assert.match(r.stderr, /no such task/);
  });

  it('adds an edit only when it applies, and a dispute with evidence', async () => {
    const patch = JSON.stringify([{ op: 'test', path: '/requirements/11', value: REVERSED }, { op: 'replace', path: '/requirements/11', value: REVERSED.replace('115-114', '114-115') }]);
    let r = await cli(['curate', 'edit', 'iclr2024/17595/1', '--patch', patch, '--reason', 'reversed range', '--by', 'ann', '--review', review, ...shared]);
    assert.equal(r.code, 0, r.stderr);
    assert.match(r.stdout, /1 edit\n/);
    r = await cli(['curate', 'edit', 'iclr2024/17595/1', '--patch', patch, '--reason', 'again', '--review', review, ...shared]);
    assert.equal(r.code, 1, 'the same test no longer holds on top of the first edit');
    assert.match(r.stderr, /operation 0 \(test \/requirements\/11\)/);
    r = await cli(['curate', 'dispute', 'neurips2024/94391/4', '--about', 'design_complexity', '--reason', 'only design_ambiguity: nothing to judge a design against',
      '--file', path.join(sharedDatasetDir, 'tasks', 'neurips2024', '94391', '94391_complete_final.json'), '--by', 'reviewer', '--review', review, '--json']);
    assert.equal(r.code, 0, r.stderr);
    assert.equal(JSON.parse(r.stdout).kind, 'dispute');
    const q = JSON.parse((await cli(['curate', 'queue', '--review', review, '--json'])).stdout) as { task: string; openDisputes: unknown[]; edits: unknown[] }[];
    assert.equal(q.find((s) => s.task === 'neurips2024/94391/4')!.openDisputes.length, 1);
    assert.equal(q.find((s) => s.task === 'iclr2024/17595/1')!.edits.length, 1);
  });

  it('exports the shared tasks; tasks validate and curate lint read the export back (the edit fixes the one malformed range)', async () => {
    const out = path.join(dir, 'export');
    const r = await cli(['curate', 'export', sharedDatasetDir, '--no-sample', '--out', out, '--review', review, '--json']);
    assert.equal(r.code, 0, r.stderr);
    const m = JSON.parse(r.stdout);
    const validate = async (d: string) => JSON.parse((await cli(['tasks', 'validate', d, '--json'])).stdout) as { tasks: unknown[]; problems: { severity: string }[] };
    const lint = async (d: string) => {
      const x = await cli(['curate', 'lint', d, '--no-sample', '--json']);
      assert.equal(x.code, 0, x.stderr);
      return JSON.parse(x.stdout) as { tasks: number; files: string[]; counts: Record<string, number>; unreadable: unknown[] };
    };
    const [vIn, vOut, lIn, lOut] = await Promise.all([validate(sharedDatasetDir), validate(out), lint(sharedDatasetDir), lint(out)]);
    assert.equal(m.counts.tasks, vIn.tasks.length);
    assert.equal(vOut.tasks.length, vIn.tasks.length);
    const sev = (v: typeof vIn) => v.problems.map((p) => p.severity).sort().join(',');
    assert.equal(sev(vOut), sev(vIn));
    assert.equal(lOut.tasks, lIn.tasks);
    assert.equal(lOut.files.length, lIn.files.length);
    assert.deepEqual(lOut.unreadable, []);
    assert.equal(lIn.counts['malformed-range'], 1);
    assert.equal(lOut.counts['malformed-range'], 0, 'the edit of iclr2024/17595/1 is applied in the export');
    for (const rule of Object.keys(lIn.counts)) if (rule !== 'malformed-range') assert.equal(lOut.counts[rule], lIn.counts[rule], rule);
    assert.equal(m.counts.needsFix, 1);
    assert.equal(m.counts.openDisputes, 1);
    const known = await fsp.readFile(path.join(out, 'KNOWN_ISSUES.md'), 'utf8');
    assert.match(known, /neurips2024\/93022\/0: needs a fix \(lead: bob is right\)/);
    assert.match(known, /open dispute .* about design_complexity/);
    console.log(`      export: ${m.counts.tasks} tasks in ${m.counts.files} files; validate: ${vOut.tasks.length} tasks, ${vOut.problems.length} problems (source ${vIn.problems.length}); lint: ${lOut.tasks} tasks, ${Object.values(lOut.counts).reduce((a, b) => a + b, 0)} findings (source ${Object.values(lIn.counts).reduce((a, b) => a + b, 0)})`);
  });

  it('agreement over the committed labels, as a table and as JSON', async () => {
    const data = path.join(ROOT, 'test', 'data', 'agreement');
    let r = await cli(['curate', 'agreement', path.join(data, 'sessions'), '--review', path.join(data, 'review'), '--resamples', '500']);
    assert.equal(r.code, 0, r.stderr);
    assert.match(r.stdout, /\| heuristic \(expbench-judge-1\) \| design \| labeller 1, language model, 2026-12-01 \| 28 \| 4 \|/);
    assert.match(r.stdout, /\| heuristic \(expbench-judge-1\) \| implementation \| labeller 1, language model, 2026-12-01 \| 24 \| 4 \|/);
    r = await cli(['curate', 'agreement', path.join(data, 'sessions'), '--review', path.join(data, 'review'), '--json']);
    const j = JSON.parse(r.stdout);
    assert.equal(j.rows.length, 2);
    assert.ok(j.rows.every((x: { figures: { kappa: { interval: unknown } } }) => Array.isArray(x.figures.kappa.interval)));
    r = await cli(['curate', 'agreement', path.join(dir, 'none'), '--review', review]);
    assert.equal(r.code, 2, 'an input that cannot be read exits 2, as curate lint');
    assert.match(r.stderr, /none: does not exist/);
  });
});
