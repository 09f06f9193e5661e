import * as assert from 'node:assert/strict';
import { promises as fsp } from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import fc from 'fast-check';
import { campaignTimesheet, createCampaign, planCampaign, readCampaignSpec, readSessionBudget, sessionBudget, sessionBudgetSeconds, type PersonSessionClock } from '../../src/core/campaigns';
import { isExpBenchError } from '../../src/core/errors';
import { CHANNEL_CLIENT } from '../../src/core/flows/baselineChannel';
import { prepareTask } from '../../src/core/flows/prepareTask';
import { SessionService, type SessionHandle } from '../../src/core/flows/sessionService';
import { foldRunSet, readRunSet, RunSetLayout } from '../../src/core/runs';
import { BUDGET_USED_UP, workingMs } from '../../src/core/session/clock';
import { readState } from '../../src/core/session/store';
import { buildRunSetFixture } from '../harness/runSetFixture';

const MIN = 60_000;
const HOUR = 60 * MIN;

describe('campaigns: perPerson.hours as one budget per person (src/core/campaigns/budget.ts)', function () {
  this.timeout(180_000);

  it('the pure rule: own time plus what is left, split among the running sessions; whole ms; nothing left gives the time worked', () => {
    const at = (ms: number) => new Date(ms).toISOString();
    const t0 = Date.parse('2026-12-01T10:00:00Z');
    const closed = (mins: number): PersonSessionClock['clock'] => ({ budgetMs: null, warned: {}, segments: [{ start: at(t0), lastBeat: at(t0 + mins * MIN), end: at(t0 + mins * MIN), endReason: 'paused' }] });
    const open = (from: number): PersonSessionClock['clock'] => ({ budgetMs: null, warned: {}, segments: [{ start: at(from), lastBeat: at(from) }] });
    const now = t0 + 90 * MIN;
    const sessions: PersonSessionClock[] = [
      { session: 'a', clock: closed(40), finished: true },
      { session: 'b', clock: open(now - 10 * MIN), finished: false },
      { session: 'c', clock: { budgetMs: null, warned: {}, segments: [] }, finished: false },
    ];
    // 2 h: 40 + 10 used, 70 min left. b runs alone: 10 + 70; c about to start: it shares with b.
    assert.deepEqual(sessionBudget(2, sessions, 'b', now), { session: 'b', budgetMs: 80 * MIN, workingMs: 10 * MIN, usedMs: 50 * MIN, remainingMs: 70 * MIN, sharedBy: 1 });
    assert.equal(sessionBudgetSeconds(2, sessions, 'c', now, { starting: true }), 35 * 60);
    assert.equal(sessionBudgetSeconds(2, sessions, 'c', now), 70 * 60, 'not running: all that is left');
    assert.equal(sessionBudgetSeconds(2, sessions, 'a', now), (40 + 70) * 60);
    assert.equal(sessionBudgetSeconds(0.5, sessions, 'c', now, { starting: true }), 0, 'hours used up: a session never started gets 0');
    assert.equal(sessionBudgetSeconds(0.5, sessions, 'b', now), 10 * 60, 'hours used up: what it worked');
    assert.equal(sessionBudgetSeconds(1 / 7, [{ session: 'x', clock: { budgetMs: null, warned: {}, segments: [] }, finished: false }], 'x', now), 514.285, '1/7 h floored to whole ms');
    assert.throws(() => sessionBudget(1, sessions, 'zz', now), /zz is not among/);
    assert.throws(() => sessionBudget(0, sessions, 'a', now), /hours must be positive/);
  });

  it('property: a gate that applies the budgets at every start and resume keeps each person\'s total within the hours, whatever the order (real clocks)', async () => {
    const tmp = await fsp.mkdtemp(path.join(os.tmpdir(), 'expbench-budget-prop-'));
    try {
      let run = 0;
      await fc.assert(fc.asyncProperty(
        fc.double({ min: 0.05, max: 1, noNaN: true }),
        fc.array(fc.record({ s: fc.integer({ min: 0, max: 2 }), op: fc.constantFrom('start', 'pause', 'submit', 'wait'), mins: fc.integer({ min: 0, max: 40 }) }), { minLength: 1, maxLength: 14 }),
        async (hours, ops) => {
          const root = path.join(tmp, String(run++));
          let t = Date.parse('2026-12-01T09:00:00Z');
          const now = () => t;
          const service = new SessionService();
          const names = ['s0', 's1', 's2'];
          const hs: SessionHandle[] = [];
          for (const n of names) hs.push(await service.open(path.join(root, n), { client: CHANNEL_CLIENT, taskId: 'c/p/0', now, delayMs: 1, draftQuietMs: 1 }));
          const clocks = (): PersonSessionClock[] => names.map((n, i) => ({ session: n, clock: hs[i].state.clock, finished: Boolean(hs[i].state.submitted || hs[i].state.gaveUp) }));
          // the gate: before a clock starts or resumes, and then for every running one, the budgets again
          // (a budget of 0: the hours are used up and the session has not worked: it is not started)
          const apply = async (starting?: number): Promise<boolean> => {
            let startable = true;
            for (const [i, n] of names.entries()) {
              if (hs[i].state.submitted || hs[i].state.gaveUp) continue;
              const b = sessionBudget(hours, clocks(), n, t, { starting: i === starting });
              if (b.budgetMs > 0) await hs[i].setBudget(b.budgetMs, { hard: true });
              else if (i === starting) startable = false;
            }
            return startable;
          };
          try {
            for (const o of ops) {
              const h = hs[o.s];
              if (o.op === 'start' && !h.state.submitted && !h.state.gaveUp) {
                if (!(await apply(o.s))) continue; // nothing left: the gate does not start it
                await h.startClock().catch((e: unknown) => { if (!isExpBenchError(e, 'SESSION_INVALID')) throw e; });
                await apply();
              } else if (o.op === 'pause') await h.pauseClock();
              else if (o.op === 'submit' && !h.state.submitted && !h.state.gaveUp) await h.giveUp('done');
              t += o.mins * MIN;
              for (const x of hs) await x.setBudget(x.state.clock.budgetMs, { hard: x.state.clock.budgetHard }).catch(() => undefined);
              const total = hs.reduce((a, x) => a + workingMs(x.state.clock, t), 0);
              if (total > hours * HOUR + 1) return false;
            }
            return true;
          } finally {
            for (const h of hs) await h.release();
          }
        }), { numRuns: 25 });
    } finally {
      await fsp.rm(tmp, { recursive: true, force: true });
    }
  });

  it('a campaign of 1 h per person on real sessions: the second session gets what the first left; its clock stops there and cannot resume; the time sheet adds up to the hour', async () => {
    const tmp = await fsp.mkdtemp(path.join(os.tmpdir(), 'expbench-budget-'));
    try {
      await buildRunSetFixture(tmp, 2);
      const file = path.join(tmp, 'campaign.jsonc');
      await fsp.writeFile(file, `{ "version": 1, "name": "budget", "datasets": ["exp-bench"], "tasks": ["fixture2026/90001/0", "fixture2026/90001/1"],
        "baseline": {"baseliners": [{"id": "ana"}], "assignment": "balanced", "perPerson": {"hours": 1}} }`);
      const { spec, text } = await readCampaignSpec(file);
      const plan = await planCampaign(spec);
      const dir = path.join(tmp, 'c');
      await createCampaign(dir, spec, text, file, plan);
      const view = foldRunSet((await readRunSet(new RunSetLayout(dir).state))!.records)!;
      const layout = new RunSetLayout(dir);
      for (const u of view.units) await prepareTask({ task: plan.loaded.tasks.find((x) => x.id === u.task)!, outDir: layout.session(u.dir), cacheDir: path.join(tmp, 'cache') });
      const [u0, u1] = view.units;
      let t = Date.parse('2026-12-01T10:00:00Z');
      const now = () => t;
      const service = new SessionService();

      const b0 = (await readSessionBudget(dir, view, u0.name, t, { starting: true }))!;
      assert.equal(b0.budgetMs, HOUR, 'nothing used yet: the whole hour');
      const h0 = await service.open(layout.session(u0.dir), { client: CHANNEL_CLIENT, taskId: u0.task, now, delayMs: 1, draftQuietMs: 1 });
      await h0.setBudget(b0.budgetMs, { hard: true });
      await h0.startClock();
      t += 40 * MIN;
      await h0.submit({ design: 'd', conclusion: 'c' });
      await h0.release();

      const b1 = (await readSessionBudget(dir, view, u1.name, t, { starting: true }))!;
      assert.deepEqual([b1.budgetMs, b1.usedMs, b1.remainingMs], [20 * MIN, 40 * MIN, 20 * MIN], 'the second session gets the 20 min left');
      const h1 = await service.open(layout.session(u1.dir), { client: CHANNEL_CLIENT, taskId: u1.task, now, delayMs: 1, draftQuietMs: 1 });
      await h1.setBudget(b1.budgetMs, { hard: true });
      await h1.startClock();
      t += 35 * MIN; // 15 min past the budget, no heartbeat in between
      assert.equal(h1.workingMs(), 20 * MIN, 'the open segment counts up to the budget only');
      const levels = await h1.setBudget(b1.budgetMs, { hard: true }); // what the gate's heartbeat does
      assert.deepEqual(levels, [80, 100]);
      assert.equal(h1.clockStatus, 'paused', 'stopped at the budget');
      const seg = h1.state.clock.segments.at(-1)!;
      assert.equal(seg.end, new Date(Date.parse('2026-12-01T10:40:00Z') + 20 * MIN).toISOString(), 'closed at the budget\'s moment, not when noticed');
      assert.equal(seg.pauseReason, BUDGET_USED_UP);
      await assert.rejects(h1.resumeClock(), (e: unknown) => isExpBenchError(e, 'SESSION_INVALID') && /time budget of 20:00 is used up/.test((e as Error).message));
      t += 5 * MIN;
      await h1.release();
      // on disk: the hard budget, read back by a reader that does not own the session
      const st = (await readState(path.join(layout.session(u1.dir), 'private', 'state.json')))!;
      assert.deepEqual([st.clock.budgetMs, st.clock.budgetHard], [20 * MIN, true]);
      // a reopened session (another process) cannot resume it either
      const again = await new SessionService().open(layout.session(u1.dir), { client: CHANNEL_CLIENT, taskId: u1.task, now, delayMs: 1, draftQuietMs: 1 });
      await assert.rejects(again.resumeClock(), /used up/);
      assert.equal((await readSessionBudget(dir, view, u1.name, t, { starting: true }))!.budgetMs, 20 * MIN, 'nothing left beyond what it worked');
      await again.release();
      const sheet = await campaignTimesheet(dir, view, t);
      assert.deepEqual(sheet.map((r) => r.workingMs), [40 * MIN, 20 * MIN]);
      assert.equal(sheet.reduce((a, r) => a + r.workingMs, 0), HOUR, 'the person\'s total is the hour, not more');
      // a spec without hours: no budget
      const noHours = { ...view, spec: { ...view.spec, baseline: { ...(view.spec as { baseline: object }).baseline, perPerson: undefined } } };
      assert.equal(await readSessionBudget(dir, noHours as typeof view, u1.name, t), undefined);
    } finally {
      await fsp.rm(tmp, { recursive: true, force: true });
    }
  });
});
