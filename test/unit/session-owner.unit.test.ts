import * as assert from 'node:assert/strict';
import { promises as fsp } from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { isExpBenchError } from '../../src/core/errors';
import { readEvents } from '../../src/core/session/events';
import { SessionLayout } from '../../src/core/layout';
import { Session } from '../../src/core/session/session';
import { readState } from '../../src/core/session/store';

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const design = (freeText: string) => ({ constants: [], independent: [], dependent: [], freeText });

/**
 * Two windows on one session folder (real files): a killed window's extension host keeps running
 * and must not overwrite what the new window does.
 */
describe('session single-writer ownership', () => {
  let layout: SessionLayout;
  beforeEach(async () => { layout = new SessionLayout(await fsp.mkdtemp(path.join(os.tmpdir(), 'expbench-owner-'))); });
  afterEach(async () => { await fsp.rm(layout.root, { recursive: true, force: true }); });

  it('writes private/owner.json atomically on open; the newest opener owns the session', async () => {
    const a = await Session.open(layout, { client: 'vscode', delayMs: 20 });
    const first = JSON.parse(await fsp.readFile(layout.owner, 'utf8'));
    assert.equal(first.ownerId, a.ownership.record.ownerId);
    assert.equal(first.pid, process.pid);
    assert.equal(first.client, 'vscode');
    assert.ok(!Number.isNaN(Date.parse(first.openedAt)));
    const b = await Session.open(layout, { client: 'vscode', delayMs: 20 });
    const second = JSON.parse(await fsp.readFile(layout.owner, 'utf8'));
    assert.equal(second.ownerId, b.ownership.record.ownerId);
    assert.notEqual(second.ownerId, first.ownerId);
    assert.equal(await b.ownership.check(), true);
    assert.equal(await a.ownership.check(), false);
    assert.equal(a.owned, false);
    assert.equal(a.ownership.supersededBy?.ownerId, second.ownerId);
    await a.close();
    await b.close();
  });

  it('refuses the stale owner\'s writes: nothing of the new owner is overwritten (state and events)', async function () {
    this.timeout(20_000);
    const a = await Session.open(layout, { client: 'vscode', delayMs: 20, draftQuietMs: 10 });
    await a.clock.start();
    a.setDesign(design('typed in the old window'));
    a.setConclusion('old conclusion');
    await a.store.flush();
    await sleep(30);
    await a.events.settled();

    // The window is killed; the new window opens the folder while the old extension host still runs.
    const b = await Session.open(layout, { client: 'vscode', delayMs: 20, draftQuietMs: 10 });
    assert.equal(b.state.design.freeText, 'typed in the old window', 'the new window restores the old one\'s work');
    b.setDesign(design('typed in the new window'));
    b.setConclusion('new conclusion');
    await b.addNote('note from the new window');
    await b.store.flush();
    await b.recordDrafts();
    await b.events.settled();
    const eventsBefore = (await readEvents(layout.events)).events.length;

    let lostTo: string | undefined;
    a.ownership.onDidLose((by) => { lostTo = by.ownerId; });
    // The old host's heartbeat and a late change made in memory before it knows: the write is refused.
    a.clock.heartbeat();
    a.setConclusion('stale conclusion from the old window');
    await a.store.flush();
    assert.equal(lostTo, b.ownership.record.ownerId, 'the old owner learns who took over');
    assert.equal(a.owned, false);
    // Later changes are refused outright with a clear error.
    assert.throws(() => a.setDesign(design('later stale text')), (e: unknown) => isExpBenchError(e, 'SESSION_INVALID') && /took this session over/.test((e as Error).message));
    await assert.rejects(a.addNote('stale note'), (e: unknown) => isExpBenchError(e, 'SESSION_INVALID'));
    await assert.rejects(a.events.append({ type: 'note.added', text: 'stale event' }), (e: unknown) => isExpBenchError(e, 'SESSION_INVALID'));
    a.clock.heartbeat(); // a no-op now, no error
    await a.close(); // a stale owner's close writes nothing either
    await sleep(100);

    const onDisk = await readState(layout.state);
    assert.ok(onDisk);
    assert.equal(onDisk.design.freeText, 'typed in the new window');
    assert.equal(onDisk.conclusion, 'new conclusion');
    assert.deepEqual(onDisk.notes.map((n) => n.text), ['note from the new window']);
    const after = await readEvents(layout.events);
    assert.equal(after.events.length, eventsBefore, `the stale owner appended no event: ${JSON.stringify(after.events.slice(eventsBefore))}`);
    assert.ok(!after.events.some((e) => JSON.stringify(e).includes('stale')));

    // The new owner keeps writing normally.
    b.setConclusion('new conclusion, edited');
    await b.close();
    assert.equal((await readState(layout.state))?.conclusion, 'new conclusion, edited');
  });

  it('keeps writing when owner.json is missing (not a takeover)', async () => {
    const a = await Session.open(layout, { client: 'cli', delayMs: 20 });
    await fsp.rm(layout.owner);
    a.setConclusion('still mine');
    await a.store.flush();
    assert.equal(a.owned, true);
    assert.equal((await readState(layout.state))?.conclusion, 'still mine');
    await a.close();
  });
});
