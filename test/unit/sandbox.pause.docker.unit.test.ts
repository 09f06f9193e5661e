/**
 * The counted pause of src/core/sandbox/pause.ts on a real container (Docker): nested and
 * overlapping holders never unpause early, a thrown walk never leaves the container paused, a
 * container paused by someone else (the proctored clock of another process, by hand) stays
 * paused, and the containers that mount a folder are found by their mounts.
 */
import * as assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import type Docker from 'dockerode';
import {
  DEFAULT_IMAGE, clockPause, containersMounting, ensureWorkContainer, execText, holdPaused, pauseDuring, pauseHolders, removeWorkContainer, withContainersPaused,
} from '../../src/core/sandbox';
import { assertNoContainers, requireDocker } from '../harness/docker';

describe('pauseDuring: the work container paused while the host walks its workspace (Docker)', function () {
  this.timeout(300_000);
  let docker: Docker;
  let root = '';
  let container: Docker.Container;
  const session = `pause-${process.pid}`;
  const paused = async () => (await container.inspect()).State.Paused;

  before(async function () {
    docker = await requireDocker(this);
    root = fs.mkdtempSync(path.join(os.tmpdir(), 'expbench-pause-'));
    fs.mkdirSync(path.join(root, 'workspace', 'sub'), { recursive: true });
    ({ container } = await ensureWorkContainer(docker, { task: 'pause/t/0', session, workspaceDir: path.join(root, 'workspace'), image: DEFAULT_IMAGE, limits: { network: false } }));
  });
  after(async () => {
    if (docker) {
      await container?.unpause().catch(() => undefined);
      await removeWorkContainer(docker, session);
      await assertNoContainers(docker, [session]);
    }
    if (root) fs.rmSync(root, { recursive: true, force: true });
  });

  it('finds the container by its mount: the workspace, a folder in it, the session folder above; not a sibling', async () => {
    const ids = async (d: string) => (await containersMounting(docker, d)).map((c) => c.id);
    assert.deepEqual(await ids(path.join(root, 'workspace')), [container.id]);
    assert.deepEqual(await ids(path.join(root, 'workspace', 'sub')), [container.id]);
    assert.deepEqual(await ids(root), [container.id]);
    fs.mkdirSync(path.join(root, 'private'), { recursive: true });
    assert.deepEqual(await ids(path.join(root, 'private')), []);
    assert.deepEqual(await ids(path.join(root, 'workspace-other')), []);
  });

  it('nested and overlapping holders: paused until the last one releases', async () => {
    let inner = false;
    await pauseDuring(docker, [container], 'the outer walk', async () => {
      assert.equal(await paused(), true);
      await pauseDuring(docker, [container], 'a nested walk', async () => { inner = await paused(); });
      assert.equal(await paused(), true, 'the nested walk did not unpause the outer one');
      const release = await holdPaused(docker, container, 'an overlapping walk');
      assert.equal(pauseHolders(container.id), 2);
      await release();
      await release(); // twice is once
      assert.equal(pauseHolders(container.id), 1);
      assert.equal(await paused(), true);
    });
    assert.equal(inner, true);
    assert.equal(await paused(), false);
    assert.equal(pauseHolders(container.id), 0);
    // two walks at once, the first one ending first
    let endFirst!: () => void;
    const first = withContainersPaused(path.join(root, 'workspace'), 'walk one', () => new Promise<void>((r) => { endFirst = r; }), { docker });
    while (pauseHolders(container.id) < 1 || !(await paused())) await new Promise((r) => setTimeout(r, 10));
    const second = withContainersPaused(path.join(root, 'workspace'), 'walk two', async () => {
      endFirst();
      await first;
      return paused();
    }, { docker });
    assert.equal(await second, true, 'walk two still saw the container paused after walk one ended');
    assert.equal(await paused(), false);
  });

  it('an exec asked for during a walk waits for the walk, then runs (the engine refuses an exec into a paused container)', async () => {
    let ran: Promise<string> | undefined;
    await pauseDuring(docker, [container], 'a walk', async () => {
      ran = execText(container, { cmd: ['echo', 'after the walk'] }).then((r) => r.stdout.trim());
      await new Promise((r) => setTimeout(r, 300));
      assert.equal(await paused(), true);
    });
    assert.equal(await ran, 'after the walk');
  });

  it('a walk that throws never leaves the container paused', async () => {
    await assert.rejects(pauseDuring(docker, [container], 'a failing walk', async () => {
      assert.equal(await paused(), true);
      throw new Error('the walk failed');
    }), /the walk failed/);
    assert.equal(await paused(), false);
    assert.equal(pauseHolders(container.id), 0);
  });

  it('the clock\'s pause is one holder: resumed during a walk, the container stays paused until the walk ends; a walk inside the clock\'s pause leaves it paused', async () => {
    await clockPause(docker, container, true);
    await clockPause(docker, container, true); // asked twice: one hold
    assert.equal(pauseHolders(container.id), 1);
    await pauseDuring(docker, [container], 'a walk while the clock is paused', async () => {
      await clockPause(docker, container, false);
      assert.equal(await paused(), true, 'the clock\'s resume did not unpause the walk');
    });
    assert.equal(await paused(), false);
    await pauseDuring(docker, [container], 'a walk that starts the clock\'s pause', async () => { await clockPause(docker, container, true); });
    assert.equal(await paused(), true, 'the walk ended; the clock still holds it');
    await clockPause(docker, container, false);
    assert.equal(await paused(), false);
    assert.equal(pauseHolders(container.id), 0);
  });

  it('the clock resumed runs a container another process paused (an earlier serve), at once or after the walk holding it', async () => {
    await container.pause();
    await clockPause(docker, container, false);
    assert.equal(await paused(), false);
    await container.pause();
    await pauseDuring(docker, [container], 'a walk', async () => {
      await clockPause(docker, container, false);
      assert.equal(await paused(), true, 'still paused while the walk reads');
    });
    assert.equal(await paused(), false, 'running after the walk, as the clock asked');
  });

  it('a container paused by someone else stays paused after the walk', async () => {
    await container.pause();
    try {
      await pauseDuring(docker, [container], 'a walk inside the clock\'s pause', async () => assert.equal(await paused(), true));
      assert.equal(await paused(), true, 'not unpaused: this process did not pause it');
    } finally {
      await container.unpause();
    }
  });
});
