import * as assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { promises as fsp } from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { recordedVerifyOptions } from '../../src/core/flows/prepareTask';
import { verifyStep } from '../../src/core/flows/verify';
import { SessionLayout } from '../../src/core/layout';
import { readManifest, type Manifest } from '../../src/core/workspace/manifest';
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

describe('prepare at the curation file\'s pin and environment (git repositories built here)', function () {
  this.timeout(180_000);
  let dir: string;
  let cache: string;
  let repo: string;
  const shas: string[] = [];
  before(async () => {
    dir = await fsp.mkdtemp(path.join(os.tmpdir(), 'expbench-pin-'));
    cache = path.join(dir, 'cache');
    const r = await paperRepo(path.join(dir, 'paper-repo'));
    repo = r.dir;
    for (const version of ['first', 'second']) shas.push(await r.commit({ 'train.py': 'print("train")\n', 'version.txt': `${version}\n` }, version));
  });
  after(async () => { await fsp.rm(dir, { recursive: true, force: true }); });

  /** A dataset with one type-1 task `conf/7/0`, and `curation.jsonc` beside it when `curation` is given. */
  async function dataset(name: string, curation?: string): Promise<string> {
    await writePaper(path.join(dir, name), 'conf/7', {
      questions: [{ question: 'Does training help?', method: 'train', expected_outcome: 'yes', masked_source: ['/workspace/train.py'], source: ['/workspace/train.py'] }],
      ...(curation !== undefined ? { curation } : {}),
    });
    return path.join(dir, name);
  }
  const curationText = (commit: string, env: string) => `// pinned by a curator
{
  "version": 1,
  "paper": "conf/7",
  "repository": { "url": "../../../../paper-repo", "commit": "${commit}" },
  "environment": ${env},
}
`;
  async function prepare(ds: string, out: string, ...extra: string[]): Promise<Manifest> {
    const r = await cli('prepare', 'conf/7/0', '--dataset', ds, '--no-sample', '--cache', cache, '--out', path.join(dir, out), '--json', ...extra);
    assert.equal(r.code, 0, r.stderr);
    const printed = JSON.parse(r.stdout) as Manifest;
    assert.deepEqual(await readManifest(path.join(dir, out)), printed);
    return printed;
  }

  it('uses the pinned commit (not the source\'s HEAD) and the repository URL when no --source is given, and records both', async () => {
    const ds = await dataset('pinned', curationText(shas[0], '{ "baseImage": "expbench/sandbox:1", "gpus": 0, "limits": { "timeSeconds": 120, "memoryMiB": 512 } }'));
    const file = path.join(ds, 'tasks', 'conf', '7', 'curation.jsonc');
    const m = await prepare(ds, 's1');
    assert.equal(m.commit, shas[0]);
    assert.equal(m.source.location, repo);
    assert.deepEqual(m.pin, { from: 'curation', file, requested: shas[0] });
    assert.deepEqual(m.environment, { from: 'curation', file, image: 'expbench/sandbox:1', gpus: 0, limits: { timeSeconds: 120, memoryMiB: 512 } });
    assert.equal(await fsp.readFile(path.join(dir, 's1', 'workspace', 'version.txt'), 'utf8'), 'first\n');
    assert.deepEqual(await recordedVerifyOptions(path.join(dir, 's1')), { image: 'expbench/sandbox:1', limits: { timeoutMs: 120_000, memoryBytes: 512 * 1024 * 1024 } });
  });

  it('an explicit --commit wins over the pin and is recorded as the option; --image likewise', async () => {
    const ds = await dataset('override', curationText(shas[0], '{ "limits": { "timeSeconds": 60 } }'));
    const m = await prepare(ds, 's2', '--commit', shas[1], '--image', 'expbench/sandbox:1');
    assert.equal(m.commit, shas[1]);
    assert.deepEqual(m.pin, { from: 'option', requested: shas[1] });
    assert.equal(m.environment?.from, 'option');
    assert.deepEqual(m.environment?.limits, { timeSeconds: 60 }, 'the curation file\'s limits still apply');
    assert.equal(await fsp.readFile(path.join(dir, 's2', 'workspace', 'version.txt'), 'utf8'), 'second\n');
  });

  it('--source given, pin kept: the pinned commit is prepared from that source', async () => {
    const ds = await dataset('other-source', curationText(shas[0], '{}'));
    const m = await prepare(ds, 's3', '--source', repo);
    assert.equal(m.commit, shas[0]);
    assert.equal(m.pin?.from, 'curation');
  });

  it('without a curation file: the source\'s HEAD and the default image, as before, recorded as such', async () => {
    const ds = await dataset('plain');
    const m = await prepare(ds, 's4', '--source', repo);
    assert.equal(m.commit, shas[1]);
    assert.deepEqual(m.pin, { from: 'source-head' });
    assert.deepEqual(m.environment, { from: 'default', image: 'expbench/sandbox:1' });
    assert.deepEqual(await recordedVerifyOptions(path.join(dir, 's4')), { image: 'expbench/sandbox:1', limits: {} });
  });

  it('a curation file that is not valid stops prepare, naming the file and the field; nothing is created', async () => {
    const ds = await dataset('bad', curationText('abc', '{}'));
    const r = await cli('prepare', 'conf/7/0', '--dataset', ds, '--no-sample', '--cache', cache, '--out', path.join(dir, 's5'));
    assert.notEqual(r.code, 0);
    assert.match(r.stderr, /curation\.jsonc/);
    assert.match(r.stderr, /\/repository\/commit: .*full commit SHA/);
    await assert.rejects(fsp.stat(path.join(dir, 's5')), { code: 'ENOENT' });
  });

  it('the verifier runs with the recorded time and memory limits (a real container)', async () => {
    const ds = await dataset('limits', curationText(shas[0], '{ "limits": { "timeSeconds": 3, "memoryMiB": 256 } }'));
    await prepare(ds, 's6');
    const layout = new SessionLayout(path.join(dir, 's6'));
    await fsp.writeFile(path.join(layout.workspace, 'reproduce_exp_bench.sh'), 'echo started\nsleep 60\n');
    // the window's settings come as fallbackLimits: the recorded environment wins over them
    const result = await verifyStep({ fallbackLimits: { timeoutMs: 3_600_000, memoryBytes: 0, pids: 1024 } })(layout, new AbortController().signal);
    const record = JSON.parse(await fsp.readFile(path.join(layout.root, 'private', 'verify', 'latest.json'), 'utf8'));
    const full = record.runId ? JSON.parse(await fsp.readFile(path.join(layout.verify, record.runId, 'record.json'), 'utf8')) : record;
    assert.equal(full.limits.timeoutMs, 3000);
    assert.equal(full.limits.memoryBytes, 256 * 1024 * 1024);
    assert.equal(full.limits.pids, 1024, 'a fallback the environment does not set still applies');
    assert.equal(full.timedOut, true, JSON.stringify(full));
    assert.equal(result.ok, false);
  });
});
