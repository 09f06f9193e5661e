/**
 * A failed append to an append-only log (issue 33, the fault round's findings): on a full disk the
 * event log's append fails with "the file's previous content is unchanged", and it must be so: the
 * file holds exactly its bytes from before the append (no torn line), for an event log and for the
 * JSON Lines writer under it, whatever part of the line the disk took. A tmpfs of 1 MiB that the
 * test mounts and fills (root), as test/unit/faults.sessions does.
 */
import * as assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { EventLog, readEvents } from '../../src/core/session/events';
import { JsonLinesWriter } from '../../src/core/util/jsonl';

describe('faults: a failed append leaves the log as it was (full disk)', function () {
  this.timeout(60_000);
  let mnt: string | undefined;
  let n = 0;
  before(function () {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'expbench-faults-appends-'));
    try {
      execFileSync('mount', ['-t', 'tmpfs', '-o', 'size=1m', 'tmpfs', dir], { stdio: 'pipe' });
      mnt = dir;
    } catch (e) {
      fs.rmdirSync(dir);
      process.stdout.write(`      (SKIPPED: cannot mount a tmpfs (${String((e as { stderr?: Buffer }).stderr ?? e).trim().split('\n')[0]}): the full-disk cases need root)\n`);
      this.skip();
    }
  });
  after(() => {
    if (!mnt) return;
    try { execFileSync('umount', ['-l', mnt]); fs.rmdirSync(mnt); } catch { /* left for the OS */ }
  });

  /** Fills the tmpfs leaving about `freeBytes`; returns a function that frees it again. */
  function fill(freeBytes: number): () => void {
    const filler = path.join(mnt!, `.filler-${++n}`);
    const fd = fs.openSync(filler, 'w');
    const chunk = Buffer.alloc(16 * 1024, 1);
    try { for (;;) fs.writeSync(fd, chunk); } catch { /* ENOSPC */ }
    fs.ftruncateSync(fd, Math.max(0, fs.fstatSync(fd).size - freeBytes));
    fs.closeSync(fd);
    return () => fs.rmSync(filler, { force: true });
  }

  for (const free of [0, 4096, 12 * 1024, 40 * 1024]) {
    it(`events.jsonl with ${free} bytes free: the append is refused, the file is byte for byte as before, the message holds`, async () => {
      const file = path.join(mnt!, `events-${++n}`, 'private', 'events.jsonl');
      const log = new EventLog(file);
      await log.append({ type: 'note.added', text: 'the first note' });
      await log.append({ type: 'note.added', text: 'the second note' });
      const before = fs.readFileSync(file);
      const freeAgain = fill(free);
      const err = await log.append({ type: 'note.added', text: 'y'.repeat(200_000) }).then(() => undefined, (e: Error) => e);
      const after = fs.readFileSync(file);
      freeAgain();
      assert.ok(err, 'the append was reported saved');
      assert.match(err!.message, /disk is full/);
      assert.ok(err!.message.includes(file), err!.message);
      if (/previous content is unchanged/.test(err!.message)) assert.ok(after.equals(before), `the message says unchanged, the file grew from ${before.length} to ${after.length} bytes (a torn line)`);
      assert.ok(after.equals(before), `the file changed: ${before.length} → ${after.length} bytes`);
      await log.append({ type: 'note.added', text: 'the third note' });
      const back = await readEvents(file);
      assert.deepEqual(back.events.map((e) => (e as { text: string }).text), ['the first note', 'the second note', 'the third note']);
      assert.deepEqual(back.invalid, []);
      assert.equal(back.torn, undefined);
    });
  }

  it('the JSON Lines writer (the answer cache\'s journal): a failed append leaves the file as it was', async () => {
    const file = path.join(mnt!, `journal-${++n}.jsonl`);
    const w = new JsonLinesWriter(file);
    await w.append([{ a: 1 }]);
    const before = fs.readFileSync(file);
    const freeAgain = fill(8 * 1024);
    const err = await w.append([{ big: 'z'.repeat(100_000) }]).then(() => undefined, (e: Error) => e);
    const after = fs.readFileSync(file);
    freeAgain();
    assert.ok(err && /disk is full/.test(err.message), String(err));
    assert.ok(after.equals(before), `${before.length} → ${after.length} bytes`);
    await w.append([{ a: 2 }]);
    assert.equal(fs.readFileSync(file, 'utf8'), '{"a":1}\n{"a":2}\n');
  });
});
