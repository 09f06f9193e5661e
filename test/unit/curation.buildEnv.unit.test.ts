// A missing environment image built on request from the curation file (issue 31, item 4):
// `expbench curate build-env ID` reads environment.baseImage and environment.debianPackages and
// runs sandbox/build-env.sh; the image then has the package (checked with dpkg-query in a
// container), a second call builds nothing, and curation files that cannot say what to build are
// refused naming the member. Real Docker and apt (through the host's network, as the script does).
import * as assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { promises as fsp } from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { connectDocker } from '../../src/core/sandbox';
import { requireDocker } from '../harness/docker';
import { writePaper } from '../harness/curationFixture';

const ROOT = path.resolve(__dirname, '../../..');
const CLI = path.join(ROOT, 'out', 'src', 'cli', 'main.js');

function run(exe: string, args: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    execFile(exe, args, { cwd: ROOT, maxBuffer: 64 * 1024 * 1024 }, (err, stdout, stderr) => {
      resolve({ code: err ? (typeof err.code === 'number' ? err.code : 1) : 0, stdout, stderr });
    });
  });
}
const cli = (...args: string[]) => run(process.execPath, [CLI, ...args]);

describe('curate build-env: a missing environment image built from the curation file (real Docker, apt)', function () {
  this.timeout(900_000);
  let dir: string;
  const tag = `expbench/test-env-${process.pid}-${Date.now().toString(36)}:1`;
  before(async () => { dir = await fsp.mkdtemp(path.join(os.tmpdir(), 'expbench-buildenv-')); });
  after(async () => {
    await connectDocker().getImage(tag).remove({ force: true }).catch(() => undefined); // only the image this test made
    await fsp.rm(dir, { recursive: true, force: true });
  });

  const paper = (ds: string, environment: Record<string, unknown>) => writePaper(ds, 'conf/8', {
    questions: [{ question: 'q', method: 'm', expected_outcome: 'o' }],
    curation: { version: 1, paper: 'conf/8', environment },
  });

  it('builds the image named by baseImage with debianPackages when it is missing; present, it builds nothing', async function () {
    await requireDocker(this);
    const ds = path.join(dir, 'ds');
    await paper(ds, { baseImage: tag, debianPackages: ['jq'] });
    const first = await cli('curate', 'build-env', 'conf/8/0', '--dataset', ds, '--no-sample', '--json');
    assert.equal(first.code, 0, first.stderr);
    assert.deepEqual(JSON.parse(first.stdout), { image: tag, curationFile: path.join(ds, 'tasks', 'conf', '8', 'curation.jsonc'), packages: ['jq'], built: true });
    const info = await connectDocker().getImage(tag).inspect();
    assert.equal(info.Config.Labels['expbench.env.packages'], 'jq');
    const dpkg = await run('docker', ['run', '--rm', '--network', 'none', tag, 'dpkg-query', '-W', '-f', '${Status}', 'jq']);
    assert.equal(dpkg.code, 0, dpkg.stderr);
    assert.equal(dpkg.stdout, 'install ok installed');
    const again = await cli('curate', 'build-env', 'conf/8/0', '--dataset', ds, '--no-sample');
    assert.equal(again.code, 0, again.stderr);
    assert.match(again.stdout, new RegExp(`${tag.replace(/[.:/]/g, '\\$&')}: present; nothing built`));
  });

  it('refuses a curation file without baseImage or without debianPackages, naming the member', async () => {
    const a = path.join(dir, 'a');
    await paper(a, { debianPackages: ['jq'] });
    const r1 = await cli('curate', 'build-env', 'conf/8/0', '--dataset', a, '--no-sample');
    assert.notEqual(r1.code, 0);
    assert.match(r1.stderr, /curation\.jsonc#\/environment\/baseImage.*names no image to build/);
    const b = path.join(dir, 'b');
    await paper(b, { baseImage: tag });
    const r2 = await cli('curate', 'build-env', 'conf/8/0', '--dataset', b, '--no-sample');
    assert.notEqual(r2.code, 0);
    assert.match(r2.stderr, /#\/environment\/debianPackages.*lists no Debian package/);
  });
});
