// `curate validate --placement local|slurm` (issue 31, item 4): the validation handed to the run
// sets' placement interface as one unit whose process is the project's CLI; the record it wrote
// read back with where it ran. Real git, real Docker, the real local placement (a child process
// of the CLI), and the real Slurm when this machine has one (scripts/setup-slurm.sh).
import * as assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { promises as fsp } from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import type { PlacedValidationRecord } from '../../src/core/flows/placedValidation';
import { requireDocker } from '../harness/docker';
import { paperRepo, writePaper } from '../harness/curationFixture';
import { requireSlurm } from '../harness/slurm';

const ROOT = path.resolve(__dirname, '../../..');
const CLI = path.join(ROOT, 'out', 'src', 'cli', 'main.js');

function cli(args: string[], env: NodeJS.ProcessEnv = {}): Promise<{ code: number; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    // the placed process runs this same CLI (EXPBENCH_CLI), as `projectCli` starts it
    execFile(process.execPath, [CLI, ...args], { cwd: ROOT, maxBuffer: 64 * 1024 * 1024, env: { ...process.env, EXPBENCH_CLI: CLI, ...env } }, (err, stdout, stderr) => {
      resolve({ code: err ? (typeof err.code === 'number' ? err.code : 1) : 0, stdout, stderr });
    });
  });
}

describe('curate validate --placement: through the run sets\' placement interface (real git, Docker, local placement, Slurm)', function () {
  this.timeout(300_000);
  let dir: string;
  let ds: string;
  let cache: string;
  before(async () => {
    dir = await fsp.mkdtemp(path.join(os.tmpdir(), 'expbench-placed-'));
    cache = path.join(dir, 'cache');
    const repo = await paperRepo(path.join(dir, 'paper-repo'));
    const pin = await repo.commit({ 'calibrate.sh': 'echo "ECE before scaling = 0.0456"\necho "ECE after scaling: 0.0123" > result.txt\n' }, 'the pin');
    ds = path.join(dir, 'ds');
    await writePaper(ds, 'conf/7', {
      questions: [{
        question: 'Does temperature scaling lower the ECE?', method: 'scale', masked_source: ['/workspace/calibrate.sh'], source: ['/workspace/calibrate.sh'],
        expected_outcome: 'The ECE falls from 0.0456 to 0.0123 after scaling.', usage_instructions: 'Run bash calibrate.sh.',
      }],
      curation: { version: 1, paper: 'conf/7', repository: { url: repo.dir, commit: pin }, environment: { baseImage: 'expbench/sandbox:1', gpus: 0, limits: { timeSeconds: 60, memoryMiB: 512, cpus: 1 } } },
    });
  });
  after(async () => { await fsp.rm(dir, { recursive: true, force: true }); });

  it('--placement local: the unit runs `curate validate` as a process of its own; the record says where it ran and what it found', async function () {
    await requireDocker(this);
    const out = path.join(dir, 'local');
    const r = await cli(['curate', 'validate', 'conf/7/0', '--dataset', ds, '--no-sample', '--cache', cache, '--run', 'bash calibrate.sh', '--out', out, '--placement', 'local', '--json']);
    assert.equal(r.code, 0, r.stderr);
    const rec = JSON.parse(r.stdout) as PlacedValidationRecord;
    assert.deepEqual(JSON.parse(await fsp.readFile(path.join(out, 'validation.json'), 'utf8')), rec);
    assert.equal(rec.placement.kind, 'local');
    assert.match(rec.placement.id, /^[^/]+\/\d+\/\d+$/); // the unit's own process: <host>/<pid>/<start ticks>
    assert.equal(rec.exitCode, 0);
    assert.equal(rec.limits.timeoutMs, 60_000);
    assert.deepEqual(rec.claims.claims.map((c) => [c.text, c.found]).sort(), [['0.0123', true], ['0.0456', true]]);
    // the placed process's own output, beside the record
    assert.match(await fsp.readFile(path.join(out, 'placement.log'), 'utf8'), /conf\/7\/0/);
  });

  it('refuses a placement this build does not have, and --partition without slurm, naming the option', async () => {
    const a = await cli(['curate', 'validate', 'conf/7/0', '--dataset', ds, '--no-sample', '--run', 'true', '--out', path.join(dir, 'x'), '--placement', 'cloud']);
    assert.notEqual(a.code, 0);
    assert.match(a.stderr, /--placement cloud/);
    const b = await cli(['curate', 'validate', 'conf/7/0', '--dataset', ds, '--no-sample', '--run', 'true', '--out', path.join(dir, 'y'), '--placement', 'local', '--partition', 'gpu']);
    assert.notEqual(b.code, 0);
    assert.match(b.stderr, /--partition.*goes with --placement slurm, not local/);
  });

  it('--placement slurm: a batch job on the local Slurm completes with its record (CPU only here)', async function () {
    const conf = await requireSlurm(this); // sets SLURM_CONF for the CLI and its placement
    await requireDocker(this);
    const out = path.join(dir, 'slurm');
    const r = await cli(['curate', 'validate', 'conf/7/0', '--dataset', ds, '--no-sample', '--cache', cache, '--run', 'bash calibrate.sh', '--out', out, '--placement', 'slurm', '--partition', 'main', '--json'], { SLURM_CONF: conf });
    assert.equal(r.code, 0, r.stderr);
    const rec = JSON.parse(r.stdout) as PlacedValidationRecord;
    assert.equal(rec.placement.kind, 'slurm');
    assert.equal(rec.placement.partition, 'main');
    assert.match(rec.placement.id, /^\d+_\d+$/); // <array job id>_<index>
    assert.equal(rec.exitCode, 0);
    assert.deepEqual(rec.claims.claims.map((c) => [c.text, c.found]).sort(), [['0.0123', true], ['0.0456', true]]);
  });
});
