import * as assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { promises as fsp } from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { lintTasks } from '../../src/core/curation/lint';
import { pointerSpan } from '../../src/core/curation/pointer';
import { distinctiveClaims } from '../../src/core/curation/repoRules';
import type { LintFinding, LintReport } from '../../src/core/curation/types';
import { git } from '../../src/core/git';

const ROOT = path.resolve(__dirname, '../../..');
const CLI = path.join(ROOT, 'out', 'src', 'cli', 'main.js');
const SHARED = path.resolve(ROOT, '../shared/data/exp-bench');

function cli(...args: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    execFile(process.execPath, [CLI, ...args], { cwd: ROOT, maxBuffer: 64 * 1024 * 1024 }, (err, stdout, stderr) => {
      resolve({ code: err ? (typeof err.code === 'number' ? err.code : 1) : 0, stdout, stderr });
    });
  });
}

/** The value a JSON pointer names in `doc`, or `undefined` (RFC 6901, written here, not the code under test's). */
function at(doc: unknown, pointer: string): unknown {
  if (pointer === '') return doc;
  let v: any = doc;
  for (const raw of pointer.slice(1).split('/')) {
    const k = raw.replace(/~1/g, '/').replace(/~0/g, '~');
    if (v === null || typeof v !== 'object' || !(k in v)) return undefined;
    v = v[k];
  }
  return v;
}

const byRule = (r: LintReport, rule: string) => r.findings.filter((f) => f.rule === rule);

