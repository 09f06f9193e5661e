import * as assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { promises as fsp } from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { startProctoredBaseline } from '../../src/core/flows/proctoredBaseline';
import { claimServe, serveLockFile } from '../../src/core/flows/serveLock';
import { SessionLayout } from '../../src/core/layout';
import { bundledDatasetDir } from '../../src/core/paths';
import { findTask, loadDatasets } from '../../src/core/tasks/loader';
import { claimSessionFolder, inspectSessionFolder } from '../../src/core/workspace/folder';

/** A process that lives until it is killed (its pid is "another serve"). */
function otherProcess(): { pid: number; kill: () => Promise<void> } {
  const child = spawn(process.execPath, ['-e', 'setInterval(() => {}, 1000)'], { stdio: 'ignore' });
  return { pid: child.pid!, kill: () => new Promise((r) => { child.once('exit', () => r()); child.kill('SIGKILL'); }) };
}

// Issue 33 (fault round): a second `baseline serve` on a folder already served started anyway, and
// when it stopped it stopped the shared container and deleted both channel sockets.
describe('baseline serve: one per session folder (flows/serveLock.ts)', function () {
  this.timeout(60_000);
  let dir: string;
  beforeEach(async () => { dir = await fsp.mkdtemp(path.join(os.tmpdir(), 'expbench-serve-once-')); });
  afterEach(async () => { await fsp.rm(dir, { recursive: true, force: true }); });

  it('a second serve is refused before it starts anything, naming the running one; its sockets and files are untouched', async () => {
    const layout = new SessionLayout(dir);
    const other = otherProcess();
    try {
      await fsp.mkdir(layout.private, { recursive: true });
      await fsp.mkdir(layout.channel, { recursive: true });
      await fsp.writeFile(serveLockFile(layout), JSON.stringify({ pid: other.pid, startedAt: '2026-12-01T10:00:00.000Z', url: 'http://127.0.0.1:4567/' }));
      await fsp.writeFile(path.join(layout.channel, 'session.sock'), 'stands for the running serve\'s socket');
      const task = findTask(await loadDatasets([bundledDatasetDir()]), 'sample/toycal/0')!;
      await assert.rejects(startProctoredBaseline({ task, sessionDir: dir }),
        new RegExp(`already served by another baseline serve \\(pid ${other.pid}, since 2026-12-01T10:00:00.000Z, http://127.0.0.1:4567/\\); nothing was started`));
      assert.equal(await fsp.readFile(path.join(layout.channel, 'session.sock'), 'utf8'), 'stands for the running serve\'s socket', 'the running serve\'s channel is left alone');
      assert.equal(JSON.parse(await fsp.readFile(serveLockFile(layout), 'utf8')).pid, other.pid, 'its claim stays');
      await assert.rejects(fsp.access(layout.workspace), 'nothing was prepared');
    } finally {
      await other.kill();
    }
  });

  it('a serve\'s claim in a new folder does not stop its preparation (the e2e serve was refused: "holds work (private/serve.json)")', async () => {
    const layout = new SessionLayout(path.join(dir, 'new'));
    const claim = await claimServe(layout);
    try {
      assert.equal((await inspectSessionFolder(layout.root)).state, 'empty');
      await claimSessionFolder(layout.root, 'sample/toycal/0');
      assert.equal((await inspectSessionFolder(layout.root)).state, 'preparing');
      // anything else in private/ is still someone's: refused
      await fsp.rm(layout.manifest);
      await fsp.writeFile(path.join(layout.private, 'notes.txt'), 'mine');
      await assert.rejects(claimSessionFolder(layout.root, 'sample/toycal/0'), /private\/notes\.txt/);
    } finally {
      await claim.release();
    }
  });

  it('a claim left by a serve whose process is gone is taken over, and released at the end', async () => {
    const layout = new SessionLayout(dir);
    const gone = otherProcess();
    await gone.kill();
    await fsp.mkdir(layout.private, { recursive: true });
    await fsp.writeFile(serveLockFile(layout), JSON.stringify({ pid: gone.pid, startedAt: '2026-12-01T10:00:00.000Z' }));
    const claim = await claimServe(layout);
    assert.equal(JSON.parse(await fsp.readFile(serveLockFile(layout), 'utf8')).pid, process.pid);
    await claim.setUrl('http://127.0.0.1:5555/?tkn=secret');
    assert.doesNotMatch(await fsp.readFile(serveLockFile(layout), 'utf8'), /secret/, 'the token is never written');
    await claim.release();
    await assert.rejects(fsp.access(serveLockFile(layout)));
  });
});
