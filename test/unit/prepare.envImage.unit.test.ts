/**
 * Prepare with a curation file whose environment image is absent (issue 20, item 3): the warning
 * names the curation file and the exact build command, and the absent image is still the one
 * recorded (never a silent fall-back). Real git (a repository the test builds), the real CLI and
 * the real Docker engine (an image tag that does not exist).
 */
import * as assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { promises as fsp } from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { environmentImageAdvice } from '../../src/core/flows/prepareTask';
import type { Manifest } from '../../src/core/workspace/manifest';
import { paperRepo, writePaper } from '../harness/curationFixture';

const ROOT = path.resolve(__dirname, '../../..');
const CLI = path.join(ROOT, 'out', 'src', 'cli', 'main.js');
const ABSENT = 'expbench/env-absent-c2-test:1';

function cli(...args: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    execFile(process.execPath, [CLI, ...args], { cwd: ROOT, maxBuffer: 64 * 1024 * 1024 }, (err, stdout, stderr) => {
      resolve({ code: err ? (typeof err.code === 'number' ? err.code : 1) : 0, stdout, stderr });
    });
  });
}

describe('prepare: a curation file\'s environment image that is absent', function () {
  this.timeout(180_000);
  let dir: string;
  let repo: string;
  let sha: string;
  before(async () => {
    dir = await fsp.mkdtemp(path.join(os.tmpdir(), 'expbench-envimage-'));
    const r = await paperRepo(path.join(dir, 'paper-repo'));
    repo = r.dir;
    sha = await r.commit({ 'train.py': 'print("train")\n' }, 'first');
  });
  after(async () => { await fsp.rm(dir, { recursive: true, force: true }); });

  async function prepare(name: string, env: string): Promise<{ code: number; stderr: string; manifest?: Manifest; file: string }> {
    const ds = path.join(dir, name);
    await writePaper(ds, 'conf/7', {
      questions: [{ question: 'Does training help?', method: 'train', expected_outcome: 'yes', masked_source: ['/workspace/train.py'], source: ['/workspace/train.py'] }],
      curation: `{ "version": 1, "repository": { "url": ${JSON.stringify(repo)}, "commit": "${sha}" }, "environment": ${env} }\n`,
    });
    const r = await cli('prepare', 'conf/7/0', '--dataset', ds, '--no-sample', '--cache', path.join(dir, 'cache'), '--out', path.join(dir, `${name}-s`), '--json');
    return { code: r.code, stderr: r.stderr, manifest: r.code === 0 ? JSON.parse(r.stdout) as Manifest : undefined, file: path.join(ds, 'tasks', 'conf', '7', 'curation.jsonc') };
  }

  it('with debianPackages: says the exact build-env.sh command, names the curation file, and records the image named', async () => {
    const r = await prepare('pkgs', `{ "baseImage": "${ABSENT}", "debianPackages": ["python3-deprecation", "jupyter-nbconvert"], "dockerfile": "Dockerfile" }`);
    assert.equal(r.code, 0, r.stderr);
    const warning = r.stderr.split('\n').find((l) => l.startsWith('expbench: warning: '));
    assert.ok(warning, r.stderr);
    assert.ok(warning.includes(`the image ${ABSENT} named by environment.baseImage of ${r.file} is not present`), warning);
    assert.ok(warning.includes(`build it with: bash sandbox/build-env.sh --tag ${ABSENT} python3-deprecation jupyter-nbconvert`), warning);
    assert.ok(warning.includes(`Dockerfile (${path.join(path.dirname(r.file), 'Dockerfile')}) needs network to build`), warning);
    assert.equal(r.manifest?.image, ABSENT, 'no fall-back to another image');
    assert.equal(r.manifest?.environment?.image, ABSENT);
  });

  it('a present image says nothing', async () => {
    const r = await prepare('present', '{ "baseImage": "expbench/sandbox:1", "debianPackages": ["python3-deprecation"] }');
    assert.equal(r.code, 0, r.stderr);
    assert.ok(!r.stderr.includes('warning'), r.stderr);
  });

  it('the advice without packages or a Dockerfile asks for an image of the sandbox contract', () => {
    const a = environmentImageAdvice(ABSENT, '/d/curation.jsonc', {});
    assert.match(a, /contract of sandbox\/Dockerfile/);
    assert.ok(!a.includes('build-env.sh'));
    const d = environmentImageAdvice(ABSENT, '/d/curation.jsonc', { dockerfile: 'env/Dockerfile' });
    assert.ok(d.includes(`docker build -t ${ABSENT} -f /d/env/Dockerfile /d/env`), d);
    assert.ok(d.includes('on a machine without network it cannot be built'), d);
  });
});