describe('curate lint: file rules', function () {
  this.timeout(120_000);
  const cleanup: string[] = [];
  after(async () => { for (const d of cleanup) await fsp.rm(d, { recursive: true, force: true }); });

  it('over all shared tasks: exit 0, counts per rule equal to counts made here from the raw files, every finding placed', async () => {
    const r = await cli('curate', 'lint', SHARED, '--no-sample', '--json');
    assert.equal(r.code, 0, r.stderr);
    const report = JSON.parse(r.stdout) as LintReport;
    // Independent counts, straight from the raw JSON (no code of src/ involved).
    const files = (await fsp.readdir(path.join(SHARED, 'tasks'), { recursive: true })).filter((f) => f.endsWith('.json')).map((f) => path.join(SHARED, 'tasks', f));
    let type3 = 0;
    let reversed = 0;
    let duplicates = 0;
    const questions = new Set<string>();
    for (const f of files) {
      for (const q of JSON.parse(await fsp.readFile(f, 'utf8')).questions as Array<Record<string, any>>) {
        if (!(q.masked_source?.length > 0) && !(q.source?.length > 0)) type3++;
        for (const req of q.requirements ?? []) for (const m of String(req).matchAll(/:(\d+)\s*-\s*(\d+)/g)) if (Number(m[1]) > Number(m[2])) reversed++;
        const key = String(q.question ?? '').replace(/\s+/g, ' ').trim().toLowerCase();
        if (questions.has(key)) duplicates++;
        questions.add(key);
      }
    }
    assert.equal(report.files.length, files.length);
    assert.equal(report.counts['type-3-task'], type3);
    assert.equal(report.counts['malformed-range'], reversed);
    assert.equal(report.counts['duplicate-task'], duplicates);
    // The figures as counted when this test was written (python over the same files, docs/curation.md).
    assert.deepEqual([type3, reversed, duplicates, report.counts['ref-not-a-file'], report.counts['requirement-no-ref']], [106, 1, 2, 14, 4]);
    assert.equal(report.counts['intermediate-file'], 0);
    assert.equal(Object.values(report.counts).reduce((a, b) => a + b, 0), report.findings.length);
    const docs = new Map<string, unknown>();
    for (const f of report.findings) {
      assert.ok(files.includes(f.file), `finding on a file that is not a task file: ${f.file}`);
      assert.ok(f.rule && f.severity && f.message, JSON.stringify(f));
      if (!docs.has(f.file)) docs.set(f.file, JSON.parse(await fsp.readFile(f.file, 'utf8')));
      // a missing field's pointer names the place it should be: its parent exists
      const place = f.rule === 'missing-field' ? f.pointer.replace(/\/[^/]*$/, '') : f.pointer;
      assert.notEqual(at(docs.get(f.file), place), undefined, `pointer ${f.pointer} does not resolve in ${f.file}`);
    }
    const rev = byRule(report, 'malformed-range')[0];
    assert.match(rev.message, /115-114 is reversed/);
    assert.equal(rev.pointer, '/questions/1/requirements/11');
    const text = await cli('curate', 'lint', SHARED, '--no-sample');
    assert.equal(text.code, 0);
    assert.match(text.stdout, /findings per rule:\n(?:.*\n)*\s+type-3-task\s+106\n/);
  });

  it('task files of the family not seen: a type-3 task, a field used as a file, a reversed range, duplicates, intermediates beside the final file', async () => {
    const dir = await fsp.mkdtemp(path.join(os.tmpdir(), 'expbench-curate-'));
    cleanup.push(dir);
    const paper = path.join(dir, 'tasks', 'conf', '1001');
    await fsp.mkdir(paper, { recursive: true });
    const base = { method: 'do it', expected_outcome: 'better', design_complexity: { independent_variables: { lr: [0.1] } }, agent_instructions: 'go', usage_instructions: 'run' };
    const questions = [
      { ...base, question: 'Does a type-3 task show?', no_answer: 'No answer found after 2 iterations.' },
      { ...base, question: 'Field as file?', source: ['/workspace/a.py'], requirements: ['Step 1: run it (/workspace/usage_instructions:example)'] },
      { ...base, question: 'Reversed?', source: ['/workspace/a.py', '/workspace/b.py'], requirements: ['Step 1: train (a.py:10-5)', 'Step 2: zero (/workspace/b.py:0-3)', 'Step 3: no file (lines 4-9)'] },
      { ...base, question: '  does a TYPE-3 task   show? ', no_answer: 'again' },
      { ...base, question: 'No outcome?', expected_outcome: '', source: ['/workspace/a.py'], requirements: ['Step 1 (a.py:1)'] },
    ];
    const final = path.join(paper, '1001_complete_final.json');
    await fsp.writeFile(final, JSON.stringify({ questions }, null, 2));
    await fsp.writeFile(path.join(paper, '1001.json'), JSON.stringify({ questions: [] }));
    await fsp.writeFile(path.join(paper, 'temp_1001.json'), '{ not JSON: an intermediate is not read');
    const r = await cli('curate', 'lint', dir, '--no-sample', '--json');
    assert.equal(r.code, 0, r.stderr);
    const report = JSON.parse(r.stdout) as LintReport;
    assert.deepEqual(report.files, [final]);
    assert.equal(report.tasks, 5);
    const brief = (rule: string) => byRule(report, rule).map((f) => [path.basename(f.file), f.pointer, f.severity]);
    assert.deepEqual(brief('intermediate-file'), [['1001.json', '', 'warning'], ['temp_1001.json', '', 'warning']]);
    assert.deepEqual(brief('type-3-task'), [['1001_complete_final.json', '/questions/0', 'info'], ['1001_complete_final.json', '/questions/3', 'info']]);
    assert.deepEqual(brief('ref-not-a-file'), [['1001_complete_final.json', '/questions/1/requirements/0', 'warning']]);
    assert.match(byRule(report, 'ref-not-a-file')[0].message, /"\/workspace\/usage_instructions:example": "usage_instructions" is a task field/);
    assert.deepEqual(byRule(report, 'malformed-range').map((f) => [f.pointer, f.message]), [
      ['/questions/2/requirements/0', 'reference "a.py:10-5": range 10-5 is reversed (the loader reads it as lines 5-10)'],
      ['/questions/2/requirements/1', 'reference "/workspace/b.py:0-3": line 0 is not ≥ 1 (lines and cells count from 1)'],
      ['/questions/2/requirements/2', 'reference "lines 4-9": names no file, and the task does not have exactly one source file to take it from'],
    ]);
    assert.deepEqual(brief('duplicate-task'), [['1001_complete_final.json', '/questions/3/question', 'warning']]);
    assert.match(byRule(report, 'duplicate-task')[0].message, /same question as conf\/1001\/0 .*differ in 2 fields: no_answer, question/);
    assert.deepEqual(brief('missing-field'), [['1001_complete_final.json', '/questions/4/expected_outcome', 'error']]);
    assert.equal(report.counts['requirement-no-ref'], 0);
    // --check fails on the error; a task file that is not JSON is exit 2, and the rest is still linted
    assert.equal((await cli('curate', 'lint', dir, '--no-sample', '--check')).code, 1);
    const broken = path.join(dir, 'tasks', 'conf', '1002');
    await fsp.mkdir(broken);
    await fsp.writeFile(path.join(broken, '1002_complete_final.json'), '{"questions": [');
    const r2 = await cli('curate', 'lint', dir, '--no-sample', '--json');
    assert.equal(r2.code, 2);
    const report2 = JSON.parse(r2.stdout) as LintReport;
    assert.equal(report2.tasks, 5);
    assert.deepEqual(report2.unreadable.map((u) => path.basename(u.input)), ['1002_complete_final.json']);
    assert.match(r2.stderr, /1002_complete_final\.json: not JSON/);
    assert.equal((await cli('curate', 'lint', path.join(dir, 'nowhere'), '--no-sample')).code, 2);
  });

  it('a final file with a tag (`<id>_complete_final_sonnet37.json`, seen in EXP-Bench\'s pipeline outputs) is the final file; the stage files beside it are intermediates', async () => {
    const dir = await fsp.mkdtemp(path.join(os.tmpdir(), 'expbench-curate-'));
    cleanup.push(dir);
    const base = { method: 'do it', expected_outcome: 'better', design_complexity: { independent_variables: { lr: [0.1] } }, no_answer: 'none' };
    const tagged = path.join(dir, 'tasks', 'conf', '2001');
    const both = path.join(dir, 'tasks', 'conf', '2002');
    await fsp.mkdir(tagged, { recursive: true });
    await fsp.mkdir(both, { recursive: true });
    const write = (p: string, question: string) => fsp.writeFile(p, JSON.stringify({ questions: [{ ...base, question }] }));
    await write(path.join(tagged, '2001_complete_final_sonnet37.json'), 'Tagged final?');
    await write(path.join(tagged, '2001_complete_type_1.json'), 'Stage one?');
    await fsp.writeFile(path.join(tagged, '2001_generated_programs_type_1_task_0.json'), JSON.stringify({ no_answer: 'none' }));
    await write(path.join(both, '2002_complete_final.json'), 'Plain final?');
    await write(path.join(both, '2002_complete_final_sonnet37.json'), 'Plain final?');
    const r = await cli('curate', 'lint', dir, '--no-sample', '--json');
    assert.equal(r.code, 0, r.stderr);
    const report = JSON.parse(r.stdout) as LintReport;
    assert.deepEqual(report.files.map((f) => path.basename(f)), ['2001_complete_final_sonnet37.json', '2002_complete_final.json']);
    assert.equal(report.tasks, 2);
    assert.deepEqual(byRule(report, 'intermediate-file').map((f) => [path.basename(f.file), f.pointer]), [
      ['2001_complete_type_1.json', ''], ['2001_generated_programs_type_1_task_0.json', ''], ['2002_complete_final_sonnet37.json', ''],
    ]);
    assert.match(byRule(report, 'intermediate-file')[2].message, /another final file beside 2002_complete_final\.json/);
    assert.equal(report.counts['duplicate-task'], 0, 'the variant is not linted, so its question is no duplicate');
  });

  it('every error `tasks validate` reports for a file it linted is a finding or an unreadable input (never 0 and 0)', async () => {
    const dir = await fsp.mkdtemp(path.join(os.tmpdir(), 'expbench-curate-rejected-'));
    cleanup.push(dir);
    let deep: unknown = { v: 1 };
    for (let i = 0; i < 70; i++) deep = { k: deep };
    const ok = { question: 'q?', method: 'm', expected_outcome: 'e', design_complexity: { independent_variables: { lr: [0.1] } } };
    const files: Record<string, unknown> = {
      'conf/2001/2001_complete_final.json': [ok], // an array at the top, not {questions}
      'conf/2002/2002_complete_final.json': { questions: [deep] }, // the only entry nested past the limit
      'conf/2003/2003_complete_final.json': { questions: [ok, deep] }, // one entry loaded, one not
      'conf/2004/2004_complete_final.json': { questions: [1, 'x'] }, // entries that are no objects
      'conf/2005/2005_complete_final.json': { questions: { a: 1 } },
      'conf/2006/2006_complete_final.json': { questions: [] }, // holds no task
      'conf/2007/2007_complete_final.json': 'text', // JSON, no object
      'conf/2008/2008_complete_final.json': { questions: [ok] },
      'conf/2008_complete_final.json': { questions: [ok] }, // a second file of paper conf/2008 (by the loader's naming)
    };
    for (const [rel, body] of Object.entries(files)) {
      await fsp.mkdir(path.dirname(path.join(dir, rel)), { recursive: true });
      await fsp.writeFile(path.join(dir, rel), JSON.stringify(body));
    }
    const validated = await cli('tasks', 'validate', dir, '--no-sample', '--json');
    const problems = (JSON.parse(validated.stdout) as { problems: Array<{ file: string; pointer: string; severity: string; message: string }> }).problems;
    const rejected = new Set(problems.filter((p) => p.severity === 'error').map((p) => p.file));
    assert.equal(rejected.size, 7, JSON.stringify(problems, null, 1)); // every file but the empty one (a warning)
    const r = await cli('curate', 'lint', dir, '--no-sample', '--json');
    const report = JSON.parse(r.stdout) as LintReport;
    for (const p of problems) {
      const said = report.unreadable.some((u) => u.input === p.file) ||
        report.findings.some((f) => f.file === p.file && f.severity === p.severity && (f.pointer === p.pointer || p.pointer.startsWith(f.pointer + '/')) && f.message.includes(p.message));
      if (p.severity === 'error') assert.ok(said, `validate's ${p.severity} "${p.message}" at ${p.file}#${p.pointer} is neither a finding nor unreadable: ${JSON.stringify(report.findings.filter((f) => f.file === p.file))}`);
    }
    // a file holding no task at all is said (a warning), not a silent 0
    assert.ok(report.findings.some((f) => f.file.endsWith('2006_complete_final.json') && f.rule === 'not-loaded' && f.severity === 'warning'));
    assert.equal(r.code, 2, 'a file that holds no task file at all is unreadable: exit 2');
    // 2003's loaded entry is still linted
    assert.ok(report.findings.some((f) => f.task === 'conf/2003/0'), JSON.stringify(report.findings.map((f) => [f.task, f.rule])));
  });

  it('distinctive numbers of an expected outcome: 3 significant digits without leading and trailing zeros, no bare integers', () => {
    const claims = distinctiveClaims('Accuracy 93.12% (vs 87.0%), loss 0.712, gain 12.5x, 100% recall, p 0.05, horizon 720, ratio 1.000, 0.0931.');
    assert.deepEqual(claims.map((c) => c.text), ['93.12%', '0.712', '12.5x', '0.0931']);
  });

  it('pointerSpan: a member is its key through its value, an item is the item, a missing member falls back to its parent', () => {
    const text = JSON.stringify({ questions: [{ question: 'q', requirements: ['a (x.py:1)', 'b'] }] }, null, 2);
    const s = pointerSpan(text, '/questions/0/requirements/1');
    assert.equal(text.slice(s.offset, s.offset + s.length), '"b"');
    assert.equal(s.exact, true);
    const q = pointerSpan(text, '/questions/0/question');
    assert.equal(text.slice(q.offset, q.offset + q.length), '"question": "q"');
    const missing = pointerSpan(text, '/questions/0/method');
    assert.equal(missing.exact, false);
    assert.equal(text.slice(missing.offset, missing.offset + 1), '{');
    assert.deepEqual(pointerSpan('', '/questions/0'), { offset: 0, length: 0, exact: false });
  });
});

