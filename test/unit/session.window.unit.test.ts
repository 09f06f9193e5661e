import * as assert from 'node:assert/strict';
import { promises as fsp } from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { isExpBenchError } from '../../src/core/errors';
import { isSessionWindowFile, sessionWindowFile, sessionWindowFolder, writeSessionWindow } from '../../src/core/session/window';

/**
 * The session window file (src/core/session/window.ts, docs/trust.md): a VS Code workspace file
 * the host writes, kept where no folder that holds the session holds it too, so that a trusted
 * parent of the session never makes its window trusted (VS Code trusts a saved workspace only
 * when its folders and the file itself are trusted).
 */
describe('session window files (src/core/session/window.ts)', () => {
  let tmp: string;
  beforeEach(async () => { tmp = await fsp.mkdtemp(path.join(os.tmpdir(), 'expbench-window-')); });
  afterEach(async () => { await fsp.rm(tmp, { recursive: true, force: true }); });

  const places = () => ({ home: path.join(tmp, 'home'), tmp: path.join(tmp, 'systmp'), uid: process.getuid?.() ?? 0 });
  /** The folders that hold `p` (its ancestors), `/` excluded. */
  const ancestors = (p: string): string[] => {
    const out: string[] = [];
    for (let d = path.dirname(path.resolve(p)); d !== path.dirname(d); d = path.dirname(d)) out.push(d);
    return out;
  };

  it('no folder that holds the session (other than those that hold both the home and the temporary folder) holds its window file', () => {
    const pl = places();
    for (const session of [path.join(pl.home, 'expbench-sessions', 'a'), path.join(tmp, 'checkout', '.cache', 'start', 'sample-toycal-0'), path.join(pl.tmp, 's1'), path.join(tmp, 'elsewhere', 's2')]) {
      const file = sessionWindowFile(session, pl);
      const common = ancestors(path.join(session, 'workspace')).filter((a) => ancestors(file).includes(a));
      const bothRoots = ancestors(path.join(pl.home, 'x')).filter((a) => ancestors(path.join(pl.tmp, 'x')).includes(a));
      assert.deepEqual(common.filter((c) => !bothRoots.includes(c)), [], `${session} and ${file} share ${common.join(', ')}`);
      assert.match(path.basename(file), /^[\w.-]+-[0-9a-f]{12}\.code-workspace$/);
    }
    assert.equal(sessionWindowFolder(path.join(pl.home, 'x'), pl), path.join(pl.tmp, `expbench-windows-${pl.uid}`));
    assert.equal(sessionWindowFolder(path.join(tmp, 'elsewhere', 'x'), pl), path.join(pl.home, '.cache', 'expbench', 'windows'));
  });

  it('one path per session, another for every other session; the file holds the workspace as its one folder', async () => {
    const pl = places();
    const a = path.join(tmp, 'sessions', 'a');
    const b = path.join(tmp, 'sessions', 'b');
    for (const s of [a, b]) await fsp.mkdir(path.join(s, 'workspace'), { recursive: true });
    assert.equal(sessionWindowFile(a, pl), sessionWindowFile(path.join(a, '.'), pl));
    assert.notEqual(sessionWindowFile(a, pl), sessionWindowFile(b, pl));
    const file = await writeSessionWindow(a, pl);
    assert.equal(file, sessionWindowFile(a, pl));
    assert.deepEqual(JSON.parse(await fsp.readFile(file, 'utf8')), { folders: [{ path: path.join(a, 'workspace') }], settings: {} });
    assert.equal((await fsp.stat(path.dirname(file))).mode & 0o777, 0o700);
    assert.ok(isSessionWindowFile(file, a, pl));
    assert.ok(!isSessionWindowFile(file, b, pl));
    assert.ok(!isSessionWindowFile(undefined, a, pl));
  });

  it('refuses a session without workspace/ and a window folder that is a link, naming them', async () => {
    const pl = places();
    await assert.rejects(writeSessionWindow(path.join(tmp, 'nothing'), pl), (e) => isExpBenchError(e, 'SESSION_INVALID') && e.message.includes(path.join(tmp, 'nothing', 'workspace')));
    const s = path.join(tmp, 'elsewhere', 's');
    await fsp.mkdir(path.join(s, 'workspace'), { recursive: true });
    const folder = sessionWindowFolder(s, pl);
    await fsp.mkdir(path.dirname(folder), { recursive: true });
    await fsp.mkdir(path.join(tmp, 'planted'));
    await fsp.symlink(path.join(tmp, 'planted'), folder);
    await assert.rejects(writeSessionWindow(s, pl), (e) => isExpBenchError(e, 'BAD_INPUT') && e.message.includes(folder));
    assert.deepEqual(await fsp.readdir(path.join(tmp, 'planted')), [], 'nothing written through the link');
  });
});
