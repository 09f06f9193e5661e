import * as assert from 'node:assert/strict';
import { promises as fsp } from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { judgeEndpointHint } from '../../src/cli/commands/judge';
import { endpointEnvNames } from '../../src/core/llm/endpoint';
import { cli, cliIntoClosedPipe, ROOT } from './cli.helpers';

/**
 * The command line as a Unix tool (issue 15), run as the README runs it: `node dist/cli.js …`
 * (the bundle; scripts/test.sh builds it before the unit tier).
 */
const DATASET = path.resolve(ROOT, '..', 'shared', 'data', 'exp-bench');
const SAMPLE_TASK = path.join(ROOT, 'samples', 'exp-bench', 'tasks', 'sample', 'toycal', 'toycal_complete_final.json');

describe('expbench as a Unix tool (dist/cli.js)', function () {
  this.timeout(120_000);
  let tmp: string;
  before(async () => { tmp = await fsp.mkdtemp(path.join(os.tmpdir(), 'expbench-cli-unix-')); });
  after(async () => { await fsp.rm(tmp, { recursive: true, force: true }); });

  /** A dataset folder holding one copy of the sample's task file as paper `sample/toycal`. */
  async function datasetWith(name: string, place: (file: string) => Promise<void>): Promise<string> {
    const dir = path.join(tmp, name);
    await fsp.mkdir(path.join(dir, 'tasks', 'sample', 'toycal'), { recursive: true });
    await place(path.join(dir, 'tasks', 'sample', 'toycal', 'toycal_complete_final.json'));
    return dir;
  }

  it('a closed stdout pipe (`… --json | head`) ends the command quietly: exit 0, no EPIPE stack (JSON and text output)', async () => {
    for (const args of [['tasks', 'validate', DATASET, '--json'], ['tasks', 'list', DATASET]]) {
      const r = await cliIntoClosedPipe(args);
      assert.ok(r.bytesRead > 0, 'the reader got the start of the output');
      assert.equal(r.signal, null, args.join(' '));
      assert.equal(r.code, 0, `${args.join(' ')}: ${r.stderr}`);
      assert.doesNotMatch(r.stderr, /EPIPE|Unhandled|at .*\(node:/, args.join(' '));
    }
  });

  it('tasks validate on a folder that does not exist: exit 2, the folder named', async () => {
    const missing = path.join(tmp, 'no-such-dataset');
    for (const json of [[], ['--json']]) {
      const r = await cli(['tasks', 'validate', missing, ...json]);
      assert.equal(r.code, 2, r.stderr);
      assert.ok(r.stderr.includes(`expbench: ${missing}: dataset folder does not exist`), r.stderr);
    }
  });

  it('tasks validate DIR lists only DIR\'s tasks; the bundled sample only when no folder is given', async () => {
    const empty = path.join(tmp, 'empty-dataset');
    await fsp.mkdir(empty);
    const r = await cli(['tasks', 'validate', empty, '--json']);
    assert.equal(r.code, 0, r.stderr);
    assert.deepEqual(JSON.parse(r.stdout).tasks, []);
    const one = await datasetWith('one', (f) => fsp.writeFile(f, JSON.stringify({ questions: [{ question: 'q?', method: 'm' }] })));
    const j = JSON.parse((await cli(['tasks', 'validate', one, '--json'])).stdout);
    assert.deepEqual(j.tasks.map((t: { id: string; file: string }) => [t.id, t.file.startsWith(one)]), [['sample/toycal/0', true]]);
    const text = await cli(['tasks', 'list', one]);
    assert.equal(text.stdout.trim().split('\n').length, 1, text.stdout);
    const none = JSON.parse((await cli(['tasks', 'validate', '--json'])).stdout);
    assert.deepEqual(none.tasks.map((t: { id: string }) => t.id), ['sample/toycal/0'], 'no folder given: the bundled sample');
    assert.ok(none.tasks[0].file.startsWith(path.join(ROOT, 'samples')));
  });

  it('tasks show of a task whose file cannot be read says so and why (not JSON, a folder, a dangling link), exit 2', async () => {
    const cases: [string, (f: string) => Promise<void>, RegExp][] = [
      ['notjson', (f) => fsp.writeFile(f, '{"questions": ['), /is unreadable: not JSON/],
      ['folder', (f) => fsp.mkdir(f), /is unreadable: it is a folder, not a file/],
      ['dangling', (f) => fsp.symlink(path.join(tmp, 'gone.json'), f), /is unreadable: a symbolic link to .*gone\.json, which does not exist \(ENOENT\)/],
    ];
    for (const [name, place, why] of cases) {
      const dir = await datasetWith(name, place);
      const r = await cli(['tasks', 'show', 'sample/toycal/0', '--dataset', dir, '--no-sample']);
      assert.equal(r.code, 2, `${name}: ${r.stderr}`);
      const file = path.join(dir, 'tasks', 'sample', 'toycal', 'toycal_complete_final.json');
      assert.ok(r.stderr.startsWith(`expbench: task sample/toycal/0: its task file ${file} is unreadable`), `${name}: ${r.stderr}`);
      assert.match(r.stderr, why, name);
      assert.doesNotMatch(r.stderr, /not found/, name);
    }
    const ok = await datasetWith('readable', (f) => fsp.copyFile(SAMPLE_TASK, f));
    const r = await cli(['tasks', 'show', 'sample/toycal/7', '--dataset', ok, '--no-sample']);
    assert.equal(r.code, 1);
    assert.match(r.stderr, /^expbench: task sample\/toycal\/7 not found: paper sample\/toycal has 1 task\(s\), indexes 0 /);
  });

  it('prepare --source on a plain folder: says it is not a repository and how it was taken, not that the task is invalid', async () => {
    const plain = path.join(tmp, 'plain-folder');
    await fsp.mkdir(path.join(plain, 'toycal'), { recursive: true });
    await fsp.copyFile(path.join(ROOT, 'samples', 'repos', 'toy-calibration', 'toycal', 'model.py'), path.join(plain, 'toycal', 'model.py'));
    const out = path.join(tmp, 'prepared');
    const r = await cli(['prepare', 'sample/toycal/0', '--source', plain, '--out', out]);
    assert.equal(r.code, 1, r.stderr);
    assert.match(r.stderr, new RegExp(`^source: ${plain} is not the top of a git repository: its files are imported as they are now`, 'm'));
    assert.match(r.stderr, new RegExp(`expbench: ${plain}: not a git repository \\(nor the top folder of one\\), so it was imported as a plain folder \\(its files as they are now, committed as [0-9a-f]{12}\\), and 1 path that task sample/toycal/0 masks is not in it: experiments/temperature_scaling\\.py\\. Pass the paper's repository`));
    assert.doesNotMatch(r.stderr, /the task is invalid/);
    assert.equal(await fsp.stat(out).catch(() => undefined), undefined, 'no session left behind');
    // A folder that holds the masked paths is prepared, and the summary says how it was taken.
    const ok = await cli(['prepare', 'sample/toycal/0', '--source', path.join(ROOT, 'samples', 'repos', 'toy-calibration'), '--out', out]);
    assert.equal(ok.code, 0, ok.stderr);
    assert.match(ok.stdout, /^commit {3}[0-9a-f]{40} \(an import of the folder's files: it is not the top of a git repository\)$/m);
  });

  it('report on a folder with nothing to report: says so, exit 1 (text and --json)', async () => {
    const empty = path.join(tmp, 'nothing');
    await fsp.mkdir(path.join(empty, 'sub'), { recursive: true });
    await fsp.writeFile(path.join(empty, 'sub', 'other.json'), '{"x": 1}');
    for (const json of [[], ['--json']]) {
      const r = await cli(['report', empty, ...json]);
      assert.equal(r.code, 1);
      assert.equal(r.stdout, '', 'no empty table');
      assert.ok(r.stderr.startsWith(`expbench: nothing to report in ${empty}: no judged session`), r.stderr);
    }
  });

  it('the judge endpoint hint (heuristic note, unit tier skip message) names the variables the README documents', async () => {
    const readme = await fsp.readFile(path.join(ROOT, 'README.md'), 'utf8');
    const names = endpointEnvNames('judge');
    const hint = judgeEndpointHint();
    for (const n of [...names.baseUrl, ...names.apiKey, ...names.model]) {
      assert.ok(hint.includes(n), `hint names ${n}`);
      assert.ok(readme.includes(`\`${n}\``), `README names ${n}`);
    }
    const smoke = await fsp.readFile(path.join(ROOT, 'test', 'unit', 'judge.smoke.unit.test.ts'), 'utf8');
    assert.match(smoke, /skipped: no judge endpoint configured: \$\{judgeEndpointHint\(\)\}/);
    const r = await cli(['tasks', 'list', '--help']);
    assert.equal(r.code, 0);
  });
});
