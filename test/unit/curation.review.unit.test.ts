import * as assert from 'node:assert/strict';
import { promises as fsp } from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import {
  addDispute, affectedSessions, agreementReport, applyJsonPatch, collectJudgedItems, exportCurated, judgeAgreement, resolveVerdicts,
} from '../../src/core/curation';
import { isExpBenchError } from '../../src/core/errors';
import { judgeSession } from '../../src/core/flows/judge';
import { rejudgeAffected } from '../../src/core/flows/rejudge';
import { JudgeRecord } from '../../src/core/judge/types';
import { SessionLayout } from '../../src/core/layout';
import { accuracy } from '../../src/core/metrics/agreement';
import { bundledDatasetDir } from '../../src/core/paths';
import { ReviewStore, runKeyForSession, type Judgement } from '../../src/core/review';
import { findTask, loadDatasets } from '../../src/core/tasks/loader';
import { agreementVariants, buildAgreementSession, SAMPLE_TASK_ID } from '../harness/agreementSessions';
import { FakeOpenAIServer } from '../harness/fakeOpenAIServer';
import { makeJudgeFixture, scriptedModel } from '../harness/judgeFixture';
import { repoRoot } from '../harness/paths';

const AGREEMENT = path.join(repoRoot, 'test', 'data', 'agreement');
const T = 'iclr2024/1/0';

