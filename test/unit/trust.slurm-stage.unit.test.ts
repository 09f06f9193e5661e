/**
 * The CLI the Slurm jobs start from a shared folder (`placement.sharedDir`, stage.ts): a
 * `dist/cli.js` already at `<sharedDir>/.expbench/cli/<hash>/` was taken as it was, so another
 * user of a shared folder who wrote a program there (the hash is computable from the release) had
 * it run as the submitter in every job. Now the copy and the folders above it must be this user's
 * alone and hold the same bytes, and each job checks the SHA-256 before it starts the CLI (the
 * job script run here by real bash, as slurmd runs it).
 */
import * as assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { isExpBenchError } from '../../src/core/errors';
import { jobScript } from '../../src/core/placement/slurm/script';
import { stageCli } from '../../src/core/placement/slurm/stage';

describe('trust: the CLI staged for Slurm jobs in a shared folder', function () {
  this.timeout(60_000);
  let base: string;
  let pkg: string;
  let shared: string;
  const BUNDLE = "require('fs').writeFileSync(process.argv[2], 'the real CLI ran');\n";
  const cli = () => ({ exe: process.execPath, args: [path.join(pkg, 'dist', 'cli.js')], env: {} });
  const hashDir = () => {
    const h = createHash('sha256').update(fs.readFileSync(path.join(pkg, 'dist', 'cli.js'))).update(fs.readFileSync(path.join(pkg, 'package.json'))).digest('hex').slice(0, 16);
    return path.join(shared, '.expbench', 'cli', h);
  };
  const refused = (re: RegExp) => (e: unknown) => isExpBenchError(e, 'BAD_INPUT') && re.test((e as Error).message);

  beforeEach(() => {
    base = fs.mkdtempSync(path.join(os.tmpdir(), 'expbench-slurm-stage-'));
    pkg = path.join(base, 'pkg');
    fs.mkdirSync(path.join(pkg, 'dist'), { recursive: true });
    fs.writeFileSync(path.join(pkg, 'package.json'), '{"name":"expbench-workbench"}');
    fs.writeFileSync(path.join(pkg, 'dist', 'cli.js'), BUNDLE);
    shared = path.join(base, 'shared');
    fs.mkdirSync(shared, { mode: 0o777 });
    fs.chmodSync(shared, 0o777); // a lab's shared folder: everybody may write in it
  });
  afterEach(() => fs.rmSync(base, { recursive: true, force: true }));

  it('stages a copy of its own (0755 folders), and takes it again; its SHA-256 is returned', async () => {
    const a = await stageCli(cli(), shared);
    assert.equal(a.script, path.join(hashDir(), 'dist', 'cli.js'));
    assert.equal(a.sha256, createHash('sha256').update(BUNDLE).digest('hex'));
    for (const d of ['.expbench', '.expbench/cli']) assert.equal(fs.statSync(path.join(shared, d)).mode & 0o777, 0o755, d);
    assert.deepEqual(await stageCli(cli(), shared), a);
  });

  it('a program planted at the copy\'s place is refused, never started: other bytes, a link, a folder others can write', async () => {
    fs.mkdirSync(path.join(hashDir(), 'dist'), { recursive: true });
    fs.writeFileSync(path.join(hashDir(), 'package.json'), '{"name":"expbench-workbench"}');
    fs.writeFileSync(path.join(hashDir(), 'dist', 'cli.js'), "require('fs').writeFileSync('/dev/null', 'planted');\n");
    await assert.rejects(stageCli(cli(), shared), refused(/cli\.js: is not the CLI being staged/));
    fs.rmSync(path.join(hashDir(), 'dist', 'cli.js'));
    fs.symlinkSync(path.join(pkg, 'dist', 'cli.js'), path.join(hashDir(), 'dist', 'cli.js'));
    await assert.rejects(stageCli(cli(), shared), refused(/is not a file \(a symbolic link\)/));
    fs.rmSync(path.join(shared, '.expbench'), { recursive: true });
    fs.mkdirSync(path.join(shared, '.expbench'));
    fs.chmodSync(path.join(shared, '.expbench'), 0o777);
    await assert.rejects(stageCli(cli(), shared), refused(/\.expbench: can be written by its group \(mode 777\)/));
  });

  it('a CLI the user put in the shared folder is held to the same rule: refused when others can write it, else taken with its SHA-256', async () => {
    const own = path.join(shared, 'tools');
    fs.cpSync(pkg, own, { recursive: true });
    fs.chmodSync(own, 0o755);
    fs.chmodSync(path.join(own, 'dist'), 0o777);
    const entry = { exe: process.execPath, args: [path.join(own, 'dist', 'cli.js')], env: {} };
    await assert.rejects(stageCli(entry, shared), refused(/tools\/dist: can be written by its group \(mode 777\)/));
    fs.chmodSync(path.join(own, 'dist'), 0o755);
    fs.chmodSync(path.join(own, 'dist', 'cli.js'), 0o644);
    assert.deepEqual(await stageCli(entry, shared), { script: entry.args[0], sha256: createHash('sha256').update(BUNDLE).digest('hex') });
  });

  it('the bundled samples are copied without group or others\' write (an install under umask 002 has 0664 files)', async () => {
    fs.mkdirSync(path.join(pkg, 'samples', 'exp-bench'), { recursive: true });
    fs.writeFileSync(path.join(pkg, 'samples', 'exp-bench', 'task.json'), '{}');
    fs.chmodSync(path.join(pkg, 'samples', 'exp-bench', 'task.json'), 0o664);
    fs.chmodSync(path.join(pkg, 'samples', 'exp-bench'), 0o775);
    fs.chmodSync(path.join(pkg, 'samples'), 0o777);
    const a = await stageCli(cli(), shared);
    const root = path.dirname(path.dirname(a.script));
    assert.deepEqual(['samples', 'samples/exp-bench', 'samples/exp-bench/task.json'].map((r) => (fs.lstatSync(path.join(root, r)).mode & 0o777).toString(8)), ['755', '755', '644']);
  });

  it('a job whose staged CLI changed after staging stops before starting it (exit 1, said in its log); the unchanged one starts', async () => {
    const staged = await stageCli(cli(), shared);
    const run = (name: string) => {
      const log = path.join(base, `${name}.log`);
      const out = path.join(base, `${name}.out`);
      const text = jobScript({
        name: 'expbench-rs-x', runSet: 'rs', title: 't', resources: { cpus: 1, memoryMiB: 100, gpus: 0, timeSeconds: 60 },
        elements: [{ unit: 'k0', args: [out], logFile: log }], throttle: 1, exportNames: [], env: {}, cwd: base,
        node: process.execPath, cliArgs: [staged.script], cliSha256: staged.sha256, container: 'docker',
      });
      const r = spawnSync('bash', ['-c', text], { env: { ...process.env, SLURM_ARRAY_TASK_ID: '0', SLURM_ARRAY_JOB_ID: '1', SLURM_JOB_ID: '1' }, encoding: 'utf8' });
      return { code: r.status, log: fs.readFileSync(log, 'utf8'), ran: fs.existsSync(out) };
    };
    const ok = run('ok');
    assert.equal(ok.code, 0, ok.log);
    assert.ok(ok.ran, ok.log);
    // the co-tenant's move, after staging: a program of theirs where the job starts the CLI
    fs.rmSync(path.join(shared, '.expbench'), { recursive: true });
    fs.mkdirSync(path.dirname(staged.script), { recursive: true });
    fs.writeFileSync(staged.script, "require('fs').writeFileSync(process.argv[2], 'planted');\n");
    const bad = run('bad');
    assert.equal(bad.code, 1, bad.log);
    assert.ok(!bad.ran, 'the planted program did not run');
    assert.match(bad.log, /is not the CLI that was staged for this job \(its SHA-256 differs\): not started/);
  });
});
