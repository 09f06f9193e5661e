/**
 * Issue 33 (fault round): two submissions of one session at once, and a submission stopped right
 * after state.json said submitted. Each must leave one consistent submission: exactly one
 * `submitted` event for a submitted state.json, the second submitter refused as "already
 * submitted" (never both failing), and a later opener recording what a stopped one left out.
 */
import * as assert from 'node:assert/strict';
import { promises as fsp } from 'node:fs';
import * as path from 'node:path';
import { isExpBenchError } from '../../src/core/errors';
import { readEvents } from '../../src/core/session/events';
import { Session } from '../../src/core/session/session';
import { readState, SessionStore } from '../../src/core/session/store';
import type { SessionState } from '../../src/core/session/state';
import { submit } from '../../src/core/session/submit';
import type { SessionLayout } from '../../src/core/layout';
import { cli } from './cli.helpers';
import { makeSessionFolder } from './session-fixtures';

const ANSWERS = { design: 'd', conclusion: 'c' };

async function outcomeEvents(layout: SessionLayout): Promise<string[]> {
  return (await readEvents(layout.events)).events.map((e) => e.type).filter((t) => t === 'submitted' || t === 'gave_up');
}

describe('issue 33: concurrent and interrupted submissions leave one consistent submission', function () {
  this.timeout(300_000);
  const roots: string[] = [];
  after(async () => { for (const r of roots) await fsp.rm(r, { recursive: true, force: true }); });
  const fresh = async () => { const l = await makeSessionFolder(); roots.push(l.root); await fsp.writeFile(path.join(l.workspace, 'mine.txt'), 'work\n'); return l; };

  it('two submits at once in one process, 16 times: one submits, the other is refused as already submitted', async () => {
    const problems: string[] = [];
    for (let i = 0; i < 16; i++) {
      const layout = await fresh();
      const [a, b] = await Promise.allSettled([submit(layout, ANSWERS), submit(layout, ANSWERS)]);
      const ok = [a, b].filter((r) => r.status === 'fulfilled').length;
      const refused = [a, b].filter((r) => r.status === 'rejected' && isExpBenchError(r.reason, 'SESSION_INVALID') && /already submitted/.test(r.reason.message));
      const st = await readState(layout.state);
      const outcomes = await outcomeEvents(layout);
      if (ok !== 1 || refused.length !== 1 || !st?.submitted || outcomes.join() !== 'submitted') {
        problems.push(`pair ${i}: ${ok} submitted, ${refused.length} refused as already submitted (${[a, b].map((r) => (r.status === 'rejected' ? String(r.reason).slice(0, 120) : 'ok')).join(' | ')}); state ${st?.submitted ? 'submitted' : 'not submitted'}; events ${outcomes.join(',') || 'none'}`);
      }
    }
    assert.deepEqual(problems, []);
  });

  it('two `expbench session submit` at once, 6 times: exits 0 and 1, one submitted event, the refusal says why', async () => {
    const answers = path.join(await fresh().then((l) => l.root), 'answers.json');
    await fsp.writeFile(answers, JSON.stringify(ANSWERS));
    const problems: string[] = [];
    for (let i = 0; i < 6; i++) {
      const layout = await fresh();
      const run = () => cli(['session', 'submit', layout.root, '--answers', answers, '--no-verify', '--no-judge']);
      const [a, b] = await Promise.all([run(), run()]);
      const codes = [a.code, b.code].sort().join(',');
      const outcomes = await outcomeEvents(layout);
      const refusal = [a, b].find((r) => r.code !== 0);
      if (codes !== '0,1' || outcomes.join() !== 'submitted' || !/already submitted/.test(refusal?.stderr ?? '')) {
        problems.push(`pair ${i}: exits ${codes}; events ${outcomes.join(',') || 'none'}; ${refusal?.stderr.trim().slice(0, 160)}`);
      }
    }
    assert.deepEqual(problems, []);
  });

  it('issue 33 item 9: the exported store itself refuses a new conclusion, design, note or working time after Submit', async () => {
    const layout = await fresh();
    await submit(layout, ANSWERS);
    const store = await SessionStore.open(layout.state);
    try {
      const before = JSON.stringify(store.state);
      for (const [what, change] of [
        ['conclusion', (s: SessionState) => { s.conclusion = 'changed after submit'; }],
        ['notes', (s: SessionState) => { s.notes.push({ at: new Date().toISOString(), text: 'late' }); }],
        ['design', (s: SessionState) => { s.design.freeText = 'late'; }],
        ['submitted', (s: SessionState) => { s.submitted = { ...s.submitted!, workingMs: 1 }; }],
        ['clock.segments', (s: SessionState) => { s.clock.segments.push({ start: new Date().toISOString(), lastBeat: new Date().toISOString() }); }],
      ] as const) {
        assert.throws(() => store.update(change), (e) => isExpBenchError(e, 'SESSION_INVALID') && new RegExp(`rejected change of ${what.replace('.', '\\.')}`).test((e as Error).message), what);
      }
      assert.equal(JSON.stringify(store.state), before, 'nothing changed');
      // What is not frozen still changes (a run of the script recorded after Submit).
      store.update((s) => { s.runs.push({ id: 'r1', startedAt: new Date().toISOString(), exitCode: 0, durationMs: 1, log: 'private/runs/r1.log' }); });
      await store.flush();
    } finally {
      await store.close();
    }
    const onDisk = await readState(layout.state);
    assert.equal(onDisk!.conclusion, ANSWERS.conclusion);
    assert.equal(onDisk!.runs.length, 1);
  });

  it('a submission stopped right after state.json said submitted: the next opener records the submitted event', async () => {
    const layout = await fresh();
    await submit(layout, ANSWERS);
    // What a kill between the state's write and the event's append leaves: the event is not there.
    const lines = (await fsp.readFile(layout.events, 'utf8')).split('\n').filter((l) => l && !l.includes('"type":"submitted"'));
    await fsp.writeFile(layout.events, lines.join('\n') + '\n');
    assert.deepEqual(await outcomeEvents(layout), [], 'the event is gone, as after the kill');
    // A second submission is refused, and completes the first one's record on its way.
    await assert.rejects(submit(layout, ANSWERS), (e) => isExpBenchError(e, 'SESSION_INVALID') && /already submitted/.test((e as Error).message)
      && /verification and judgement did not run: expbench verify .+, then expbench judge /.test((e as Error).message));
    const events = (await readEvents(layout.events)).events.filter((e) => e.type === 'submitted');
    assert.equal(events.length, 1, 'the submitted event was recorded');
    assert.equal((events[0] as { recovered?: boolean }).recovered, true);
    assert.equal((events[0] as { workingMs: number }).workingMs, (await readState(layout.state))!.submitted!.workingMs);
    // Any other opener repairs it too (the window opening the session), once.
    await fsp.writeFile(layout.events, lines.join('\n') + '\n');
    const s = await Session.open(layout, { client: 'test', resumeClock: false });
    await s.close();
    const again = await Session.open(layout, { client: 'test', resumeClock: false });
    await again.close();
    assert.deepEqual(await outcomeEvents(layout), ['submitted']);
  });
});
