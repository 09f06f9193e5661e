/**
 * Hostile task files (issue 12, groups 5 and 6): deep nesting, huge numbers, huge strings, a FIFO,
 * an oversized file. Each case asserts that the other tasks still load, that the bad file is one
 * precise problem (file + JSON pointer), that commands end with a message and no raw stack, and
 * that the user's files are unchanged. Figures: test/harness/faults-verify-tasks.ts.
 */
import * as assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { promises as fsp } from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { judgeSession } from '../../src/core/flows/judge';
import { JudgeRecord } from '../../src/core/judge/types';
import { MAX_JSON_DEPTH, MAX_REF_LINE, MAX_TASK_FILE_BYTES } from '../../src/core/tasks/limits';
import { loadDatasets } from '../../src/core/tasks/loader';
import { cli, expectHeld, hasStack, printFiguresAtEnd } from '../harness/faults-verify-tasks';
import { makeJudgeFixture, TASK_JSON } from '../harness/judgeFixture';

printFiguresAtEnd();

/** `"[[[…"x"…]]]"` nested `n` deep, written as text (JSON.stringify would recurse). */
const nested = (n: number, open = '[', close = ']') => `${open.repeat(n)}"x"${close.repeat(n)}`;
const GOOD = { question: 'q', method: 'm', expected_outcome: 'e', design_complexity: { constant_variables: { a: 'b' } } };

async function writeTask(root: string, conf: string, paper: string, text: string): Promise<string> {
  const dir = path.join(root, conf, paper);
  await fsp.mkdir(dir, { recursive: true });
  const file = path.join(dir, `${paper}_complete_final.json`);
  await fsp.writeFile(file, text);
  return file;
}

