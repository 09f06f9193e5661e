/**
 * The three sandbox Dockerfiles keep ONE contract (v1): the offline one (built here by
 * build-offline.sh) and the two for users with network (Dockerfile: Debian; Dockerfile.cuda:
 * nvidia/cuda), whose registry bases cannot be pulled here. Checked textually (final stage:
 * label, user, uid/gid, workdir, environment, command, packages), and sandbox/Dockerfile is also
 * BUILT on the offline builder's debootstrapped Debian base, then the contract is checked inside.
 */
import * as assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { promisify } from 'node:util';
import type Docker from 'dockerode';
import { CONTRACT_LABEL, CONTRACT_VERSION, DEFAULT_IMAGE, execText, createContainer, removeContainer } from '../../src/core/sandbox';
import { ensureTestImage, requireDocker } from '../harness/docker';
import { repoRoot } from '../harness/paths';

const run = promisify(execFile);
const SANDBOX = path.join(repoRoot, 'sandbox');
const FILES = ['Dockerfile.offline', 'Dockerfile', 'Dockerfile.cuda'];

/** Instructions of a Dockerfile: continuation lines joined, comments dropped, `KEYWORD args`. */
function instructions(file: string): { op: string; args: string }[] {
  const text = fs.readFileSync(path.join(SANDBOX, file), 'utf8').split('\n').filter((l) => !/^\s*#/.test(l)).join('\n');
  return text.replace(/\\\n/g, ' ').split('\n').map((l) => l.trim()).filter(Boolean)
    .map((l) => { const [op, ...rest] = l.split(/\s+/); return { op: op.toUpperCase(), args: rest.join(' ') }; });
}

/** The contract-relevant facts of a Dockerfile, normalised for comparison. */
function contract(file: string) {
  const ins = instructions(file);
  const last = (op: string) => ins.filter((i) => i.op === op).at(-1)?.args;
  const labels = Object.fromEntries([...ins.filter((i) => i.op === 'LABEL').map((i) => i.args).join(' ')
    .matchAll(/([\w.-]+)="([^"]*)"/g)].map((m) => [m[1], m[2]]));
  const env = Object.fromEntries([...ins.filter((i) => i.op === 'ENV').map((i) => i.args).join(' ')
    .matchAll(/([A-Z_]+)=(\S+)/g)].map((m) => [m[1], m[2]]));
  const runs = ins.filter((i) => i.op === 'RUN').map((i) => i.args.replace(/\s+/g, ' '));
  const solverRun = runs.find((r) => r.includes('useradd')) ?? '';
  return {
    contractLabel: labels[CONTRACT_LABEL],
    user: last('USER'),
    workdir: last('WORKDIR'),
    cmd: last('CMD'),
    env,
    solverRun,
    from: ins.filter((i) => i.op === 'FROM').map((i) => i.args),
  };
}

describe('sandbox Dockerfiles: one contract', function () {
  it('the offline, Debian and CUDA Dockerfiles agree on label, user, uid, workdir, environment and command', () => {
    const [offline, ...online] = FILES.map((f) => ({ file: f, c: contract(f) }));
    assert.equal(offline.c.contractLabel, CONTRACT_VERSION);
    assert.equal(offline.c.user, 'solver');
    assert.equal(offline.c.workdir, '/workspace');
    assert.match(offline.c.solverRun, /useradd --uid 1000 --gid 1000 .*solver/);
    assert.match(offline.c.solverRun, /safe\.directory '\*'/);
    for (const { file, c } of online) {
      assert.deepEqual({ ...c, from: undefined }, { ...offline.c, from: undefined }, `${file} differs from Dockerfile.offline`);
      assert.deepEqual(c.from, ['${BASE_IMAGE}'], `${file}: FROM is the BASE_IMAGE argument (so it can be built on any base)`);
    }
    assert.match(fs.readFileSync(path.join(SANDBOX, 'Dockerfile'), 'utf8'), /^ARG BASE_IMAGE=debian:/m);
    assert.match(fs.readFileSync(path.join(SANDBOX, 'Dockerfile.cuda'), 'utf8'), /^ARG BASE_IMAGE=nvidia\/cuda:/m);
  });

  it('the Dockerfiles for users with network install exactly the packages of packages.txt', () => {
    for (const file of ['Dockerfile', 'Dockerfile.cuda']) {
      const ins = instructions(file);
      assert.ok(ins.some((i) => i.op === 'COPY' && i.args.startsWith('packages.txt ')), `${file} copies packages.txt`);
      assert.ok(ins.some((i) => i.op === 'RUN' && /apt-get install .*\$\(grep -v .*expbench-packages\.txt/.test(i.args)), `${file} installs from packages.txt`);
    }
    assert.match(fs.readFileSync(path.join(SANDBOX, 'build-offline.sh'), 'utf8'), /packages\.txt/);
  });

  describe('sandbox/Dockerfile built on the offline Debian base (real Docker)', function () {
    this.timeout(300_000);
    let docker: Docker;
    const tag = `expbench/sandbox-dockerfile-check:${process.pid}`;

    before(async function () {
      this.timeout(15 * 60_000);
      await ensureTestImage();
      docker = await requireDocker(this);
    });
    after(async () => { if (docker) await docker.getImage(tag).remove({ force: true }).catch(() => undefined); });

    it('builds, and the result keeps the contract: label, uid 1000 in /workspace, python3, pip, git, gcc', async () => {
      const base = (await docker.getImage(DEFAULT_IMAGE).inspect()).Config.Labels['expbench.base'];
      assert.match(base, /^expbench\/sandbox-base:/);
      // --network host: the build's apt-get reaches the Debian mirror even when the engine has no bridge.
      await run('docker', ['build', '--network', 'host', '--build-arg', `BASE_IMAGE=${base}`, '-t', tag, '-f', path.join(SANDBOX, 'Dockerfile'), SANDBOX],
        { env: { ...process.env, DOCKER_BUILDKIT: '0' }, maxBuffer: 64 * 1024 * 1024 });
      const info = await docker.getImage(tag).inspect();
      assert.equal(info.Config.Labels[CONTRACT_LABEL], CONTRACT_VERSION);
      const c = await createContainer(docker, { image: tag, labels: { task: 't/1/0', session: `dockerfile-check-${process.pid}`, role: 'verify' }, limits: { network: false }, user: 'solver', workdir: '/workspace' });
      try {
        const r = await execText(c.container, { cmd: ['sh', '-c', 'id -u; pwd; python3 --version; python3 -m pip --version >/dev/null && echo pip; git --version >/dev/null && echo git; gcc --version >/dev/null && echo gcc; python3 -c "import numpy; print(\'numpy\')"'] });
        assert.equal(r.exitCode, 0, r.stderr);
        const [uid, cwd, py, ...tools] = r.stdout.trim().split('\n');
        assert.deepEqual([uid, cwd], ['1000', '/workspace']);
        assert.match(py, /^Python 3\.\d+/);
        assert.deepEqual(tools, ['pip', 'git', 'gcc', 'numpy']);
      } finally {
        await removeContainer(docker, c.id);
      }
    });
  });
});
