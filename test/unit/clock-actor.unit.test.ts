import * as assert from 'node:assert/strict';
import { promises as fsp } from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { workingByActor, workingMs } from '../../src/core/session/clock';
import { readEvents } from '../../src/core/session/events';
import { SessionLayout } from '../../src/core/layout';
import { Session } from '../../src/core/session/session';
import { readState } from '../../src/core/session/store';
import { changesMessage, compareSnapshots, MAX_SUMMARY_CHARS, snapshotWorkspace } from '../../src/extension/agent/workspaceDiff';

const MIN = 60_000;

describe('clock actor: whose working time (injected time)', () => {
  let dir: string;
  let layout: SessionLayout;
  let t: number;
  const now = () => t;

  beforeEach(async () => {
    dir = await fsp.mkdtemp(path.join(os.tmpdir(), 'expbench-clock-actor-'));
    layout = new SessionLayout(dir);
    t = Date.parse('2026-03-01T09:00:00.000Z');
  });
  afterEach(async () => { await fsp.rm(dir, { recursive: true, force: true }); });

  it('splits the working time at each hand-over, with no time lost, and records clock.actor', async () => {
    const s = await Session.open(layout, { client: 'test', now });
    assert.equal(await s.clock.setActor('agent'), true);
    assert.equal(await s.clock.setActor('agent'), false, 'the same actor changes nothing');
    await s.clock.start();
    t += 10 * MIN;
    assert.equal(await s.clock.setActor('human'), true); // running: split now
    t += 3 * MIN;
    await s.clock.pause('coffee');
    t += 30 * MIN; // paused: nobody's time
    await s.clock.setActor('agent'); // paused: the next segment is the agent's
    await s.clock.resume();
    t += 2 * MIN;
    assert.deepEqual(s.clock.workingByActor(), { human: 3 * MIN, agent: 12 * MIN });
    assert.equal(s.clock.workingMs(), 15 * MIN);
    await s.close();

    const state = (await readState(layout.state))!;
    assert.deepEqual(state.clock.segments.map((x) => [x.actor ?? 'human', x.endReason ?? null]), [['agent', 'handed_over'], ['human', 'paused'], ['agent', 'interrupted']]);
    assert.deepEqual(workingByActor(state.clock), { human: 3 * MIN, agent: 12 * MIN });
    assert.equal(workingMs(state.clock), 15 * MIN);
    const actors = (await readEvents(layout.events)).events.filter((e) => e.type === 'clock.actor');
    assert.deepEqual(actors.map((e) => e.type === 'clock.actor' && [e.actor, e.workingMs]), [['agent', 0], ['human', 10 * MIN], ['agent', 13 * MIN]]);
  });

  it('segments without an actor (sessions before agents) are the human\'s', () => {
    const clock = { budgetMs: null, warned: {}, segments: [{ start: '2026-03-01T09:00:00.000Z', lastBeat: '2026-03-01T09:05:00.000Z', end: '2026-03-01T09:05:00.000Z' }] };
    assert.deepEqual(workingByActor(clock), { human: 5 * MIN, agent: 0 });
  });
});

describe('workspace changes told to a resumed agent', () => {
  let dir: string;
  beforeEach(async () => { dir = await fsp.mkdtemp(path.join(os.tmpdir(), 'expbench-wsdiff-')); });
  afterEach(async () => { await fsp.rm(dir, { recursive: true, force: true }); });

  it('lists added, changed and deleted files with a unified diff; skips .git; binary files by name only', async () => {
    await fsp.mkdir(path.join(dir, 'src'));
    await fsp.mkdir(path.join(dir, '.git'));
    await fsp.writeFile(path.join(dir, 'src', 'a.py'), 'x = 1\ny = 2\n');
    await fsp.writeFile(path.join(dir, 'gone.txt'), 'bye\n');
    await fsp.writeFile(path.join(dir, 'blob.bin'), Buffer.from([0, 1, 2]));
    await fsp.writeFile(path.join(dir, '.git', 'HEAD'), 'ref\n');
    const before = await snapshotWorkspace(dir);
    assert.equal(changesMessage(compareSnapshots(before, await snapshotWorkspace(dir))), 'While you were paused the researcher changed no file in /workspace.');

    await fsp.writeFile(path.join(dir, 'src', 'a.py'), 'x = 1\ny = 3\n');
    await fsp.rm(path.join(dir, 'gone.txt'));
    await fsp.writeFile(path.join(dir, 'new.md'), 'hello\n');
    await fsp.writeFile(path.join(dir, 'blob.bin'), Buffer.from([0, 1, 2, 3]));
    await fsp.writeFile(path.join(dir, '.git', 'HEAD'), 'other\n');
    const c = compareSnapshots(before, await snapshotWorkspace(dir));
    assert.deepEqual([c.added, c.changed, c.deleted], [['new.md'], ['blob.bin', 'src/a.py'], ['gone.txt']]);
    const m = changesMessage(c);
    assert.match(m, /^added: new\.md$/m);
    assert.match(m, /^changed: blob\.bin, src\/a\.py$/m);
    assert.match(m, /^deleted: gone\.txt$/m);
    for (const line of ['--- a/src/a.py', '+++ b/src/a.py', '-y = 2', '+y = 3', '--- /dev/null', '+++ b/new.md', '+hello', '--- a/gone.txt', '-bye']) assert.ok(m.includes(line), `${line} in\n${m}`);
    assert.doesNotMatch(m, /HEAD|blob\.bin\n[-+]/);
  });

  it('cuts a long diff and says so', async () => {
    await fsp.writeFile(path.join(dir, 'big.txt'), '');
    const before = await snapshotWorkspace(dir);
    await fsp.writeFile(path.join(dir, 'big.txt'), 'line of text\n'.repeat(2000));
    const m = changesMessage(compareSnapshots(before, await snapshotWorkspace(dir)));
    assert.match(m, new RegExp(`diff cut at ${MAX_SUMMARY_CHARS} characters`));
    assert.ok(m.length < MAX_SUMMARY_CHARS + 500);
  });
});
