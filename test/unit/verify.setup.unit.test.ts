/**
 * The verifier runs the recorded environment's setup commands before the script (issue 20, item
 * 3): a session prepared from a curation file with `environment.setup` (real git, a repository the
 * test builds, the real CLI), verified in a real container. The setup's work is there for the
 * script, the record lists the commands, and the setup's own files are not counted as the script's
 * output; a failing setup line stops the run before the script, recorded as `setup.failed`.
 */
import * as assert from 'node:assert/strict';
import { promises as fsp } from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { SessionLayout } from '../../src/core/layout';
import { runVerification } from '../../src/core/verify';
import { paperRepo, writePaper } from '../harness/curationFixture';
import { cli } from './cli.helpers';


describe('verify: the recorded environment\'s setup commands (real container)', function () {
  this.timeout(300_000);
  let dir: string;
  let repo: string;
  let sha: string;
  before(async () => {
    dir = await fsp.mkdtemp(path.join(os.tmpdir(), 'expbench-vsetup-'));
    const r = await paperRepo(path.join(dir, 'paper-repo'));
    repo = r.dir;
    sha = await r.commit({ 'train.py': 'print("train")\n' }, 'first');
  });
  after(async () => { await fsp.rm(dir, { recursive: true, force: true }); });

  async function session(name: string, setup: string[]): Promise<SessionLayout> {
    const ds = path.join(dir, name);
    await writePaper(ds, 'conf/7', {
      questions: [{ question: 'Does training help?', method: 'train', expected_outcome: 'yes', masked_source: ['/workspace/train.py'], source: ['/workspace/train.py'] }],
      curation: `{ "version": 1, "repository": { "url": ${JSON.stringify(repo)}, "commit": "${sha}" },
        "environment": { "setup": ${JSON.stringify(setup)}, "limits": { "timeSeconds": 60 } } }\n`,
    });
    const out = path.join(dir, `${name}-s`);
    const r = await cli(['prepare', 'conf/7/0', '--dataset', ds, '--no-sample', '--cache', path.join(dir, 'cache'), '--out', out, '--json']);
    assert.equal(r.code, 0, r.stderr);
    const layout = new SessionLayout(out);
    await fsp.writeFile(path.join(layout.workspace, 'reproduce_exp_bench.sh'),
      'cat prepared.txt\necho "script ran" > results.txt\ncat results.txt\n');
    return layout;
  }

  it('runs the setup first, in /workspace: its work is there for the script, the record lists it', async () => {
    const layout = await session('ok', ['echo "prepared by setup" > prepared.txt', 'test -s prepared.txt']);
    const r = await runVerification(layout.root, {});
    assert.equal(r.exitCode, 0, JSON.stringify(r.error ?? r));
    assert.equal(r.E_clean, true);
    const stdout = await fsp.readFile(path.join(layout.root, r.logs.stdout), 'utf8');
    assert.match(stdout, /prepared by setup/);
    assert.match(stdout, /script ran/);
    assert.deepEqual(r.setup, { commands: ['echo "prepared by setup" > prepared.txt', 'test -s prepared.txt'], failed: false });
    assert.ok(r.changedFiles.includes('results.txt'), r.changedFiles.join(', '));
    assert.ok(!r.changedFiles.includes('prepared.txt'), `the setup's file is not the script's output: ${r.changedFiles.join(', ')}`);
  });

  it('a failing setup line stops the run before the script: setup.failed, the exit code, E false', async () => {
    const layout = await session('fails', ['echo "first line ran"', 'exit 3', 'echo "never printed"']);
    const r = await runVerification(layout.root, {});
    assert.equal(r.exitCode, 3, JSON.stringify(r.error ?? r));
    assert.equal(r.E_clean, false);
    assert.equal(r.setup?.failed, true);
    const stdout = await fsp.readFile(path.join(layout.root, r.logs.stdout), 'utf8');
    const stderr = await fsp.readFile(path.join(layout.root, r.logs.stderr), 'utf8');
    assert.match(stdout, /first line ran/);
    assert.doesNotMatch(stdout, /never printed|script ran/);
    assert.match(stderr, /the environment's setup failed \(exit 3\); reproduce_exp_bench\.sh was not run/);
  });
});
