import * as assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { promises as fsp } from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { MARKER_MAX_BYTES, MARKER_PATH, sessionRootOf } from '../../src/core/session/marker';

/**
 * The session marker (`workspace/.devcontainer/expbench-session.json`) is read by the researcher
 * window as it opens a folder (src/extension/session/activateSession.ts). It lies in the
 * workspace, which the solver writes: what is planted there never blocks the window, fills its
 * memory or is followed out of the workspace, and a marker never names another root.
 */
describe('the session marker is solver-written input (src/core/session/marker.ts)', () => {
  let tmp: string;
  let root: string;
  let ws: string;
  let marker: string;
  beforeEach(async () => {
    tmp = await fsp.mkdtemp(path.join(os.tmpdir(), 'expbench-marker-'));
    root = path.join(tmp, 'session');
    ws = path.join(root, 'workspace');
    marker = path.join(ws, MARKER_PATH);
    await fsp.mkdir(path.dirname(marker), { recursive: true });
    await fsp.mkdir(path.join(root, 'private'));
  });
  afterEach(async () => { await fsp.rm(tmp, { recursive: true, force: true }); });

  const good = JSON.stringify({ version: 1, taskId: 'sample/toycal/0' });

  it('a well-formed marker: the root is the workspace\'s parent folder', async () => {
    await fsp.writeFile(marker, good);
    assert.deepEqual(await sessionRootOf(ws), { root, taskId: 'sample/toycal/0' });
  });

  it('a marker over the size bound is no marker (refused, not read into memory), though its JSON is valid', async () => {
    await fsp.writeFile(marker, good + ' '.repeat(MARKER_MAX_BYTES));
    assert.equal(await sessionRootOf(ws), undefined);
    // a sparse 4 GiB marker: answered at once from its size
    await fsp.rm(marker);
    await fsp.writeFile(marker, good);
    await fsp.truncate(marker, 4 * 1024 ** 3);
    const t0 = Date.now();
    assert.equal(await sessionRootOf(ws), undefined);
    assert.ok(Date.now() - t0 < 2_000, `answered in ${Date.now() - t0} ms`);
  });

  it('a link as the marker is no marker, even to a well-formed one outside the workspace or inside it', async () => {
    const outside = path.join(tmp, 'elsewhere.json');
    await fsp.writeFile(outside, good);
    await fsp.symlink(outside, marker);
    assert.equal(await sessionRootOf(ws), undefined);
    await fsp.rm(marker);
    await fsp.writeFile(path.join(ws, 'm.json'), good);
    await fsp.symlink(path.join(ws, 'm.json'), marker);
    assert.equal(await sessionRootOf(ws), undefined);
  });

  it('a FIFO or a device as the marker: no marker, and nothing waits for a writer', async () => {
    execFileSync('mkfifo', [marker]);
    const t0 = Date.now();
    assert.equal(await sessionRootOf(ws), undefined);
    assert.ok(Date.now() - t0 < 2_000, `answered in ${Date.now() - t0} ms`);
    await fsp.rm(marker);
    await fsp.symlink('/dev/zero', marker);
    assert.equal(await sessionRootOf(ws), undefined);
  });

  it('a marker of another form, or without the host\'s private/ beside the workspace, is no marker', async () => {
    await fsp.writeFile(marker, JSON.stringify({ version: 2, taskId: 'x', root: '/' }));
    assert.equal(await sessionRootOf(ws), undefined);
    await fsp.writeFile(marker, '{ not json');
    assert.equal(await sessionRootOf(ws), undefined);
    await fsp.writeFile(marker, good);
    await fsp.rm(path.join(root, 'private'), { recursive: true });
    assert.equal(await sessionRootOf(ws), undefined);
  });
});
