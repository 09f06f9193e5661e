import * as assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { promises as fsp } from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { validateTask, type ValidationRecord } from '../../src/core/flows/validateTask';
import { git } from '../../src/core/git';
import { findTask, loadDatasets } from '../../src/core/tasks/loader';
import type { Task } from '../../src/core/tasks/types';

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
    const repo = path.join(dir, 'paper-repo');
    await fsp.mkdir(repo);
    await git(['init', '-q', '-b', 'main'], { cwd: repo });
    // First commit (the pin): the script prints the expected numbers. Second (HEAD): it prints others.
    for (const ece of ['0.0123', '0.9999']) {
      await fsp.writeFile(path.join(repo, 'calibrate.sh'), `echo "ECE before scaling = 0.0456"\necho "ECE after scaling: ${ece}" > result.txt\n`);
      await git(['add', '-A'], { cwd: repo });
      await git(['-c', 'user.name=t', '-c', 'user.email=t@localhost', 'commit', '-q', '-m', ece], { cwd: repo });
      if (!pinned) pinned = (await git(['rev-parse', 'HEAD'], { cwd: repo })).text.trim();
    }
    ds = path.join(dir, 'ds');
    const d = path.join(ds, 'tasks', 'conf', '7');
    await fsp.mkdir(d, { recursive: true });
    await fsp.writeFile(path.join(d, '7_complete_final.json'), JSON.stringify({
      questions: [{
        question: 'Does temperature scaling lower the ECE?', method: 'scale', masked_source: ['/workspace/calibrate.sh'], source: ['/workspace/calibrate.sh'],
        expected_outcome: 'The ECE falls from 0.0456 to 0.0123 after scaling, while accuracy stays at 0.871.',
        usage_instructions: 'Run bash calibrate.sh and read result.txt.',
      }],
    }));
    await fsp.writeFile(path.join(d, 'curation.jsonc'), `{ "version": 1, "paper": "conf/7",
      "repository": { "url": "${repo}", "commit": "${pinned}" },
      "environment": { "baseImage": "expbench/sandbox:1", "limits": { "timeSeconds": 60 } } }\n`);
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

  it('a repository that cannot be had is a precise error naming it, and nothing is run', async () => {
    const missing = path.join(dir, 'no-such-repo');
    const r = await cli('curate', 'validate', 'conf/7/0', '--dataset', ds, '--no-sample', '--cache', cache, '--source', missing, '--run', 'true', '--out', path.join(dir, 'missing'));
    assert.notEqual(r.code, 0);
    assert.ok(r.stderr.includes(missing), r.stderr);
    await assert.rejects(fsp.stat(path.join(dir, 'missing', 'validation.json')));
  });
});
