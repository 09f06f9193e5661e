// The curator's desk's core (issue 31): the queue's states, counts and filters over the review
// store's real files, two curators' agreement, the scratch copy's edit as RFC 6902 operations (on
// the sample task and, mutated at random, on every shared EXP-Bench task file), and the
// validation runs read from records as `curate validate` writes them.
import * as assert from 'node:assert/strict';
import { promises as fsp } from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import {
  applyEdits, buildQueue, editFromScratch, filterQueue, lintTasks, readValidationRuns, scratchText, taskHistory, type LintFinding, type ValidationRun,
} from '../../src/core/curation';
import { describeOperations } from '../../src/core/curation/scratchEdit';
import { isExpBenchError } from '../../src/core/errors';
import { bundledDatasetDir } from '../../src/core/paths';
import { ReviewStore, type Judgement } from '../../src/core/review';
import { loadDatasets } from '../../src/core/tasks/loader';
import type { Task } from '../../src/core/tasks/types';
import { sharedDatasetDir } from '../harness/paths';

/** A copy of the sample task under another id (`<conf>/<paper>/<index>`). */
function as(t: Task, id: string): Task {
  const [conference, paperId, index] = id.split('/');
  return { ...t, id, conference, paperId, index: Number(index) };
}

function finding(task: string, rule: LintFinding['rule'], severity: LintFinding['severity']): LintFinding {
  return { file: '/x.json', pointer: '/questions/0', rule, severity, message: 'm', task };
}

function run(task: string, startedAt: string, ok: boolean): ValidationRun {
  return { task, dir: '/v', startedAt, durationMs: 1, commit: 'c', image: 'i', command: 'true', exitCode: ok ? 0 : 1, timedOut: false, diskFull: false, setupFailed: false, claims: { total: 0, found: 0, derived: 0, notFound: 0 }, ok };
}