describe('faults: hostile task files', function () {
  this.timeout(120_000);
  let root: string;
  beforeEach(async () => { root = await fsp.mkdtemp(path.join(os.tmpdir(), 'expbench-faults-tasks-')); });
  afterEach(async () => { await fsp.rm(root, { recursive: true, force: true }); });

  it('an array nested 5,000 deep in `method` and 4,000 deep in a design value: one problem each, every other task loads', async () => {
    const good = await writeTask(root, 'c', '1', JSON.stringify({ questions: [GOOD] }));
    const deepMethod = `{"questions":[${JSON.stringify(GOOD)},{"question":"deep","method":${nested(5000)},"expected_outcome":"e"}]}`;
    const bad = await writeTask(root, 'c', '2', deepMethod);
    const deepDesign = `{"questions":[{"question":"d","method":"m","expected_outcome":"e","design_complexity":{"constant_variables":{"v":${nested(4000, '{"k":', '}')}}}}]}`;
    const bad2 = await writeTask(root, 'c', '3', deepDesign);
    const before = await Promise.all([good, bad, bad2].map((f) => fsp.readFile(f)));
    let threw: unknown;
    const r = await loadDatasets([root]).catch((e: unknown) => { threw = e; return undefined; });
    assert.equal(threw, undefined, `loadDatasets threw ${String(threw)}`);
    const ids = r!.tasks.map((t) => t.id);
    assert.deepEqual(ids, ['c/1/0', 'c/2/0'], 'the good task of each file loads, the deep entries do not');
    const deep = r!.problems.filter((p) => p.severity === 'error');
    assert.equal(deep.length, 2, JSON.stringify(deep.map((p) => p.pointer.slice(0, 40))));
    assert.equal(deep[0].file, bad);
    assert.ok(deep[0].pointer.startsWith('/questions/1/method/0/0/'), deep[0].pointer.slice(0, 60));
    assert.equal(deep[0].pointer.split('/').length - 1, MAX_JSON_DEPTH + 1, 'the pointer stops where the limit is passed');
    assert.match(deep[0].message, new RegExp(`nested deeper than ${MAX_JSON_DEPTH} levels.*not loaded`));
    assert.equal(deep[1].file, bad2);
    assert.ok(deep[1].pointer.startsWith('/questions/0/design_complexity/constant_variables/v/k/k/'), deep[1].pointer.slice(0, 80));

    // Every command that loads the datasets: no stack, the good tasks listed, the problem named.
    const validate = await cli(['tasks', 'validate', root, '--json']);
    const list = await cli(['tasks', 'list', root]);
    const show = await cli(['tasks', 'show', 'c/2/0', '--dataset', root]);
    const out = [validate, list, show];
    const v = JSON.parse(validate.stdout) as { problems: { file: string; pointer: string }[] };
    const after = await Promise.all([good, bad, bad2].map((f) => fsp.readFile(f)));
    expectHeld('deep nesting', {
      workIntact: after.every((b, i) => b.equals(before[i])),
      noCrash: out.every((o) => !o.timedOut && !hasStack(o.stderr + o.stdout)),
      says: v.problems.some((p) => p.file === bad && p.pointer.startsWith('/questions/1/method')) && list.stdout.includes('c/1/0') && show.code === 0 && show.stdout.includes('m'),
      clean: true,
      detail: out.map((o) => `${o.code} ${o.stderr.slice(0, 300)}`).join(' | '),
    });
  });

  it('nesting at the limit still loads; a deep value outside `questions` is a warning only', async () => {
    // `method` is at depth 3 of the file (questions/0/method): its innermost array at depth 3 + n - 1
    const atLimit = `{"questions":[{"question":"q","method":${nested(MAX_JSON_DEPTH - 2)},"expected_outcome":"e"}],"main_takeaways":${nested(MAX_JSON_DEPTH + 10)}}`;
    const file = await writeTask(root, 'c', '4', atLimit);
    const r = await loadDatasets([root]);
    assert.deepEqual(r.tasks.map((t) => t.id), ['c/4/0']);
    assert.match(r.tasks[0].method, /x/);
    const warn = r.problems.find((p) => p.pointer.startsWith('/main_takeaways'));
    assert.ok(warn && warn.severity === 'warning' && warn.file === file, JSON.stringify(r.problems));
    const over = `{"questions":[{"question":"q","method":${nested(MAX_JSON_DEPTH - 1)},"expected_outcome":"e"}]}`;
    await writeTask(root, 'c', '4', over);
    const r2 = await loadDatasets([root]);
    assert.deepEqual(r2.tasks, []);
    expectHeld('nesting at the limit', { workIntact: true, noCrash: true, says: r2.problems.some((p) => p.severity === 'error' && /nested deeper/.test(p.message)), clean: true });
  });

  it('huge numbers: a reference line above 2^53, a huge cell, a line 0, a paper id 1e23: each a problem, the rest of the task loads', async () => {
    const task = {
      ...GOOD, source: ['estimate.py'],
      requirements: [
        'Step 1: estimate (estimate.py:99999999999999999999999)',
        'Step 2: cells (/workspace/nb.ipynb:1-2 in cell 99999999999)',
        'Step 3: zero (estimate.py:0-4)',
        `Step 4: at the limit (estimate.py:3-${MAX_REF_LINE})`,
        `Step 5: past the limit (estimate.py:${MAX_REF_LINE + 1}, lines 5-${'9'.repeat(400)})`,
      ],
    };
    const file = await writeTask(root, 'c', '5', JSON.stringify({ questions: [task] }));
    await fsp.writeFile(path.join(root, 'c.jsonl'), `{"id":1e23,"title":"huge"}\n{"id":5,"title":"ok"}\n`);
    const r = await loadDatasets([root]);
    assert.equal(r.tasks.length, 1);
    const refs = r.tasks[0].requirements.map((q) => q.refs);
    assert.deepEqual(refs[0], []);
    assert.deepEqual(refs[1], []);
    assert.deepEqual(refs[2], []);
    assert.deepEqual(refs[3], [{ path: 'estimate.py', startLine: 3, endLine: MAX_REF_LINE }]);
    assert.deepEqual(refs[4], []);
    for (const t of r.tasks) for (const q of t.requirements) for (const ref of q.refs) {
      assert.ok(ref.startLine === null || Number.isSafeInteger(ref.startLine), JSON.stringify(ref));
    }
    const warnings = r.problems.filter((p) => p.file === file && p.severity === 'warning' && /reference/.test(p.message));
    assert.deepEqual(warnings.map((p) => p.pointer), ['/questions/0/requirements/0', '/questions/0/requirements/1', '/questions/0/requirements/2', '/questions/0/requirements/4', '/questions/0/requirements/4']);
    assert.match(warnings[0].message, /line 99999999999999999999999 is beyond the limit of 10000000/);
    assert.match(warnings[4].message, /\(400 digits\)/, 'a 400-digit number is shortened in the message');
    assert.ok(r.problems.some((p) => p.file.endsWith('c.jsonl') && p.pointer === '/0'), 'paper id 1e23 is a problem');
    assert.ok(r.papers.some((p) => p.id === '5'));
    const validate = await cli(['tasks', 'validate', root, '--json']);
    expectHeld('huge reference numbers', {
      workIntact: true, noCrash: !hasStack(validate.stderr) && !validate.timedOut,
      says: /beyond the limit/.test(validate.stdout), clean: true, detail: validate.stderr.slice(0, 300),
    });
  });

  it('huge strings, a FIFO named like a task file and an oversized file: loading ends, each is said', async () => {
    const big = 'word '.repeat(4_000_000); // 20 MB of question
    await writeTask(root, 'c', '6', JSON.stringify({ questions: [{ ...GOOD, question: big }] }));
    const fifoDir = path.join(root, 'c', '7');
    await fsp.mkdir(fifoDir, { recursive: true });
    execFileSync('mkfifo', [path.join(fifoDir, '7_complete_final.json')]);
    const huge = await writeTask(root, 'c', '8', '');
    const fh = await fsp.open(huge, 'w');
    await fh.truncate(MAX_TASK_FILE_BYTES + 1); // sparse: no disk used
    await fh.close();
    const t0 = Date.now();
    const r = await loadDatasets([root]);
    const ms = Date.now() - t0;
    assert.deepEqual(r.tasks.map((t) => t.id), ['c/6/0']);
    assert.equal(r.tasks[0].question.length, big.length);
    const p = r.problems.find((x) => x.file === huge);
    assert.ok(p && /larger than the limit/.test(p.message), JSON.stringify(r.problems));
    const list = await cli(['tasks', 'list', root], { ms: 30_000 });
    expectHeld('huge string, FIFO, oversized file', {
      workIntact: true, noCrash: !list.timedOut && !hasStack(list.stderr) && ms < 20_000,
      says: list.stdout.includes('c/6/0'), clean: true, detail: `${ms} ms; ${list.stderr.slice(0, 200)}`,
    });
  });

  it('judge with a requirement reference above 2^53: the reference is left out and the judge ends with a record (CLI and core)', async function () {
    const fx = await makeJudgeFixture();
    try {
      // The dataset file now has the huge reference (as a curator's file could); the session is the same.
      const file = path.join(fx.dataset, 'iclr2024', '99999', '99999_complete_final.json');
      const json = structuredClone(TASK_JSON);
      json.questions[0].requirements?.push('Final Step: estimate the error (/workspace/src/train.py:99999999999999999999999)');
      await fsp.writeFile(file, JSON.stringify(json));
      const workBefore = await fsp.readFile(path.join(fx.layout.workspace, 'src', 'train.py'));
      const r = await cli(['judge', fx.sessionDir, '--dataset', fx.dataset, '--no-sample', '--heuristic', '--json']);
      const validate = await cli(['tasks', 'validate', fx.dataset, '--json']);
      let parsed = false;
      try { JudgeRecord.parse(JSON.parse(r.stdout)); parsed = true; } catch { /* reported below */ }
      // The core, given a task whose reference is past the end of the file (or not a safe number):
      const task = structuredClone(fx.task);
      task.requirements[0].refs = [{ path: 'src/train.py', startLine: 1e23, endLine: 1e23 }, { path: 'src/train.py', startLine: 5000, endLine: 5001 }];
      const { record } = await judgeSession(fx.sessionDir, { task, heuristic: true });
      JudgeRecord.parse(record);
      assert.deepEqual(record.implementation.verdicts[0].groundTruth, []);
      expectHeld('judge with a reference above 2^53', {
        workIntact: (await fsp.readFile(path.join(fx.layout.workspace, 'src', 'train.py'))).equals(workBefore),
        noCrash: !hasStack(r.stderr) && r.code === 0 && parsed,
        says: /train\.py:99999999999999999999999.*beyond the limit/.test(validate.stdout),
        clean: true, detail: `${r.code} ${r.stderr.slice(0, 400)}`,
      });
    } finally {
      await fsp.rm(fx.root, { recursive: true, force: true });
    }
  });
});
