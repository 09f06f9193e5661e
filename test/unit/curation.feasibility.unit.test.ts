import * as assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { promises as fsp } from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { checkFeasibility, type Feasibility } from '../../src/core/curation/feasibility';
import { parseRequirements } from '../../src/core/curation/requirements';
import { git } from '../../src/core/git';
import { connectDocker, gpusAvailable } from '../../src/core/sandbox';
import { findTask, loadDatasets } from '../../src/core/tasks/loader';
import type { Task } from '../../src/core/tasks/types';
import { paperRepo, writePaper } from '../harness/curationFixture';

const ROOT = path.resolve(__dirname, '../../..');
const CLI = path.join(ROOT, 'out', 'src', 'cli', 'main.js');

function cli(...args: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    execFile(process.execPath, [CLI, ...args], { cwd: ROOT, maxBuffer: 64 * 1024 * 1024 }, (err, stdout, stderr) => {
      resolve({ code: err ? (typeof err.code === 'number' ? err.code : 1) : 0, stdout, stderr });
    });
  });
}

describe('declared requirements (parsing)', () => {
  it('reads requirements.txt lines, skipping comments, options, URLs and paths; names without versions, markers or extras', () => {
    const r = parseRequirements('requirements.txt', [
      '# the experiment', 'numpy>=1.20  # arrays', 'scikit-learn==1.2', 'torch[cuda] ; python_version > "3.8"', '-r other.txt', '-e .',
      '--index-url https://example.org', 'https://example.org/x.whl', './local', 'mylib @ git+https://example.org/mylib', 'NumPy', '',
    ].join('\n'));
    assert.deepEqual(r.map((x) => x.name), ['numpy', 'scikit-learn', 'torch', 'mylib']);
    assert.deepEqual(r.find((x) => x.name === 'scikit-learn')?.modules, ['sklearn', 'scikit_learn']);
  });
  it('reads setup.py install_requires and pyproject.toml [project] dependencies and poetry keys', () => {
    assert.deepEqual(parseRequirements('setup.py', 'setup(name="x",\n install_requires=[\n "PyYAML>=5", \'deprecation\'],\n extras_require={"dev": ["pytest"]})').map((x) => [x.name, x.modules[0]]),
      [['PyYAML', 'yaml'], ['deprecation', 'deprecation']]);
    const toml = '[project]\nname = "x"\ndependencies = [\n  "matplotlib>=3",\n  "relplot",\n]\n[project.optional-dependencies]\ndev = ["pytest"]\n[tool.poetry.dependencies]\npython = "^3.9"\npandas = "^1.5"\n';
    assert.deepEqual(parseRequirements('pyproject.toml', toml).map((x) => x.name), ['matplotlib', 'relplot', 'pandas']);
  });
});

