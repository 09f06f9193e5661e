import * as assert from 'node:assert/strict';
import { promises as fsp } from 'node:fs';
import { SessionService } from '../../src/core/flows/sessionService';
import type { SessionLayout } from '../../src/core/layout';
import { readEvents } from '../../src/core/session/events';
import { readState } from '../../src/core/session/store';
import { makeSessionFolder } from './session-fixtures';

const design = (freeText: string) => ({ constants: [], independent: [], dependent: [], freeText });

/** The host-side session service on real session folders: clients share one session; the host stamps events. */
describe('session service (flows/sessionService)', () => {
  let layout: SessionLayout;
  beforeEach(async () => { layout = await makeSessionFolder(); });
  afterEach(async () => { await fsp.rm(layout.root, { recursive: true, force: true }); });

  it('two clients of one host share one session: each sees the other\'s changes, both are recorded, the last release closes it', async () => {
    let t = Date.parse('2026-12-01T10:00:00Z');
    const now = () => t;
    const service = new SessionService();
    const window = await service.open(layout.root, { client: 'vscode', taskId: 'sample/toycal/0', now, delayMs: 10, draftQuietMs: 5 });
    const agent = await service.open(layout.root, { client: 'agent', taskId: 'sample/toycal/0', now, delayMs: 10, draftQuietMs: 5 });
    assert.deepEqual(service.clientsOf(layout.root), ['vscode', 'agent']);
    let seenByWindow = 0;
    window.onDidChange(() => { seenByWindow++; });
    await agent.startClock();
    agent.setDesign(design('set by the agent'));
    assert.equal(window.state.design.freeText, 'set by the agent', 'one state store for both clients');
    assert.ok(seenByWindow > 0, 'the window is told of the agent\'s change');
    assert.equal(window.clockStatus, 'running');
    t += 60_000;
    assert.equal(window.workingMs(), 60_000);
    const noted = await window.addNote('a note from the window');
    assert.equal(noted.at, new Date(t).toISOString(), 'stamped with the host clock');
    const recorded = await agent.record({ type: 'command.run', command: 'ls', exitCode: 0, durationMs: 3, outputExcerpt: 'a' });
    assert.equal(recorded.at, new Date(t).toISOString());

    await agent.release();
    assert.deepEqual(service.clientsOf(layout.root), ['vscode']);
    await agent.release(); // twice is safe
    window.setConclusion('still open for the window');
    await window.release();
    assert.deepEqual(service.clientsOf(layout.root), []);

    const state = await readState(layout.state);
    assert.equal(state?.design.freeText, 'set by the agent');
    assert.equal(state?.conclusion, 'still open for the window', 'the last release flushed the state');
    const { events, invalid } = await readEvents(layout.events);
    assert.deepEqual(invalid, []);
    const opened = events.filter((e) => e.type === 'session.opened').map((e) => (e as { client: string }).client);
    assert.deepEqual(opened, ['vscode', 'agent'], 'each client\'s arrival is recorded with its name');
    assert.ok(events.some((e) => e.type === 'note.added'));
    assert.ok(events.some((e) => e.type === 'command.run'));
    assert.equal(events.filter((e) => e.type === 'clock.started').length, 1);
  });

  it('a second host (another process\'s service) takes the session over: the first host\'s later changes are refused', async () => {
    const first = new SessionService();
    const second = new SessionService();
    const a = await first.open(layout.root, { client: 'vscode', delayMs: 10 });
    let lost = 0;
    a.onDidLose(() => { lost++; });
    const b = await second.open(layout.root, { client: 'vscode', delayMs: 10 });
    await assert.rejects(a.addNote('from the dead window'), /took this session over/);
    assert.equal(a.owned, false);
    assert.equal(lost, 1);
    await b.addNote('from the new window');
    await a.release();
    await b.release();
    const state = await readState(layout.state);
    assert.deepEqual(state?.notes.map((n) => n.text), ['from the new window']);
  });

  it('submit through a handle runs the steps after freezing and records them', async () => {
    const service = new SessionService();
    const h = await service.open(layout.root, { client: 'vscode', delayMs: 10 });
    const calls: string[] = [];
    const r = await h.submit({ design: 'vary the width', conclusion: 'wider is better' }, {
      verify: async () => { calls.push('verify'); return { ok: true, summary: 'E = true' }; },
      judge: async () => { calls.push('judge'); return { ok: false, summary: 'heuristic' }; },
    });
    assert.deepEqual(calls, ['verify', 'judge']);
    assert.deepEqual(r.verify, { ok: true, summary: 'E = true' });
    assert.equal(h.clockStatus, 'stopped');
    assert.throws(() => h.setDesign(design('too late')), /submitted/);
    await h.release();
    const { events } = await readEvents(layout.events);
    assert.deepEqual(events.map((e) => e.type).slice(-3), ['submitted', 'verify.finished', 'judge.finished']);
  });
});
