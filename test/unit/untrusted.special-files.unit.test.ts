import * as assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { promises as fsp } from 'node:fs';
import * as net from 'node:net';
import * as os from 'node:os';
import * as path from 'node:path';
import { performance } from 'node:perf_hooks';
import { prepareTask } from '../../src/core/flows/prepareTask';
import { SessionLayout } from '../../src/core/layout';
import { bundledDatasetDir } from '../../src/core/paths';
import { findTask, loadDatasets } from '../../src/core/tasks/loader';
import { detectFormat } from '../../src/core/trajectory/detect';
import { copyUntrusted, readUntrustedText, readUntrustedWindow, LIMITS } from '../../src/core/untrusted';
import { runVerification } from '../../src/core/verify/run';
import { requireDocker } from '../harness/docker';

// Issue 33, item 1 (special files anywhere in a workspace) and issue 26's links: every host read of
// the solver's files refuses a FIFO, a socket, a device and a link that leads out, at once and
// saying what it is; it never waits on one. Kept as a file of its own (the patch and the verifier's
// tree are being rebuilt on the host's repository at the same time).

const servers: net.Server[] = [];

/** The special entries of the variants: a FIFO, a socket, a link to /dev/zero, a link to a FIFO, a link out of the folder. */
async function plant(dir: string): Promise<Record<string, string>> {
  const fifo = path.join(dir, 'pipe');
  execFileSync('mkfifo', [fifo]);
  const sock = path.join(dir, 'sock');
  const server = net.createServer().listen(sock);
  await new Promise((r) => server.once('listening', r));
  servers.push(server); // listening until the test ends (closing removes the socket file)
  const zero = path.join(dir, 'zero'); await fsp.symlink('/dev/zero', zero);
  const toFifo = path.join(dir, 'to-pipe'); await fsp.symlink('pipe', toFifo);
  const out = path.join(dir, 'out'); await fsp.symlink('/etc/hostname', out);
  return { 'a FIFO': fifo, 'a socket': sock, 'a link to /dev/zero': zero, 'a link to a FIFO': toFifo, 'a link out of the workspace': out };
}

describe('special files in a workspace: refused at once, never opened blocking', function () {
  this.timeout(180_000);
  let dir: string;
  beforeEach(async () => { dir = await fsp.mkdtemp(path.join(os.tmpdir(), 'expbench-special-')); });
  afterEach(async () => {
    for (const s of servers.splice(0)) s.close();
    await fsp.rm(dir, { recursive: true, force: true });
  });

  it('the untrusted reader (whole, windowed, copy) refuses each variant, naming what it is', async () => {
    const entries = await plant(dir);
    const words: Record<string, RegExp> = {
      'a FIFO': /is a FIFO \(named pipe\), not a regular file/,
      'a socket': /is a socket, not a regular file/,
      'a link to /dev/zero': /leads out of .* \(to \/dev\/zero\)|is a symbolic link/,
      'a link to a FIFO': /is a FIFO \(named pipe\)|is a symbolic link/,
      'a link out of the workspace': /leads out of .* \(to \/etc\/hostname\)/,
    };
    for (const [what, p] of Object.entries(entries)) {
      for (const links of ['refuse', 'inside'] as const) {
        const t0 = performance.now();
        await assert.rejects(readUntrustedText(p, { within: dir, links, maxBytes: LIMITS.workspaceFileBytes }), links === 'refuse' && what.startsWith('a link') ? /is a symbolic link/ : words[what], `${what} (${links})`);
        await assert.rejects(readUntrustedWindow(p, { within: dir, links, maxBytes: 1024 }), /not a regular file|symbolic link|leads out of/, `${what} (window)`);
        await assert.rejects(copyUntrusted(p, path.join(dir, `copy-${links}`), { within: dir, links, maxBytes: 1024 }), /not a regular file|symbolic link|leads out of/, `${what} (copy)`);
        assert.ok(performance.now() - t0 < 5000, `${what}: answered at once`);
      }
    }
    // a link that stays inside is read when allowed, and the size limit names the input
    await fsp.writeFile(path.join(dir, 'real.txt'), 'x'.repeat(2000));
    await fsp.symlink('real.txt', path.join(dir, 'inner'));
    assert.equal((await readUntrustedText(path.join(dir, 'inner'), { within: dir, links: 'inside', maxBytes: 4096 }))?.length, 2000);
    await assert.rejects(readUntrustedText(path.join(dir, 'real.txt'), { within: dir, maxBytes: 1000, what: 'the note file' }), /real\.txt: the note file is 2,000 bytes, over the limit of 1,000 bytes/);
    const w = await readUntrustedWindow(path.join(dir, 'real.txt'), { maxBytes: 100 });
    assert.equal(w?.leftOut, 1900);
  });

  it('traj import / traj show: a FIFO (or a link to one) given as a trajectory is refused at once (was a hang)', async () => {
    const entries = await plant(dir);
    for (const what of ['a FIFO', 'a link to a FIFO', 'a socket']) {
      const t0 = performance.now();
      await assert.rejects(detectFormat(entries[what]), /not a regular file/, what);
      assert.ok(performance.now() - t0 < 5000, `${what}: answered at once`);
    }
  });

  describe('verify (Docker)', () => {
    before(async function () { await requireDocker(this); });
    it('a FIFO reproduce_exp_bench.sh (and a link to one, a link out): the verifier refuses at once, saying why (was > 90 s with --timeout 10)', async () => {
      const task = findTask(await loadDatasets([bundledDatasetDir()]), 'sample/toycal/0')!;
      const root = path.join(dir, 's');
      await prepareTask({ task, outDir: root, cacheDir: path.join(dir, 'cache') });
      const l = new SessionLayout(root);
      const variants: Array<[string, () => Promise<void>, RegExp]> = [
        ['a FIFO', async () => { execFileSync('mkfifo', [l.script]); }, /reproduce_exp_bench\.sh: is a FIFO \(named pipe\)/],
        ['a link to a FIFO', async () => { execFileSync('mkfifo', [path.join(l.workspace, 'p')]); await fsp.symlink('p', l.script); }, /is a FIFO \(named pipe\)/],
        ['a link out of the workspace', async () => { await fsp.symlink('/etc/hostname', l.script); }, /leads out of/],
      ];
      for (const [what, make, message] of variants) {
        await fsp.rm(l.script, { force: true });
        await fsp.rm(path.join(l.workspace, 'p'), { force: true });
        await make();
        const t0 = performance.now();
        await assert.rejects(runVerification(root, { limits: { timeoutMs: 10_000 } }), message, what);
        assert.ok(performance.now() - t0 < 60_000, `${what}: refused in ${Math.round(performance.now() - t0)} ms`);
      }
    });
  });
});
