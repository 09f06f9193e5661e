// The stat-only fingerprint behind the views' re-check (src/extension/follow/fingerprint.ts): it
// changes when a judge record, a state file or a harness judge file is written, stays the same
// when nothing the views read changed (a write inside a session's workspace/), never opens a file
// and stops at its bounds. Real files in a temporary folder.
import * as assert from 'node:assert/strict';
import { promises as fsp } from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { filesFingerprint, sessionsFingerprint } from '../../src/extension/follow/fingerprint';

describe('follow: the sessions folder fingerprint', () => {
  let tmp: string;
  beforeEach(async () => { tmp = await fsp.mkdtemp(path.join(os.tmpdir(), 'expbench-fp-')); });
  afterEach(async () => { await fsp.rm(tmp, { recursive: true, force: true }); });

  const session = async (name: string) => {
    const root = path.join(tmp, name);
    await fsp.mkdir(path.join(root, 'private', 'judge'), { recursive: true });
    await fsp.mkdir(path.join(root, 'workspace'), { recursive: true });
    await fsp.writeFile(path.join(root, 'private', 'state.json'), '{}');
    return root;
  };
  const fp = async () => (await sessionsFingerprint(tmp)).fingerprint;

  it('changes with a judge record, a state write, a new session and a harness judge file; not with the workspace', async () => {
    const a = await session('a');
    const f0 = await fp();
    assert.equal(await fp(), f0, 'stable when nothing changed');
    await fsp.writeFile(path.join(a, 'workspace', 'notes.json'), '{"x":1}');
    await fsp.mkdir(path.join(a, 'workspace', 'deep'), { recursive: true });
    assert.equal(await fp(), f0, 'the solver\'s workspace is not walked');
    await fsp.writeFile(path.join(a, 'private', 'judge', 'latest.json'), '{}');
    const f1 = await fp();
    assert.notEqual(f1, f0, 'a judge record written');
    await fsp.writeFile(path.join(a, 'private', 'state.json'), '{"submitted":true}');
    const f2 = await fp();
    assert.notEqual(f2, f1, 'the state rewritten (size)');
    await session('b');
    const f3 = await fp();
    assert.notEqual(f3, f2, 'a session copied in');
    await fsp.mkdir(path.join(tmp, 'harness', 'agent', 'model'), { recursive: true });
    await fsp.writeFile(path.join(tmp, 'harness', 'agent', 'model', '1_task_index_0_iter_1_eval_judge.json'), '{}');
    assert.notEqual(await fp(), f3, 'a harness judge file copied in');
  });

  it('a rename over a file of the same size and mtime still changes it (the inode)', async () => {
    const a = await session('a');
    const judge = path.join(a, 'private', 'judge', 'latest.json');
    await fsp.writeFile(judge, '{"a":1}');
    const st = await fsp.stat(judge);
    const before = await fp();
    await fsp.writeFile(path.join(a, 'private', 'judge', '.tmp'), '{"b":2}');
    await fsp.utimes(path.join(a, 'private', 'judge', '.tmp'), st.atime, st.mtime);
    await fsp.rename(path.join(a, 'private', 'judge', '.tmp'), judge);
    assert.notEqual(await fp(), before);
  });

  it('stops at its bounds and says so; a missing folder has a fingerprint of its own', async () => {
    for (let i = 0; i < 30; i++) await fsp.mkdir(path.join(tmp, `d${i}`));
    const r = await sessionsFingerprint(tmp, { depth: 8, entries: 10 });
    assert.equal(r.truncated, true);
    let deep = tmp;
    for (let i = 0; i < 5; i++) { deep = path.join(deep, 'x'); await fsp.mkdir(deep); }
    assert.equal((await sessionsFingerprint(path.join(tmp, 'd0'), { depth: 8, entries: 100 })).truncated, false);
    assert.equal((await sessionsFingerprint(tmp, { depth: 2, entries: 1000 })).truncated, true);
    const missing = await sessionsFingerprint(path.join(tmp, 'nope'));
    assert.match(missing.fingerprint, /absent$/);
  });

  it('does not follow a link to a folder', async () => {
    const outside = await fsp.mkdtemp(path.join(os.tmpdir(), 'expbench-fp-out-'));
    try {
      await fsp.symlink(outside, path.join(tmp, 'link'));
      const before = await fp();
      await fsp.writeFile(path.join(outside, 'x_eval_judge.json'), '{}');
      assert.equal(await fp(), before);
    } finally { await fsp.rm(outside, { recursive: true, force: true }); }
  });

  it('filesFingerprint: a file appears, grows, goes', async () => {
    const f = path.join(tmp, 'runset.jsonl');
    const a = await filesFingerprint([f]);
    await fsp.writeFile(f, 'x\n');
    const b = await filesFingerprint([f]);
    await fsp.appendFile(f, 'y\n');
    const c = await filesFingerprint([f]);
    await fsp.rm(f);
    assert.equal(new Set([a, b, c]).size, 3);
    assert.equal(await filesFingerprint([f]), a);
  });
});

describe('follow: the re-check', () => {
  it('fires only when the fingerprint changed from the baseline, and not while inactive', async () => {
    const { Recheck } = await import('../../src/extension/follow/recheck');
    let value = 'a';
    let active = true;
    let fired = 0;
    const checks: Date[] = [];
    const r = new Recheck({ fingerprint: async () => value, changed: () => { fired++; }, checked: (at) => checks.push(at), everyMs: 3_600_000, active: () => active });
    try {
      await r.reset();
      assert.equal(await r.check(), false);
      value = 'b';
      active = false;
      assert.equal(await r.check(), false, 'inactive: not checked');
      assert.equal(checks.length, 1);
      active = true;
      assert.equal(await r.check(), true);
      assert.equal(await r.check(), false, 'once per change');
      assert.deepEqual([fired, checks.length], [1, 3]);
      assert.ok(r.lastChecked && r.lastChecked.getTime() <= Date.now());
    } finally { r.dispose(); }
  });
});