describe('curate lint: repository rules (git repositories built here)', function () {
  this.timeout(120_000);
  let dir: string;
  let cache: string;
  before(async () => {
    dir = await fsp.mkdtemp(path.join(os.tmpdir(), 'expbench-curate-repo-'));
    cache = path.join(dir, 'cache');
  });
  after(async () => { await fsp.rm(dir, { recursive: true, force: true }); });

  const lines = (n: number, tag: string) => Array.from({ length: n }, (_, i) => `value_${tag}_${i} = compute_something_distinct("${tag}", ${i})`).join('\n') + '\n';
  async function repo(name: string, commits: Array<Record<string, string>>): Promise<{ path: string; shas: string[] }> {
    const p = path.join(dir, name);
    await fsp.mkdir(p);
    await git(['init', '-q', '-b', 'main'], { repo: 'none', cwd: p });
    const shas: string[] = [];
    for (const files of commits) {
      for (const [f, body] of Object.entries(files)) {
        await fsp.mkdir(path.dirname(path.join(p, f)), { recursive: true });
        await fsp.writeFile(path.join(p, f), body);
      }
      await git(['add', '-A'], { repo: { checkout: p } });
      await git(['-c', 'user.name=t', '-c', 'user.email=t@localhost', 'commit', '-q', '-m', 'c'], { repo: { checkout: p } });
      shas.push((await git(['rev-parse', 'HEAD'], { repo: { checkout: p } })).text.trim());
    }
    return { path: p, shas };
  }
  async function dataset(name: string, questions: unknown[]): Promise<string> {
    const d = path.join(dir, name, 'tasks', 'conf', '7');
    await fsp.mkdir(d, { recursive: true });
    await fsp.writeFile(path.join(d, '7_complete_final.json'), JSON.stringify({ questions }, null, 2));
    return path.join(dir, name);
  }
  const task = (extra: Record<string, unknown>) => ({
    question: 'Does training help?', method: 'train', agent_instructions: 'go', usage_instructions: 'python train.py',
    design_complexity: { independent_variables: { lr: [0.1] } }, masked_source: ['/workspace/train.py'], source: ['/workspace/train.py'], ...extra,
  });

  it('finds a planted leak, a reference past the end of its file, a missing masked path; a clean task gives none of those', async () => {
    const train = lines(20, 'train');
    const leaky = await repo('leaky', [{
      'train.py': train,
      'utils.py': lines(10, 'utils'),
      'README.md': 'We reach 93.12% accuracy.\n', // root README: masked, so not a leak
      'results/scores.json': '{\n  "seed": 3,\n  "acc": 0.9312\n}\n',
      'docs/README.md': 'How to run.\n',
      'package.json': '{ "dependencies": { "lib": "^93.12.0" } }\n', // a version, not a value
      'copy_of_train.py': ['# a copy', ...train.split('\n').slice(2, 7)].join('\n') + '\n',
    }]);
    const clean = await repo('clean', [{ 'train.py': train, 'utils.py': lines(10, 'utils'), 'README.md': 'We reach 93.12% accuracy.\n' }]);
    const ds = await dataset('leaky-ds', [
      task({ expected_outcome: 'Accuracy reaches 93.12% with 3 seeds.', requirements: ['Step 1: train (/workspace/train.py:1-15)', 'Step 2: helpers (/workspace/utils.py:5-40)', 'Step 3: gone (/workspace/nothere.py:1)'] }),
      task({ question: 'Another?', expected_outcome: 'ok', masked_source: ['/workspace/missing.py'], requirements: ['Step 1 (/workspace/train.py:1-2)'] }),
    ]);
    const r = await cli('curate', 'lint', ds, '--source', leaky.path, '--cache', cache, '--json');
    assert.equal(r.code, 0, r.stderr);
    const report = JSON.parse(r.stdout) as LintReport;
    assert.deepEqual(report.repositories, [{ source: leaky.path, commit: leaky.shas[0] }]);
    const one = (rule: string): LintFinding => {
      const fs = byRule(report, rule);
      assert.equal(fs.length, 1, `${rule}: ${JSON.stringify(report.findings, null, 1)}`);
      return fs[0];
    };
    const leak = one('leak-expected-number');
    assert.equal(leak.pointer, '/questions/0/expected_outcome');
    assert.equal(leak.severity, 'warning');
    assert.match(leak.message, /^expected_outcome's "93\.12%" \(.*\) matched "0\.9312" at results\/scores\.json:3 in kept files/);
    assert.doesNotMatch(leak.message, /README|package\.json/);
    const past = one('ref-range-past-end');
    assert.equal(past.pointer, '/questions/0/requirements/1');
    assert.match(past.message, /utils\.py:5-40: utils\.py has 10 lines at commit [0-9a-f]{12}; the range ends at line 40/);
    assert.equal(past.severity, 'error');
    assert.equal(one('ref-file-missing').pointer, '/questions/0/requirements/2');
    assert.deepEqual([one('masked-path-missing').pointer, one('masked-path-missing').task], ['/questions/1/masked_source/0', 'conf/7/1']);
    assert.match(byRule(report, 'leak-result-file')[0].message, /results\/scores\.json/);
    assert.match(byRule(report, 'leak-nested-readme')[0].message, /docs\/README\.md/);
    const copy = byRule(report, 'leak-masked-lines').find((f) => f.task === 'conf/7/0');
    assert.ok(copy, JSON.stringify(report.findings, null, 1));
    assert.match(copy.message, /^masked train\.py: 5 of its 20 distinctive lines are in kept copy_of_train\.py \(first at line 2: /);
    assert.equal(copy.pointer, '/questions/0/masked_source/0');
    // task 1 masks a path that is not there, so its train.py is kept
    assert.deepEqual(byRule(report, 'ref-into-kept-file').map((f) => f.task + f.pointer), ['conf/7/0/questions/0/requirements/1', 'conf/7/1/questions/1/requirements/0']);

    const cleanDs = await dataset('clean-ds', [task({ expected_outcome: 'Accuracy reaches 93.12% with 3 seeds.', requirements: ['Step 1: train (/workspace/train.py:1-15)', 'Step 2: the end (train.py:20)'] })]);
    const c = await lintTasks({ inputs: [cleanDs], source: clean.path, cacheDir: cache });
    assert.deepEqual(c.unreadable, []);
    assert.deepEqual(c.findings, [], JSON.stringify(c.findings, null, 1));
    assert.equal(c.repositories[0]?.commit, clean.shas[0]);
  });

  it('--commit pins the repository: a range within the file at the pin and past its end at HEAD', async () => {
    const r = await repo('pinned', [{ 'train.py': lines(50, 'a') }, { 'train.py': lines(10, 'b') }]);
    const ds = await dataset('pinned-ds', [task({ expected_outcome: 'ok', requirements: ['Step 1 (/workspace/train.py:30-45)'] })]);
    const head = await lintTasks({ inputs: [ds], source: r.path, cacheDir: cache });
    assert.deepEqual(head.findings.map((f) => f.rule), ['ref-range-past-end']);
    assert.match(head.findings[0].message, new RegExp(`has 10 lines at commit ${r.shas[1].slice(0, 12)}`));
    const pinned = await lintTasks({ inputs: [ds], source: r.path, commit: r.shas[0], cacheDir: cache });
    assert.deepEqual(pinned.findings, []);
    assert.equal(pinned.repositories[0]?.commit, r.shas[0]);
  });

  it('a curation file pins the repository when no --source is given; a bad one is a curation-file finding with its pointer', async () => {
    const r = await repo('curated', [{ 'train.py': lines(50, 'a') }, { 'train.py': lines(10, 'b') }]);
    const ds = await dataset('curated-ds', [task({ expected_outcome: 'ok', requirements: ['Step 1 (/workspace/train.py:30-45)'] })]);
    const curation = path.join(ds, 'tasks', 'conf', '7', 'curation.jsonc');
    const pin = (commit: string) => `{
      // the repository and commit the tasks hold at
      "version": 1,
      "paper": "conf/7",
      "repository": { "url": "../../../../curated", "commit": "${commit}" },
      "environment": { "baseImage": "expbench/sandbox:1", "gpus": 0, "limits": { "timeSeconds": 600, "memoryMiB": 2048 }, },
    }`;
    await fsp.writeFile(curation, pin(r.shas[0]));
    const atPin = await lintTasks({ inputs: [ds], cacheDir: cache });
    assert.deepEqual(atPin.unreadable, []);
    assert.deepEqual(atPin.repositories, [{ source: r.path, commit: r.shas[0], paper: 'conf/7' }]);
    assert.deepEqual(atPin.findings, []);
    await fsp.writeFile(curation, pin(r.shas[1]));
    const atHead = await lintTasks({ inputs: [ds], cacheDir: cache });
    assert.deepEqual(atHead.findings.map((f) => f.rule), ['ref-range-past-end']);
    // --source wins over the pin
    assert.deepEqual((await lintTasks({ inputs: [ds], source: r.path, commit: r.shas[0], cacheDir: cache })).findings, []);

    await fsp.writeFile(curation, '{ "version": 2, "colour": "red", "repository": { "url": "x", "commit": "abc123" }, "environment": { "mounts": [{ "host": "/data", "container": "/workspace/data" }] } }');
    const bad = await cli('curate', 'lint', ds, '--no-sample', '--cache', cache, '--json');
    assert.equal(bad.code, 0, bad.stderr);
    const report = JSON.parse(bad.stdout) as LintReport;
    const found = byRule(report, 'curation-file').map((f) => [path.basename(f.file), f.pointer, f.severity]);
    assert.deepEqual(found.sort(), [
      ['curation.jsonc', '', 'error'], ['curation.jsonc', '/environment/mounts/0/container', 'error'],
      ['curation.jsonc', '/repository/commit', 'error'], ['curation.jsonc', '/version', 'error'],
    ]);
    assert.ok(byRule(report, 'curation-file').some((f) => /colour/.test(f.message)), JSON.stringify(report.findings));
    assert.deepEqual(report.repositories, []);
    assert.equal((await cli('curate', 'lint', ds, '--no-sample', '--cache', cache, '--check')).code, 1);
    await fsp.writeFile(curation, '{ "version": 1, ');
    const broken = await lintTasks({ inputs: [ds], cacheDir: cache });
    assert.deepEqual(byRule(broken, 'curation-file').map((f) => [f.pointer, /^not JSON \(with comments\): \w+ at line 1$/.test(f.message)]), [['', true]]);
  });

  it('short expected numbers (issue 33): "0.16 at 100 samples … 0.004 at 100000 samples" in a kept notes file is a leak; one alone, code literals, another unit or a number the brief states are not', async () => {
    const outcome = 'The mean absolute error should fall from about 0.16 at 100 samples to about 0.004 at 100000 samples.';
    const r0 = await repo('short', [{
      'train.py': lines(20, 'train'),
      'notes/sweep.md': '# Sweep notes\n\nMAE: 0.16 at 100 samples … 0.004 at 100000 samples\n',
    }]);
    const ds = await dataset('short-ds', [task({ expected_outcome: outcome, requirements: ['Step 1 (/workspace/train.py:1)'] })]);
    const r = await cli('curate', 'lint', ds, '--source', r0.path, '--cache', cache, '--json');
    assert.equal(r.code, 0, r.stderr);
    const leaks = byRule(JSON.parse(r.stdout) as LintReport, 'leak-expected-number');
    assert.deepEqual(leaks.map((f) => f.message.match(/^expected_outcome's "([^"]+)"/)?.[1]), ['0.16', '0.004']);
    assert.match(leaks[0].message, /matched "0\.16" at notes\/sweep\.md:3 with the outcome's "0\.004" within 2 lines in kept files/);

    // none of these is a leak: one short number alone, literals of code, another unit, a data line, an SVG
    const r1 = await repo('short-clean', [{
      'train.py': lines(20, 'train') + 'dropout = 0.16\nweight_decay = 0.004\n',
      'notes.md': 'We tried 0.16 once.\n\n\n\nMemory: 16GB, 4GB.\n',
      'data/values.txt': '0.16 0.004 0.1 0.2 0.3 0.4 0.5 0.6 0.7\n',
      'fig.svg': '<svg><text>0.16 at 100 samples, 0.004 at 100000 samples</text></svg>\n',
    }]);
    const clean = await cli('curate', 'lint', ds, '--source', r1.path, '--cache', cache, '--json');
    assert.deepEqual(byRule(JSON.parse(clean.stdout) as LintReport, 'leak-expected-number'), []);

    // a comment of code with a word counts; one short number with two of its context words counts
    const r2 = await repo('short-comment', [{
      'train.py': lines(20, 'train'),
      'utils.py': lines(3, 'utils') + '# expected: 0.16 here, 0.004 with all the data\n',
      'log.txt': 'absolute error ~0.16 (100 samples)\n',
    }]);
    const two = byRule(JSON.parse((await cli('curate', 'lint', ds, '--source', r2.path, '--cache', cache, '--json')).stdout) as LintReport, 'leak-expected-number');
    assert.deepEqual(two.map((f) => f.message.replace(/ \(.*?\) matched/, ' matched').replace(/ in kept files.*/, '')), [
      'expected_outcome\'s "0.16" matched "0.16" at log.txt:1, "0.16" at utils.py:4 with the outcome\'s "0.004" and its context words "error", "sample" within 2 lines',
      'expected_outcome\'s "0.004" matched "0.004" at utils.py:4 with the outcome\'s "0.16" within 2 lines',
    ]);

    // the brief states the numbers: no secret, no leak
    const given = await dataset('short-given', [task({ expected_outcome: outcome, method: 'Expect about 0.16 at 100 samples and 0.004 at 100000.', requirements: ['Step 1 (/workspace/train.py:1)'] })]);
    const known = await cli('curate', 'lint', given, '--source', r0.path, '--cache', cache, '--json');
    assert.deepEqual(byRule(JSON.parse(known.stdout) as LintReport, 'leak-expected-number'), []);
  });

  it('a partial copy (a blob absent from the object store, as in a mirror without its largest files) is linted; the absent file is counted, not read', async () => {
    const partial = await repo('partial', [{ 'train.py': lines(20, 'train'), 'notes.txt': 'we reach 93.12% accuracy\n', 'weights.bin': 'big\n' }]);
    const blob = (await git(['rev-parse', 'HEAD:weights.bin'], { repo: { checkout: partial.path } })).text.trim();
    await fsp.rm(path.join(partial.path, '.git', 'objects', blob.slice(0, 2), blob.slice(2)));
    const ds = await dataset('partial-ds', [task({ expected_outcome: 'Accuracy reaches 93.12%.', requirements: ['Step 1: weights (/workspace/weights.bin)'] })]);
    const r = await cli('curate', 'lint', ds, '--source', partial.path, '--cache', cache, '--json');
    assert.equal(r.code, 0, r.stderr);
    const report = JSON.parse(r.stdout) as LintReport;
    assert.deepEqual(report.repositories, [{ source: partial.path, commit: partial.shas[0], absent: 1 }]);
    assert.match(byRule(report, 'leak-expected-number')[0]?.message ?? '', /"93\.12%" at notes\.txt:1/);
    assert.equal(byRule(report, 'ref-file-missing').length, 0, 'the absent file is in the tree');
    const text = await cli('curate', 'lint', ds, '--source', partial.path, '--cache', cache);
    assert.match(text.stdout, /1 file absent from its object store: not scanned/);
  });

  it('a source that cannot be had is exit 2 naming it, and the file rules still ran', async () => {
    const ds = await dataset('nosource-ds', [task({ expected_outcome: '', requirements: ['Step 1 (/workspace/train.py:1)'] })]);
    const missing = path.join(dir, 'no-such-repo');
    const r = await cli('curate', 'lint', ds, '--source', missing, '--cache', cache, '--json');
    assert.equal(r.code, 2);
    const report = JSON.parse(r.stdout) as LintReport;
    assert.deepEqual(report.repositories, []);
    assert.deepEqual(report.unreadable.map((u) => u.input), [missing]);
    assert.deepEqual(report.findings.map((f) => f.rule), ['missing-field']);
    assert.match(r.stderr, new RegExp(`${missing}: repository rules not run: .*not a folder`));
  });
});
