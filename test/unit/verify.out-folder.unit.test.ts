/**
 * The verify run's output folder (`private/verify/<runId>/out`, bind-mounted read-write at
 * /tmp/.expbench) is the solver's to write: its script runs in the same container as the wrapper.
 * The host reads `changed.tar` and the markers from it through the untrusted room: no link
 * followed (a link to a host path written after Submit would change the result), no blocking open
 * of a FIFO, a size cap. Real Docker and expbench/sandbox:1 for the two reproductions (a link to a
 * tar written after Submit; a link to a FIFO); the host reader alone for a directory, a socket,
 * an oversized file, a FIFO and a link in place of `changed.tar`.
 */
import * as assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as net from 'node:net';
import * as os from 'node:os';
import * as path from 'node:path';
import type Docker from 'dockerode';
import { ExpBenchError } from '../../src/core/errors';
import { SessionLayout } from '../../src/core/layout';
import { submit } from '../../src/core/session/submit';
import { LIMITS } from '../../src/core/untrusted';
import { runVerification } from '../../src/core/verify';
import { collectChangedFiles } from '../../src/core/verify/container-io';
import { readLatestRecord, type VerificationRecord } from '../../src/core/verify/record';
import { assertNoContainers, requireDocker } from '../harness/docker';
import { makeSessionFolder } from './session-fixtures';

const CONCLUSION = 'The accuracy was 0.8731, the recall 0.6623, the F1 0.7412 and the loss 1.2946.';

describe('verify: the run\'s output folder is read as untrusted (real Docker)', function () {
  this.timeout(300_000);
  let docker: Docker;
  let layout: SessionLayout;
  let late: string;

  before(async function () {
    docker = await requireDocker(this);
    layout = await makeSessionFolder();
    late = path.join(layout.workspace, '.late');
    // The script plants a link to a host path (learned in the container from /proc/self/mountinfo)
    // where the wrapper writes its archive; in the container that path does not exist, so the
    // wrapper's tar fails and the link stays. The link's target is picked by an env-free marker file.
    fs.writeFileSync(layout.script, [
      '#!/bin/bash',
      'echo "no numbers here"',
      `ln -sfn "$(cat link-target.txt)" /tmp/.expbench/changed.tar`,
      'exit 0', '',
    ].join('\n'));
    fs.writeFileSync(path.join(layout.workspace, 'link-target.txt'), path.join(late, 'fake.tar'));
    await submit(layout, { design: 'd', conclusion: CONCLUSION });
  });
  after(async () => {
    if (docker) await assertNoContainers(docker, [path.basename(layout.root)]);
    fs.rmSync(layout.root, { recursive: true, force: true });
  });

  it('a link to a tar written after Submit does not change the result (was 4/4 found at results.txt:1)', async () => {
    // After Submit: the solver writes workspace/.late/fake.tar holding results.txt with the numbers.
    const src = fs.mkdtempSync(path.join(os.tmpdir(), 'expbench-fake-'));
    fs.mkdirSync(path.join(src, 'workspace'));
    fs.writeFileSync(path.join(src, 'workspace', 'results.txt'), '0.8731 0.6623 0.7412 1.2946\n');
    fs.mkdirSync(late, { recursive: true });
    execFileSync('tar', ['-cf', path.join(late, 'fake.tar'), '-C', src, 'workspace/results.txt']);
    fs.rmSync(src, { recursive: true, force: true });
    const r = await verifyRefused(layout);
    assert.equal(r.E_claims.claims.length, 4, 'the conclusion has 4 numeric claims (the check can find them)');
    assert.ok(r.E_claims.claims.every((c) => !c.found), `no claim found: ${JSON.stringify(r.E_claims.claims)}`);
    assert.ok(!r.changedFiles.includes('results.txt'), 'results.txt is not in the submitted tree nor made by the run');
    assert.equal(r.status, 'error');
    assert.match(r.error?.message ?? '', /changed\.tar/);
    assert.match(r.error?.message ?? '', /symbolic link/);
    assert.equal(r.E_exit, false);
  });

  it('a link to a FIFO does not block the verifier; the record is not left "running"', async function () {
    this.timeout(180_000);
    fs.mkdirSync(late, { recursive: true });
    fs.rmSync(path.join(late, 'fake.tar'), { force: true });
    execFileSync('mkfifo', [path.join(late, 'fake.tar')]);
    const r = await verifyRefused(layout);
    assert.equal(r.status, 'error', 'the record is settled, not left "running"');
    assert.match(r.error?.message ?? '', /changed\.tar.*symbolic link/s);
    assert.ok(r.E_claims.claims.every((c) => !c.found));
  });
});

