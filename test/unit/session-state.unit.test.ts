import * as assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { promises as fsp } from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { isExpBenchError } from '../../src/core/errors';
import { SessionStore } from '../../src/core/session/store';

async function tmpdir(): Promise<string> {
  return fsp.mkdtemp(path.join(os.tmpdir(), 'expbench-state-'));
}
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

describe('session state store', () => {
  let dir: string;
  let file: string;
  beforeEach(async () => { dir = await tmpdir(); file = path.join(dir, 'private', 'state.json'); });
  afterEach(async () => { await fsp.rm(dir, { recursive: true, force: true }); });

  it('creates a fresh state on disk, paused in the design phase', async () => {
    const store = await SessionStore.open(file, { now: () => Date.parse('2026-01-02T03:04:05.000Z'), budgetMs: 3_600_000 });
    const onDisk = JSON.parse(await fsp.readFile(file, 'utf8'));
    assert.equal(onDisk.version, 1);
    assert.equal(onDisk.phase, 'design');
    assert.deepEqual(onDisk.clock, { budgetMs: 3_600_000, segments: [], warned: {} });
    assert.equal(onDisk.updatedAt, '2026-01-02T03:04:05.000Z');
    await store.close();
  });

  it('round-trips every field exactly', async () => {
    const store = await SessionStore.open(file);
    store.update((s) => {
      s.phase = 'execution';
      s.design = {
        constants: [{ name: 'dataset', description: 'CIFAR-10, 50k train' }],
        independent: [{ name: 'lr', description: 'learning rate', values: ['0.1', '0.01'] }],
        dependent: [{ name: 'acc', description: 'top-1 accuracy' }],
        freeText: 'three seeds\nüñíçødé ✓',
      };
      s.conclusion = 'lr 0.01 reaches 93.1%';
      s.notes.push({ at: '2026-01-01T00:00:00.000Z', text: 'first note' });
      s.clock.segments.push({ start: '2026-01-01T00:00:00.000Z', lastBeat: '2026-01-01T00:00:30.000Z', end: '2026-01-01T00:01:00.000Z', endReason: 'paused', pauseReason: 'lunch' });
      s.runs.push({ id: 'run-1', startedAt: '2026-01-01T00:02:00.000Z', exitCode: 0, durationMs: 1234, log: 'private/runs/run-1.log' });
    });
    const expected = structuredClone(store.state);
    await store.close();
    const again = await SessionStore.open(file);
    assert.deepEqual(again.state, expected);
    await again.close();
  });

  it('writes a change to disk within one second without flush (real timers)', async function () {
    this.timeout(10_000);
    const store = await SessionStore.open(file);
    store.update((s) => { s.conclusion = 'typed text'; });
    await sleep(1100);
    assert.equal(JSON.parse(await fsp.readFile(file, 'utf8')).conclusion, 'typed text');
    // keeps writing while changes keep coming (throttled, not postponed)
    for (let i = 0; i < 12; i++) {
      store.update((s) => { s.conclusion = `typing ${i}`; });
      await sleep(100);
    }
    // change k was made at least (11 - k) × 100 ms ago: every change up to k = 1 is more than 1 s old
    const mid = JSON.parse(await fsp.readFile(file, 'utf8')).conclusion as string;
    const k = Number(/^typing (\d+)$/.exec(mid)?.[1]);
    assert.ok(k >= 1, `after 1.2 s of continuous typing the file holds "${mid}": a change older than 1 s is missing`);
    await store.close();
  });

  it('refuses a change that breaks the schema and keeps the previous state', async () => {
    const store = await SessionStore.open(file);
    assert.throws(() => store.update((s) => { (s as any).phase = 'dreaming'; }), (e: unknown) => isExpBenchError(e, 'SESSION_INVALID'));
    assert.equal(store.state.phase, 'design');
    assert.throws(() => { (store.state as any).phase = 'execution'; }, TypeError, 'the state is frozen');
    await store.close();
  });

  for (const [label, content] of [['not JSON', '{"version": 1, "phase": "des'], ['a wrong shape', '{"version":1,"phase":"design"}'], ['another version', '{"version":7}']] as const) {
    it(`a corrupt state.json (${label}) is never reset: clear error naming the file, and a backup`, async () => {
      await fsp.mkdir(path.dirname(file), { recursive: true });
      await fsp.writeFile(file, content);
      await assert.rejects(SessionStore.open(file), (e: unknown) => {
        assert.ok(isExpBenchError(e, 'SESSION_INVALID'));
        assert.ok(e.message.startsWith(file), e.message);
        assert.match(e.message, /state\.json\.corrupt-/);
        return true;
      });
      assert.equal(await fsp.readFile(file, 'utf8'), content, 'state.json left untouched');
      const backups = (await fsp.readdir(path.dirname(file))).filter((n) => n.startsWith('state.json.corrupt-'));
      assert.equal(backups.length, 1);
      assert.equal(await fsp.readFile(path.join(path.dirname(file), backups[0]), 'utf8'), content);
    });
  }

  it('a process killed with SIGKILL at a random moment loses nothing changed more than 1 s before', async function () {
    this.timeout(60_000);
    const storeModule = path.resolve(__dirname, '../../src/core/session/store.js');
    const child = path.join(dir, 'child.js');
    // The child applies one update per stdin line and acknowledges it on stdout.
    await fsp.writeFile(child, `
      const { SessionStore } = require(${JSON.stringify(storeModule)});
      const readline = require('node:readline');
      (async () => {
        const store = await SessionStore.open(${JSON.stringify(file)});
        process.stdout.write('ready\\n');
        readline.createInterface({ input: process.stdin }).on('line', (line) => {
          store.update((s) => { s.notes.push({ at: new Date().toISOString(), text: line }); s.conclusion = line; });
          process.stdout.write('ack ' + line + '\\n');
        });
      })();
    `);
    for (let round = 0; round < 3; round++) {
      await fsp.rm(file, { force: true });
      const proc = spawn(process.execPath, [child], { stdio: ['pipe', 'pipe', 'inherit'] });
      const acked = new Map<string, number>();
      let buf = '';
      const ready = new Promise<void>((resolve) => proc.stdout.on('data', (d: Buffer) => {
        buf += d.toString();
        let nl: number;
        while ((nl = buf.indexOf('\n')) >= 0) {
          const line = buf.slice(0, nl); buf = buf.slice(nl + 1);
          if (line === 'ready') resolve();
          else if (line.startsWith('ack ')) acked.set(line.slice(4), Date.now());
        }
      }));
      await ready;
      const killAfter = 1500 + Math.floor(Math.random() * 2500);
      const t0 = Date.now();
      let i = 0;
      while (Date.now() - t0 < killAfter) {
        proc.stdin.write(`r${round}-keystroke-${i++}\n`);
        await sleep(5 + Math.floor(Math.random() * 30));
      }
      const killedAt = Date.now();
      const exited = new Promise((r) => proc.once('exit', r));
      proc.kill('SIGKILL');
      await exited;
      const restored = await SessionStore.open(file);
      const texts = new Set(restored.state.notes.map((n) => n.text));
      const old = [...acked].filter(([, at]) => killedAt - at > 1000).map(([t]) => t);
      assert.ok(old.length > 10, `round ${round}: ${old.length} changes acknowledged more than 1 s before the kill`);
      const lost = old.filter((t) => !texts.has(t));
      assert.deepEqual(lost, [], `round ${round}: lost ${lost.length} of ${old.length} changes older than 1 s`);
      // what was restored is a prefix of what was sent, in order (no reordering, no torn state)
      const notes = restored.state.notes.map((n) => n.text);
      notes.forEach((t, k) => assert.equal(t, `r${round}-keystroke-${k}`));
      assert.equal(restored.state.conclusion, notes.at(-1));
      await restored.close();
    }
  });
});