describe('curation: verdicts, edits, export, disputes, judge agreement', function () {
  this.timeout(180_000);
  let dir: string;
  beforeEach(async () => { dir = await fsp.mkdtemp(path.join(os.tmpdir(), 'expbench-curate-')); });
  afterEach(async () => { await fsp.rm(dir, { recursive: true, force: true }); });

  describe('RFC 6902 patches', () => {
    const doc = { a: 1, list: ['x', 'y'], nested: { 'k/1': 'v', 'm~n': 2 } };
    it('applies add, remove, replace, move, copy, test on a copy', () => {
      const out = applyJsonPatch(doc, [
        { op: 'test', path: '/nested/k~11', value: 'v' },
        { op: 'add', path: '/list/1', value: 'inserted' },
        { op: 'add', path: '/list/-', value: 'end' },
        { op: 'replace', path: '/a', value: { b: [1] } },
        { op: 'remove', path: '/nested/m~0n' },
        { op: 'copy', from: '/list/0', path: '/first' },
        { op: 'move', from: '/nested/k~11', path: '/moved' },
      ], 'doc');
      assert.deepEqual(out, { a: { b: [1] }, list: ['x', 'inserted', 'y', 'end'], nested: {}, first: 'x', moved: 'v' });
      assert.deepEqual(doc, { a: 1, list: ['x', 'y'], nested: { 'k/1': 'v', 'm~n': 2 } }, 'the input is never changed');
    });
    it('refuses the whole patch on a failed test, a missing path, an index past the end, a move into its child', () => {
      const bad = [
        [{ op: 'replace' as const, path: '/a', value: 2 }, { op: 'test' as const, path: '/a', value: 3 }],
        [{ op: 'remove' as const, path: '/nope' }],
        [{ op: 'replace' as const, path: '/missing', value: 1 }],
        [{ op: 'add' as const, path: '/list/3', value: 1 }],
        [{ op: 'move' as const, from: '/nested', path: '/nested/inner' }],
        [{ op: 'add' as const, path: 'a', value: 1 }],
      ];
      for (const ops of bad) assert.throws(() => applyJsonPatch(doc, ops, 'task x'), (e) => isExpBenchError(e, 'BAD_INPUT') && e.input === 'task x', JSON.stringify(ops));
    });
  });

  it('shows a disagreement of two curators until a resolution settles it; a newer verdict re-opens it; disputes stay open until resolved', async () => {
    const store = new ReviewStore(dir);
    const task = { kind: 'task' as const, task: T };
    await store.add({ subject: task, kind: 'task-verdict', value: 'valid', reason: 'fine', by: 'ann' });
    const bob = await store.add({ subject: task, kind: 'task-verdict', value: 'needs-fix', reason: 'no numbers', by: 'bob' });
    const d = await store.add({ subject: task, kind: 'dispute', value: { about: 'expected_outcome', evidence: [{ run: 'session:1' }] }, reason: 'my runs give 0.71', by: 'solver' });
    let [s] = resolveVerdicts(await store.list());
    assert.equal(s.disagreement, true);
    assert.equal(s.verdict, undefined);
    assert.deepEqual(s.byCurator.map((j) => `${j.by}:${j.value}`), ['ann:valid', 'bob:needs-fix']);
    assert.deepEqual(s.openDisputes.map((j) => j.id), [d.id]);
    await store.add({ subject: task, kind: 'resolution', value: { verdict: 'needs-fix', resolves: [bob.id, d.id] }, reason: 'the dispute is right', by: 'lead' });
    [s] = resolveVerdicts(await store.list());
    assert.equal(s.disagreement, false);
    assert.equal(s.verdict, 'needs-fix');
    assert.equal(s.decidedBy, 'lead');
    assert.equal(s.reason, 'the dispute is right');
    assert.deepEqual(s.openDisputes, []);
    await new Promise((r) => setTimeout(r, 5));
    await store.add({ subject: task, kind: 'task-verdict', value: 'valid', reason: 'fixed upstream', by: 'bob' });
    [s] = resolveVerdicts(await store.list());
    assert.equal(s.verdict, 'valid', 'both curators now say valid, after the resolution');
    assert.equal(s.disagreement, false);
    await store.add({ subject: task, kind: 'task-verdict', value: 'invalid', by: 'ann' });
    [s] = resolveVerdicts(await store.list());
    assert.equal(s.disagreement, true, 'a verdict newer than the resolution re-opens it');
  });

  it('refuses a dispute from a session that is not submitted, and takes one from a submitted session with its run key', async () => {
    const store = new ReviewStore(path.join(dir, 'review'));
    const [variant] = await agreementVariants();
    const built = await buildAgreementSession(dir, path.join(dir, 'cache'), variant);
    // a prepared session that was never submitted
    const task = findTask(await loadDatasets([bundledDatasetDir()]), SAMPLE_TASK_ID)!;
    const { prepareSession } = await import('../../src/core/workspace/prepare');
    const open = path.join(dir, 'open');
    await prepareSession({ task, source: task.paper!.localRepo!, outDir: open, cacheDir: path.join(dir, 'cache') });
    await assert.rejects(addDispute(store, { task: SAMPLE_TASK_ID, about: 'expected_outcome', reason: 'x', evidence: [], session: open, by: 's' }),
      (e) => isExpBenchError(e, 'SESSION_INVALID') && /not submitted/.test(e.message));
    await assert.rejects(addDispute(store, { task: 'other/1/0', about: 'expected_outcome', reason: 'x', evidence: [], session: built.root, by: 's' }), (e) => isExpBenchError(e, 'BAD_INPUT'));
    await assert.rejects(addDispute(store, { task: SAMPLE_TASK_ID, about: 'x', reason: 'x', evidence: [{ diff: path.join(dir, 'none.diff') }], by: 's' }), (e) => isExpBenchError(e, 'BAD_INPUT'));
    const j = await addDispute(store, { task: SAMPLE_TASK_ID, about: 'expected_outcome', reason: 'T is 1.30, not about 1.3', evidence: [{ diff: path.join(built.root, 'private', 'harness', 'patch.diff') }], session: built.root, by: 's' });
    assert.deepEqual((j.value as { evidence: unknown[] }).evidence[0], { run: await runKeyForSession(built.root) });
    assert.equal(resolveVerdicts(await store.list())[0].openDisputes.length, 1);
  });

  it('finds the sessions an edit affects and re-judges them through the judge flow against the edited task', async () => {
    const variants = await agreementVariants();
    const a = await buildAgreementSession(dir, path.join(dir, 'cache'), variants[0]);
    const b = await buildAgreementSession(dir, path.join(dir, 'cache'), variants[1]);
    const task = findTask(await loadDatasets([bundledDatasetDir()]), SAMPLE_TASK_ID)!;
    const store = new ReviewStore(path.join(dir, 'review'));
    assert.deepEqual(await affectedSessions([a.root, b.root], SAMPLE_TASK_ID, task.raw), [], 'no edit: nothing affected');
    const newReq = 'Step 6: Save the results to results/temperature_scaling.json (/workspace/experiments/temperature_scaling.py:33-35)';
    await store.add({
      subject: { kind: 'task', task: SAMPLE_TASK_ID }, kind: 'task-edit', reason: 'printing is not part of the result', by: 'ann',
      value: { patch: [{ op: 'replace', path: '/requirements/5', value: newReq }] },
    });
    const first = await rejudgeAffected({ task, judgements: await store.list(), sessionDirs: [a.root, b.root, path.join(dir, 'nothing')], rejudge: true });
    assert.deepEqual(first.affected.map((x) => [path.basename(x.session), x.fields]), [['A-reference', ['requirements']], ['B-partial', ['requirements']]]);
    for (const x of first.affected) {
      assert.equal(x.error, undefined);
      const rec = JudgeRecord.parse(JSON.parse(await fsp.readFile(path.join(new SessionLayout(x.session).judge, 'latest.json'), 'utf8')));
      assert.equal(rec.implementation.verdicts[5].requirement, newReq, 'judged against the edited requirement');
    }
    // the session snapshot is untouched; once re-judged the sessions are current
    assert.equal((JSON.parse(await fsp.readFile(path.join(a.root, 'private', 'task.json'), 'utf8')) as { raw: { requirements: string[] } }).raw.requirements[5], task.raw.requirements && (task.raw.requirements as string[])[5]);
    const again = await rejudgeAffected({ task, judgements: await store.list(), sessionDirs: [a.root, b.root], rejudge: false });
    assert.deepEqual(again.affected, []);
  });

  it('exports a curated copy with edits applied, verdicts, pins and environments, checksums and known issues; the sources are untouched', async () => {
    const data = path.join(dir, 'data');
    await fsp.cp(bundledDatasetDir(), data, { recursive: true });
    await fsp.writeFile(path.join(data, 'tasks', 'sample', 'toycal', 'curation.jsonc'),
      '{ "version": 1, // pin\n "repository": {"url": "https://example.org/toy.git", "commit": "0123456789abcdef0123456789abcdef01234567"},\n "environment": {"baseImage": "expbench/sandbox:1", "limits": {"timeSeconds": 60}} }\n');
    const before = await fsp.readFile(path.join(data, 'tasks', 'sample', 'toycal', 'toycal_complete_final.json'), 'utf8');
    const store = new ReviewStore(path.join(dir, 'review'));
    const task = { kind: 'task' as const, task: SAMPLE_TASK_ID };
    await store.add({ subject: task, kind: 'task-verdict', value: 'valid', reason: 'ran it', by: 'ann' });
    await store.add({ subject: task, kind: 'task-edit', value: { patch: [{ op: 'replace', path: '/expected_outcome', value: 'T ≈ 1.30; ECE 0.032 → 0.012; accuracy 0.905 unchanged.' }] }, reason: 'exact numbers', by: 'ann' });
    await store.add({ subject: task, kind: 'task-edit', value: { patch: [{ op: 'test', path: '/question', value: 'not the question' }] }, reason: 'stale', by: 'bob' });
    const out = path.join(dir, 'out');
    const m = await exportCurated({ inputs: [data], judgements: await store.list(), reviewStore: store.root, out });
    assert.equal(await fsp.readFile(path.join(data, 'tasks', 'sample', 'toycal', 'toycal_complete_final.json'), 'utf8'), before);
    const exported = JSON.parse(await fsp.readFile(path.join(out, 'tasks', 'sample', 'toycal', 'toycal_complete_final.json'), 'utf8'));
    assert.equal(exported.questions[0].expected_outcome, 'T ≈ 1.30; ECE 0.032 → 0.012; accuracy 0.905 unchanged.');
    assert.equal(exported.questions[0].question, JSON.parse(before).questions[0].question);
    const t = m.tasks.find((x) => x.id === SAMPLE_TASK_ID)!;
    assert.equal(t.verdict, 'valid');
    assert.equal(t.edits.length, 1);
    assert.equal(t.failedEdits.length, 1);
    assert.deepEqual(t.pin, { url: 'https://example.org/toy.git', commit: '0123456789abcdef0123456789abcdef01234567' });
    assert.equal((t.environment as { baseImage: string }).baseImage, 'expbench/sandbox:1');
    assert.ok(m.knownIssues.some((i) => /does not apply/.test(i)));
    await fsp.access(path.join(out, 'tasks', 'sample', 'toycal', 'curation.jsonc'));
    await fsp.access(path.join(out, 'papers', 'sample.jsonl'));
    const sums = (await fsp.readFile(path.join(out, 'SHA256SUMS'), 'utf8')).trim().split('\n');
    const { createHash } = await import('node:crypto');
    for (const line of sums) {
      const [sha, rel] = line.split(/ {2}/);
      assert.equal(createHash('sha256').update(await fsp.readFile(path.join(out, rel))).digest('hex'), sha, rel);
    }
    assert.ok(sums.some((l) => l.endsWith('curated-manifest.jsonc')));
    const back = await loadDatasets([out]);
    assert.equal(back.tasks.length, 1);
    assert.deepEqual(back.problems.filter((p) => p.severity === 'error'), []);
    await assert.rejects(exportCurated({ inputs: [data], judgements: [], reviewStore: store.root, out }), (e) => isExpBenchError(e, 'BAD_INPUT') && /not empty/.test(e.message));
  });

  it('agreement of the heuristic judge with the committed labels (test/data/agreement) equals a count made here', async () => {
    const labels = await new ReviewStore(path.join(AGREEMENT, 'review')).read();
    assert.deepEqual(labels.problems, []);
    assert.ok(labels.judgements.length >= 30);
    const r = await judgeAgreement([path.join(AGREEMENT, 'sessions')], labels.judgements, { resamples: 300 });
    assert.deepEqual(r.skipped, []);
    assert.deepEqual(r.labellers, ['labeller 1, language model, 2026-12-01']);
    // the same pairs, counted straight from the files
    for (const phase of ['design', 'implementation'] as const) {
      const pairs: { reference: string; other: string }[] = [];
      for (const name of await fsp.readdir(path.join(AGREEMENT, 'sessions'))) {
        const root = path.join(AGREEMENT, 'sessions', name);
        const rec = JudgeRecord.parse(JSON.parse(await fsp.readFile(path.join(root, 'private', 'judge', 'latest.json'), 'utf8')));
        const run = await runKeyForSession(root);
        const mine = (item: string) => labels.judgements.find((j: Judgement) => j.subject.kind === 'item' && j.subject.run === run && j.subject.item === item);
        const judged = phase === 'design' ? rec.design.verdicts.map((v) => [`design:${v.variable}`, v.verdict]) : rec.implementation.verdicts.map((v) => [`requirement:${v.index}`, v.verdict!]);
        for (const [item, v] of judged) { const l = mine(item); if (l) pairs.push({ reference: (l.value as { verdict: string }).verdict, other: v }); }
      }
      const row = r.rows.find((x) => x.phase === phase)!;
      assert.equal(row.judge, 'heuristic (expbench-judge-1)');
      assert.equal(row.figures.items, pairs.length);
      assert.equal(row.figures.accuracy.value, accuracy(pairs));
      assert.equal(row.figures.clusters, 4);
      assert.ok(row.figures.kappa.interval, 'an interval over 4 runs');
    }
    assert.equal(r.unmatchedLabels, 4, 'the four conclusion labels: the heuristic does not judge conclusions');
  });

  it('the committed judge records are what the heuristic gives today on the same sessions (not stale)', async () => {
    const variants = await agreementVariants();
    for (const v of variants) {
      const built = await buildAgreementSession(dir, path.join(dir, 'cache'), v);
      const committed = JudgeRecord.parse(JSON.parse(await fsp.readFile(path.join(AGREEMENT, 'sessions', v.name, 'private', 'judge', 'latest.json'), 'utf8')));
      assert.deepEqual(built.record.design.verdicts.map((x) => x.verdict), committed.design.verdicts.map((x) => x.verdict), v.name);
      assert.deepEqual(built.record.implementation.verdicts.map((x) => x.verdict), committed.implementation.verdicts.map((x) => x.verdict), v.name);
    }
  });

  it('the LLM judge\'s verdicts go through the same agreement machinery (local scripted server; not a measurement)', async () => {
    const fx = await makeJudgeFixture();
    const server = await new FakeOpenAIServer().start();
    try {
      server.handler = scriptedModel({ impl: (i) => (i === 2 ? 'unmet' : 'met') });
      await judgeSession(fx.sessionDir, { task: fx.task, endpoint: { baseURL: server.baseURL, apiKey: 'sk-test-0123456789', model: 'judge-model', timeoutMs: 5000, maxRetries: 1 }, concurrency: 1 });
      const { items } = await collectJudgedItems([fx.root]);
      assert.ok(items.length > 0);
      assert.ok(items.every((i) => i.judge === 'judge-model (expbench-judge-1)'));
      const store = new ReviewStore(path.join(dir, 'review'));
      // a labeller who says every requirement is met, and a second one who agrees with the model
      for (const it of items.filter((x) => x.phase === 'implementation')) {
        await store.add({ subject: { kind: 'item', task: it.task, item: it.item, run: it.run }, kind: 'verdict-flip', value: { verdict: 'met', judged: it.label }, by: 'one' });
        await store.add({ subject: { kind: 'item', task: it.task, item: it.item, run: it.run }, kind: 'verdict-flip', value: { verdict: it.label, judged: it.label }, by: 'two' });
      }
      const r = agreementReport(items, await store.list(), { resamples: 100 });
      const one = r.rows.find((x) => x.labeller === 'one' && x.phase === 'implementation')!;
      const two = r.rows.find((x) => x.labeller === 'two' && x.phase === 'implementation')!;
      assert.equal(one.figures.items, 3);
      assert.equal(one.figures.accuracy.value, 2 / 3);
      assert.equal(two.figures.accuracy.value, 1);
      const ceiling = r.curators.find((c) => c.phase === 'implementation')!;
      assert.deepEqual(ceiling.labellers, ['one', 'two']);
      assert.equal(ceiling.figures.accuracy.value, 2 / 3);
    } finally {
      await server.close();
      await fsp.rm(fx.root, { recursive: true, force: true });
    }
  });

  it('reads harness judge files at task level', async () => {
    const file = path.join(repoRoot, 'samples', 'harness-judge-files', 'sample', 'toycal', 'example-agent', 'example-model', 'toycal_task_index_0_iter_1_duration_0.5_eval_judge.json');
    const { items } = await collectJudgedItems([file]);
    assert.ok(items.length > 0);
    assert.ok(items.every((i) => i.phase.startsWith('task:') && i.run.startsWith('file:')));
    const store = new ReviewStore(path.join(dir, 'review'));
    for (const it of items) await store.add({ subject: { kind: 'item', task: it.task, item: it.item, run: it.run }, kind: 'verdict-flip', value: { verdict: it.label }, by: 'x' });
    const r = agreementReport(items, await store.list(), { resamples: 50 });
    assert.ok(r.rows.length === items.length && r.rows.every((x) => x.figures.accuracy.value === 1));
  });
});