describe('verify: a tree-incomplete marker the script writes is not believed (real Docker)', function () {
  this.timeout(300_000);
  let docker: Docker;
  let layout: SessionLayout;

  before(async function () {
    docker = await requireDocker(this);
    layout = await makeSessionFolder();
    // The script ran (its output is in the log), then forges the wrapper's marker of a cut tree
    // and exits 125, as the wrapper does when it refuses to run: a failed run (E false) would
    // become an interrupted one (E not verified, out of E, I·E and All·E).
    fs.writeFileSync(layout.script, ['#!/bin/bash', 'echo "the script ran"', 'touch /tmp/.expbench/tree-incomplete', 'exit 125', ''].join('\n'));
    await submit(layout, { design: 'd', conclusion: CONCLUSION });
  });
  after(async () => {
    if (docker) await assertNoContainers(docker, [path.basename(layout.root)]);
    fs.rmSync(layout.root, { recursive: true, force: true });
  });

  it('the host sent the whole tree: the run is the script\'s own exit 125 (E false), not "the clean tree did not arrive complete"', async () => {
    const r = await runVerification(layout.root, { mode: 'clean', limits: { timeoutMs: 60_000 } });
    assert.equal(r.exitCode, 125, JSON.stringify(r.error));
    assert.equal(r.E_exit, false);
    assert.doesNotMatch(r.error?.message ?? '', /did not arrive complete/);
    assert.notEqual(r.status, 'error', `the record is the script's failed run: ${JSON.stringify(r.error)}`);
  });
});

/** Runs the verifier, which refuses the run (CONTAINER_FAILED naming changed.tar), and returns the record it saved. */
async function verifyRefused(layout: SessionLayout): Promise<VerificationRecord> {
  await assert.rejects(runVerification(layout.root, { mode: 'clean', limits: { timeoutMs: 60_000 } }),
    (e: unknown) => e instanceof ExpBenchError && e.code === 'CONTAINER_FAILED' && /changed\.tar: is a symbolic link/.test(e.message));
  const { record } = await readLatestRecord(layout);
  assert.ok(record, 'a record was saved');
  return record;
}

describe('verify: collectChangedFiles refuses what is not a regular archive', () => {
  let dir: string;
  beforeEach(() => { dir = fs.mkdtempSync(path.join(os.tmpdir(), 'expbench-out-')); });
  afterEach(() => fs.rmSync(dir, { recursive: true, force: true }));
  const file = () => path.join(dir, 'changed.tar');

  async function refused(kind: RegExp): Promise<void> {
    await assert.rejects(collectChangedFiles(dir), (e: unknown) => {
      assert.ok(e instanceof ExpBenchError, String(e));
      assert.match(e.message, /changed\.tar/);
      assert.match(e.message, kind);
      return true;
    });
  }

  it('no archive: an empty list', async () => {
    assert.deepEqual(await collectChangedFiles(dir), []);
  });
  it('a regular archive: its text files', async () => {
    const src = fs.mkdtempSync(path.join(os.tmpdir(), 'expbench-src-'));
    fs.mkdirSync(path.join(src, 'workspace'));
    fs.writeFileSync(path.join(src, 'workspace', 'out.txt'), 'acc 0.5\n');
    execFileSync('tar', ['-cf', file(), '-C', src, 'workspace/out.txt']);
    fs.rmSync(src, { recursive: true, force: true });
    assert.deepEqual(await collectChangedFiles(dir), [{ source: 'out.txt', text: 'acc 0.5\n' }]);
  });
  it('a directory', async () => {
    fs.mkdirSync(file());
    await refused(/a directory/);
  });
  it('a socket', async () => {
    const server = net.createServer();
    await new Promise<void>((resolve) => server.listen(file(), resolve));
    try {
      await refused(/a socket/);
    } finally {
      server.close();
    }
  });
  it('a FIFO (not opened: never blocks)', async () => {
    execFileSync('mkfifo', [file()]);
    await refused(/FIFO/);
  });
  it('a symbolic link to a regular archive outside the folder', async () => {
    const outside = path.join(os.tmpdir(), `expbench-outside-${process.pid}.tar`);
    fs.writeFileSync(outside, '');
    try {
      fs.symlinkSync(outside, file());
      await refused(/symbolic link/);
    } finally {
      fs.rmSync(outside, { force: true });
    }
  });
  it(`an oversized file (over LIMITS.changedArchiveBytes), refused before it is read`, async () => {
    const fd = fs.openSync(file(), 'w');
    fs.ftruncateSync(fd, LIMITS.changedArchiveBytes + 1); // sparse: no disk used
    fs.closeSync(fd);
    await refused(/over the limit of/);
  });
});