describe('curation: the curator\'s desk (queue, task history, scratch edits, validation runs)', function () {
  this.timeout(120_000);
  let dir: string;
  let sample: Task;
  beforeEach(async () => {
    dir = await fsp.mkdtemp(path.join(os.tmpdir(), 'expbench-desk-'));
    sample = (await loadDatasets([bundledDatasetDir()])).tasks[0];
  });
  afterEach(async () => { await fsp.rm(dir, { recursive: true, force: true }); });

  it('puts each task in the queue for each reason, counts them, and filters by paper, rule, state and curator', async () => {
    const store = new ReviewStore(path.join(dir, 'review'));
    const ids = ['c/1/0', 'c/1/1', 'c/2/0', 'c/2/1', 'c/3/0', 'c/3/1'];
    const tasks = ids.map((id) => as(sample, id));
    const add = (task: string, kind: Judgement['kind'], value: unknown, by: string, reason = 'r') => store.add({ subject: { kind: 'task', task }, kind, value, reason, by });
    await add('c/1/1', 'task-verdict', 'valid', 'ana');
    await add('c/2/0', 'task-verdict', 'valid', 'ana');
    await add('c/2/0', 'task-verdict', 'invalid', 'ben');
    await add('c/2/1', 'task-verdict', 'needs-fix', 'ana');
    await add('c/2/1', 'task-verdict', 'needs-fix', 'ben');
    const dispute = await add('c/3/0', 'dispute', { about: 'expected_outcome', evidence: [] }, 'eve');
    await add('c/3/0', 'task-verdict', 'valid', 'ana');
    await add('c/3/1', 'task-verdict', 'valid', 'ana');
    await add('c/3/1', 'task-verdict', 'valid', 'ben');
    const judgements = await store.list();
    const q = buildQueue({
      tasks, judgements,
      findings: [finding('c/1/0', 'ref-range-past-end', 'error'), finding('c/1/1', 'type-3-task', 'info')],
      validations: [run('c/3/1', '2026-01-01T00:00:00.000Z', true), run('c/3/1', '2026-01-02T00:00:00.000Z', false)],
    });
    const states = Object.fromEntries(q.rows.map((r) => [r.task, r.states]));
    assert.deepEqual(states, {
      'c/1/0': ['lint-error', 'no-verdict'], 'c/1/1': [], 'c/2/0': ['disagreement'], 'c/2/1': [],
      'c/3/0': ['open-dispute'], 'c/3/1': ['failed-validation'], // the newest run failed
    });
    assert.equal(q.counts.total, 6);
    assert.equal(q.counts.attention, 4);
    assert.equal(q.counts['no-verdict'], 1);
    assert.equal(q.counts.valid, 3); // c/1/1, c/3/0, c/3/1; c/2/0 is in disagreement
    assert.equal(q.counts['needs-fix'], 1);
    assert.deepEqual(q.papers, ['c/1', 'c/2', 'c/3']);
    assert.deepEqual(q.rules, ['ref-range-past-end', 'type-3-task']);
    assert.deepEqual(filterQueue(q).map((r) => r.task), ['c/1/0', 'c/2/0', 'c/3/0', 'c/3/1']);
    assert.deepEqual(filterQueue(q, { paper: 'c/3' }).map((r) => r.task), ['c/3/0', 'c/3/1']);
    assert.deepEqual(filterQueue(q, { rule: 'type-3-task', state: 'all' }).map((r) => r.task), ['c/1/1']);
    assert.deepEqual(filterQueue(q, { state: 'needs-fix' }).map((r) => r.task), ['c/2/1']);
    assert.deepEqual(filterQueue(q, { state: 'all', curator: 'ben' }).map((r) => r.task), ['c/2/0', 'c/2/1', 'c/3/1']);
    // ana and ben both judged c/2/0, c/2/1, c/3/1: 2 of 3 agree; κ over (valid,invalid),(needs-fix,needs-fix),(valid,valid)
    assert.equal(q.pairs.length, 1);
    const p = q.pairs[0];
    assert.deepEqual([p.a, p.b, p.tasks, p.agree, p.differ], ['ana', 'ben', 3, 2, ['c/2/0']]);
    // p_o = 2/3; p_e = (2/3·1/3) + (1/3·1/3) + (0·1/3) = 3/9; κ = (2/3 − 1/3)/(1 − 1/3) = 0.5
    assert.ok(Math.abs(p.kappa! - 0.5) < 1e-9, String(p.kappa));
    // a resolution answering the dispute takes it out of the queue
    await store.add({ subject: { kind: 'task', task: 'c/3/0' }, kind: 'resolution', value: { resolves: [dispute.id] }, reason: 'checked', by: 'ana' });
    const q2 = buildQueue({ tasks, judgements: await store.list(), findings: [], validations: [] });
    assert.deepEqual(q2.rows.find((r) => r.task === 'c/3/0')!.states, []);
    // a disagreement settled by a resolution stays settled when a later resolution only answers a dispute
    await add('c/2/0', 'resolution', { verdict: 'invalid', resolves: [] }, 'ana', 'the paper says so');
    const d2 = await add('c/2/0', 'dispute', { about: 'method', evidence: [] }, 'eve');
    await add('c/2/0', 'resolution', { resolves: [d2.id] }, 'ben', 'answered');
    const r20 = buildQueue({ tasks, judgements: await store.list(), findings: [], validations: [] }).rows.find((r) => r.task === 'c/2/0')!;
    assert.deepEqual([r20.states, r20.verdict], [[], 'invalid']);
  });

  it('keeps the history of a task with who, when, why and the value before', async () => {
    const store = new ReviewStore(path.join(dir, 'review'));
    await store.add({ subject: { kind: 'task', task: 'c/1/0' }, kind: 'task-verdict', value: 'valid', reason: 'looked fine', by: 'ana' });
    await store.add({ subject: { kind: 'task', task: 'c/1/0' }, kind: 'task-verdict', value: 'needs-fix', reason: 'range past the end', by: 'ana' });
    await store.add({ subject: { kind: 'item', task: 'c/1/0', item: 'conclusion' }, kind: 'verdict-flip', value: { verdict: 'correct' }, by: 'ana' });
    const h = taskHistory(await store.list(), 'c/1/0');
    assert.deepEqual(h.map((e) => [e.by, e.kind, e.value, e.before, e.reason]), [
      ['ana', 'task-verdict', 'valid', undefined, 'looked fine'],
      ['ana', 'task-verdict', 'needs-fix', 'valid', 'range past the end'],
    ]);
    assert.ok(h.every((e) => /^\d{4}-\d\d-\d\dT/.test(e.at)));
  });

  it('turns a changed reference of one requirement in the scratch copy into one RFC 6902 replace that export applies', () => {
    const before = sample.raw;
    const text = scratchText(before).replace('/workspace/toycal/metrics.py:19-33', '/workspace/toycal/metrics.py:19-31');
    const ops = editFromScratch(before, text, 'scratch.json');
    assert.equal(ops.length, 1);
    assert.equal(ops[0].op, 'replace');
    assert.equal(ops[0].path, '/requirements/4');
    assert.match(String((ops[0] as { value: unknown }).value), /metrics\.py:19-31\)$/);
    assert.match(describeOperations(before, ops)[0], /^replace \/requirements\/4: ".*19-33\)" → ".*19-31\)"$/);
    const edited = applyEdits(before, [{ value: { patch: ops }, id: 'e', by: 'ana' } as unknown as Judgement], sample.id);
    assert.deepEqual(edited, JSON.parse(text));
    assert.deepEqual(editFromScratch(before, scratchText(before), 'scratch.json'), []);
  });

  it('refuses a scratch copy that is not JSON or not an object, naming the file', () => {
    for (const text of ['{"question": ', '[1, 2]', 'null']) {
      assert.throws(() => editFromScratch(sample.raw, text, '/s/c_1_0.json'), (e: unknown) => isExpBenchError(e) && e.code === 'BAD_INPUT' && e.input === '/s/c_1_0.json');
    }
  });

  it('gives operations that rebuild every mutated entry of the shared EXP-Bench task files', async function () {
    const loaded = await loadDatasets([sharedDatasetDir]);
    if (loaded.tasks.length === 0) this.skip();
    let seed = 7;
    const rand = (n: number) => { seed = (seed * 1103515245 + 12345) % 2147483648; return seed % n; };
    let checked = 0;
    for (const t of loaded.tasks) {
      const after = structuredClone(t.raw) as Record<string, unknown>;
      const keys = Object.keys(after);
      for (let k = 0; k < 1 + rand(3); k++) {
        const key = keys[rand(keys.length)];
        const v = after[key];
        const m = rand(4);
        if (Array.isArray(v) && v.length > 0 && m === 0) v.splice(rand(v.length), 1);
        else if (Array.isArray(v) && m === 1) v.splice(rand(v.length + 1), 0, `inserted ${k}`);
        else if (typeof v === 'string' && m === 2) after[key] = `${v.slice(0, rand(v.length + 1))}~/edited`;
        else if (m === 3) delete after[key];
        else after[`curator_note_${k}`] = { by: 'test', n: k };
      }
      const ops = editFromScratch(t.raw, JSON.stringify(after), t.id);
      assert.deepEqual(applyEdits(t.raw, [{ value: { patch: ops }, id: 'e', by: 't' } as unknown as Judgement], t.id), after, t.id);
      checked++;
    }
    assert.ok(checked >= 300, `${checked} tasks`);
  });

  it('reads validation runs as the validator writes them, newest first, and names a record that is not one', async () => {
    const root = path.join(dir, 'validations');
    const write = async (task: string, time: string, body: string) => {
      const d = path.join(root, task.replace(/\//g, '-'), time);
      await fsp.mkdir(d, { recursive: true });
      await fsp.writeFile(path.join(d, 'validation.json'), body);
    };
    const rec = (o: Record<string, unknown>) => JSON.stringify({ version: 1, taskId: 'c/1/0', commit: 'abc', image: 'expbench/sandbox:1', command: 'python3 x.py', durationMs: 900, timedOut: false, diskFull: false, ...o });
    await write('c/1/0', 't1', rec({ startedAt: '2026-01-01T00:00:00.000Z', exitCode: 0, claims: { claims: [{ found: true }, { found: false, status: 'derived' }] } }));
    await write('c/1/0', 't2', rec({ startedAt: '2026-01-02T00:00:00.000Z', exitCode: 0, claims: { claims: [{ found: true }, { found: false, status: 'not found' }] }, placement: { kind: 'slurm' } }));
    await write('c/1/0', 't3', '{"taskId": "c/1/0", "start');
    await fsp.mkdir(path.join(root, 'c-1-0', 't4'), { recursive: true }); // still running: no record yet
    const { runs, problems } = await readValidationRuns(root, 'c/1/0');
    assert.deepEqual(runs.map((r) => [r.startedAt.slice(0, 10), r.ok, r.claims.found, r.claims.derived, r.claims.notFound, r.placement]), [
      ['2026-01-02', false, 1, 0, 1, 'slurm'], ['2026-01-01', true, 1, 1, 0, undefined],
    ]);
    assert.equal(problems.length, 1);
    assert.match(problems[0].file, /t3[\\/]validation\.json$/);
    assert.match(problems[0].message, /not JSON/);
    assert.deepEqual((await readValidationRuns(path.join(dir, 'absent'))).runs, []);
  });

  it('finds the sample\'s range past the end with the repository rules at a curation file\'s pin (the desk\'s lint)', async () => {
    const { paperRepo, writePaper } = await import('../harness/curationFixture');
    const { repoRoot } = await import('../harness/paths');
    const repo = await paperRepo(path.join(dir, 'repo'), path.join(repoRoot, 'samples', 'repos', 'toy-calibration'));
    const pin = await repo.commit({}, 'pin');
    await writePaper(path.join(dir, 'ds'), 'sample/toycal', {
      taskFile: path.join(bundledDatasetDir(), 'tasks', 'sample', 'toycal', 'toycal_complete_final.json'),
      curation: { version: 1, paper: 'sample/toycal', repository: { url: repo.dir, commit: pin } },
    });
    const r = await lintTasks({ inputs: [path.join(dir, 'ds')], cacheDir: path.join(dir, 'cache') });
    const q = buildQueue({ tasks: (await loadDatasets([path.join(dir, 'ds')])).tasks, findings: r.findings, judgements: [], validations: [] });
    assert.deepEqual(q.rows.map((x) => [x.task, x.states]), [['sample/toycal/0', ['lint-error', 'no-verdict']]]);
    assert.ok(q.rules.includes('ref-range-past-end'));
  });
});
