import * as assert from 'node:assert/strict';
import { promises as fsp } from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { isExpBenchError } from '../../src/core/errors';
import { git } from '../../src/core/git';
import {
  JudgementSchema, ReviewStore, canonicalJson, judgementFileName, latestOf, runKeyForFile, runKeyForSession,
  safeSegment, subjectSegments, whoAmI, type Judgement,
} from '../../src/core/review';

const TASK = 'neurips2024/93022/0';

describe('review store (one file per judgement, real git merge)', function () {
  this.timeout(60_000);
  let dir: string;
  beforeEach(async () => { dir = await fsp.mkdtemp(path.join(os.tmpdir(), 'expbench-review-')); });
  afterEach(async () => { await fsp.rm(dir, { recursive: true, force: true }); });

  it('writes one sorted-key JSON file per judgement in its subject folder, and lists it back', async () => {
    const store = new ReviewStore(dir);
    const run = runKeyForFile('a'.repeat(64), 'traj/1');
    const j = await store.add({ subject: { kind: 'run', run, step: 3 }, kind: 'comment', value: 'reads the paper here', by: 'ann@example.org' });
    assert.match(j.id, /^[0-9a-f]{16}$/);
    assert.equal(j.version, 1);
    assert.equal(j.before, undefined);
    const file = path.join(dir, 'runs', `file%3A${'a'.repeat(64)}%23traj%2F1`, 'steps', '3', judgementFileName(j));
    const text = await fsp.readFile(file, 'utf8');
    assert.equal(text, canonicalJson(j));
    assert.ok(text.endsWith('}\n'));
    const keys = Object.keys(JSON.parse(text) as object);
    assert.deepEqual(keys, [...keys].sort());
    assert.ok(!path.basename(file).includes(':'), 'no colon in a file name');
    const listed = await store.list({ run });
    assert.deepEqual(listed, [j]);
    assert.deepEqual(await store.list({ task: TASK }), []);
  });

  it('fills `before` with the latest value of the same subject and kind for replacing kinds, not for list kinds', async () => {
    const store = new ReviewStore(dir);
    const subject = { kind: 'run' as const, run: 'session:0123456789abcdef' };
    const s1 = await store.add({ subject, kind: 'score', value: 0.5, reason: 'half done', by: 'a' });
    const s2 = await store.add({ subject, kind: 'score', value: 0.75, by: 'b' });
    const c1 = await store.add({ subject, kind: 'comment', value: 'one', by: 'a' });
    const c2 = await store.add({ subject, kind: 'comment', value: 'two', by: 'a' });
    const other = await store.add({ subject: { ...subject, step: 0 }, kind: 'score', value: 1, by: 'a' });
    assert.equal(s1.before, undefined);
    assert.equal(s2.before, 0.5);
    assert.equal(c1.before, undefined);
    assert.equal(c2.before, undefined);
    assert.equal(other.before, undefined, 'a step is another subject than its run');
    const all = await store.list({ run: subject.run });
    assert.equal(all.length, 5);
    assert.equal(latestOf(all, subject, 'score')?.value, 0.75);
    assert.deepEqual(all.filter((j) => j.kind === 'comment').map((j) => j.value), ['one', 'two']);
    assert.equal((await store.list({ kind: 'score' })).length, 3);
  });

  it('judgements added one after another keep that order, also within one millisecond: the latest score is the last added', async () => {
    const store = new ReviewStore(dir);
    const subject = { kind: 'run' as const, run: 'session:fedcba9876543210' };
    const values = Array.from({ length: 40 }, (_, i) => i / 40);
    for (const value of values) await store.add({ subject, kind: 'score', value, by: 'a' });
    const comments = Array.from({ length: 200 }, (_, i) => `c${i}`);
    for (const value of comments) await store.add({ subject, kind: 'comment', value, by: 'a' });
    const all = await store.list({ run: subject.run });
    assert.deepEqual(all.filter((j) => j.kind === 'score').map((j) => j.value), values);
    assert.deepEqual(all.filter((j) => j.kind === 'comment').map((j) => j.value), comments);
    assert.equal(latestOf(all, subject, 'score')?.value, values[values.length - 1]);
    assert.equal(new Set(all.map((j) => j.at)).size, all.length, 'each at its own time');
  });

  it('refuses a subject or value that does not fit the schema, naming the subject', async () => {
    const store = new ReviewStore(dir);
    await assert.rejects(store.add({ subject: { kind: 'task', task: 'no-slashes' }, kind: 'task-verdict', value: 'valid', by: 'a' }),
      (e) => isExpBenchError(e, 'BAD_INPUT') && /task id/.test(e.message));
    await assert.rejects(store.add({ subject: { kind: 'task', task: TASK }, kind: 'task-verdict', value: 'maybe', by: 'a' }),
      (e) => isExpBenchError(e, 'BAD_INPUT') && e.input === `task ${TASK}` && /task-verdict/.test(e.message));
    await assert.rejects(store.add({ subject: { kind: 'run', run: 'r', step: -1 }, kind: 'score', value: 1, by: 'a' }), (e) => isExpBenchError(e, 'BAD_INPUT'));
    await assert.rejects(store.add({ subject: { kind: 'run', run: 'r' }, kind: 'score', value: Number.NaN, by: 'a' }), (e) => isExpBenchError(e, 'BAD_INPUT'));
    assert.deepEqual(await store.list(), []);
  });

  it('reports malformed, foreign-version and misplaced files as problems naming them, and reads the rest', async () => {
    const store = new ReviewStore(dir);
    const good = await store.add({ subject: { kind: 'task', task: TASK }, kind: 'task-verdict', value: 'valid', by: 'a' });
    const taskDir = path.join(dir, ...subjectSegments({ kind: 'task', task: TASK }));
    await fsp.writeFile(path.join(taskDir, 'broken.json'), '{"version": 1,');
    await fsp.writeFile(path.join(taskDir, 'newer.json'), JSON.stringify({ ...good, version: 2 }));
    await fsp.writeFile(path.join(taskDir, 'bad-value.json'), JSON.stringify({ ...good, id: 'ffffffffffffffff', value: 'great' }));
    const misplaced = path.join(dir, 'runs', 'x', 'moved.json');
    await fsp.mkdir(path.dirname(misplaced), { recursive: true });
    await fsp.writeFile(misplaced, JSON.stringify({ ...good, id: 'eeeeeeeeeeeeeeee' }));
    await fsp.writeFile(path.join(taskDir, 'notes.txt'), 'not a judgement file and not read');
    const { judgements, problems } = await store.read();
    assert.deepEqual(judgements, [good]);
    const byName = new Map(problems.map((p) => [path.basename(p.file), p.message]));
    assert.deepEqual([...byName.keys()].sort(), ['bad-value.json', 'broken.json', 'moved.json', 'newer.json']);
    assert.match(byName.get('broken.json')!, /not valid JSON/);
    assert.match(byName.get('newer.json')!, /version 2/);
    assert.match(byName.get('bad-value.json')!, /task-verdict/);
    assert.match(byName.get('moved.json')!, /belongs in tasks/);
    assert.deepEqual(await store.list(), [good], 'list() logs problems and does not throw');
  });

  it('makes every subject a safe folder and keeps distinct subjects apart', () => {
    assert.equal(safeSegment('..'), '%2E%2E');
    assert.equal(safeSegment('a/b'), 'a%2Fb');
    assert.equal(safeSegment('é'), '%C3%A9');
    assert.notEqual(safeSegment('a%2Fb'), safeSegment('a/b'));
    const long = safeSegment('x'.repeat(300));
    assert.ok(long.length <= 96 && long !== safeSegment('x'.repeat(301)));
    assert.deepEqual(subjectSegments({ kind: 'item', task: TASK, item: 'design:lr' }), ['tasks', 'neurips2024', '93022', '0', 'items', 'design%3Alr']);
    assert.deepEqual(subjectSegments({ kind: 'item', task: TASK, item: 'requirement:2', run: 'r1' }), ['runs', 'r1', 'items', 'requirement%3A2']);
    assert.throws(() => runKeyForFile('nothex', 'x'), (e) => isExpBenchError(e, 'BAD_INPUT'));
  });

  it('keys a session by its manifest (same for a copy, different for another preparation)', async () => {
    const write = async (d: string, createdAt: string) => {
      await fsp.mkdir(path.join(d, 'private'), { recursive: true });
      await fsp.writeFile(path.join(d, 'private', 'manifest.json'), JSON.stringify({ complete: true, taskId: TASK, workspaceCommit: 'c'.repeat(40), createdAt }));
    };
    await write(path.join(dir, 's1'), '2026-12-01T10:00:00.000Z');
    await write(path.join(dir, 's1-copy'), '2026-12-01T10:00:00.000Z');
    await write(path.join(dir, 's2'), '2026-12-01T11:00:00.000Z');
    const k1 = await runKeyForSession(path.join(dir, 's1'));
    assert.match(k1, /^session:[0-9a-f]{16}$/);
    assert.equal(await runKeyForSession(path.join(dir, 's1-copy')), k1);
    assert.notEqual(await runKeyForSession(path.join(dir, 's2')), k1);
    await assert.rejects(runKeyForSession(path.join(dir, 'none')), (e) => isExpBenchError(e, 'SESSION_INVALID'));
  });

  it('whoAmI names someone', async () => {
    assert.ok((await whoAmI()).length > 0);
  });

  it('two curators\' branches, each adding verdicts on the same task, merge under git without conflict', async () => {
    const repo = path.join(dir, 'repo');
    const root = path.join(repo, 'review');
    await fsp.mkdir(repo);
    const id = ['-c', 'user.name=t', '-c', 'user.email=t@localhost'];
    await git(['init', '-q', '-b', 'main'], { repo: 'none', cwd: repo });
    const base = new ReviewStore(root);
    await base.add({ subject: { kind: 'task', task: TASK }, kind: 'task-verdict', value: 'needs-fix', reason: 'expected_outcome unclear', by: 'lead' });
    await git(['add', '-A'], { repo: { checkout: repo } });
    await git([...id, 'commit', '-q', '-m', 'base'], { repo: { checkout: repo } });
    const curator = async (branch: string, by: string, verdict: string) => {
      await git(['checkout', '-q', '-b', branch, 'main'], { repo: { checkout: repo } });
      const s = new ReviewStore(root);
      await s.add({ subject: { kind: 'task', task: TASK }, kind: 'task-verdict', value: verdict, reason: `${by} checked it`, by });
      await s.add({ subject: { kind: 'item', task: TASK, item: 'requirement:1', run: 'session:00000000000000aa' }, kind: 'verdict-flip', value: { verdict: 'unmet', judged: 'met' }, by });
      await s.add({ subject: { kind: 'task', task: 'iclr2024/1/2' }, kind: 'task-verdict', value: 'valid', by });
      await git(['add', '-A'], { repo: { checkout: repo } });
      await git([...id, 'commit', '-q', '-m', `${by} verdicts`], { repo: { checkout: repo } });
    };
    await curator('ann', 'ann@example.org', 'valid');
    await curator('bob', 'bob@example.org', 'invalid');
    await git(['checkout', '-q', 'main'], { repo: { checkout: repo } });
    await git([...id, 'merge', '-q', '--no-edit', 'ann'], { repo: { checkout: repo } });
    const merged = await git([...id, 'merge', '--no-edit', 'bob'], { repo: { checkout: repo }, okCodes: [1] });
    assert.equal(merged.code, 0, `git merge reported a conflict: ${merged.text}${merged.stderr}`);
    assert.equal((await git(['status', '--porcelain'], { repo: { checkout: repo } })).text.trim(), '');
    const { judgements, problems } = await new ReviewStore(root).read({ task: TASK, kind: 'task-verdict' });
    assert.deepEqual(problems, []);
    assert.deepEqual(judgements.map((j) => j.by).sort(), ['ann@example.org', 'bob@example.org', 'lead']);
    for (const j of judgements) JudgementSchema.parse(j);
    const flips = await new ReviewStore(root).list({ run: 'session:00000000000000aa', kind: 'verdict-flip' });
    assert.equal(flips.length, 2);
    assert.ok(flips.every((j: Judgement) => j.subject.kind === 'item' && j.subject.item === 'requirement:1'));
  });
});
