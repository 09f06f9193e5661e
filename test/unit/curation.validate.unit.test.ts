import * as assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { promises as fsp } from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { validateTask, type ValidationRecord } from '../../src/core/flows/validateTask';
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

describe('curate validate: the ground truth run at the pin in the sandbox (real git, real Docker)', function () {
  this.timeout(120_000);
  let dir: string;
  let cache: string;
  let ds: string;
  let pinned: string;
  let task: Task;
  before(async () => {
    dir = await fsp.mkdtemp(path.join(os.tmpdir(), 'expbench-validate-'));
    cache = path.join(dir, 'cache');
    const repo = await paperRepo(path.join(dir, 'paper-repo'));
    // First commit (the pin): the script prints the expected numbers. Second (HEAD): it prints others.
    for (const ece of ['0.0123', '0.9999']) {
      const sha = await repo.commit({ 'calibrate.sh': `echo "ECE before scaling = 0.0456"\necho "ECE after scaling: ${ece}" > result.txt\n` }, ece);
      if (!pinned) pinned = sha;
    }
    ds = path.join(dir, 'ds');
    await writePaper(ds, 'conf/7', {
      questions: [{
        question: 'Does temperature scaling lower the ECE?', method: 'scale', masked_source: ['/workspace/calibrate.sh'], source: ['/workspace/calibrate.sh'],
        expected_outcome: 'The ECE falls from 0.0456 to 0.0123 after scaling, while accuracy stays at 0.871.',
        usage_instructions: 'Run bash calibrate.sh and read result.txt.',
      }],
      curation: `{ "version": 1, "paper": "conf/7",
      "repository": { "url": "${repo.dir}", "commit": "${pinned}" },
      "environment": { "baseImage": "expbench/sandbox:1", "limits": { "timeSeconds": 60 } } }\n`,
    });
    const t = findTask(await loadDatasets([ds]), 'conf/7/0');
    assert.ok(t);
    task = t;
  });
  after(async () => { await fsp.rm(dir, { recursive: true, force: true }); });

  it('runs at the pin (not HEAD): the numbers printed and written are found, the one never printed is not; record and logs written', async () => {
    const out = path.join(dir, 'v1');
    const r = await cli('curate', 'validate', 'conf/7/0', '--dataset', ds, '--no-sample', '--cache', cache, '--run', 'bash calibrate.sh', '--out', out, '--json');
    assert.equal(r.code, 0, r.stderr);
    const rec = JSON.parse(r.stdout) as ValidationRecord;
    assert.deepEqual(JSON.parse(await fsp.readFile(path.join(out, 'validation.json'), 'utf8')), rec);
    assert.equal(rec.commit, pinned);
    assert.equal(rec.pinFrom, 'curation');
    assert.equal(rec.imageFrom, 'curation');
    assert.equal(rec.exitCode, 0);
    assert.equal(rec.timedOut, false);
    assert.equal(rec.diskFull, false);
    assert.equal(rec.limits.timeoutMs, 60_000);
    assert.deepEqual(rec.changedFiles, ['result.txt']);
    const byText = new Map(rec.claims.claims.map((c) => [c.text, c]));
    assert.equal(byText.get('0.0456')?.found, true);
    assert.equal(byText.get('0.0456')?.where?.[0]?.source, 'stdout.log');
    assert.equal(byText.get('0.0123')?.found, true);
    assert.equal(byText.get('0.0123')?.where?.[0]?.source, 'result.txt');
    assert.equal(byText.get('0.871')?.found, false);
    assert.match(await fsp.readFile(path.join(out, 'stdout.log'), 'utf8'), /ECE before scaling = 0\.0456/);
    assert.equal(rec.claims.allProduced, false);
  });

  it('without --run prints the usage instructions as the suggestion and exits 2', async () => {
    const r = await cli('curate', 'validate', 'conf/7/0', '--dataset', ds, '--no-sample', '--out', path.join(dir, 'none'));
    assert.equal(r.code, 2);
    assert.match(r.stderr, /--run/);
    assert.match(r.stderr, /Run bash calibrate\.sh and read result\.txt\./);
  });

  it('a command that hangs is stopped at the time limit and recorded', async () => {
    const t0 = Date.now();
    const rec = await validateTask({ task, run: 'echo started; sleep 600', out: path.join(dir, 'hang'), cacheDir: cache, limits: { timeoutMs: 2000 } });
    assert.ok(Date.now() - t0 < 30_000);
    assert.equal(rec.timedOut, true);
    assert.equal(rec.exitCode, null);
    assert.ok(rec.durationMs >= 2000 && rec.durationMs < 20_000, String(rec.durationMs));
    assert.match(await fsp.readFile(path.join(dir, 'hang', 'stdout.log'), 'utf8'), /started/);
    assert.equal((JSON.parse(await fsp.readFile(path.join(dir, 'hang', 'validation.json'), 'utf8')) as ValidationRecord).timedOut, true);
  });

  it('a command that writes past the scratch cap is recorded as such (disk full, failed exit)', async () => {
    const rec = await validateTask({
      task, run: 'head -c 20000000 /dev/zero > big.bin; echo "rc=$?"; exit 1', out: path.join(dir, 'full'), cacheDir: cache, scratchBytes: 8 * 1024 * 1024,
    });
    assert.equal(rec.diskFull, true);
    assert.equal(rec.exitCode, 1);
    assert.equal(rec.timedOut, false);
    assert.ok(rec.scratchUsedBytes !== undefined && rec.scratchUsedBytes <= 8 * 1024 * 1024, String(rec.scratchUsedBytes));
    assert.match(await fsp.readFile(path.join(dir, 'full', 'stderr.log'), 'utf8'), /No space left on device/);
  });

  it('the environment\'s setup runs first at the checkout\'s root and its data mounts are read-only; a failing setup stops the command; a missing mount is refused', async () => {
    const data = path.join(dir, 'data');
    await fsp.mkdir(data, { recursive: true });
    await fsp.writeFile(path.join(data, 'scores.txt'), 'ECE after scaling: 0.0123\n');
    await fsp.chmod(data, 0o777); // writable by anyone on the host: only the read-only mount stops the run's write
    const curation = (setup: string[], host: string) => writePaper(ds, 'conf/8', {
      taskFile: path.join(ds, 'tasks', 'conf', '7', '7_complete_final.json'),
      curation: {
        version: 1, paper: 'conf/8', repository: { url: path.join(dir, 'paper-repo'), commit: pinned },
        environment: { baseImage: 'expbench/sandbox:1', setup, mounts: [{ host, container: '/data/in' }], limits: { timeSeconds: 60 } },
      },
    });
    const load = async () => { const t = findTask(await loadDatasets([ds]), 'conf/8/0'); assert.ok(t); return t; };
    await curation(['test -f calibrate.sh', 'echo "prepared" > prepared.txt'], data);
    const run = 'cat prepared.txt; cat /data/in/scores.txt; echo x > /data/in/new.txt 2>/dev/null || echo "mount is read-only"; echo "ECE before scaling = 0.0456" > out.txt';
    const rec = await validateTask({ task: await load(), run, out: path.join(dir, 'setup-ok'), cacheDir: cache });
    assert.equal(rec.exitCode, 0);
    assert.deepEqual(rec.setup, ['test -f calibrate.sh', 'echo "prepared" > prepared.txt']);
    assert.equal(rec.setupFailed, false);
    assert.deepEqual(rec.mounts, [{ host: data, container: '/data/in' }]);
    const stdout = await fsp.readFile(path.join(dir, 'setup-ok', 'stdout.log'), 'utf8');
    assert.match(stdout, /prepared/);
    assert.match(stdout, /mount is read-only/);
    await assert.rejects(fsp.stat(path.join(data, 'new.txt')));
    assert.deepEqual(rec.changedFiles, ['out.txt'], 'the files the setup wrote are not the command\'s');
    assert.equal(rec.claims.claims.find((c) => c.text === '0.0123')?.found, true, 'read from the mounted data');
    // a failing setup line: the command is not run, the setup's exit code recorded
    await curation(['echo "setting up"', 'exit 3', 'echo never'], data);
    const failed = await validateTask({ task: await load(), run: 'echo "the command ran"', out: path.join(dir, 'setup-failed'), cacheDir: cache });
    assert.equal(failed.setupFailed, true);
    assert.equal(failed.exitCode, 3);
    const log = await fsp.readFile(path.join(dir, 'setup-failed', 'combined.log'), 'utf8');
    assert.match(log, /setting up/);
    assert.doesNotMatch(log, /the command ran|never/);
    assert.match(log, /the environment's setup failed \(exit 3\); the command was not run/);
    // a mount whose host folder is missing is refused before any container is made
    await curation([], path.join(dir, 'no-such-data'));
    await assert.rejects(validateTask({ task: await load(), run: 'true', out: path.join(dir, 'no-mount'), cacheDir: cache }), /environment\.mounts\[0\]\.host.*no-such-data.*does not exist/s);
  });

  it('a repository that cannot be had is a precise error naming it, and nothing is run', async () => {
    const missing = path.join(dir, 'no-such-repo');
    const r = await cli('curate', 'validate', 'conf/7/0', '--dataset', ds, '--no-sample', '--cache', cache, '--source', missing, '--run', 'true', '--out', path.join(dir, 'missing'));
    assert.notEqual(r.code, 0);
    assert.ok(r.stderr.includes(missing), r.stderr);
    await assert.rejects(fsp.stat(path.join(dir, 'missing', 'validation.json')));
  });
});