describe('feasibility: can this task run here (real git, real Docker)', function () {
  this.timeout(180_000);
  let dir: string;
  let cache: string;
  before(async () => {
    dir = await fsp.mkdtemp(path.join(os.tmpdir(), 'expbench-feasible-'));
    cache = path.join(dir, 'cache');
  });
  after(async () => { await fsp.rm(dir, { recursive: true, force: true }); });

  async function repo(name: string, files: Record<string, string>): Promise<string> {
    const r = await paperRepo(path.join(dir, name));
    await r.commit(files);
    return r.dir;
  }
  async function taskIn(name: string, curation?: string, extra: Record<string, unknown> = {}): Promise<{ ds: string; task: Task }> {
    const ds = path.join(dir, name);
    await writePaper(ds, 'conf/7', {
      questions: [{ question: 'Does it calibrate?', method: 'run', expected_outcome: 'yes', masked_source: ['/workspace/run.py'], source: ['/workspace/run.py'], usage_instructions: 'python run.py', ...extra }],
      ...(curation !== undefined ? { curation } : {}),
    });
    const task = findTask(await loadDatasets([ds]), 'conf/7/0');
    assert.ok(task);
    return { ds, task };
  }
  const need = (f: Feasibility, kind: string, what: string) => f.needs.find((n) => n.kind === kind && n.what === what);

  it('a curation file saying 8 GPUs are needed: cannot run here on this GPU-less machine, said before anything starts', async function () {
    if (await gpusAvailable(connectDocker())) this.skip(); // the verdict below is for a machine without GPU support
    const { ds, task } = await taskIn('gpu', '{ "version": 1, "environment": { "gpus": 8, "limits": { "timeSeconds": 7200 } } }');
    const f = await checkFeasibility({ task, cacheDir: cache });
    assert.equal(f.verdict, 'cannot-run');
    assert.equal(f.from, 'curation');
    assert.equal(need(f, 'gpu', '8 GPU(s)')?.have, false);
    assert.equal(f.expectedRunSeconds, 7200);
    assert.match(f.summary, /^cannot run here: needs 8 GPU\(s\)/);
    const r = await cli('feasibility', 'conf/7/0', '--dataset', ds, '--no-sample', '--check');
    assert.equal(r.code, 3, r.stderr);
    assert.match(r.stdout, /MISSING gpu 8 GPU\(s\)/);
    assert.match(r.stdout, /info {4}time 2 h/);
  });

  it('probes the image for the requirements declared at the pin: a package it lacks and ones it has, reported precisely', async () => {
    const src = await repo('calib', { 'run.py': 'import relplot\n', 'requirements.txt': 'numpy>=1.20\ndeprecation==2.1.0\nPyYAML\n' });
    const { ds, task } = await taskIn('probe');
    const f = await checkFeasibility({ task, source: src, cacheDir: cache });
    assert.equal(f.from, 'probe');
    assert.equal(f.verdict, 'cannot-run');
    assert.equal(f.commit, (await git(['rev-parse', 'HEAD'], { repo: { checkout: src } })).text.trim());
    const numpy = need(f, 'package', 'numpy');
    assert.equal(numpy?.have, true);
    assert.match(numpy!.detail, /^imports as numpy \d+\.\d+/);
    assert.equal(need(f, 'package', 'PyYAML')?.have, true);
    assert.match(need(f, 'package', 'PyYAML')!.detail, /^imports as yaml/);
    const dep = need(f, 'package', 'deprecation');
    assert.equal(dep?.have, false);
    assert.equal(dep?.detail, 'ModuleNotFoundError: No module named \'deprecation\'');
    assert.equal(dep?.source, 'requirements.txt');
    assert.equal(f.summary, 'cannot run here: needs deprecation (ModuleNotFoundError: No module named \'deprecation\')');
    const r = await cli('feasibility', 'conf/7/0', '--dataset', ds, '--no-sample', '--source', src, '--cache', cache, '--json');
    assert.equal(r.code, 0, r.stderr);
    assert.deepEqual((JSON.parse(r.stdout) as Feasibility).needs, f.needs);
  });

  it('a notebook task needs Jupyter (nbconvert), which the offline image lacks; requirements all present otherwise', async () => {
    const src = await repo('nb', { 'analysis.ipynb': '{}', 'requirements.txt': 'numpy\n' });
    const { task } = await taskIn('nb', undefined, { usage_instructions: 'run analysis.ipynb', masked_source: ['/workspace/analysis.ipynb'], source: ['/workspace/analysis.ipynb'] });
    const f = await checkFeasibility({ task, source: src, cacheDir: cache });
    assert.equal(need(f, 'package', 'numpy')?.have, true);
    assert.equal(need(f, 'package', 'nbconvert')?.have, false);
    assert.equal(need(f, 'package', 'nbconvert')?.source, 'the task (a notebook is run)');
    // A solver's brief: the notebook is named only in hidden fields, so nothing says so there.
    const solver = await checkFeasibility({ task, source: src, cacheDir: cache, useGroundTruth: false });
    assert.equal(need(solver, 'package', 'nbconvert'), undefined);
    assert.equal(need(solver, 'package', 'numpy')?.have, true);
  });

  it('in a solver\'s brief, a requirements file the task masks is not read', async () => {
    const src = await repo('masked-req', { 'requirements.txt': 'deprecation\n', 'run.py': 'print(1)\n' });
    const { task } = await taskIn('masked-req', undefined, { masked_source: ['/workspace/requirements.txt'], source: ['/workspace/run.py'] });
    assert.equal(need(await checkFeasibility({ task, source: src, cacheDir: cache }), 'package', 'deprecation')?.have, false);
    const solver = await checkFeasibility({ task, source: src, cacheDir: cache, useGroundTruth: false });
    assert.equal(need(solver, 'package', 'deprecation'), undefined);
    assert.equal(solver.verdict, 'unknown');
  });

  it('every requirement present → can run here; the curation file\'s Debian packages and data mounts are checked', async () => {
    const src = await repo('fine', { 'run.py': 'print(1)\n', 'requirements.txt': 'numpy\nscipy\n' });
    const plain = await taskIn('fine');
    const ok = await checkFeasibility({ task: plain.task, source: src, cacheDir: cache });
    assert.equal(ok.verdict, 'can-run', JSON.stringify(ok.needs));
    assert.equal(ok.summary, 'can run here');
    const { task } = await taskIn('debian', JSON.stringify({ version: 1, environment: {
      debianPackages: ['python3-numpy', 'python3-nbconvert'], mounts: [{ host: path.join(dir, 'no-such-data'), container: '/data' }] } }));
    const f = await checkFeasibility({ task, cacheDir: cache });
    assert.equal(need(f, 'debian-package', 'python3-numpy')?.have, true);
    assert.match(need(f, 'debian-package', 'python3-numpy')!.detail, /^installed \d/);
    assert.equal(need(f, 'debian-package', 'python3-nbconvert')?.have, false);
    assert.equal(need(f, 'data', path.join(dir, 'no-such-data'))?.have, false);
    assert.equal(f.verdict, 'cannot-run');
  });

  it('without any source the verdict is unknown and says why; a probe over its bound is stopped and said', async () => {
    const { task } = await taskIn('nosource');
    const f = await checkFeasibility({ task, cacheDir: cache });
    assert.equal(f.verdict, 'unknown');
    assert.match(f.notes.join('\n'), /no repository known for the task/);
    const src = await repo('slow', { 'requirements.txt': 'numpy\n' });
    const started = Date.now();
    const slow = await checkFeasibility({ task, source: src, cacheDir: cache, probeTimeoutMs: 1 });
    assert.ok(Date.now() - started < 30_000);
    assert.match(slow.notes.join('\n'), /did not finish within 0\.001 s/);
    assert.equal(slow.verdict, 'unknown');
  });
});
