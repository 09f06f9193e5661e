/**
 * The verifier binds the recorded environment's data mounts read-only (issue 20, item 3): a
 * session prepared from a curation file with `environment.mounts` (real git, a repository the
 * test builds, the real CLI), verified in a real container: the mount is readable, not writable
 * (the host folder is writable by all, so only the read-only bind stops the write), the record
 * lists it; a mount whose host folder is missing is refused naming it, and no container is made.
 */
import * as assert from 'node:assert/strict';
import { promises as fsp } from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { SessionLayout } from '../../src/core/layout';
import { runVerification } from '../../src/core/verify';
import { paperRepo, writePaper } from '../harness/curationFixture';
import { cli } from './cli.helpers';


describe('verify: the recorded environment\'s read-only data mounts (real container)', function () {
  this.timeout(300_000);
  let dir: string;
  let repo: string;
  let sha: string;
  let data: string;
  before(async () => {
    dir = await fsp.mkdtemp(path.join(os.tmpdir(), 'expbench-vmounts-'));
    const r = await paperRepo(path.join(dir, 'paper-repo'));
    repo = r.dir;
    sha = await r.commit({ 'train.py': 'print("train")\n' }, 'first');
    data = path.join(dir, 'data');
    await fsp.mkdir(data);
    await fsp.writeFile(path.join(data, 'value.txt'), 'planted 0.8125\n');
    await fsp.chmod(data, 0o777);
  });
  after(async () => { await fsp.rm(dir, { recursive: true, force: true }); });

  async function session(name: string, host: string): Promise<SessionLayout> {
    const ds = path.join(dir, name);
    await writePaper(ds, 'conf/7', {
      questions: [{ question: 'Does training help?', method: 'train', expected_outcome: 'yes', masked_source: ['/workspace/train.py'], source: ['/workspace/train.py'] }],
      curation: `{ "version": 1, "repository": { "url": ${JSON.stringify(repo)}, "commit": "${sha}" },
        "environment": { "mounts": [{ "host": ${JSON.stringify(host)}, "container": "/data/c2" }], "limits": { "timeSeconds": 60 } } }\n`,
    });
    const out = path.join(dir, `${name}-s`);
    const r = await cli(['prepare', 'conf/7/0', '--dataset', ds, '--no-sample', '--cache', path.join(dir, 'cache'), '--out', out, '--json']);
    assert.equal(r.code, 0, r.stderr);
    const layout = new SessionLayout(out);
    await fsp.writeFile(path.join(layout.workspace, 'reproduce_exp_bench.sh'),
      'cat /data/c2/value.txt\nif echo x > /data/c2/written.txt; then echo WRITABLE; else echo "read-only as it should be"; fi\n');
    return layout;
  }

  it('binds the mount read-only: readable, a write refused, listed in the record', async () => {
    const layout = await session('ok', data);
    const r = await runVerification(layout.root, {});
    assert.equal(r.exitCode, 0, JSON.stringify(r));
    const stdout = await fsp.readFile(path.join(layout.root, r.logs.stdout), 'utf8');
    assert.match(stdout, /planted 0\.8125/);
    assert.match(stdout, /read-only as it should be/);
    assert.doesNotMatch(stdout, /WRITABLE/);
    await assert.rejects(fsp.stat(path.join(data, 'written.txt')), { code: 'ENOENT' });
    assert.deepEqual(r.mounts, [{ host: data, container: '/data/c2' }]);
  });

  it('a mount whose host folder is missing is refused naming it; no run is recorded', async () => {
    const missing = path.join(dir, 'no-such-data');
    const layout = await session('missing', missing);
    await assert.rejects(runVerification(layout.root, {}), (e: Error & { code?: string; input?: string }) => {
      assert.equal(e.code, 'BAD_INPUT');
      assert.equal(e.input, 'environment.mounts[0].host');
      assert.ok(e.message.includes(missing), e.message);
      return true;
    });
    await assert.rejects(fsp.stat(path.join(layout.root, 'private', 'verify', 'latest.json')), { code: 'ENOENT' });
    await assert.rejects(fsp.stat(missing), { code: 'ENOENT' }, 'the engine did not create the folder');
  });
});
