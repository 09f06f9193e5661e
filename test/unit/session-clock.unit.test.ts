import * as assert from 'node:assert/strict';
import { promises as fsp } from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { isExpBenchError } from '../../src/core/errors';
import { clockStatus, formatWorking, workingMs } from '../../src/core/session/clock';
import { readEvents } from '../../src/core/session/events';
import { SessionLayout } from '../../src/core/layout';
import { Session } from '../../src/core/session/session';
import { readState } from '../../src/core/session/store';
import { giveUp } from '../../src/core/session/submit';

const MIN = 60_000;

describe('session clock (injected time)', () => {
  let dir: string;
  let layout: SessionLayout;
  let t: number;
  const now = () => t;
  const open = (extra: Partial<Parameters<typeof Session.open>[1]> = {}) => Session.open(layout, { client: 'test', now, ...extra });

  beforeEach(async () => {
    dir = await fsp.mkdtemp(path.join(os.tmpdir(), 'expbench-clock-'));
    layout = new SessionLayout(dir);
    t = Date.parse('2026-03-01T09:00:00.000Z');
  });
  afterEach(async () => { await fsp.rm(dir, { recursive: true, force: true }); });

  it('starts paused; working time excludes pauses', async () => {
    const s = await open();
    assert.equal(s.clock.status, 'not-started');
    t += 5 * MIN; // reading the brief before starting: not counted
    assert.equal(s.clock.workingMs(), 0);
    assert.equal(await s.clock.start(), true);
    t += 10 * MIN;
    assert.equal(s.clock.workingMs(), 10 * MIN);
    assert.equal(await s.clock.pause('lunch'), true);
    assert.equal(await s.clock.pause(), false, 'pausing a paused clock changes nothing');
    t += 45 * MIN;
    assert.equal(s.clock.workingMs(), 10 * MIN);
    assert.equal(await s.clock.resume(), true);
    assert.equal(await s.clock.resume(), false);
    t += 20 * MIN + 1234;
    assert.equal(s.clock.workingMs(), 30 * MIN + 1234);
    assert.equal(formatWorking(s.clock.workingMs()), '30:01');
    await s.close();

    const { events } = await readEvents(layout.events);
    assert.deepEqual(events.map((e) => e.type), ['session.opened', 'clock.started', 'clock.paused', 'clock.resumed', 'clock.paused']);
    const paused = events[2];
    assert.ok(paused.type === 'clock.paused' && paused.reason === 'lunch' && paused.workingMs === 10 * MIN);
    const state = (await readState(layout.state))!;
    assert.equal(state.clock.segments[0].pauseReason, 'lunch');
    assert.equal(workingMs(state.clock), 30 * MIN + 1234, 'the same working time from the file alone');
  });

  it('is right across a clean reload: the time the window was closed is not counted, the clock resumes', async () => {
    let s = await open();
    await s.clock.start();
    t += 7 * MIN;
    await s.close(); // window reload
    t += 3 * MIN; // VS Code restarting
    s = await open();
    assert.equal(s.clock.status, 'running');
    assert.equal(s.clock.workingMs(), 7 * MIN);
    t += 2 * MIN;
    assert.equal(s.clock.workingMs(), 9 * MIN);
    await s.close();
  });

  it('a window killed while running counts until its last heartbeat only', async () => {
    const s = await open();
    await s.clock.start();
    t += 60_000; s.clock.heartbeat();
    t += 30_000; s.clock.heartbeat(); // last heartbeat at 90 s
    t += 25_000; // killed 25 s after it: no close(), only what is on disk counts
    await s.store.flush();
    const onDisk = (await readState(layout.state))!;
    assert.equal(clockStatus(onDisk), 'running');
    assert.equal(workingMs(onDisk.clock), 90_000, 'a reader that does not own the session counts to the last heartbeat');
    t += 10 * MIN; // dead for 10 minutes
    const again = await open();
    assert.equal(again.clock.status, 'running');
    assert.equal(again.clock.workingMs(), 90_000);
    t += MIN;
    assert.equal(again.clock.workingMs(), 90_000 + MIN);
    await again.close();
    const { events } = await readEvents(layout.events);
    const interrupted = events.find((e) => e.type === 'clock.paused' && e.interrupted);
    assert.ok(interrupted && interrupted.type === 'clock.paused');
    assert.equal(interrupted.effectiveAt, new Date(Date.parse('2026-03-01T09:00:00.000Z') + 90_000).toISOString());
    assert.ok(events.some((e) => e.type === 'clock.resumed' && e.restored));
  });

  it('a paused clock stays paused after a reload', async () => {
    let s = await open();
    await s.clock.start();
    t += MIN;
    await s.clock.pause('meeting');
    await s.close();
    t += 30 * MIN;
    s = await open();
    assert.equal(s.clock.status, 'paused');
    assert.equal(s.clock.workingMs(), MIN);
    await s.close();
  });

  it('budget warnings at 80% and 100%, each once, also across reloads', async () => {
    let s = await open({ budgetMs: 10 * MIN });
    await s.clock.start();
    t += 7 * MIN;
    assert.deepEqual(await s.clock.checkBudget(), []);
    t += MIN; // 80%
    assert.deepEqual(await s.clock.checkBudget(), [80]);
    assert.deepEqual(await s.clock.checkBudget(), []);
    await s.close();
    s = await open();
    t += MIN + 59_000;
    assert.deepEqual(await s.clock.checkBudget(), [], '99.8%: no new warning, and 80% is not repeated after the reload');
    t += 1000;
    assert.deepEqual(await s.clock.checkBudget(), [100]);
    t += 5 * MIN;
    assert.deepEqual(await s.clock.checkBudget(), []);
    await s.close();
    const warnings = (await readEvents(layout.events)).events.filter((e) => e.type === 'budget.warning');
    assert.deepEqual(warnings.map((e) => e.type === 'budget.warning' && [e.level, e.workingMs, e.budgetMs]), [[80, 8 * MIN, 10 * MIN], [100, 10 * MIN, 10 * MIN]]);
  });

  it('a budget crossed all at once emits both warnings; setBudget re-arms them and checks its input', async () => {
    const s = await open();
    await s.clock.start();
    t += 20 * MIN;
    s.clock.setBudget(10 * MIN);
    assert.deepEqual(await s.clock.checkBudget(), [80, 100]);
    s.clock.setBudget(60 * MIN);
    t += 30 * MIN; // 50 of 60 min = 83%
    assert.deepEqual(await s.clock.checkBudget(), [80]);
    assert.throws(() => s.clock.setBudget(-5), (e: unknown) => isExpBenchError(e, 'BAD_INPUT'));
    await s.close();
  });

  it('give-up stops the clock for good and records the working time', async () => {
    const s = await open();
    await s.clock.start();
    t += 12 * MIN;
    const outcome = await giveUp(s, 'cannot install the dependencies');
    assert.equal(outcome.workingMs, 12 * MIN);
    t += 5 * MIN;
    assert.equal(s.clock.workingMs(), 12 * MIN);
    assert.equal(s.clock.status, 'stopped');
    await assert.rejects(s.clock.resume(), (e: unknown) => isExpBenchError(e, 'SESSION_INVALID'));
    await assert.rejects(giveUp(s), (e: unknown) => isExpBenchError(e, 'SESSION_INVALID'));
    await s.close();
    const state = (await readState(layout.state))!;
    assert.deepEqual(state.gaveUp, { at: '2026-03-01T09:12:00.000Z', workingMs: 12 * MIN, reason: 'cannot install the dependencies' });
    const last = (await readEvents(layout.events)).events.at(-1)!;
    assert.ok(last.type === 'gave_up' && last.workingMs === 12 * MIN && last.reason === 'cannot install the dependencies');
  });

  it('formats working time as m:ss and h:mm:ss', () => {
    assert.equal(formatWorking(0), '0:00');
    assert.equal(formatWorking(59_999), '0:59');
    assert.equal(formatWorking(12 * MIN + 34_000), '12:34');
    assert.equal(formatWorking(3_600_000 + 2 * MIN + 3000), '1:02:03');
  });
});
