import * as assert from 'node:assert/strict';
import { promises as fsp } from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { loadDatasets, findTask } from '../../src/core/tasks/loader';
import { bundledDatasetDir } from '../../src/core/paths';

const SHARED = path.resolve(__dirname, '../../../../shared/data/exp-bench');

/**
 * Counts below were established independently of the loader: a separate Python script over the same
 * files (json + regular expressions, written without looking at this loader), and checked by hand on
 * iclr2024/18244 (glob references), iclr2024/18439 (notebook cells), iclr2024/19044 (both design keys,
 * `method` as an object), neurips2024/94391/4 (design_complexity holding only design_ambiguity).
 */
describe('task loader on the shared EXP-Bench data', function () {
  let r: Awaited<ReturnType<typeof loadDatasets>>;
  before(async () => { r = await loadDatasets([SHARED]); });

  it('loads every task with the harness type', () => {
    assert.equal(r.tasks.length, 395);
    const byType = [1, 2, 3].map((t) => r.tasks.filter((x) => x.type === t).length);
    assert.deepEqual(byType, [185, 104, 106]);
    assert.equal(r.unreadableFiles.length, 0);
    assert.equal(new Set(r.tasks.map((t) => t.id)).size, 395, 'ids are unique');
    assert.equal(r.tasks.filter((t) => t.noAnswer).length, 106);
  });

  it('reports exactly the oddities the files have', () => {
    const kinds = (sev: string, prefix: string) => r.problems.filter((p) => p.severity === sev && p.message.startsWith(prefix)).length;
    assert.equal(r.problems.filter((p) => p.severity === 'error').length, 0);
    assert.equal(kinds('info', 'design variables nested one level deeper'), 37);
    assert.equal(kinds('info', '"method" is an object'), 2);
    assert.equal(kinds('warning', 'no constant, independent or dependent variables'), 1);
    assert.equal(r.problems.length, 40);
    const amb = r.problems.find((p) => p.message.startsWith('no constant'))!;
    assert.match(amb.file, /neurips2024\/94391\//);
    assert.equal(amb.pointer, '/questions/4/design_complexity');
  });

  it('parses every requirement reference', () => {
    const reqs = r.tasks.flatMap((t) => t.requirements);
    const refs = reqs.flatMap((q) => q.refs);
    assert.equal(reqs.length, 3452);
    assert.equal(reqs.filter((q) => q.refs.length > 0).length, 3435);
    assert.equal(refs.length, 3837);
    assert.equal(refs.filter((x) => x.startLine === null).length, 5, 'whole-file references');
    assert.equal(refs.filter((x) => x.path.includes('*')).length, 8, 'glob references');
    assert.equal(refs.filter((x) => x.cell !== undefined).length, 2, 'notebook cell references');
    for (const x of refs) {
      assert.ok(!x.path.startsWith('/workspace'), x.path);
      if (x.startLine !== null) assert.ok(x.endLine! >= x.startLine && x.startLine >= 1, JSON.stringify(x));
    }
  });

  it('normalises design variants', () => {
    const nested = findTask(r, 'iclr2024/18013/4')!;
    assert.deepEqual(nested.design.independent, [{ name: 'alignment_criteria', description: 'EM; MinED', values: ['EM', 'MinED'] }]);
    const singular = findTask(r, 'iclr2024/19044/0')!;
    assert.ok(singular.design.dependent.length > 0, 'dependent_variable (singular) is read');
    assert.ok(singular.method.includes('**task_setup**'), 'method object rendered as markdown');
    const none = findTask(r, 'neurips2024/94391/4')!;
    assert.deepEqual(none.design, { constants: [], independent: [], dependent: [] });
  });

  it('joins paper metadata and keeps a missing code_url missing', () => {
    const t = r.tasks.find((x) => x.conference === 'neurips2024' && x.paperId === '93022')!;
    assert.equal(t.paper?.title, 'Generative Modeling of Molecular Dynamics Trajectories');
    assert.equal(t.paper?.codeUrl, undefined);
    assert.equal(t.paper?.suggestedCodeUrl, 'https://github.com/bjing2016/mdgen');
    const i = r.tasks.find((x) => x.id === 'iclr2024/18439/0')!;
    assert.match(i.paper?.codeUrl ?? '', /github\.com\/apple\/ml-calibration/);
  });
});

describe('bundled sample task', () => {
  it('loads with its local repository and references', async () => {
    const r = await loadDatasets([bundledDatasetDir()]);
    assert.deepEqual(r.problems, []);
    const t = findTask(r, 'sample/toycal/0')!;
    assert.equal(t.type, 1);
    assert.deepEqual(t.maskedSource, ['experiments/temperature_scaling.py']);
    assert.equal(t.requirements.length, 6);
    assert.deepEqual(t.requirements[4].refs, [
      { path: 'experiments/temperature_scaling.py', startLine: 27, endLine: 32 },
      { path: 'toycal/metrics.py', startLine: 19, endLine: 33 },
    ]);
    const stat = await fsp.stat(path.join(t.paper!.localRepo!, 'experiments', 'temperature_scaling.py'));
    assert.ok(stat.isFile());
  });
});

describe('bad input', () => {
  let dir: string;
  beforeEach(async () => { dir = await fsp.mkdtemp(path.join(os.tmpdir(), 'expbench-bad-')); });
  afterEach(async () => { await fsp.rm(dir, { recursive: true, force: true }); });

  async function write(rel: string, text: string) {
    await fsp.mkdir(path.dirname(path.join(dir, rel)), { recursive: true });
    await fsp.writeFile(path.join(dir, rel), text);
  }

  it('a missing folder is a problem, not a crash', async () => {
    const r = await loadDatasets([path.join(dir, 'nope')]);
    assert.deepEqual(r.problems.map((p) => [p.severity, p.message]), [['error', 'dataset folder does not exist']]);
  });

  it('an empty folder and a file that is neither .json nor .jsonl are problems naming them', async () => {
    await fsp.mkdir(path.join(dir, 'empty'), { recursive: true });
    await write('notes.md', '# not a dataset');
    const r = await loadDatasets([path.join(dir, 'empty'), path.join(dir, 'notes.md')]);
    assert.equal(r.tasks.length, 0);
    assert.deepEqual(r.problems.map((p) => [path.basename(p.file), p.severity, p.message]), [
      ['empty', 'warning', 'no task files (*.json) or paper lists (*.jsonl) in this folder'],
      ['notes.md', 'error', 'not a dataset folder, a task file (.json) or a paper list (.jsonl)'],
    ]);
  });

  it('a file that is not JSON is unreadable, the others still load', async () => {
    await write('tasks/c/1/1_complete_final.json', '{"questions": [');
    await write('tasks/c/2/2_complete_final.json', JSON.stringify({ questions: [{ question: 'q', method: 'm', expected_outcome: 'e' }] }));
    const r = await loadDatasets([dir]);
    assert.equal(r.tasks.length, 1);
    assert.equal(r.tasks[0].id, 'c/2/0');
    assert.equal(r.unreadableFiles.length, 1);
    assert.match(r.problems.find((p) => p.severity === 'error')!.message, /^not JSON/);
  });

  it('wrong types and empty questions name the file and pointer', async () => {
    await write('tasks/c/1/1_complete_final.json', JSON.stringify({ questions: [{ question: 42, method: 'm', requirements: 'one step', source: [1, '/workspace/a.py'] }] }));
    await write('tasks/c/2/2_complete_final.json', JSON.stringify({ questions: [] }));
    await write('tasks/c/3/3_complete_final.json', JSON.stringify({ questions: {} }));
    const r = await loadDatasets([dir]);
    const at = (f: string) => r.problems.filter((p) => p.file.endsWith(f)).map((p) => `${p.pointer} ${p.message}`);
    assert.ok(at('1_complete_final.json').includes('/questions/0/question "question" must be a string, found number'));
    assert.ok(at('1_complete_final.json').includes('/questions/0/source/0 item must be a string, found number: ignored'));
    assert.ok(at('1_complete_final.json').some((m) => m.startsWith('/questions/0/requirements "requirements" should be a list')));
    assert.deepEqual(at('2_complete_final.json'), ['/questions "questions" is empty: no tasks in this file']);
    assert.equal(at('3_complete_final.json').length, 1);
    assert.match(at('3_complete_final.json')[0], /^\/questions /);
    assert.equal(r.tasks.length, 1);
    assert.deepEqual(r.tasks[0].source, ['a.py']);
  });

  it('two files for the same paper are reported, not merged', async () => {
    const q = JSON.stringify({ questions: [{ question: 'q', method: 'm', expected_outcome: 'e' }] });
    await write('tasks/c/7/7_complete_final.json', q);
    await write('tasks/c/7/7_other.json', q);
    const r = await loadDatasets([dir]);
    assert.equal(r.tasks.length, 1);
    assert.match(r.problems.find((p) => p.severity === 'error')!.message, /second task file for paper c\/7/);
  });

  it('hypothesis stands in for a missing question', async () => {
    await write('tasks/c/8/8_x.json', JSON.stringify({ questions: [{ hypothesis: 'H', method: 'm', expected_outcome: 'e' }] }));
    const r = await loadDatasets([dir]);
    assert.equal(r.tasks[0].question, 'H');
  });
});
