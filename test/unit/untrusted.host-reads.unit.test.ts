// Issue 26's links and races on host reads outside the proctor room: the binary copy of
// applyToCheckout (copyFile followed a link to any host file), the session claims' output files,
// the repository at step N and the Inspect export read the solver's files through the untrusted
// reader (no link followed out, no FIFO opened, bounded). Each case is planted after the patch or
// the run was taken, as a solver racing the host would.
import * as assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { promises as fsp } from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { prepareTask } from '../../src/core/flows/prepareTask';
import { SessionLayout } from '../../src/core/layout';
import { bundledDatasetDir } from '../../src/core/paths';
import { findTask, loadDatasets } from '../../src/core/tasks/loader';
import { claimsStatus } from '../../src/core/verify/sessionClaims';
import { applyToCheckout, checkoutTaskStart, makePatch } from '../../src/core/workspace/patch';

/** A host file with a distinctive line, outside every session. */
async function hostSecret(tmp: string): Promise<{ file: string; text: string }> {
  const file = path.join(tmp, 'host-only.txt');
  const text = 'host-only 0.98765 never in a session';
  await fsp.writeFile(file, text);
  return { file, text };
}

describe('host reads of the solver\'s files: links and FIFOs planted after the fact (issue 26)', function () {
  this.timeout(120_000);
  let tmp = '';
  let layout: SessionLayout;
  before(async () => {
    tmp = await fsp.mkdtemp(path.join(os.tmpdir(), 'expbench-host-reads-'));
    const task = findTask(await loadDatasets([bundledDatasetDir()]), 'sample/toycal/0')!;
    layout = new SessionLayout(path.join(tmp, 's'));
    await prepareTask({ task, outDir: layout.root, cacheDir: path.join(tmp, 'cache') });
  });
  after(async () => { await fsp.rm(tmp, { recursive: true, force: true }); });

  it('applyToCheckout: a binary file swapped for a link to a host file, or a FIFO, after the patch was made: the clean tree gets the patch\'s bytes, never the host file', async () => {
    const secret = await hostSecret(tmp);
    const bin = path.join(layout.workspace, 'weights.bin');
    await fsp.writeFile(bin, Buffer.from([0, 1, 2, 3, 0, 255]));
    const p = await makePatch(layout.workspace);
    assert.ok(p.files.some((f) => f.path === 'weights.bin' && f.binary), 'a binary file of the patch');
    for (const [what, plant] of [
      ['a link to a host file', () => fsp.symlink(secret.file, bin)],
      ['a FIFO', async () => { execFileSync('mkfifo', [bin]); }],
    ] as const) {
      await fsp.rm(bin, { force: true });
      await plant();
      const dest = path.join(tmp, `dest-${what.replace(/\W+/g, '-')}`);
      await checkoutTaskStart(layout.workspace, dest);
      // the binary comes from the patch's tree in the host's repository, never from the workspace's entry
      await applyToCheckout(layout.workspace, dest, p).catch((e: unknown) => { console.log(`  [${what}] ${(e as Error).message}`); });
      const st = await fsp.lstat(path.join(dest, 'weights.bin')).catch(() => undefined);
      console.log(`  [${what}] clean tree entry: ${st ? (st.isSymbolicLink() ? `a link to ${await fsp.readlink(path.join(dest, 'weights.bin'))}` : st.isFile() ? 'a file' : 'other') : 'none'}`);
      // the host never copies the host file's content into the clean tree (a link stays a link: the solver's, never followed on the host)
      if (st?.isFile()) {
        const copied = await fsp.readFile(path.join(dest, 'weights.bin'));
        assert.ok(!copied.toString('utf8').includes(secret.text), `${what}: the host file's content reached the clean tree`);
      }
    }
    await fsp.rm(bin, { force: true });
  });

  it('session claims: output files that are links out or FIFOs are not read (no hang, no host text among the outputs)', async () => {
    const secret = await hostSecret(tmp);
    const start = new Date(Date.now() - 5_000);
    const stamp = start.toISOString().replace(/[-:]/g, '').replace(/\.\d+Z$/, 'Z');
    await fsp.mkdir(layout.runs, { recursive: true });
    const results = path.join(layout.workspace, 'results');
    await fsp.mkdir(results, { recursive: true });
    // the run's log is made when it starts; its outputs are written during it; its last write ends it
    const log = path.join(layout.runs, `run-${stamp}-1.log`);
    await fsp.writeFile(log, 'training\n');
    await new Promise((r) => setTimeout(r, 20));
    await fsp.writeFile(path.join(results, 'real.txt'), 'ECE 0.0123\n');
    await fsp.symlink(secret.file, path.join(results, 'link.txt'));
    execFileSync('mkfifo', [path.join(results, 'pipe.txt')]);
    await fsp.appendFile(log, 'done\n');
    const st = await claimsStatus(layout, 'The ECE is 0.0123 and the secret number is 0.98765.');
    const byText = new Map(st.claims.map((c) => [c.text, c]));
    assert.ok([...byText.keys()].some((t) => t.includes('0.0123')), JSON.stringify(st.claims));
    assert.ok(st.claims.some((c) => c.text.includes('0.0123') && c.found), 'the real output is read');
    assert.ok(!st.claims.some((c) => c.text.includes('0.98765') && c.found), 'the linked host file is not');
  });
});
