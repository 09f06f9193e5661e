/**
 * The host's walk that shares a workspace with the container user (shareWorkspaceWithSolver:
 * chgrp -R, chmod -R, `find -exec chmod g+s`, `find -exec setfacl`, as root) runs on a tree the
 * solver writes, and runs while the solver's processes may still be alive: `baseline serve` run
 * again on a session whose container a dead serve left running (SIGHUP, a crash), a new work
 * container made while another container mounts the workspace. `find` lists `workspace/zz/private`
 * while `zz` is a folder; a process in the container then swaps `zz` for a link to the session
 * folder, and `chmod g+s` / `setfacl` (which follow the links of the paths they are given) change
 * the session's own `private/` folder. Real Docker: the swapping runs in the work container as the
 * solver, with the host path read from where the solver can read it (/proc/self/mountinfo).
 */
import * as assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import type Docker from 'dockerode';
import { DEFAULT_IMAGE, ensureWorkContainer, removeWorkContainer, shareWorkspaceWithSolver } from '../../src/core/sandbox';
import { assertNoContainers, requireDocker } from '../harness/docker';

/** Swaps /workspace/zz between a folder and a link to `target` (a host path), as fast as it can. */
const SWAPPER = String.raw`
import os, sys
os.chdir('/workspace')
target = sys.argv[1]
while True:
    try:
        os.rename('zz', 'zz.real'); os.symlink(target, 'zz')
        os.unlink('zz'); os.rename('zz.real', 'zz')
    except OSError:
        pass
`;

/** Whether `p` is seen both as a link and as a folder within 30 s (the swapper in the container runs). */
async function seenSwapping(p: string): Promise<boolean> {
  const seen = new Set<string>();
  const until = Date.now() + 30_000;
  while (Date.now() < until && seen.size < 2) {
    const st = fs.lstatSync(p, { throwIfNoEntry: false });
    if (st) seen.add(st.isSymbolicLink() ? 'link' : 'folder');
    await new Promise((r) => setImmediate(r));
  }
  return seen.size === 2;
}

describe('trust: sharing the workspace never follows a link the solver swaps in while the host walks (Docker)', function () {
  this.timeout(300_000);
  let docker: Docker;
  let root = '';
  const session = `share-walk-${process.pid}`;

  before(async function () {
    docker = await requireDocker(this);
  });
  after(async () => {
    if (docker) {
      await removeWorkContainer(docker, session);
      await assertNoContainers(docker, [session]);
    }
    if (root) fs.rmSync(root, { recursive: true, force: true });
  });

  it('the session\'s private/ keeps its mode and gets no default ACL while a process in the container swaps a folder for a link to it', async () => {
    root = fs.mkdtempSync(path.join(os.tmpdir(), 'expbench-share-walk-'));
    const ws = path.join(root, 'workspace');
    const priv = path.join(root, 'private');
    fs.mkdirSync(priv, { mode: 0o700 });
    fs.chmodSync(priv, 0o700);
    fs.writeFileSync(path.join(priv, 'task.json'), '{"expected_outcome": "the ground truth"}\n', { mode: 0o600 });
    // enough folders that find's walk takes a while; `zz/private` is what the solver wants the host to touch
    for (let i = 0; i < 300; i++) fs.mkdirSync(path.join(ws, 'pad', `d${i}`), { recursive: true });
    fs.mkdirSync(path.join(ws, 'zz', 'private'), { recursive: true });
    const { container } = await ensureWorkContainer(docker, { task: 'share/walk/0', session, workspaceDir: ws, image: DEFAULT_IMAGE, limits: { network: false } });

    // the solver learns the host path of its workspace from the container (the known mountinfo leak)
    const mountinfo = execFileSync('docker', ['exec', '-u', 'solver', container.id, 'cat', '/proc/self/mountinfo'], { encoding: 'utf8' });
    const line = mountinfo.split('\n').find((l) => l.split(' ')[4] === '/workspace');
    assert.ok(line, 'the workspace mount is listed in the container');
    execFileSync('docker', ['exec', '-d', '-u', 'solver', container.id, 'python3', '-c', SWAPPER, root]);
    // the swapper runs: zz is seen as a link at least once
    assert.ok(await seenSwapping(path.join(ws, 'zz')), 'the swapper in the container runs');

    const aclOf = (p: string) => execFileSync('getfacl', ['-p', '-d', p], { encoding: 'utf8' }).split('\n').filter((l) => l && !l.startsWith('#'));
    const failures: string[] = [];
    for (let round = 0; round < 40; round++) {
      // on a tree that changes under it, find fails now and then (an entry gone): kept, and checked last
      await shareWorkspaceWithSolver(ws).then((user) => assert.equal(user, 'solver'), (e: unknown) => { failures.push(`round ${round}: ${(e as Error).message}`); });
      const st = fs.statSync(priv);
      assert.equal((st.mode & 0o7777).toString(8), '700', `round ${round}: the host changed the mode of the session's private/ through the solver's link`);
      assert.deepEqual(aclOf(priv), [], `round ${round}: the host set a default ACL on the session's private/ through the solver's link`);
      assert.equal((fs.statSync(path.join(priv, 'task.json')).mode & 0o7777).toString(8), '600');
    }
    assert.deepEqual(failures, [], 'the walk saw the tree as it stood: it never failed on an entry that vanished under it');
    // the walk let the container run again: the swapper still swaps
    assert.ok(await seenSwapping(path.join(ws, 'zz')), 'the work container runs again after the walk (it was not left paused)');
    assert.equal((await container.inspect()).State.Paused, false);
  });
});
