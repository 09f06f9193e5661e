// The replay after a reload (src/core/verify/overlap.ts): lines the dead watcher stored are not
// stored twice, lines it never received are all kept, repeated texts are handled.
import * as assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import type { LogLine } from '../../src/core/verify/logs';
import { ReplayFilter, storedTail } from '../../src/core/verify/overlap';

function replay(stored: { stdout?: string[]; stderr?: string[] }, lines: Array<[LogLine['stream'], string]>): string[] {
  const out: string[] = [];
  const f = new ReplayFilter({ stdout: stored.stdout ?? [], stderr: stored.stderr ?? [] }, (l) => out.push(`${l.stream}:${l.text}`));
  for (const [stream, text] of lines) f.add({ stream, text, time: '2026-11-30T00:00:00.000000000Z' });
  f.end();
  return out;
}

describe('verify: replay after a reload (overlap by text)', () => {
  it('skips the stored lines that the window read again, keeps the rest', () => {
    // the case CI hit: "first" stored with a receipt time in the same millisecond as the engine's time
    assert.deepEqual(replay({ stdout: ['first'] }, [['stdout', 'first'], ['stdout', 'result 0.93']]), ['stdout:result 0.93']);
    // the window starts after some stored lines: only their suffix is read again
    assert.deepEqual(replay({ stdout: ['a', 'b', 'c'] }, [['stdout', 'b'], ['stdout', 'c'], ['stdout', 'd']]), ['stdout:d']);
    // nothing stored in the window of that stream: everything is kept
    assert.deepEqual(replay({ stdout: ['a'] }, [['stderr', 'oops'], ['stdout', 'a'], ['stdout', 'b']]), ['stderr:oops', 'stdout:b']);
  });

  it('repeated texts: the longest overlap anchored at the last stored line', () => {
    assert.deepEqual(replay({ stdout: ['x', 'x'] }, [['stdout', 'x'], ['stdout', 'x'], ['stdout', 'x']]), ['stdout:x']);
    assert.deepEqual(replay({ stdout: ['y', 'x'] }, [['stdout', 'x'], ['stdout', 'x']]), ['stdout:x']);
    assert.deepEqual(replay({ stdout: ['x'] }, [['stdout', 'y']]), ['stdout:y']);
  });

  it('holds lines back only until the overlap is decided, and releases them at the end', () => {
    const out: string[] = [];
    const f = new ReplayFilter({ stdout: ['a', 'b'], stderr: [] }, (l) => out.push(l.text));
    f.add({ stream: 'stdout', text: 'b', time: 't' });
    assert.deepEqual(out, []);
    f.add({ stream: 'stdout', text: 'c', time: 't' });
    assert.deepEqual(out, []);
    f.add({ stream: 'stdout', text: 'd', time: 't' });
    assert.deepEqual(out, ['c', 'd']);
    f.add({ stream: 'stdout', text: 'e', time: 't' });
    assert.deepEqual(out, ['c', 'd', 'e']);
    const g: string[] = [];
    const h = new ReplayFilter({ stdout: ['a', 'b', 'c'], stderr: [] }, (l) => g.push(l.text));
    h.add({ stream: 'stdout', text: 'z', time: 't' });
    h.end();
    assert.deepEqual(g, ['z']);
  });

  it('storedTail reads the last stored time and the lines within the window before it, per stream', async () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'expbench-overlap-'));
    try {
      fs.writeFileSync(path.join(dir, 'stdout.log'), '2026-11-30T10:00:00.000Z old\n2026-11-30T10:00:09.500Z recent\n2026-11-30T10:00:10.000Z last\n');
      fs.writeFileSync(path.join(dir, 'stderr.log'), '2026-11-30T10:00:09.900Z warn\n');
      const t = await storedTail({ stdout: path.join(dir, 'stdout.log'), stderr: path.join(dir, 'stderr.log') });
      assert.ok(t);
      assert.equal(t.lastNs, BigInt(Date.parse('2026-11-30T10:00:10.000Z')) * 1_000_000n);
      assert.deepEqual(t.stored, { stdout: ['recent', 'last'], stderr: ['warn'] });
      assert.equal(await storedTail({ stdout: path.join(dir, 'none.log'), stderr: path.join(dir, 'none2.log') }), undefined);
    } finally {
      fs.rmSync(dir, { recursive: true, force: true });
    }
  });
});
